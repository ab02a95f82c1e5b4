package docjob

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

	"jobdesk/engine/job"
	"jobdesk/engine/orchestrator"
)

// A conversion job (type Type) is declared here once for both runtimes: its input (Input), its
// workflow (Workflow), its execution's name ("convert-<job id>"), its outcome (the Result,
// PARTIAL when the converter says partial) and its failure (the converter's own coded error,
// carried in the execution's cause). The device (app/convertfamily) and the cloud
// (sync/cloudjobs) each run it with RunJob and a Runtime.

// Type is the job type of a document conversion (`jobdesk run --type convert FILE`).
const Type = "convert"

// Workflow is the shipped workflow a conversion runs (assets/workflows/document-conversion.asl.json).
const Workflow = "document-conversion"

// Runtime is what a conversion's runtime gives it beyond the executions and the stage-in.
type Runtime struct {
	orchestrator.Runtime
	// Home brings a finished conversion home (its Markdown, its cached result) and returns the
	// Result as a device run gives it. Nil: the execution's output is the job's result as it is.
	Home func(ctx context.Context, jobID int64, in Input, res Result) (Result, error)
}

// RunJob runs one conversion job (raw: its Input) on rt: the document (or ZIP) is staged in and
// the document-conversion workflow runs on it (ingest → convert, or for a ZIP extract → Map of
// child conversions → collect) under a name of the job ("convert-ID"), so a job resumed after
// JobDesk stopped finds its execution again instead of starting a second one. A failed
// conversion ends with the converter's own coded error (E005 password-protected, E004 damaged,
// …), carried in the execution's cause, so a workflow run reads exactly like a direct one.
func RunJob(ctx context.Context, rt Runtime, raw json.RawMessage, r job.Reporter) (json.RawMessage, error) {
	var in Input
	if err := json.Unmarshal(raw, &in); err != nil || in.Path == "" {
		return nil, job.Errorf(job.E014, "the conversion job needs a file path").WithJa("変換ジョブにファイルのパスがありません。").Permanent()
	}
	info, _ := job.InfoFrom(ctx)
	if in.Name == "" {
		in.Name = filepath.Base(in.Path)
	}
	uri, err := rt.Stage(ctx, in.Path, "", r)
	if err != nil {
		return nil, err
	}
	wfIn, _ := json.Marshal(in.WorkflowInput(uri))
	if !rt.Staged() {
		// Nothing to upload that reports progress: the job says it starts.
		r.Progress(1, "starting the document-conversion workflow")
	}
	return orchestrator.Run(ctx, rt.Executions, orchestrator.Spec{
		Workflow: Workflow, Name: fmt.Sprintf("convert-%d", info.ID), Input: wfIn,
		What: "the conversion", WhatJa: "変換",
		Outcome: func(ctx context.Context, x orchestrator.Execution) (json.RawMessage, error) {
			var res Result
			if err := json.Unmarshal(x.Output, &res); err != nil {
				return nil, job.Wrap(job.E015, err, "the document-conversion workflow returned no conversion result").
					WithJa("文書変換ワークフローの結果を読み取れませんでした。")
			}
			out := x.Output
			if rt.Home != nil {
				if res, err = rt.Home(ctx, info.ID, in, res); err != nil {
					return nil, err
				}
				out, _ = json.Marshal(res)
			}
			if res.Status == StatusPartial {
				return out, job.PartialSuccess(out, res.Reason)
			}
			return out, nil
		},
	}, r)
}
