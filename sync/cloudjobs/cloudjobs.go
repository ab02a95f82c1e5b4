// Package cloudjobs holds the cloud runtime of the job families, as the dispatcher's handlers
// (sync/dispatch, HandlerSet): only what is truly cloud. A family's job is declared once, beside
// its handler (csvjob.RunJob, docjob.RunJob, aijob.RunJob: input, workflow, execution name,
// outcome, failure), and runs in the cloud exactly as on the device, through the same
// orchestrator.Run, with Step Functions (sync/sfnexec) as the executor and S3 as the blob store;
// this package supplies the runtime's part:
//
//  1. the stage-in: the input is uploaded content-addressed (dispatch.Cloud.UploadInput; nothing is sent when
//     the same bytes are there);
//  2. the family's job shapes the execution's input on the s3:// URI — the S3 Object Created
//     event for csv-processing, the {"path": "s3://…"} input of document-conversion — and
//     starts it under the same deterministic name as on the device, so a dispatcher killed at
//     any point finds it again;
//  3. the bring-home: when it ends, its result objects come home (home.go): they are downloaded into the data
//     folder under the same names and places as a device run, and applied to SQLite in one
//     transaction, idempotently by job, with the family's Apply function (csvsqlite,
//     docsqlite). The job's result is then the one a device run gives.
//
// Document conversions go through Step Functions (the document-conversion state machine), not
// the queue-driven ATTACHMENT_CONVERT path of the seeds: the workflow is the one the device
// runs, its ZIP fan-out is a Map whose item counts are the job's progress, and the execution's
// output is the conversion's Result; the queue path answers only on the status queue and carries
// no Map progress. The AI job types run in the cloud as ai.go describes.
package cloudjobs

import (
	"context"
	"path/filepath"
	"strings"

	"jobdesk/engine/blob"
	"jobdesk/engine/csvjob"
	"jobdesk/engine/docjob"
	"jobdesk/engine/job"
	"jobdesk/engine/orchestrator"
	"jobdesk/engine/queue"
	"jobdesk/engine/store"
	"jobdesk/sync/cloudconfig"
	"jobdesk/sync/dispatch"
	"jobdesk/sync/mirror"
)

// Job types sent to the cloud: the device families' types, declared with their jobs
// (csvjob.RunJob, docjob.RunJob).
const (
	TypeCSV     = csvjob.Type
	TypeConvert = docjob.Type
)

// HandlerSet is the set of cloud handlers (Handlers): each job family's cloud runtime, with what
// they share — where a cloud job's results come home: the data folder, its database (migrated
// with the families' migrations) and the queue of the jobs.
type HandlerSet struct {
	DataDir string
	DB      *store.DB
	Queue   *queue.Queue
	// Executions, when set, is what the handlers run executions with instead of the cloud's
	// executor as it is: the status mirror's (mirror.Mirror.Executions), so waiting costs no
	// poller per job.
	Executions orchestrator.Executions
	// Replies, when set, gives the Lambda worker's replies about a queue job as the status
	// queue brings them (mirror.Mirror.Replies); without it a queue job reads its outcome
	// object until it is there.
	Replies func(jobID string, localID int64) (<-chan mirror.Reply, func())
}

// executions is what d's handlers run c's executions with.
func (d HandlerSet) executions(c *dispatch.Cloud) orchestrator.Executions {
	if d.Executions != nil {
		return d.Executions
	}
	return c.Exec
}

// runtime is the cloud as a family's job runs in it: c's executions (or d's), the jobs of d's
// queue, and the input uploaded to S3 (upload) as the stage-in.
func (d HandlerSet) runtime(c *dispatch.Cloud) orchestrator.Runtime {
	return orchestrator.Runtime{
		Executions: d.executions(c),
		Job:        d.Queue.Get,
		StageIn: func(ctx context.Context, path, sha256 string, r job.Reporter) (string, error) {
			return d.upload(ctx, c, path, sha256, r)
		},
	}
}

// Handlers are the dispatcher's handlers of the job types that can run in the cloud (Runs).
func Handlers(set HandlerSet) map[string]dispatch.Handler {
	hs := map[string]dispatch.Handler{TypeCSV: set.CSV, TypeConvert: set.Convert}
	for _, t := range queueAITypes {
		hs[t] = set.QueueAI(t)
	}
	for _, t := range goalAITypes {
		hs[t] = set.GoalAI(t)
	}
	return hs
}

// Runs reports whether jobs of type typ can run in the cloud.
// It is the set of Handlers: a type runs there when it has a cloud handler.
func Runs(typ string) bool {
	_, ok := Handlers(HandlerSet{})[typ]
	return ok
}

// Results is the S3 prefix under which the cloud's functions keep every job's work and result
// files — every Lambda invocation's job.Info.Output: s3://BUCKET/PREFIX/results/ (as the Lambda
// worker computes it from JOBDESK_PREFIX).
func Results(c cloudconfig.Config) string {
	p := strings.Trim(c.Prefix, "/")
	if p != "" {
		p += "/"
	}
	return "s3://" + c.Bucket + "/" + p + "results/"
}

// blobs is the store a cloud handler reads and writes through: S3 for s3:// URIs, the data
// folder's files otherwise.
func (d HandlerSet) blobs(c *dispatch.Cloud) *blob.Mux {
	m := blob.NewMux(blob.Local{Root: d.DataDir})
	if c.Blobs != nil {
		m.Handle("s3", c.Blobs)
	}
	return m
}

// InputEvent is the history event that records where a cloud job's input went (its message is
// the s3:// URI), for the job's detail.
const InputEvent = "InputUploaded"

// upload puts the job's input file up content-addressed (dispatch.Cloud.UploadInput) and records
// its URI in the job's history once.
func (d HandlerSet) upload(ctx context.Context, c *dispatch.Cloud, path, sum string, r job.Reporter) (string, error) {
	uri, err := c.UploadInput(ctx, path, sum, 10, r)
	if err != nil {
		return "", err
	}
	if info, ok := job.InfoFrom(ctx); ok && d.Queue != nil {
		if evs, err := d.Queue.History(ctx, info.ID); err == nil && LastEvent(evs, InputEvent) != uri {
			d.Queue.AddEvent(ctx, info.ID, InputEvent, uri, "")
		}
	}
	return uri, nil
}

// LastEvent returns the message of the latest event of kind in a job's history (events in
// order), or "".
func LastEvent(events []job.Event, kind string) string {
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Kind == kind {
			return events[i].Message
		}
	}
	return ""
}

// absPath is path made absolute, as the device's handlers record a dropped file.
func absPath(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}
