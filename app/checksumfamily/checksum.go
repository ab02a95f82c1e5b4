// Package checksumfamily wires the checksum family into the app: the SHA-256 of any file. It
// takes what no other family recognises, so the app asks it last.
package checksumfamily

import (
	"context"
	"encoding/json"
	"path/filepath"

	"jobdesk/app/family"
	"jobdesk/engine/checksum"
	"jobdesk/engine/job"
	"jobdesk/engine/queue"
	"jobdesk/engine/store"
)

// Family is the checksum family of one App.
type Family struct {
	host *family.Host
}

var _ family.Family = (*Family)(nil)

func (*Family) Name() string                   { return "checksum" }
func (*Family) Migrations() []store.Migrations { return nil }
func (*Family) Types() []string                { return []string{checksum.Type} }

// Detect takes any file.
func (*Family) Detect(string, []byte) string { return checksum.Type }

func (f *Family) Open(h *family.Host) error {
	f.host = h
	return nil
}

// Register runs checksum jobs on the device's blob store.
func (f *Family) Register(w *queue.Worker) {
	w.Handle(checksum.Type, family.Confined(checksum.Handler(f.host.Blobs)), queue.TypeOptions{})
}

// Submit enqueues the checksum of path, or returns the job that already has it for the same
// bytes (Host.SubmitOnce); --force computes it again.
func (f *Family) Submit(ctx context.Context, path, typ string, o family.SubmitOptions) (job.Job, error) {
	sha, err := family.FileSHA256(ctx, path)
	if err != nil {
		return job.Job{}, err
	}
	in, err := json.Marshal(checksum.Input{Path: path})
	if err != nil {
		return job.Job{}, err
	}
	return f.host.SubmitOnce(ctx, sha, struct{}{}, queue.Params{Type: typ, Name: filepath.Base(path), Input: in, Priority: o.Priority, Target: o.Target}, o.Force)
}
