// Package dispatch sends the jobs whose target is "cloud" to AWS. The jobs table is the outbox:
// submitting a cloud job is writing the job, in one SQLite transaction like any job, and the
// Dispatcher is a queue.Worker of target cloud: the same claim loop, heartbeats, cancels and
// reaping as the device's Worker, over target='cloud' jobs.
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
	"math"
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
	// Concurrency is how many cloud jobs run at once, all types together (default 256: they
	// mostly wait).
	Concurrency int
	// Visibility is the lease length, extended while a job runs (default 30 s); lapsed leases
	// are reaped every half of it.
	Visibility time.Duration
	// Backoff spaces the attempts while the cloud cannot be reached, and the retries of a job
	// that failed there (default 1 s doubling up to 5 minutes, ±20 % jitter).
	Backoff queue.Backoff
}

// Dispatcher runs the cloud's jobs: it is a queue.Worker of target cloud whose handlers are the
// families' cloud Handlers, each holding the Cloud it runs with. Run it once per process.
type Dispatcher struct {
	q     *queue.Queue
	cloud *Cloud
	o     Options
	types []string

	mu      sync.Mutex
	offline int // consecutive times the cloud could not be reached

	lastSuccess atomic.Int64 // unix ms of the last job that reached the cloud
}

// New returns a dispatcher of q's cloud jobs, run with cloud.
func New(q *queue.Queue, cloud *Cloud, o Options) *Dispatcher {
	if o.Concurrency <= 0 {
		o.Concurrency = 256
	}
	if o.Visibility <= 0 {
		o.Visibility = 30 * time.Second
	}
	if o.Backoff.Base <= 0 {
		o.Backoff = queue.Backoff{Base: time.Second, Factor: 2, Max: 5 * time.Minute, Jitter: 0.2}
	}
	d := &Dispatcher{q: q, cloud: cloud, o: o}
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

// Run claims and runs cloud jobs until ctx ends; then it waits for the jobs it holds, which go
// back to the queue (their executions keep running in the cloud, and are found again by name).
func (d *Dispatcher) Run(ctx context.Context) error {
	if len(d.types) == 0 {
		<-ctx.Done()
		return nil
	}
	w := queue.NewWorker(d.q, queue.WorkerOptions{Target: job.TargetCloud, Workers: d.o.Concurrency,
		Visibility: d.o.Visibility, ReapInterval: d.o.Visibility / 2,
		// A cloud job's handler returns promptly when cancelled (each AWS call is bounded by
		// CallTimeout): its outcome is the one it returns, however long stopping takes.
		CancelGrace: time.Duration(math.MaxInt64)})
	for t, h := range d.o.Handlers {
		// The types share the worker's slots (Concurrency caps them all together).
		w.Handle(t, d.handler(h), queue.TypeOptions{Backoff: &d.o.Backoff})
	}
	if err := w.Start(ctx); err != nil {
		return err
	}
	<-ctx.Done()
	w.Stop()
	return nil
}

// handler is h as the worker runs it: with the Cloud, a cloud that cannot be reached deferring
// the job (the attempt is not counted) after a backoff that grows while it stays unreachable, a
// permanent refusal failing it with the cloud's E010, and a succeeded job's message cleared.
func (d *Dispatcher) handler(h Handler) job.Handler {
	return func(ctx context.Context, input json.RawMessage, r job.Reporter) (json.RawMessage, error) {
		var pct atomic.Uint64 // the last percent reported (float64 bits)
		out, err := h(ctx, d.cloud, input, job.ReporterFunc(func(p float64, m string) {
			pct.Store(math.Float64bits(p))
			r.Progress(p, m)
		}))
		var partial *job.PartialResult
		switch {
		case err == nil:
			d.reached()
			r.Progress(math.Float64frombits(pct.Load()), "") // the job ends with no message of its own, as the queue shows it
			return out, nil
		case errors.As(err, &partial):
			d.reached()
			return out, err
		case ctx.Err() != nil:
			// JobDesk closes (the job goes back to the queue) or a person cancelled it.
			return out, err
		}
		cloudErr := cloudError(err)
		if cloudErr != nil && cloudErr.Retryable {
			d.mu.Lock()
			d.offline++
			n := d.offline
			d.mu.Unlock()
			return nil, job.Defer(d.o.Backoff.Delay(n), awserr.OfflineJa)
		}
		d.reached()
		// Permanent: the cloud answered and refused (its E010 says what to fix, not the
		// orchestrator's "could not be started" around it), or the job itself failed there.
		if cloudErr != nil {
			err = cloudErr
		}
		return nil, err
	}
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
