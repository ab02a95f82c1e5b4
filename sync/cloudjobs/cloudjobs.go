// Package cloudjobs holds each job family's cloud handler for the dispatcher (sync/dispatch):
// what running a CSV import or a document conversion in the cloud means, and how its results
// come home. A cloud job runs the SAME shipped workflow as on the device, through the same
// orchestrator.Run, with Step Functions (sync/sfnexec) as the executor and S3 as the blob store:
//
//  1. the input is uploaded content-addressed (dispatch.Cloud.UploadInput; nothing is sent when
//     the same bytes are there);
//  2. the execution's input is shaped exactly as the workflow expects in the cloud — the S3
//     Object Created event for csv-processing (csvjob.EventInput on the s3:// URI), the
//     {"path": "s3://…"} input of document-conversion — and the execution is started under the
//     same deterministic name as on the device, so a dispatcher killed at any point finds it
//     again;
//  3. when it ends, its result objects come home (home.go): they are downloaded into the data
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
	"slices"
	"strings"

	"jobdesk/engine/blob"
	"jobdesk/engine/job"
	"jobdesk/engine/orchestrator"
	"jobdesk/engine/queue"
	"jobdesk/engine/store"
	"jobdesk/sync/cloudconfig"
	"jobdesk/sync/dispatch"
	"jobdesk/sync/mirror"
)

// Job types sent to the cloud (the device families' types).
const (
	TypeCSV     = "csv"
	TypeConvert = "convert"
)

// Device is where a cloud job's results come home: the data folder, its database (migrated with
// the families' migrations) and the queue of the jobs.
type Device struct {
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
func (d Device) executions(c *dispatch.Cloud) orchestrator.Executions {
	if d.Executions != nil {
		return d.Executions
	}
	return c.Exec
}

// Handlers are the dispatcher's handlers of the job types that can run in the cloud (Types).
func Handlers(dev Device) map[string]dispatch.Handler {
	hs := map[string]dispatch.Handler{TypeCSV: dev.CSV, TypeConvert: dev.Convert}
	for _, t := range queueAITypes {
		hs[t] = dev.QueueAI(t)
	}
	for _, t := range goalAITypes {
		hs[t] = dev.GoalAI(t)
	}
	return hs
}

// Runs reports whether jobs of type typ can run in the cloud.
func Runs(typ string) bool {
	switch typ {
	case TypeCSV, TypeConvert:
		return true
	}
	return slices.Contains(queueAITypes, typ) || slices.Contains(goalAITypes, typ)
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
func (d Device) blobs(c *dispatch.Cloud) *blob.Mux {
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
func (d Device) upload(ctx context.Context, c *dispatch.Cloud, path, sum string, r job.Reporter) (string, error) {
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
