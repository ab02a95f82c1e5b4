// Package mirror keeps the device's view of the cloud's executions current at a cost that does
// not grow with the number of jobs: push first, polling as the fallback.
//
//   - Push: the backend sends Step Functions "Execution Status Change" events (EventBridge) and
//     the Lambda worker's replies (cloudworker.StatusReply) to the status queue. Run long-polls
//     it (20 s, batch 10), applies each message — an execution that ended wakes the job waiting
//     on it, and the change goes into that job's history — and deletes it after the commit. A
//     repeated or out-of-order message changes nothing: an execution ends once, and a message
//     about an execution no job waits on is only deleted.
//   - Poll: DescribeExecution for each execution a job waits on, adaptively — every MinPoll for
//     the job on screen (SetOnScreen), whose map-run item counts are its progress and whose
//     history is read incrementally into the job's history under Step Functions' event names;
//     from MinPoll growing to MaxPoll for the others — and all of them within Budget requests a
//     second, the most overdue first, so 1,000 idle executions cost no more than a few.
//
// The dispatcher's handlers wait through Executions (an orchestrator.Executions over
// sfnexec whose Wait is the mirror's), so a cloud job holds no poller of its own.
package mirror

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"jobdesk/engine/job"
	"jobdesk/engine/orchestrator"
	"jobdesk/engine/queue"
	"jobdesk/sync/sfnexec"
)

// SQS is the part of the SQS client the mirror calls (*sqs.Client has it).
type SQS interface {
	ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, o ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	DeleteMessage(ctx context.Context, in *sqs.DeleteMessageInput, o ...func(*sqs.Options)) (*sqs.DeleteMessageOutput, error)
}

// Options configure a Mirror.
type Options struct {
	// SQS and StatusQueue are the status queue (none: polling only).
	SQS         SQS
	StatusQueue string
	// MinPoll and MaxPoll bound the interval between two DescribeExecution calls of one
	// execution (defaults 1 s and 60 s); the job on screen is polled every MinPoll.
	MinPoll, MaxPoll time.Duration
	// Budget is how many DescribeExecution calls a second all the executions not on screen
	// share (default 0.9 with a status queue — the push says when something changes — and 20
	// without, within Step Functions' 25 a second for the account).
	Budget float64
	// Tick is how often the poller looks for due executions (default 100 ms).
	Tick time.Duration
}

// Mirror follows the cloud's executions for the jobs that wait on them.
type Mirror struct {
	exec *sfnexec.Executor
	q    *queue.Queue
	o    Options

	mu       sync.Mutex
	watches  map[string]*watch     // by execution ARN
	replies  map[string]*replyWait // by the queue job's job_id
	onScreen int64
}

// Reply is a Lambda worker's reply about a queue job (cloudworker.StatusReply): DONE or PARTIAL
// with the job's result, RETRYING or FAILED with its coded error.
type Reply struct {
	JobID  string
	Status string
	Result json.RawMessage
	Error  *job.Error
}

// replyWait is a job waiting for the worker's replies about its queue job.
type replyWait struct {
	localID int64
	ch      chan Reply
}

// watch is one execution a job waits on.
type watch struct {
	arn      string
	jobID    int64
	due      time.Time
	interval time.Duration
	progress job.Reporter
	done     chan orchestrator.Execution
	ended    bool
	history  sfnexec.HistoryCursor
	lastPct  float64
}

// New returns the mirror of exec's executions, recording history in q.
func New(exec *sfnexec.Executor, q *queue.Queue, o Options) *Mirror {
	if o.MinPoll <= 0 {
		o.MinPoll = time.Second
	}
	if o.MaxPoll <= 0 {
		o.MaxPoll = time.Minute
	}
	if o.Budget <= 0 {
		o.Budget = 20
		if o.SQS != nil && o.StatusQueue != "" {
			o.Budget = 0.9
		}
	}
	if o.Tick <= 0 {
		o.Tick = 100 * time.Millisecond
	}
	return &Mirror{exec: exec, q: q, o: o, watches: map[string]*watch{}, replies: map[string]*replyWait{}}
}

// Replies returns the worker's replies about the queue job whose message's job_id is jobID, as
// the status queue brings them (they go into device job localID's history too), and a function
// that ends the wait. Replies arriving while nobody waits are only recorded: a waiter that comes
// later reads the job's result object (the worker writes it before it replies).
func (m *Mirror) Replies(jobID string, localID int64) (<-chan Reply, func()) {
	w := &replyWait{localID: localID, ch: make(chan Reply, 16)}
	m.mu.Lock()
	m.replies[jobID] = w
	m.mu.Unlock()
	return w.ch, func() {
		m.mu.Lock()
		if m.replies[jobID] == w {
			delete(m.replies, jobID)
		}
		m.mu.Unlock()
	}
}

// SetOnScreen says which job the window shows (0: none): its execution is polled every MinPoll
// and its history and map-run progress are read.
func (m *Mirror) SetOnScreen(jobID int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.onScreen = jobID
	for _, w := range m.watches {
		if w.jobID == jobID {
			w.due = time.Now()
		}
	}
}

// Watching is how many executions jobs wait on.
func (m *Mirror) Watching() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.watches)
}

// Executions is exec with the mirror's Wait: what the dispatcher's handlers run the
// orchestrator with.
func (m *Mirror) Executions() orchestrator.Executions { return executions{m} }

type executions struct{ m *Mirror }

func (e executions) Start(ctx context.Context, workflow, name string, input json.RawMessage, o orchestrator.StartOptions) (orchestrator.Execution, error) {
	return e.m.exec.Start(ctx, workflow, name, input, o)
}

func (e executions) Describe(ctx context.Context, workflow, name string) (orchestrator.Execution, error) {
	return e.m.exec.Describe(ctx, workflow, name)
}

func (e executions) Stop(ctx context.Context, x orchestrator.Execution, errName, cause string) error {
	return e.m.exec.Stop(ctx, x, errName, cause)
}

// ExecutionEvent is the history event that records the execution a cloud job waits on (its ARN
// is the event's message): the latest one is the job's execution, which its detail, a redrive
// and `flow history` name.
const ExecutionEvent = "CloudExecution"

// LastExecution returns the ARN of the latest execution recorded in a job's history (events in
// order), or "".
func LastExecution(events []job.Event) string {
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Kind == ExecutionEvent {
			return events[i].Message
		}
	}
	return ""
}

// record adds x to job id's history unless it is the execution recorded last.
func (m *Mirror) record(ctx context.Context, id int64, x orchestrator.Execution) {
	if m.q == nil || id == 0 || x.ARN == "" {
		return
	}
	if evs, err := m.q.History(ctx, id); err == nil && LastExecution(evs) == x.ARN {
		return
	}
	m.q.AddEvent(ctx, id, ExecutionEvent, x.ARN, x.Name)
}

// Wait returns when the mirror sees x end (pushed or polled) or ctx ends. The execution goes
// into the job's history first (ExecutionEvent).
func (e executions) Wait(ctx context.Context, x orchestrator.Execution, progress job.Reporter) (orchestrator.Execution, error) {
	info, _ := job.InfoFrom(ctx)
	m := e.m
	m.record(ctx, info.ID, x)
	if x.Status != orchestrator.Running {
		return x, nil
	}
	if progress == nil {
		progress = job.Discard
	}
	w := &watch{arn: x.ARN, jobID: info.ID, interval: m.o.MinPoll, due: time.Now().Add(m.o.MinPoll), progress: progress,
		done: make(chan orchestrator.Execution, 1)}
	m.mu.Lock()
	if info.ID != 0 && info.ID == m.onScreen {
		w.due = time.Now()
	}
	m.watches[x.ARN] = w
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		if m.watches[x.ARN] == w {
			delete(m.watches, x.ARN)
		}
		m.mu.Unlock()
	}()
	select {
	case <-ctx.Done():
		return x, ctx.Err()
	case end := <-w.done:
		return end, nil
	}
}

// end delivers x's end to its watch once; it reports whether a job was waiting.
func (m *Mirror) end(x orchestrator.Execution) bool {
	m.mu.Lock()
	w := m.watches[x.ARN]
	if w == nil || w.ended {
		m.mu.Unlock()
		return false
	}
	w.ended = true
	delete(m.watches, x.ARN)
	m.mu.Unlock()
	if m.q != nil && w.jobID != 0 {
		m.q.AddEvent(context.Background(), w.jobID, "Execution"+statusEvent(x.Status), x.ARN, x.Error)
	}
	w.done <- x
	return true
}

// statusEvent is the history event name of an execution's end (ExecutionSucceeded, …).
func statusEvent(status string) string {
	switch status {
	case orchestrator.Succeeded:
		return "Succeeded"
	case orchestrator.Failed:
		return "Failed"
	case orchestrator.TimedOut:
		return "TimedOut"
	case orchestrator.Aborted:
		return "Aborted"
	}
	return status
}

// Run receives from the status queue (when there is one) and polls until ctx ends.
func (m *Mirror) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	if m.o.SQS != nil && m.o.StatusQueue != "" {
		wg.Add(1)
		go func() { defer wg.Done(); m.receive(ctx) }()
	}
	m.poll(ctx)
	wg.Wait()
	return nil
}

// poll describes due executions, the one on screen every MinPoll and the others within Budget.
func (m *Mirror) poll(ctx context.Context) {
	t := time.NewTicker(m.o.Tick)
	defer t.Stop()
	tokens, last := 1.0, time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := time.Now()
		tokens = min(tokens+now.Sub(last).Seconds()*m.o.Budget, max(1, m.o.Budget))
		last = now
		var due []*watch
		m.mu.Lock()
		var screen *watch
		for _, w := range m.watches {
			if w.jobID != 0 && w.jobID == m.onScreen {
				if !w.due.After(now) {
					screen = w
				}
				continue
			}
			if !w.due.After(now) {
				due = append(due, w)
			}
		}
		// The most overdue first, as many as the budget allows.
		pick := make([]*watch, 0, int(tokens))
		for len(pick) < int(tokens) && len(due) > 0 {
			k := 0
			for i, w := range due {
				if w.due.Before(due[k].due) {
					k = i
				}
			}
			pick = append(pick, due[k])
			due[k] = due[len(due)-1]
			due = due[:len(due)-1]
		}
		tokens -= float64(len(pick))
		for _, w := range pick {
			w.interval = min(w.interval+w.interval/2, m.o.MaxPoll)
			w.due = now.Add(w.interval)
		}
		if screen != nil {
			screen.due = now.Add(m.o.MinPoll)
		}
		m.mu.Unlock()
		if screen != nil {
			m.describe(ctx, screen, true)
		}
		for _, w := range pick {
			m.describe(ctx, w, false)
		}
	}
}

// describe polls one execution; for the job on screen it also reads progress and history.
func (m *Mirror) describe(ctx context.Context, w *watch, onScreen bool) {
	x, err := m.exec.DescribeARN(ctx, w.arn)
	if err != nil {
		return // offline or throttled: the next poll tries again
	}
	if x.Status != orchestrator.Running {
		m.end(x)
		return
	}
	if !onScreen {
		return
	}
	if done, total, ok := m.exec.MapRunItems(ctx, w.arn); ok && total > 0 {
		if pct, msg := sfnexec.MapProgress(done, total); pct != w.lastPct {
			w.lastPct = pct
			w.progress.Progress(pct, msg)
		}
	}
	if m.q == nil || w.jobID == 0 {
		return
	}
	evs, cur, err := m.exec.History(ctx, w.arn, w.history)
	if err != nil {
		return
	}
	for _, ev := range evs {
		m.q.AddEvent(ctx, w.jobID, ev.Type, ev.State, strconv.FormatInt(ev.ID, 10))
	}
	w.history = cur
}

// statusMessage is a message of the status queue: an EventBridge event of Step Functions, or a
// Lambda worker's reply (cloudworker.StatusReply).
type statusMessage struct {
	Source     string               `json:"source"`
	DetailType string               `json:"detail-type"`
	Detail     sfnexec.StatusChange `json:"detail"`
	// A worker's reply.
	JobID  string          `json:"job_id"`
	Status string          `json:"status"`
	Result json.RawMessage `json:"result"`
	Error  *job.Error      `json:"error"`
}

// receive long-polls the status queue, applies each message and deletes it after the commit.
func (m *Mirror) receive(ctx context.Context) {
	backoff := time.Second
	for ctx.Err() == nil {
		out, err := m.o.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &m.o.StatusQueue,
			MaxNumberOfMessages: 10, WaitTimeSeconds: 20})
		if err != nil {
			select {
			case <-ctx.Done():
			case <-time.After(backoff):
			}
			backoff = min(backoff*2, time.Minute)
			continue
		}
		backoff = time.Second
		for _, msg := range out.Messages {
			if m.apply(ctx, aws.ToString(msg.Body)) {
				m.o.SQS.DeleteMessage(context.WithoutCancel(ctx), &sqs.DeleteMessageInput{QueueUrl: &m.o.StatusQueue, ReceiptHandle: msg.ReceiptHandle})
			}
		}
	}
}

// apply applies one status message and reports whether it may be deleted: every message may,
// once what it says is committed (an execution's end is confirmed by DescribeExecution, so a
// stale or reordered event cannot end a job that runs on).
func (m *Mirror) apply(ctx context.Context, body string) bool {
	var s statusMessage
	if json.Unmarshal([]byte(body), &s) != nil {
		return true // not ours to read: never retried
	}
	switch {
	case s.Detail.ExecutionARN != "":
		if ev := s.Detail.Execution(); ev.Status == orchestrator.Running || ev.Status == "" {
			return true
		}
		m.mu.Lock()
		_, watched := m.watches[s.Detail.ExecutionARN]
		m.mu.Unlock()
		if !watched {
			return true
		}
		x, err := m.exec.DescribeARN(ctx, s.Detail.ExecutionARN)
		if err != nil {
			return false // seen again after the visibility timeout
		}
		if x.Status != orchestrator.Running {
			m.end(x)
		}
		return true
	case s.JobID != "":
		m.mu.Lock()
		w := m.replies[s.JobID]
		m.mu.Unlock()
		id, err := strconv.ParseInt(s.JobID, 10, 64)
		if w != nil {
			id, err = w.localID, nil
		}
		if m.q != nil && err == nil && id > 0 {
			detail := ""
			if s.Error != nil {
				detail = s.Error.Error()
			}
			m.q.AddEvent(ctx, id, "WorkerReply"+s.Status, s.Status, detail)
		}
		if w != nil {
			select {
			case w.ch <- Reply{JobID: s.JobID, Status: s.Status, Result: s.Result, Error: s.Error}:
			default: // the waiter reads the result object instead
			}
		}
	}
	return true
}

// StatusQueueClient is the SQS client the mirror long-polls the status queue with, from the
// SDK's configuration (endpoint from its own settings, e.g. AWS_ENDPOINT_URL_SQS).
func StatusQueueClient(cfg aws.Config) *sqs.Client { return sqs.NewFromConfig(cfg) }
