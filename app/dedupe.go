package app

import (
	"context"

	"jobdesk/engine/csvjob"
	"jobdesk/engine/job"
	"jobdesk/engine/queue"
)

// fileSHA256 is the identity of a dropped file: the SHA-256 of its bytes (as the CSV job
// records it), so the same file under another name is the same file.
func fileSHA256(ctx context.Context, path string) (string, error) {
	return csvjob.FileSHA256(ctx, path)
}

// submitOnce enqueues p for a file whose bytes have the SHA-256 sha, or returns the job that
// already stands for the same bytes with the same options (queue.EnqueueOnce: pending, running
// or finished SUCCEEDED/PARTIAL, following retries; a failed or cancelled one does not count).
// options are what changes the job's result; force runs the file again. Every family that takes
// dropped files submits through it, so a file dropped twice is one job whatever its kind.
func submitOnce(ctx context.Context, a *App, sha string, options any, p queue.Params, force bool) (job.Job, error) {
	var err error
	if p.DedupKey, err = queue.ContentKey(p.Type, sha, options); err != nil {
		return job.Job{}, err
	}
	j, _, err := a.Queue.EnqueueOnce(ctx, p, force)
	return j, err
}
