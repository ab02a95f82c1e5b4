// Package dispatch sends the jobs whose target is "cloud" to AWS. The jobs table is the outbox:
// submitting a cloud job is writing the job, in one SQLite transaction like any job, and the
// Dispatcher claims target='cloud' jobs through the queue's own verbs (Claim, Extend, Finish),
// exactly as the device's Worker claims target='device' ones.
//
// The design is the simplest that is correct: a cloud job runs the SAME family handler as on the
// device — orchestrator.Run over the family's workflow — with the cloud's executor (Step
// Functions, sync/sfnexec) and the cloud's blobs (S3, sync/s3blob) instead of the flow engine and
// the data folder. The family supplies a Handler that uploads its input (Cloud.UploadInput),
// shapes the execution's input as the workflow expects in the cloud, runs the orchestrator and
// brings the results home. Every step is idempotent, so a dispatcher killed at any point (kill -9)
// simply claims the job again when its lease returns it to the queue:
//
//   - the upload is content-addressed: HeadObject finds the bytes already there and sends
//     nothing; an interrupted multipart upload resumes from its finished parts;
//   - the execution's name is deterministic for the job, so a second StartExecution finds the
//     execution started before (ExecutionAlreadyExists with the same input is "already started",
//     the orchestrator's rule) instead of starting a second;
//   - results are applied to SQLite idempotently by job id.
//
// A cloud that cannot be reached (no network, throttling, a 5xx) leaves the job PENDING with
// "クラウドに接続できません — waiting for the network", due again after a jittered backoff from 1 s
// to 5 minutes (the attempt is not counted: queue Deferred); it goes out by itself when the
// network returns. A permission error (access denied, expired sign-in, a missing bucket or state
// machine) fails the job at once with E010 naming what to fix.
package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"jobdesk/engine/job"
	"jobdesk/engine/queue"
	"jobdesk/sync/awserr"
	"jobdesk/sync/cloudconfig"
	"jobdesk/sync/s3blob"
	"jobdesk/sync/sfnexec"
)

// Cloud is what a Handler runs a job with.
type Cloud struct {
	Config cloudconfig.Config
	Blobs  *s3blob.Store
	Exec   *sfnexec.Executor
	// SQS sends the queue-driven jobs' messages (cloud.json's queues).
	SQS SQSSender
}

// SQSSender is the part of the SQS client a Handler sends job messages with (*sqs.Client has it).
type SQSSender interface {
	SendMessage(ctx context.Context, in *sqs.SendMessageInput, o ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
}

// UploadInput puts the local file at path under the configured bucket, content-addressed
// ({prefix}inputs/{sha[:2]}/{sha}/{name}), reporting bytes sent as the job's progress from 0 to
// upTo percent, and returns its s3:// URI. Nothing is sent when the same bytes are there. sum is
// the file's hex SHA-256 when the job knows it already (it is read otherwise).
func (c *Cloud) UploadInput(ctx context.Context, path, sum string, upTo float64, r job.Reporter) (string, error) {
	if c.Blobs == nil || c.Config.Bucket == "" {
		return "", job.Errorf(job.E010, "No S3 bucket is configured: set bucket in cloud.json.").
			WithJa("S3 バケットが設定されていません。cloud.json の bucket を設定してください。").Permanent()
	}
	if sum == "" {
		var err error
		if sum, err = fileSHA256(ctx, path); err != nil {
			return "", err
		}
	}
	dest := s3blob.InputKey(c.Config.Location(), sum, filepath.Base(path))
	name := filepath.Base(path)
	var last atomic.Int64
	_, err := c.Blobs.Upload(ctx, path, dest, func(done, total int64) {
		if total <= 0 {
			return
		}
		// At most one report per percent.
		pct := done * 100 / total
		if last.Swap(pct+1) == pct+1 {
			return
		}
		r.Progress(float64(pct)*upTo/100, fmt.Sprintf("Uploading %s: %s of %s", name, mib(done), mib(total)))
	})
	if err != nil {
		return "", err
	}
	return dest, nil
}

func mib(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/(1<<20)) }

// Handler runs one cloud job of a type: upload, start and follow its execution, bring the
// results home. It returns the job's result (or job.PartialSuccess) like a queue handler.
type Handler func(ctx context.Context, c *Cloud, input json.RawMessage, r job.Reporter) (json.RawMessage, error)

// Options configure a Dispatcher.
type Options struct {
	// Handlers are the job types the dispatcher sends, each with its Handler.
	Handlers map[string]Handler
	// Owner names the dispatcher's leases (default "cloud-<pid>").
	Owner string
	// Concurrency is how many cloud jobs run at once (default 256: they mostly wait).
	Concurrency int
	// Visibility is the lease length, extended while a job runs (default 30 s).
	Visibility time.Duration
	// Backoff spaces the attempts while the cloud cannot be reached (default 1 s doubling up to
	// 5 minutes, ±20 % jitter).
	Backoff queue.Backoff
	// Idle bounds the sleep between two claims when nothing is due (default 5 s; a Wakeup ends it).
	Idle time.Duration
	// Beat is how often leases are extended and progress recorded (default Visibility/6).
	Beat time.Duration
}

// Dispatcher claims the cloud's jobs and runs them. Run it once per process.
type Dispatcher struct {
	q     *queue.Queue
	cloud *Cloud
	o     Options
	types []string

	mu      sync.Mutex
	running map[int64]*running
	offline int // consecutive times the cloud could not be reached

	lastSuccess atomic.Int64 // unix ms of the last job that reached the cloud
}

type running struct {
	lease   queue.Lease
	cancel  context.CancelCauseFunc
	pct     float64
	msg     string
	changed bool
}

// New returns a dispatcher of q's cloud jobs, run with cloud.
func New(q *queue.Queue, cloud *Cloud, o Options) *Dispatcher {
	if o.Owner == "" {
		o.Owner = fmt.Sprintf("cloud-%d", os.Getpid())
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 256
	}
	if o.Visibility <= 0 {
		o.Visibility = 30 * time.Second
	}
	if o.Backoff.Base <= 0 {
		o.Backoff = queue.Backoff{Base: time.Second, Factor: 2, Max: 5 * time.Minute, Jitter: 0.2}
	}
	if o.Idle <= 0 {
		o.Idle = 5 * time.Second
	}
	if o.Beat <= 0 {
		o.Beat = o.Visibility / 6
	}
	d := &Dispatcher{q: q, cloud: cloud, o: o, running: map[int64]*running{}}
	for t := range o.Handlers {
		d.types = append(d.types, t)
	}
	return d
}

// Types returns the job types the dispatcher sends.
func (d *Dispatcher) Types() []string { return d.types }

// LastSuccess is when a job last reached the cloud (zero: not since start).
func (d *Dispatcher) LastSuccess() time.Time {
	if ms := d.lastSuccess.Load(); ms > 0 {
		return time.UnixMilli(ms)
	}
	return time.Time{}
}

// Run claims and runs cloud jobs until ctx ends; then the jobs it holds go back to the queue
// (their executions keep running in the cloud, and are found again by name).
func (d *Dispatcher) Run(ctx context.Context) error {
	if len(d.types) == 0 {
		<-ctx.Done()
		return nil
	}
	if err := d.q.RegisterOwner(ctx, d.o.Owner); err != nil {
		return err
	}
	defer d.q.UnregisterOwner(context.WithoutCancel(ctx), d.o.Owner)
	wake, stopWake := d.q.Wakeups()
	defer stopWake()
	var wg sync.WaitGroup
	beatCtx, stopBeats := context.WithCancel(context.WithoutCancel(ctx))
	beatsDone := make(chan struct{})
	go func() { defer close(beatsDone); d.beats(beatCtx) }()
	defer func() {
		wg.Wait()
		stopBeats()
		<-beatsDone
	}()
	lastReap := time.Time{}
	for ctx.Err() == nil {
		// Jobs of a dispatcher that died (kill -9) or whose lease lapsed go back to the queue;
		// the device's Worker reaps too, but a process may run the dispatcher alone.
		if time.Since(lastReap) >= d.o.Visibility/2 {
			d.q.Reap(ctx)
			lastReap = time.Now()
		}
		free := d.o.Concurrency - d.count()
		var leases []queue.Lease
		if free > 0 {
			var err error
			leases, err = d.q.Claim(ctx, queue.ClaimParams{Owner: d.o.Owner, Target: job.TargetCloud, Types: d.types,
				Max: min(free, 64), Visibility: d.o.Visibility})
			if err != nil && ctx.Err() == nil {
				leases = nil
			}
		}
		for _, l := range leases {
			wg.Add(1)
			go func() { defer wg.Done(); d.run(ctx, l) }()
		}
		if len(leases) > 0 && len(leases) == min(free, 64) {
			continue // more may be due
		}
		sleep := d.o.Idle
		if wait, ok := d.q.NextDue(ctx, job.TargetCloud, d.types); ok {
			sleep = min(sleep, max(wait, 10*time.Millisecond))
		}
		if free <= 0 {
			sleep = min(sleep, 100*time.Millisecond)
		}
		select {
		case <-ctx.Done():
		case <-wake:
		case <-time.After(sleep):
		}
	}
	return nil
}

func (d *Dispatcher) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.running)
}

// run runs one claimed job and ends its attempt.
func (d *Dispatcher) run(parent context.Context, l queue.Lease) {
	bg := context.WithoutCancel(parent)
	if l.CancelRequested {
		d.q.Finish(bg, l.Cancelled())
		return
	}
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	ctx = job.WithInfo(ctx, l.Info)
	rn := &running{lease: l, cancel: cancel}
	d.mu.Lock()
	d.running[l.Info.ID] = rn
	d.mu.Unlock()
	rep := job.ReporterFunc(func(p float64, m string) {
		d.mu.Lock()
		rn.pct, rn.msg, rn.changed = p, m, true
		d.mu.Unlock()
	})
	out, err := d.o.Handlers[l.Info.Type](ctx, d.cloud, l.Input, rep)
	d.mu.Lock()
	delete(d.running, l.Info.ID)
	d.mu.Unlock()
	d.q.Finish(bg, d.outcome(parent, ctx, l, out, err))
}

// outcome is the end of one attempt: done, partial, cancelled, failed, or back to PENDING while
// the cloud cannot be reached (or JobDesk closes).
func (d *Dispatcher) outcome(parent, ctx context.Context, l queue.Lease, out json.RawMessage, err error) queue.Outcome {
	var partial *job.PartialResult
	switch {
	case err == nil:
		d.reached()
		return l.Succeeded(out, "")
	case errors.As(err, &partial):
		d.reached()
		return l.Partial(partial.Result, partial.Summary)
	case parent.Err() != nil:
		return l.Released("JobDesk closed; the cloud execution goes on")
	case errors.Is(context.Cause(ctx), job.ErrUserCancel):
		return l.Cancelled()
	}
	cloudErr := cloudError(err)
	if cloudErr != nil && cloudErr.Retryable {
		d.mu.Lock()
		d.offline++
		n := d.offline
		d.mu.Unlock()
		return l.Deferred(d.o.Backoff.Delay(n), awserr.OfflineJa)
	}
	d.reached()
	// Permanent: the cloud answered and refused (its E010 says what to fix, not the
	// orchestrator's "could not be started" around it), or the job itself failed there.
	if cloudErr != nil {
		err = cloudErr
	}
	return l.Failed(err, d.o.Backoff)
}

func (d *Dispatcher) reached() {
	d.mu.Lock()
	d.offline = 0
	d.mu.Unlock()
	d.lastSuccess.Store(time.Now().UnixMilli())
}

// Offline reports an error that waiting for the network can fix: somewhere in its chain, a
// retryable E010 (no answer, throttling, a 5xx, an interrupted call).
func Offline(err error) bool {
	e := cloudError(err)
	return e != nil && e.Retryable
}

// cloudError is the first E010 in err's chain: the orchestrator wraps a failed start in its own
// E015, so the whole chain is searched.
func cloudError(err error) *job.Error {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if je, ok := e.(*job.Error); ok && je.Code == job.E010 {
			return je
		}
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				if ce := cloudError(x); ce != nil {
					return ce
				}
			}
			return nil
		}
	}
	return nil
}

// beats extends the leases of running jobs (recording their progress when it moved) and stops
// the jobs a person cancelled, in one transaction per tick.
func (d *Dispatcher) beats(ctx context.Context) {
	t := time.NewTicker(d.o.Beat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		d.mu.Lock()
		beats := make([]queue.Heartbeat, 0, len(d.running))
		for id, rn := range d.running {
			beats = append(beats, queue.Heartbeat{ID: id, Token: rn.lease.Token, Visibility: d.o.Visibility,
				Progress: rn.changed, Percent: rn.pct, Message: rn.msg})
			rn.changed = false
		}
		d.mu.Unlock()
		if len(beats) == 0 {
			continue
		}
		lost, _ := d.q.Extend(ctx, beats...)
		cancelled, _ := d.q.CancelRequested(ctx, d.o.Owner)
		d.mu.Lock()
		for _, id := range lost {
			if rn := d.running[id]; rn != nil {
				rn.cancel(queue.ErrLeaseLost)
			}
		}
		for _, id := range cancelled {
			if rn := d.running[id]; rn != nil {
				rn.cancel(job.ErrUserCancel)
			}
		}
		d.mu.Unlock()
	}
}
