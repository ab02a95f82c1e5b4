package csvjob

import (
	"context"
	"encoding/json"
	"strings"

	"jobdesk/engine/job"
	"jobdesk/engine/orchestrator"
)

// A CSV job (type Type) is declared here once for both runtimes: its input (JobInput), its
// workflow (Workflow), its execution's name (ExecutionName), its outcome (JobResult, PARTIAL
// when rows were rejected within tolerance) and its failure (Processor.ExecutionError). The
// device (app/csvfamily) and the cloud (sync/cloudjobs) each run it with RunJob and a Runtime.

// Workflow is the shipped workflow a CSV job runs (assets/workflows/csv-processing.asl.json).
var Workflow = strings.TrimSuffix(WorkflowFile, ".asl.json")

// JobInput is a "csv" job's input: the file, its SHA-256 when submitted, the options.
type JobInput struct {
	Path    string  `json:"path"`
	SHA256  string  `json:"sha256,omitempty"`
	Options Options `json:"options"`
}

// JobResult is a CSV job's result: the Summary and the execution.
type JobResult struct {
	Summary
	ExecutionARN string `json:"executionArn,omitempty"`
}

// Runtime is what a CSV job's runtime gives it beyond the executions and the stage-in.
type Runtime struct {
	orchestrator.Runtime
	// Processor is the csv-processor whose records the workflow's steps keep: the device
	// family's, or in the cloud one built as the Lambda worker builds it.
	Processor *Processor
	// Output, when set, is the URI prefix under which the workflow's steps keep their records
	// (job.Info.Output of the functions that ran them), where a failure's record is read back.
	Output string
	// Home brings the results of an execution that succeeded home (the file names, the users,
	// the csv_imports row) and returns the Summary as the device records it. Nil: they are home.
	Home func(ctx context.Context, jobID int64, path string, sum Summary) (Summary, error)
	// Failed, when set, records what a failed execution x left before its error is read.
	Failed func(ctx context.Context, jobID int64, path string, x orchestrator.Execution) error
}

// RunJob runs one CSV job (raw: its JobInput) on rt: the file is staged in, the csv-processing
// execution starts on its S3 Object Created event under the seed's name (file name + the job's
// creation time; the job's id travels in the input, so a second job for the same file in the
// same second gets a name of its own) and the job waits for it. It ends SUCCEEDED, PARTIAL (some
// rows rejected within tolerance) or FAILED with the seed's error; the result is a JobResult.
func RunJob(ctx context.Context, rt Runtime, raw json.RawMessage, r job.Reporter) (json.RawMessage, error) {
	var in JobInput
	if err := json.Unmarshal(raw, &in); err != nil || in.Path == "" {
		return nil, job.Errorf(job.E014, "the CSV job needs a file path").WithJa("CSVジョブにファイルのパスがありません。").Permanent()
	}
	info, _ := job.InfoFrom(ctx)
	self, err := rt.Job(ctx, info.ID)
	if err != nil {
		return nil, err
	}
	uri, err := rt.Stage(ctx, in.Path, in.SHA256, r)
	if err != nil {
		return nil, err
	}
	p := rt.Processor
	input, err := p.EventInput(ctx, uri, in.Options, info.ID)
	if err != nil {
		return nil, job.AsError(err).Permanent()
	}
	return orchestrator.Run(ctx, rt.Executions, orchestrator.Spec{
		Workflow: Workflow, Name: ExecutionName(in.Path, self.CreatedAt), Input: input, Priority: self.Priority,
		What: "the CSV job", WhatJa: "CSVの処理",
		Outcome: func(ctx context.Context, x orchestrator.Execution) (json.RawMessage, error) {
			sum, err := ExecutionSummary(x.Output)
			if err != nil {
				return nil, err
			}
			if rt.Home != nil {
				r.Progress(99, "Bringing the results home")
				if sum, err = rt.Home(ctx, info.ID, in.Path, sum); err != nil {
					return nil, err
				}
			}
			res, _ := json.Marshal(JobResult{Summary: sum, ExecutionARN: x.ARN})
			r.Progress(100, sum.Message)
			if sum.Status == StatusPartial {
				return nil, job.PartialSuccess(res, sum.Message)
			}
			return res, nil
		},
		// What the import's own steps recorded says more than the execution's last error.
		Failure: func(ctx context.Context, x orchestrator.Execution, _ *job.Error) error {
			if rt.Failed != nil {
				if err := rt.Failed(ctx, info.ID, in.Path, x); err != nil {
					return err
				}
			}
			if rt.Output != "" {
				out := info
				out.Output = rt.Output
				ctx = job.WithInfo(ctx, out)
			}
			return p.ExecutionError(ctx, x.Name, x.Error, x.Cause)
		},
	}, r)
}
