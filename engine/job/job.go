// Package job holds the small vocabulary every part of JobDesk shares: job statuses, the
// handler signature, the progress reporter, and coded errors (E001–E016) with a Japanese and an
// English sentence. It imports nothing of the project, so the queue, the workflow engine, the job
// families, the cloud worker and the UI can all depend on it without depending on each other.
package job

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"
)

// Status is the lifecycle state of a job. The words are JobDesk's own; GUIDE.md maps them to the
// seeds' vocabularies and to Step Functions.
//
//	PENDING ──lease──▶ RUNNING ──ok──▶ SUCCEEDED | PARTIAL
//	   ▲                  │
//	   └──backoff── RETRYING ◀──retryable error / timeout (attempts left)
//	                      └──▶ FAILED | TIMED_OUT (no attempts left) | CANCELLED (cancel)
type Status string

const (
	// Pending: waiting for a worker (or for its not-before time, or for an offline provider).
	Pending Status = "PENDING"
	// Running: leased by a worker whose handler is executing it.
	Running Status = "RUNNING"
	// Retrying: the last attempt failed retryably; it waits out its backoff, then runs again.
	Retrying Status = "RETRYING"
	// Succeeded: the handler finished and every part of the work was done.
	Succeeded Status = "SUCCEEDED"
	// Partial: the handler finished but tolerated some failed parts (rows, entries, actions).
	Partial Status = "PARTIAL"
	// Failed: a permanent error, or a retryable one with no attempts left.
	Failed Status = "FAILED"
	// TimedOut: the last attempt exceeded the type's timeout and no attempts were left.
	TimedOut Status = "TIMED_OUT"
	// Cancelled: a person cancelled it; a running handler saw its context cancelled.
	Cancelled Status = "CANCELLED"
)

// Statuses lists every status in lifecycle order, for validation and for UI filters.
var Statuses = []Status{Pending, Running, Retrying, Succeeded, Partial, Failed, TimedOut, Cancelled}

// Final reports whether a job in this status will never change again on its own (a person may
// still retry it).
func (s Status) Final() bool {
	switch s {
	case Succeeded, Partial, Failed, TimedOut, Cancelled:
		return true
	}
	return false
}

// Valid reports whether s is one of the eight statuses.
func (s Status) Valid() bool {
	for _, v := range Statuses {
		if v == s {
			return true
		}
	}
	return false
}

// Handler does the work of one job type. The same function runs inside the desktop engine and
// inside AWS Lambda: it receives the job's JSON input, reports progress through r, and returns a
// JSON result or an error. Return a *Error to choose the code and whether a retry can help; return
// the error from PartialSuccess to end the job PARTIAL with a result. Handlers must return promptly once
// ctx is done (cancel or timeout).
type Handler func(ctx context.Context, input json.RawMessage, r Reporter) (json.RawMessage, error)

// Reporter receives a running handler's progress. Calls are cheap: the queue coalesces them
// (about ten writes a second per job at most) and publishes them to subscribers. Every call also
// counts as a heartbeat for the job's lease.
type Reporter interface {
	// Progress sets the job's percent done (0–100, fractional allowed) and a short message.
	Progress(percent float64, message string)
}

// ReporterFunc adapts a function to Reporter.
type ReporterFunc func(percent float64, message string)

// Progress calls f.
func (f ReporterFunc) Progress(percent float64, message string) { f(percent, message) }

// Discard is a Reporter that drops every report, for callers that do not watch progress.
var Discard Reporter = ReporterFunc(func(float64, string) {})

// ErrUserCancel is the cause of a handler's context when the user cancelled its job
// (context.Cause tells it from JobDesk stopping, after which the job runs again).
var ErrUserCancel = errors.New("cancelled by the user")

// Info describes the job a handler is running, for handlers that need to key side effects by job
// or know which attempt this is. The queue puts it in the handler's context.
type Info struct {
	ID          int64  // the job's id
	Type        string // the job's type
	Name        string // the job's display name
	Attempt     int    // 1 for the first attempt
	MaxAttempts int    // attempts allowed in all
	ParentID    int64  // the parent job (fan-out), 0 when none
	// Output is the URI prefix under which the job keeps its work and result files (see
	// engine/blob): the data folder on the device, s3://bucket/prefix/ in the cloud.
	Output string
}

type infoKey struct{}

// WithInfo returns a context carrying info; the queue calls it before running a handler.
func WithInfo(ctx context.Context, info Info) context.Context {
	return context.WithValue(ctx, infoKey{}, info)
}

// InfoFrom returns the job info in ctx, and false when the handler runs outside a queue (a test,
// or a direct call).
func InfoFrom(ctx context.Context) (Info, bool) {
	info, ok := ctx.Value(infoKey{}).(Info)
	return info, ok
}

// Job is one row of the queue as every reader sees it: the CLI's --json output, the UI's rows and
// the workflow engine all use this shape.
type Job struct {
	ID          int64           `json:"id"`
	Number      int64           `json:"number,omitempty"` // what people call the job (#12); 0 for a job with a parent
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Status      Status          `json:"status"`
	Progress    float64         `json:"progress"`
	Message     string          `json:"message"`
	Target      string          `json:"target"`
	Priority    int             `json:"priority"`
	Attempts    int             `json:"attempts"`
	MaxAttempts int             `json:"max_attempts"`
	Input       json.RawMessage `json:"input"`
	Result      json.RawMessage `json:"result"`
	Error       *Error          `json:"error"`
	ParentID    int64           `json:"parent_id"` // 0: not part of a fan-out
	RetryOf     int64           `json:"retry_of,omitempty"`
	DedupKey    string          `json:"dedup_key,omitempty"`
	CreatedAt   time.Time       `json:"created_at"`
	StartedAt   *time.Time      `json:"started_at"`
	UpdatedAt   time.Time       `json:"updated_at"`
	CompletedAt *time.Time      `json:"completed_at"`
}

// Ref is how messages name the job with id and number (Job.Number): "#12" for a job a person
// started, "id:345" for one that a workflow or a fan-out made (the form in which the command
// line accepts it).
func Ref(id, number int64) string {
	if number > 0 {
		return "#" + strconv.FormatInt(number, 10)
	}
	return "id:" + strconv.FormatInt(id, 10)
}

// Ref names j as Ref does.
func (j Job) Ref() string { return Ref(j.ID, j.Number) }

// Targets: where a job runs.
const (
	TargetDevice = "device" // this machine's engine
	TargetCloud  = "cloud"  // the AWS backend; the device mirrors its status
)

// Event is one entry of a job's history, and what subscribers receive after a commit. Kind uses
// Step Functions' event names where one fits (ExecutionStarted, TaskSucceeded, …).
type Event struct {
	ID       int64     `json:"id"`
	JobID    int64     `json:"job_id"`
	Kind     string    `json:"kind"`
	Status   Status    `json:"status"`
	Progress float64   `json:"progress"`
	Message  string    `json:"message,omitempty"`
	Detail   string    `json:"detail,omitempty"`
	At       time.Time `json:"at"`
}

// Event kinds recorded by the queue.
const (
	EventSubmitted      = "ExecutionSubmitted" // enqueued (PENDING)
	EventStarted        = "TaskStarted"        // leased by a worker (RUNNING)
	EventProgress       = "TaskProgress"       // progress changed (not stored in history)
	EventSucceeded      = "TaskSucceeded"      // SUCCEEDED or PARTIAL
	EventFailed         = "TaskFailed"         // FAILED
	EventRetrying       = "TaskRetryScheduled" // RETRYING after a retryable failure
	EventTimedOut       = "TaskTimedOut"       // an attempt hit its timeout
	EventCancelled      = "ExecutionAborted"   // CANCELLED
	EventLeaseLost      = "TaskLeaseExpired"   // the worker vanished; the job returns to the queue
	EventRedriven       = "ExecutionRedriven"  // a person retried a finished job
	EventExternalChange = "ExternalChange"     // another process changed the database (JobID 0)
)
