package app

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"

	"jobdesk/engine/job"
	"jobdesk/sync/cloudconfig"
	"jobdesk/sync/cloudops"
)

// This file is the operations console of the deployed cloud backend (the specifications'
// operating procedures) as the window's console and `jobdesk cloud send/queues/dlq/redrive/purge/
// executions` use it: both open it here, count what a redrive or purge would touch here, and
// get sync/cloudops' plain JSON-tagged results under the names below.

// The console's results, named for the window and the command line (the same types as
// sync/cloudops', whose JSON `jobdesk cloud … --json` prints).
type (
	CloudQueue             = cloudops.QueueStatus
	CloudQueueCounts       = cloudops.QueueCounts
	CloudDeadLetter        = cloudops.DeadLetter
	CloudRedriven          = cloudops.Redriven
	CloudSent              = cloudops.Sent
	CloudExecution         = cloudops.Execution
	CloudExecutionFilter   = cloudops.ExecutionFilter
	CloudRedrivenExecution = cloudops.RedrivenExecution
)

// CloudExecutionStatuses are the Step Functions statuses executions are filtered by.
var CloudExecutionStatuses = cloudops.ExecutionStatuses

// CloudJobTypes returns every job type of the specifications a message can be sent for, sorted
// (the cloud-only ones included).
func CloudJobTypes() []string { return cloudops.JobTypes() }

// CloudConsoleOptions say which backend to operate.
type CloudConsoleOptions struct {
	// DataDir is the data folder whose cloud.json is read; ConfigPath, when set, is another
	// cloud.json to read instead.
	DataDir, ConfigPath string
	// Region and Profile override cloud.json and the environment.
	Region, Profile string
	// UserID is the user_id of a message whose body has none ("": null).
	UserID string
	// QueueURL, when set, is JobType's queue, whatever cloud.json says (its dead-letter queue
	// is then found through its redrive policy).
	JobType, QueueURL string
}

// OpenCloudConsole reads cloud.json as cloudconfig.LoadFile does (the file, then the
// environment, then o's overrides) and connects to the backend it names. With no cloud.json and
// nothing to operate, it says how to write one.
func OpenCloudConsole(ctx context.Context, o CloudConsoleOptions) (*CloudConsole, error) {
	path := o.ConfigPath
	if path == "" {
		path = cloudconfig.Path(o.DataDir)
	}
	cfg, err := cloudconfig.LoadFile(path, os.Getenv, map[string]string{"region": o.Region, "profile": o.Profile})
	if err != nil {
		return nil, err
	}
	switch {
	case o.QueueURL != "":
		if o.JobType == "" {
			return nil, job.Errorf(job.E014, "--queue-url is for the commands naming a job type (send, dlq, redrive, purge)").
				WithJa("--queue-url はジョブ種別を指定するコマンド（send, dlq, redrive, purge）で使います。")
		}
		cfg.Queues = map[string]string{o.JobType: o.QueueURL}
		cfg.DeadLetterQueues = nil
	case len(cfg.Queues) == 0 && len(cfg.StateMachines) == 0:
		if _, statErr := os.Stat(path); os.IsNotExist(statErr) {
			return nil, cloudconfig.NotFound(path)
		}
	}
	con, err := cloudops.New(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &CloudConsole{con: con, userID: o.UserID}, nil
}

// CloudConsole opens the operations console of the data folder's cloud.json; its messages name
// cloud.json's user_id when their body has none.
func (a *App) CloudConsole(ctx context.Context) (*CloudConsole, error) {
	c, err := OpenCloudConsole(ctx, CloudConsoleOptions{DataDir: a.DataDir()})
	if err != nil {
		return nil, err
	}
	c.userID = c.con.Config.UserID
	return c, nil
}

// CloudConsole operates one deployed backend: its queues and dead-letter queues, hand-sent job
// messages and the state machines' executions. Its methods call AWS: call them off the window's
// goroutine.
type CloudConsole struct {
	con    *cloudops.Console
	userID string // user_id of a message whose body has none
}

// Region is the backend's region.
func (c *CloudConsole) Region() string { return c.con.Config.Region }

// Queues returns every configured job type's queue and dead-letter queue counts, by job type.
func (c *CloudConsole) Queues(ctx context.Context) ([]CloudQueue, error) { return c.con.Queues(ctx) }

// Queue returns jobType's queue and dead-letter queue counts.
func (c *CloudConsole) Queue(ctx context.Context, jobType string) (CloudQueue, error) {
	return c.con.Queue(ctx, jobType)
}

// DeadLetters lists up to max messages of jobType's dead-letter queue, each with its error when
// the message or the worker's failure object tells it; the messages stay where they are.
func (c *CloudConsole) DeadLetters(ctx context.Context, jobType string, max int) ([]CloudDeadLetter, error) {
	return c.con.DeadLetters(ctx, jobType, max)
}

// RedriveCount is how many messages a redrive of jobType's dead-letter queue would move back
// now (E014 when the queue has none), for the confirmation a redrive asks first.
func (c *CloudConsole) RedriveCount(ctx context.Context, jobType string) (int, error) {
	s, err := c.con.Queue(ctx, jobType)
	if err != nil {
		return 0, err
	}
	if s.DeadLetter == nil {
		return 0, noDeadLetterQueue(jobType)
	}
	return s.DeadLetter.Visible, nil
}

// PurgeCount is how many messages a purge of jobType's queue (or its dead-letter queue) would
// delete now: waiting, in flight and delayed; E014 when there is no such dead-letter queue.
func (c *CloudConsole) PurgeCount(ctx context.Context, jobType string, deadLetter bool) (int, error) {
	s, err := c.con.Queue(ctx, jobType)
	if err != nil {
		return 0, err
	}
	q := &s.Queue
	if deadLetter {
		if q = s.DeadLetter; q == nil {
			return 0, noDeadLetterQueue(jobType)
		}
	}
	return q.Visible + q.InFlight + q.Delayed, nil
}

func noDeadLetterQueue(jobType string) error {
	return job.Errorf(job.E014, "the queue of %s has no dead-letter queue", jobType).
		WithJa(jobType + " のキューにはデッドレターキューがありません。")
}

// Redrive moves the messages of jobType's dead-letter queue back to its queue.
func (c *CloudConsole) Redrive(ctx context.Context, jobType string) (CloudRedriven, error) {
	return c.con.Redrive(ctx, jobType)
}

// Purge deletes every message of jobType's queue, or of its dead-letter queue, and returns the
// queue's URL. SQS may take up to 60 seconds to finish.
func (c *CloudConsole) Purge(ctx context.Context, jobType string, deadLetter bool) (string, error) {
	return c.con.Purge(ctx, jobType, deadLetter)
}

// CloudJobType is a job type a message can be sent for.
type CloudJobType struct {
	Name    string // ATTACHMENT_CONVERT
	Title   string
	TitleJa string
	// Queue is its queue's URL in cloud.json ("": none; a message cannot be sent).
	Queue string
}

// JobTypes returns every job type of the specifications with its title and configured queue,
// sorted by name.
func (c *CloudConsole) JobTypes() []CloudJobType {
	names := cloudops.JobTypes()
	out := make([]CloudJobType, len(names))
	for i, n := range names {
		s := cloudops.Schemas[n]
		out[i] = CloudJobType{Name: n, Title: s.Title, TitleJa: s.TitleJa, Queue: c.con.Config.Queues[n]}
	}
	return out
}

// MessageTemplate is a body to start jobType's message from: its required fields, to be filled
// in; the common fields are added when it is sent (or by FillMessage).
func (c *CloudConsole) MessageTemplate(jobType string) (string, error) {
	b, err := cloudops.Template(jobType)
	return string(b), err
}

// FillMessage returns body with the common fields it lacks filled in (job_id, triggered_at,
// user_id, …), indented, after checking it against jobType's schema: what Send
// would send, job_id and all. A mismatch is an E014 naming the field.
func (c *CloudConsole) FillMessage(jobType, body string) (string, error) {
	msg, err := cloudops.Prepare(jobType, []byte(body), c.prepareOptions())
	if err != nil {
		return "", err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, msg, "", "  "); err != nil {
		return "", err
	}
	return out.String(), nil
}

// SendMessage checks body against jobType's schema, fills in the common fields and sends it to
// the job type's queue. A body that fails the check is refused (E014 naming the field) before
// any AWS call.
func (c *CloudConsole) SendMessage(ctx context.Context, jobType, body string) (CloudSent, error) {
	return c.con.Send(ctx, jobType, []byte(body), c.prepareOptions())
}

func (c *CloudConsole) prepareOptions() cloudops.PrepareOptions {
	return cloudops.PrepareOptions{UserID: c.userID}
}

// StateMachines returns the workflows cloud.json names a state machine for, sorted.
func (c *CloudConsole) StateMachines() []string { return c.con.Config.Workflows() }

// Executions lists executions of one state machine (a workflow name or an ARN; "": all of
// cloud.json's), newest first, of one status ("": any; CloudExecutionStatuses).
func (c *CloudConsole) Executions(ctx context.Context, f CloudExecutionFilter) ([]CloudExecution, error) {
	return c.con.Executions(ctx, f)
}

// RedriveExecution redrives a failed, timed-out or aborted execution, named by its ARN, or by
// its name within stateMachine ("": any of cloud.json's).
func (c *CloudConsole) RedriveExecution(ctx context.Context, arnOrName, stateMachine string) (CloudRedrivenExecution, error) {
	return c.con.RedriveExecution(ctx, arnOrName, stateMachine)
}

// ExecutionConsoleURL is the page of execution arn in the AWS console.
func (c *CloudConsole) ExecutionConsoleURL(arn string) string {
	region := c.con.Config.Region
	// arn:aws:states:REGION:ACCOUNT:execution:MACHINE:NAME
	if parts := strings.SplitN(arn, ":", 5); len(parts) == 5 && parts[3] != "" {
		region = parts[3]
	}
	return ConsoleURL(region, arn)
}

// CanRedriveExecution reports whether an execution in status can be redriven: Step Functions
// redrives a failed, timed-out or aborted one.
func CanRedriveExecution(status string) bool {
	return status == "FAILED" || status == "TIMED_OUT" || status == "ABORTED"
}
