package flow

import (
	"embed"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"strings"
	"time"

	"jobdesk/engine/blob"
	"jobdesk/engine/functions"
	"jobdesk/engine/store"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations is the schema of state machines, executions, history events, map runs, activities
// and notifications.
var Migrations = store.MigrationsFrom("flow", migrationFiles, "migrations")

// Options configure an Engine.
type Options struct {
	// DataDir is where ResultWriter and ItemReader relative paths resolve, and where result
	// files are written. Empty: the queue's data folder.
	DataDir string
	// Blobs is the store ItemReader reads from and ResultWriter writes to, by URI (see
	// Engine.objectURI). Nil: local files only, blob.NewMux(blob.Local{Root: DataDir}).
	Blobs blob.Store
	// Buckets are the S3 bucket names a Bucket may give without "s3://": such a Bucket is read
	// and written as s3://bucket/key through Blobs' "s3" store. Any other plain Bucket is a
	// folder.
	Buckets []string
	// Region and Account appear in ARNs; defaults "local" and "000000000000".
	Region, Account string
	// Functions are the Lambda functions Tasks may call (nil: an empty registry, filled by
	// RegisterFunction).
	Functions *functions.Registry
}

// StateMachine is a stored state machine, shaped as DescribeStateMachine answers.
type StateMachine struct {
	ARN, Name, Definition, RoleARN, Type string // Type "STANDARD"
	Status                               string // "ACTIVE"
	CreatedAt, UpdatedAt                 time.Time
}

// Diagnostic is one problem found in a definition. Location is a JSON pointer naming the state
// and field, like "/States/ValidateCSV/Retry/0/BackoffRate".
type Diagnostic struct {
	Code, Message, Location string
	Severity                string // ERROR or WARNING
}

// Execution is one run of a state machine, shaped as DescribeExecution answers.
type Execution struct {
	ARN, Name, StateMachineARN string
	JobID                      int64  // the queue job that represents the execution (ls/show/window)
	Status                     string // RUNNING | SUCCEEDED | FAILED | TIMED_OUT | ABORTED
	Input, Output              json.RawMessage
	Error, Cause               string
	StartDate                  time.Time
	StopDate                   *time.Time
	RedriveCount               int
	RetryOf                    string // ARN of the execution this one retries, if any
	MapRunARN                  string // set on map-run child executions (DISTRIBUTED)
}

// Execution statuses.
const (
	StatusRunning   = "RUNNING"
	StatusSucceeded = "SUCCEEDED"
	StatusFailed    = "FAILED"
	StatusTimedOut  = "TIMED_OUT"
	StatusAborted   = "ABORTED"
)

// StartOptions configure StartExecution.
type StartOptions struct {
	Name        string // empty: a UUID
	JobName     string // what people see in the job list (e.g. the file name); default Name
	ParentJobID int64
	Priority    int
}

// HistoryEvent is one event of an execution's history, with Step Functions' names and ids.
type HistoryEvent struct {
	ID, PreviousEventID int64
	// Type is Step Functions' event name: ExecutionStarted, TaskStateEntered, TaskScheduled, …
	Type      string
	Timestamp time.Time
	// Details is the event's detail object keyed exactly as the Step Functions API does, e.g.
	// "stateEnteredEventDetails": {"name": "...", "input": "..."}.
	Details map[string]any
}

// MapRunItems counts a map run's items by status.
type MapRunItems struct {
	Pending, Running, Succeeded, Failed, TimedOut, Aborted, Total, ResultsWritten int64
}

// MapRun is one run of a DISTRIBUTED Map state, shaped as DescribeMapRun answers.
type MapRun struct {
	ARN, ExecutionARN, Status  string // RUNNING|SUCCEEDED|FAILED|ABORTED
	MaxConcurrency             int
	ToleratedFailurePercentage float64
	ToleratedFailureCount      int64
	StartDate                  time.Time
	StopDate                   *time.Time
	Items                      MapRunItems
}

// Activity is a registered activity whose tasks external workers poll for.
type Activity struct {
	ARN, Name string
	CreatedAt time.Time
}

// APIError is a typed error with Step Functions' names, so an API server maps it one to one.
type APIError struct {
	// Type is StateMachineDoesNotExist, ExecutionDoesNotExist, ExecutionAlreadyExists,
	// StateMachineAlreadyExists, InvalidDefinition, InvalidArn, InvalidName, InvalidToken,
	// TaskDoesNotExist, TaskTimedOut, ActivityDoesNotExist, ExecutionNotRedrivable,
	// MapRunDoesNotExist, ValidationException or InvalidExecutionInput.
	Type    string
	Message string
}

// Error prints "Type: Message".
func (e *APIError) Error() string { return e.Type + ": " + e.Message }

func apiErr(typ, format string, args ...any) *APIError {
	return &APIError{Type: typ, Message: fmt.Sprintf(format, args...)}
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,80}$`)

func validName(n string) bool { return nameRE.MatchString(n) }

var unsafeName = regexp.MustCompile(`[^a-zA-Z0-9_-]`)
var dashes = regexp.MustCompile(`-+`)

// ExecutionNameFromFile derives an execution name from a file name by the seed 004 rule: the
// base name without extension, every character other than letters, digits, '-' and '_' replaced
// by '-', runs of '-' folded, leading and trailing '-' removed, cut to 70 characters; when at is
// not zero, "-HHMMSS" of at is appended. The result never exceeds 80 characters.
func ExecutionNameFromFile(file string, at time.Time) string {
	base := path.Base(strings.ReplaceAll(file, "\\", "/"))
	if i := strings.LastIndex(base, "."); i > 0 {
		base = base[:i]
	}
	s := unsafeName.ReplaceAllString(base, "-")
	s = strings.Trim(dashes.ReplaceAllString(s, "-"), "-")
	if len(s) > 70 {
		s = s[:70]
	}
	if s == "" {
		s = "file"
	}
	if !at.IsZero() {
		s += "-" + at.Format("150405")
	}
	if len(s) > 80 {
		s = s[:80]
	}
	return s
}
