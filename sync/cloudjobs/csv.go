package cloudjobs

import (
	"context"
	"encoding/json"
	"strings"

	"jobdesk/engine/csvjob"
	"jobdesk/engine/job"
	"jobdesk/engine/orchestrator"
	"jobdesk/sync/dispatch"
)

// csvWorkflow is the shipped workflow a CSV job runs (assets/workflows/csv-processing.asl.json).
var csvWorkflow = strings.TrimSuffix(csvjob.WorkflowFile, ".asl.json")

// csvInput is a "csv" job's input, as the device family submits it.
type csvInput struct {
	Path    string         `json:"path"`
	SHA256  string         `json:"sha256,omitempty"`
	Options csvjob.Options `json:"options"`
}

// csvResult is a CSV job's result, as on the device: the Summary and the execution.
type csvResult struct {
	csvjob.Summary
	ExecutionARN string `json:"executionArn,omitempty"`
}

// CSV runs a "csv" job in the cloud: the file goes up under its SHA-256 (the one the job
// carries), the csv-processing execution starts on the S3 Object Created event of that object
// under the device's execution name (file name + the job's creation time), and when it ends the
// users, errors CSV and report come home (Device.homeCSV). It ends SUCCEEDED, PARTIAL or FAILED
// exactly as a device run of the same file does.
func (d Device) CSV(ctx context.Context, c *dispatch.Cloud, raw json.RawMessage, r job.Reporter) (json.RawMessage, error) {
	var in csvInput
	if err := json.Unmarshal(raw, &in); err != nil || in.Path == "" {
		return nil, job.Errorf(job.E014, "the CSV job needs a file path").WithJa("CSVジョブにファイルのパスがありません。").Permanent()
	}
	info, _ := job.InfoFrom(ctx)
	self, err := d.Queue.Get(ctx, info.ID)
	if err != nil {
		return nil, err
	}
	uri, err := d.upload(ctx, c, in.Path, in.SHA256, r)
	if err != nil {
		return nil, err
	}
	results := Results(c.Config)
	bs := d.blobs(c)
	// The cloud's csv-processor as the Lambda worker builds it: its records are objects under
	// the results prefix, where a failure's record is read back from.
	p := csvjob.NewProcessor(csvjob.NewBlobStore(bs), bs, results)
	input, err := p.EventInput(ctx, uri, in.Options, info.ID)
	if err != nil {
		return nil, err
	}
	return orchestrator.Run(ctx, d.executions(c), orchestrator.Spec{
		Workflow: csvWorkflow, Name: csvjob.ExecutionName(in.Path, self.CreatedAt), Input: input, Priority: self.Priority,
		What: "the CSV job", WhatJa: "CSVの処理",
		Outcome: func(ctx context.Context, x orchestrator.Execution) (json.RawMessage, error) {
			sum, err := csvjob.ExecutionSummary(x.Output)
			if err != nil {
				return nil, err
			}
			r.Progress(99, "Bringing the results home")
			sum, err = d.homeCSV(ctx, c, info.ID, in.Path, sum)
			if err != nil {
				return nil, err
			}
			res, _ := json.Marshal(csvResult{Summary: sum, ExecutionARN: x.ARN})
			r.Progress(100, sum.Message)
			if sum.Status == csvjob.StatusPartial {
				return nil, job.PartialSuccess(res, sum.Message)
			}
			return res, nil
		},
		// What the import's own steps recorded in the cloud says more than the execution's
		// last error.
		Failure: func(ctx context.Context, x orchestrator.Execution, _ *job.Error) error {
			if err := d.homeCSVFailure(ctx, c, info.ID, in.Path, x.Name); err != nil {
				return err
			}
			return p.ExecutionError(job.WithInfo(ctx, withOutputInfo(info, results)), x.Name, x.Error, x.Cause)
		},
	}, r)
}

// withOutputInfo is info whose files are under output.
func withOutputInfo(info job.Info, output string) job.Info {
	info.Output = output
	return info
}
