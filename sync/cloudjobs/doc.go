package cloudjobs

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

	"jobdesk/engine/docjob"
	"jobdesk/engine/job"
	"jobdesk/engine/orchestrator"
	"jobdesk/sync/dispatch"
)

// docWorkflow is the shipped workflow a conversion runs (assets/workflows/document-conversion.asl.json).
const docWorkflow = "document-conversion"

// Convert runs a "convert" job in the cloud: the document (or ZIP) goes up content-addressed,
// the document-conversion execution runs on its s3:// path under the device's execution name
// ("convert-<job id>"), and the Markdown and the cached result come home (Device.homeDoc). A
// failed conversion ends with the converter's own coded error, carried in the execution's
// cause, as on the device.
func (d Device) Convert(ctx context.Context, c *dispatch.Cloud, raw json.RawMessage, r job.Reporter) (json.RawMessage, error) {
	var in docjob.Input
	if err := json.Unmarshal(raw, &in); err != nil || in.Path == "" {
		return nil, job.Errorf(job.E014, "the conversion job needs a file path").WithJa("変換ジョブにファイルのパスがありません。").Permanent()
	}
	if in.Name == "" {
		in.Name = filepath.Base(in.Path)
	}
	info, _ := job.InfoFrom(ctx)
	uri, err := d.upload(ctx, c, in.Path, "", r)
	if err != nil {
		return nil, err
	}
	wfIn, _ := json.Marshal(in.WorkflowInput(uri))
	return orchestrator.Run(ctx, d.executions(c), orchestrator.Spec{
		Workflow: docWorkflow, Name: fmt.Sprintf("convert-%d", info.ID), Input: wfIn,
		What: "the conversion", WhatJa: "変換",
		Outcome: func(ctx context.Context, x orchestrator.Execution) (json.RawMessage, error) {
			var res docjob.Result
			if err := json.Unmarshal(x.Output, &res); err != nil {
				return nil, job.Wrap(job.E015, err, "the document-conversion workflow returned no conversion result").
					WithJa("文書変換ワークフローの結果を読み取れませんでした。")
			}
			res, err := d.homeDoc(ctx, c, info.ID, in, res)
			if err != nil {
				return nil, err
			}
			out, _ := json.Marshal(res)
			if res.Status == docjob.StatusPartial {
				return out, job.PartialSuccess(out, res.Reason)
			}
			return out, nil
		},
	}, r)
}
