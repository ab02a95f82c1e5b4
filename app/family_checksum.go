package app

import (
	"context"
	"encoding/json"
	"path/filepath"

	"jobdesk/engine/checksum"
	"jobdesk/engine/job"
	"jobdesk/engine/queue"
)

// The checksum family: SHA-256 of any file. It takes what no other family recognises.
func init() {
	RegisterFamily(Family{
		Name:     "checksum",
		Types:    []string{checksum.Type},
		Priority: -1000,
		Register: func(a *App, w *queue.Worker) {
			w.Handle(checksum.Type, confined(checksum.Handler(DeviceBlobs(a))), queue.TypeOptions{})
		},
		Detect: func(string, []byte) string { return checksum.Type },
		Submit: submitChecksum,
	})
}

// submitChecksum enqueues the checksum of path, or returns the job that already has it for the
// same bytes (submitOnce); --force computes it again.
func submitChecksum(ctx context.Context, a *App, path, typ string, o SubmitOptions) (job.Job, error) {
	sha, err := fileSHA256(ctx, path)
	if err != nil {
		return job.Job{}, err
	}
	in, err := json.Marshal(checksum.Input{Path: path})
	if err != nil {
		return job.Job{}, err
	}
	return submitOnce(ctx, a, sha, struct{}{}, queue.Params{Type: typ, Name: filepath.Base(path), Input: in, Priority: o.Priority}, o.Force)
}
