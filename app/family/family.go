// Package family is the contract between the app and a job family: what a family is (Family and
// the optional parts it may have), and what the app gives it to work with (Host). A family's
// wiring lives in a package of its own (app/csvfamily, app/convertfamily, app/aifamily,
// app/checksumfamily) that imports this package and never the app, so the app can list the
// families without an import cycle and a family cannot reach into the app's internals.
//
// A family is a value that holds its own typed state (its processor, converter or service), made
// by the app for each App it opens: no package globals, no string-keyed state.
package family

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"time"

	"jobdesk/engine/blob"
	"jobdesk/engine/csvjob"
	"jobdesk/engine/flow"
	"jobdesk/engine/functions"
	"jobdesk/engine/job"
	"jobdesk/engine/queue"
	"jobdesk/engine/store"
)

// Host is what the app gives every family when it opens: the device's database, queue,
// workflow engine and blob store, and the data folder. Families keep the Host they are given;
// its fields do not change while the App is open.
type Host struct {
	// DataDir is the data folder (absolute).
	DataDir string
	// DB is the device's database; families hand it to their store packages (…/csvsqlite,
	// …/docsqlite, …/aisqlite), never query it themselves.
	DB *store.DB
	// Queue is the device's job queue.
	Queue *queue.Queue
	// Flow is the workflow engine; a family's job runs its shipped workflow on Flow.Executions()
	// through engine/orchestrator.
	Flow *flow.Engine
	// Blobs is the one blob store of the device: this machine's files, confined to the folders
	// and files a person allowed.
	Blobs *blob.Mux
	// Grant records that a person chose the files at paths (absolute), so handlers and
	// workflows may read them wherever they are.
	Grant func(ctx context.Context, paths []string) error
}

// Family is one job family's part in the app: its schema, its job types, how it recognises a
// dropped file, how it submits one, and its handlers. The optional parts are the interfaces
// below (FunctionSource, Exporter, Retrier, Flagged, GoalSubmitter).
type Family interface {
	// Name names the family in messages ("csv", "convert", "ai", "checksum").
	Name() string
	// Migrations are the family's schema sets, applied when the database opens (before Open).
	Migrations() []store.Migrations
	// Types are the job types a person may name with `run --type`.
	Types() []string
	// Detect returns the job type for a file this family takes, or "". head holds the file's
	// first bytes (up to 8 KiB). It needs no state: the app asks fresh values before opening.
	Detect(path string, head []byte) string
	// Open builds the family's own state on h (a processor bound to the database, …) once the
	// database, queue and workflow engine are open.
	Open(h *Host) error
	// Submit submits one file (absolute, granted) of one of Types and returns its job: the one
	// already standing for the same bytes and options unless o.Force (Host.SubmitOnce).
	Submit(ctx context.Context, path, typ string, o SubmitOptions) (job.Job, error)
	// Register adds the family's job handlers to w; App.StartEngine calls it.
	Register(w *queue.Worker)
}

// FunctionSource is a family whose handlers are Lambda functions its shipped workflows call: the
// app adds them to the workflow engine's function registry (engine/functions), confined
// (Confined), once the family is open.
type FunctionSource interface {
	Functions() []functions.Function
}

// Exporter is a family that writes a finished job's result file (`jobdesk export`).
type Exporter interface {
	// Export writes the result of finished job j (of one of Types) to out in format ("csv",
	// "xlsx", "md", …; never empty). It returns a *job.Error (E014) for a format the family
	// does not write.
	Export(ctx context.Context, j job.Job, format, out string) error
}

// Retrier is a family that decides itself how a finished job runs again.
type Retrier interface {
	// Retry runs finished job j (of one of Types) again and returns the job that will run: the
	// AI family starts a new job linked to j (seed 000).
	Retry(ctx context.Context, j job.Job) (job.Job, error)
}

// Flagged is a family with its own `jobdesk run` flags; their values reach Submit in
// SubmitOptions.Extra.
type Flagged interface {
	RunFlags() []RunFlag
}

// GoalSubmitter is the family that starts generation from a goal a person typed.
type GoalSubmitter interface {
	SubmitGoal(ctx context.Context, g GoalRequest) (job.Job, error)
}

// SubmitOptions adjust a submission.
type SubmitOptions struct {
	Type     string // job type; empty: detected from each file
	Priority int    // higher runs first
	Force    bool   // run again even when the same input was already processed
	// Target is where the job runs. App.Submit takes "device" (or ""), "cloud" or "auto" and
	// hands a family job.TargetDevice or job.TargetCloud, decided per file (see JobTarget).
	Target string
	Extra  map[string]string // families' own options (Flagged.RunFlags), by flag name
}

// RunFlag is one extra flag of `jobdesk run`. Bool flags take no value ("true" when given).
type RunFlag struct {
	Name, Usage string
	Bool        bool
}

// GoalRequest is a goal a person typed into the window (or the CLI): the start of AI generation
// (seed 000: a goal becomes eight sub-goals, then actions and tasks).
type GoalRequest struct {
	Title       string
	Description string
	Deadline    time.Time // zero: none
	// Target is where the generation runs. App.SubmitGoal takes "device" (or ""), "cloud" or
	// "auto" and hands the family job.TargetDevice or job.TargetCloud (see JobTarget).
	Target string
}

// FileSHA256 is the identity of a dropped file: the SHA-256 of its bytes (as the CSV job
// records it), so the same file under another name is the same file.
func FileSHA256(ctx context.Context, path string) (string, error) {
	return csvjob.FileSHA256(ctx, path)
}

// SubmitOnce enqueues p for a file whose bytes have the SHA-256 sha, or returns the job that
// already stands for the same bytes with the same options (queue.EnqueueOnce: pending, running
// or finished SUCCEEDED/PARTIAL, following retries; a failed or cancelled one does not count).
// options are what changes the job's result; force runs the file again. Every family that takes
// dropped files submits through it, so a file dropped twice is one job whatever its kind.
func (h *Host) SubmitOnce(ctx context.Context, sha string, options any, p queue.Params, force bool) (job.Job, error) {
	var err error
	if p.DedupKey, err = queue.ContentKey(p.Type, sha, options); err != nil {
		return job.Job{}, err
	}
	j, _, err := h.Queue.EnqueueOnce(ctx, p, force)
	return j, err
}

// Confined returns h, except that when h failed because the device's blob store refused a path,
// the failure is that refusal itself (E014 naming the path and what to do, in English and
// Japanese) rather than the handler's own wrapping of it ("cannot be read"), which would hide
// why. Every handler the device runs is registered through it.
func Confined(h job.Handler) job.Handler {
	return func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
		out, err := h(ctx, in, r)
		if err != nil && errors.Is(err, blob.ErrNotAllowed) {
			var pe *blob.PathError
			var refusal *job.Error
			if errors.As(err, &pe) && errors.As(pe.Err, &refusal) {
				return out, refusal
			}
		}
		return out, err
	}
}

// ReadHead returns up to 8 KiB from the start of path, what Family.Detect looks at.
func ReadHead(path string) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	buf := make([]byte, 8<<10)
	n, _ := f.Read(buf)
	return buf[:n]
}
