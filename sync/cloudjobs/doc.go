package cloudjobs

import (
	"context"
	"encoding/json"

	"jobdesk/engine/docjob"
	"jobdesk/engine/job"
	"jobdesk/sync/dispatch"
)

// Convert runs a "convert" job in the cloud: the job as the device runs it (docjob.RunJob), on
// the cloud's runtime. The document (or ZIP) goes up content-addressed, the document-conversion
// execution runs on its s3:// path under the device's execution name ("convert-<job id>"), and
// the Markdown and the cached result come home (HandlerSet.homeDoc). A failed conversion ends
// with the converter's own coded error, carried in the execution's cause, as on the device.
func (d HandlerSet) Convert(ctx context.Context, c *dispatch.Cloud, raw json.RawMessage, r job.Reporter) (json.RawMessage, error) {
	return docjob.RunJob(ctx, docjob.Runtime{
		Runtime: d.runtime(c),
		Home: func(ctx context.Context, jobID int64, in docjob.Input, res docjob.Result) (docjob.Result, error) {
			return d.homeDoc(ctx, c, jobID, in, res)
		},
	}, raw, r)
}
