package queue

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"jobdesk/engine/job"
	"jobdesk/engine/store"
)

// The Worker is a consumer of the queue: it claims the jobs of one target (the device's, or with
// WorkerOptions.Target the cloud's) of the types it has handlers for (claimloop.go), runs the
// handlers with progress, timeouts and cancel, and ends each attempt with Finish (execute.go). This file holds its configuration, its life cycle
// and its housekeeping: heartbeats that carry progress, cancels asked for by other processes,
// reaping and purging.

// WorkerOptions configure a Worker.
type WorkerOptions struct {
	// Workers is how many handlers run at once, all types together (default: number of CPUs).
	// Orchestrator types do not take these slots.
	Workers int
	// Visibility is the default lease length (default 30 s). A lease is extended while its
	// handler runs; it lapses only when the process stops or hangs.
	Visibility time.Duration
	// ReapInterval is how often lapsed leases are returned to the queue (default 1 s).
	ReapInterval time.Duration
	// CancelGrace is how long a cancelled or timed-out handler may take to return before the
	// worker records the outcome anyway and frees the slot (default 1 s).
	CancelGrace time.Duration
	// Target is where the claimed jobs run: job.TargetDevice (the default) or job.TargetCloud,
	// whose handlers send the work to the cloud and follow it. A worker of cloud jobs leaves
	// purging and backing up the database to the device's worker, and a job it gives back as
	// JobDesk stops says that its cloud execution goes on.
	Target string
}

// TypeOptions configure one job type.
type TypeOptions struct {
	// Concurrency caps how many jobs of this type run at once in this process (0: no cap of its
	// own; for an Orchestrator, 0 means 256).
	Concurrency int
	// Timeout limits one attempt (0: none). An attempt that exceeds it fails with E011 and the
	// error name States.Timeout; the retry policy decides between RETRYING and TIMED_OUT.
	Timeout time.Duration
	// Visibility overrides the worker's lease length for this type.
	Visibility time.Duration
	// Backoff overrides DefaultBackoff.
	Backoff *Backoff
	// Orchestrator marks types that mostly wait on other jobs (a workflow execution): they do
	// not take one of the global worker slots, so they cannot starve the jobs they wait for.
	Orchestrator bool
}

type handlerEntry struct {
	h      job.Handler
	o      TypeOptions
	active int
}

// Worker claims jobs of the types it handles and runs their handlers. Create it with NewWorker,
// register handlers with Handle, then Start it.
type Worker struct {
	q     *Queue
	opts  WorkerOptions
	owner string

	mu     sync.Mutex
	types  map[string]*handlerEntry
	active int // jobs holding a global slot
	runs   map[int64]*run
	// ready holds jobs claimed ahead for the open group (types without limits of their own),
	// started as slots free up. Only short jobs are claimed ahead (see quickRun), so a batch of
	// them costs one claim statement instead of one each, and a long job is never held here
	// while another process could run it.
	ready    []Lease
	quickRun float64 // moving average of the open group's handler time, in seconds
	freed    chan struct{}
	complete chan Outcome
	holding  atomic.Bool // the completer holds outcomes it could not commit (disk full)
	// uncommitted counts outcomes handed to the completer and not yet committed;
	// suspectWaits is set while a suspect waits for them (leaseSuspect).
	uncommitted  atomic.Int64
	suspectWaits atomic.Bool
	// What the claim loop knows without asking the database (its goroutine only): idle holds
	// the lease groups (types joined) that took every due job there was, with the change mark
	// (Queue.changes) read before that claim; dueAt is when the earliest waiting job of dueTypes
	// falls due (never: none waits), read at change mark dueMark-1 (0: not known).
	idle map[string]uint64
	// soloID is the suspect running alone (leaseSuspect), 0 when none; suspectsMark-1 is the
	// change mark at which the last suspect claim found none (0: never asked).
	soloID       int64
	suspectsMark uint64
	dueAt        time.Time
	dueMark      uint64
	dueTypes     map[string]bool

	// runCtx is the context of the started worker's jobs; stopping is set as Stop begins (w.mu
	// held): no job is handed to the worker from then on (handoff.go).
	runCtx   context.Context
	stopping bool

	stopOnce sync.Once
	cancel   context.CancelFunc
	done     chan struct{} // closed by Stop
	wg       sync.WaitGroup
}

// run is one claimed job running in this process.
type run struct {
	lease  Lease
	cancel context.CancelCauseFunc

	mu       sync.Mutex
	pct      float64
	msg      string
	dirty    bool
	lastBeat time.Time
}

var (
	errUserCancel = job.ErrUserCancel
	errTimeout    = errors.New("the attempt exceeded its timeout")
)

// NewWorker returns a worker for q.
func NewWorker(q *Queue, o WorkerOptions) *Worker {
	if o.Workers <= 0 {
		o.Workers = runtime.NumCPU()
	}
	if o.Visibility <= 0 {
		o.Visibility = 30 * time.Second
	}
	if o.ReapInterval <= 0 {
		o.ReapInterval = time.Second
	}
	if o.CancelGrace <= 0 {
		o.CancelGrace = time.Second
	}
	if o.Target == "" {
		o.Target = job.TargetDevice
	}
	var b [8]byte
	rand.Read(b[:])
	return &Worker{q: q, opts: o, owner: hex.EncodeToString(b[:]), types: map[string]*handlerEntry{},
		runs: map[int64]*run{}, quickRun: 1, idle: map[string]uint64{}, dueTypes: map[string]bool{}, done: make(chan struct{}),
		freed: make(chan struct{}, 1), complete: make(chan Outcome, 1024)}
}

// Handle registers the handler of jobType. Call it before Start.
func (w *Worker) Handle(jobType string, h job.Handler, o TypeOptions) {
	if o.Orchestrator && o.Concurrency <= 0 {
		o.Concurrency = 256
	}
	if o.Orchestrator {
		w.q.noteWaiter(jobType)
	}
	w.mu.Lock()
	w.types[jobType] = &handlerEntry{h: h, o: o}
	w.mu.Unlock()
}

// Types returns the registered job types.
func (w *Worker) Types() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, 0, len(w.types))
	for t := range w.types {
		out = append(out, t)
	}
	return out
}

// Owner returns the id under which this worker claims jobs (ClaimParams.Owner).
func (w *Worker) Owner() string { return w.owner }

// Start registers this process as a lease owner, returns to the queue the jobs of owners that
// died, and starts claiming. It returns at once; Stop ends the work.
func (w *Worker) Start(ctx context.Context) error {
	if err := w.q.RegisterOwner(ctx, w.owner); err != nil {
		return err
	}
	if _, err := w.q.Reap(ctx); err != nil {
		return err
	}
	if w.opts.Target == job.TargetDevice {
		w.q.Purge(ctx)
	}
	w.q.keepReserve()
	wake, unsubscribe := w.q.Wakeups()
	ctx, w.cancel = context.WithCancel(ctx)
	w.mu.Lock()
	w.runCtx = ctx
	w.mu.Unlock()
	w.q.addTaker(w)
	w.wg.Add(3)
	go func() { defer w.wg.Done(); defer unsubscribe(); w.claimLoop(ctx, wake) }()
	go func() { defer w.wg.Done(); w.completer() }()
	go func() { defer w.wg.Done(); w.housekeeping(ctx) }()
	return nil
}

// Stop stops claiming, cancels running handlers, waits for their outcomes to be committed (a
// cancelled-by-shutdown job returns to the queue for the next start), and unregisters the owner.
func (w *Worker) Stop() {
	w.stopOnce.Do(func() {
		if w.cancel == nil {
			return
		}
		w.q.removeTaker(w)
		w.mu.Lock()
		w.stopping = true
		w.mu.Unlock()
		w.cancel()
		close(w.done)
		w.wg.Wait()
		w.q.UnregisterOwner(context.Background(), w.owner)
	})
}

// housekeeping flushes coalesced progress (every 100 ms), extends leases of running jobs, picks
// up cancels requested by other processes, reaps lapsed leases, purges old jobs and keeps the
// rolling backup.
func (w *Worker) housekeeping(ctx context.Context) {
	flush := time.NewTicker(100 * time.Millisecond)
	defer flush.Stop()
	reap := time.NewTicker(w.opts.ReapInterval)
	defer reap.Stop()
	purge := time.NewTicker(time.Hour)
	defer purge.Stop()
	backup := time.NewTimer(time.Minute)
	defer backup.Stop()
	if w.opts.Target != job.TargetDevice {
		purge.Stop()
		backup.Stop()
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-flush.C:
			w.heartbeat(ctx)
		case <-reap.C:
			w.q.Reap(ctx)
		case <-purge.C:
			w.q.Purge(ctx)
		case <-backup.C:
			w.backup(ctx)
			backup.Reset(time.Hour)
		}
	}
}

// heartbeat writes the progress reported since the last one and extends the leases due for it
// (a third of their length), in one transaction, then cancels the running jobs whose cancel was
// asked for in another process.
func (w *Worker) heartbeat(ctx context.Context) {
	w.mu.Lock()
	if len(w.runs) == 0 {
		w.mu.Unlock()
		return
	}
	var beats []Heartbeat
	now := w.q.now()
	for _, r := range w.runs {
		r.mu.Lock()
		b := Heartbeat{ID: r.lease.Info.ID, Token: r.lease.Token, Visibility: r.lease.Visibility,
			Progress: r.dirty, Percent: r.pct, Message: r.msg}
		if b.Progress || now.Sub(r.lastBeat) > r.lease.Visibility/3 {
			r.dirty = false
			r.lastBeat = now
			beats = append(beats, b)
		}
		r.mu.Unlock()
	}
	w.mu.Unlock()
	var announce Announce
	var cancels []int64
	err := w.q.db.Tx(ctx, func(tx *sql.Tx) error {
		var err error
		if _, announce, err = w.q.ExtendTx(ctx, tx, beats...); err != nil {
			return err
		}
		cancels, err = cancelRequested(ctx, tx, w.owner)
		return err
	})
	if err != nil {
		return
	}
	announce()
	for _, id := range cancels {
		w.mu.Lock()
		r := w.runs[id]
		w.mu.Unlock()
		if r != nil {
			r.cancel(errUserCancel)
		}
	}
}

// backup takes the database's rolling backup when one is due (Options.BackupEvery).
func (w *Worker) backup(ctx context.Context) {
	if w.q.opts.BackupEvery < 0 {
		return
	}
	if _, err := store.BackupIfDue(ctx, w.q.db, w.q.opts.BackupEvery, store.DefaultBackupKeep); err != nil && ctx.Err() == nil {
		fmt.Fprintf(os.Stderr, "jobdesk: could not back up the database: %v\n", err)
	}
}
