package cloudjobs

import (
	"context"
	"encoding/json"

	"jobdesk/engine/csvjob"
	"jobdesk/engine/job"
	"jobdesk/engine/orchestrator"
	"jobdesk/sync/dispatch"
)

// CSV runs a "csv" job in the cloud: the job as the device runs it (csvjob.RunJob), on the
// cloud's runtime. The file goes up under its SHA-256 (the one the job carries), the
// csv-processing execution starts on the S3 Object Created event of that object under the
// device's execution name, and when it ends the users, errors CSV and report come home
// (HandlerSet.homeCSV). It ends SUCCEEDED, PARTIAL or FAILED exactly as a device run of the same
// file does.
func (d HandlerSet) CSV(ctx context.Context, c *dispatch.Cloud, raw json.RawMessage, r job.Reporter) (json.RawMessage, error) {
	results := Results(c.Config)
	bs := d.blobs(c)
	return csvjob.RunJob(ctx, csvjob.Runtime{
		Runtime: d.runtime(c),
		// The cloud's csv-processor as the Lambda worker builds it: its records are objects
		// under the results prefix, where a failure's record is read back from.
		Processor: csvjob.NewProcessor(csvjob.NewBlobStore(bs), bs, results),
		Output:    results,
		Home: func(ctx context.Context, jobID int64, path string, sum csvjob.Summary) (csvjob.Summary, error) {
			return d.homeCSV(ctx, c, jobID, path, sum)
		},
		Failed: func(ctx context.Context, jobID int64, path string, x orchestrator.Execution) error {
			return d.homeCSVFailure(ctx, c, jobID, path, x.Name)
		},
	}, raw, r)
}
