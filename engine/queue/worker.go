package queue

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"jobdesk/engine/job"
)

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

// Worker leases jobs of the types it handles and runs their handlers. Create it with NewWorker,
// register handlers with Handle, then Start it.
type Worker struct {
	q     *Queue
	opts  WorkerOptions
	owner string

	mu     sync.Mutex
	types  map[string]*handlerEntry
	active int // jobs holding a global slot
	runs   map[int64]*run
	// ready holds jobs leased ahead for the open group (types without limits of their own),
	// started as slots free up. Only short jobs are leased ahead (see quickRun), so a batch of
	// them costs one lease statement instead of one each, and a long job is never held here
	// while another process could run it.
	ready    []leasedJob
	quickRun float64 // moving average of the open group's handler time, in seconds
	freed    chan struct{}
	complete chan completion
	tokenSeq atomic.Int64

	stmtMu sync.Mutex
	stmts  map[string]*sql.Stmt // prepared once on the writer: parsing (and the history trigger) dominates otherwise
	idle   map[string]bool      // lease groups (types joined) that found no job last time; dispatch only

	stopOnce sync.Once
	cancel   context.CancelFunc
	done     chan struct{} // closed by Stop
	wg       sync.WaitGroup
}

// leasedJob is a job this worker leased, not yet started.
type leasedJob struct {
	info   job.Info
	input  []byte
	token  string
	vis    time.Duration
	cancel bool
}

// Leasing ahead: when the open group's handlers take less than quickJob on average, a lease
// statement takes up to leaseAhead jobs more than there are free slots.
const (
	quickJob   = 0.020 // seconds
	leaseAhead = 64
)

// run is one leased job in this process.
type run struct {
	id         int64
	typ        string
	token      string
	visibility time.Duration
	cancel     context.CancelCauseFunc

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
	var b [8]byte
	rand.Read(b[:])
	return &Worker{q: q, opts: o, owner: hex.EncodeToString(b[:]), types: map[string]*handlerEntry{},
		runs: map[int64]*run{}, quickRun: 1, stmts: map[string]*sql.Stmt{}, idle: map[string]bool{}, done: make(chan struct{}), freed: make(chan struct{}, 1), complete: make(chan completion, 1024)}
}

// Handle registers the handler of jobType. Call it before Start.
func (w *Worker) Handle(jobType string, h job.Handler, o TypeOptions) {
	if o.Orchestrator && o.Concurrency <= 0 {
		o.Concurrency = 256
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

// Owner returns the id under which this worker leases jobs.
func (w *Worker) Owner() string { return w.owner }

// Start registers this process as a lease owner, returns to the queue the jobs of owners that
// died, and starts leasing. It returns at once; Stop ends the work.
func (w *Worker) Start(ctx context.Context) error {
	host, _ := os.Hostname()
	if _, err := w.q.db.W.ExecContext(ctx, `INSERT INTO queue_owners(id, pid, host, started_at) VALUES(?,?,?,?)`,
		w.owner, os.Getpid(), host, nowMs()); err != nil {
		return dbError(err)
	}
	if _, err := w.Reap(ctx); err != nil {
		return err
	}
	w.q.Purge(ctx)
	ctx, w.cancel = context.WithCancel(ctx)
	w.wg.Add(3)
	go func() { defer w.wg.Done(); w.dispatch(ctx) }()
	go func() { defer w.wg.Done(); w.completer() }()
	go func() { defer w.wg.Done(); w.housekeeping(ctx) }()
	return nil
}

// Stop stops leasing, cancels running handlers, waits for their outcomes to be committed (a
// cancelled-by-shutdown job returns to the queue for the next start), and unregisters the owner.
func (w *Worker) Stop() {
	w.stopOnce.Do(func() {
		if w.cancel == nil {
			return
		}
		w.cancel()
		close(w.done)
		w.wg.Wait()
		w.closeStmts()
		w.q.db.W.Exec(`DELETE FROM queue_owners WHERE id=?`, w.owner)
	})
}

// Reap returns to the queue the jobs whose lease lapsed or whose owning process on this machine
// is gone. A job whose worker died does not lose an attempt; one whose lease lapsed while its
// process lived (a hung handler) does, and fails when it has none left.
func (w *Worker) Reap(ctx context.Context) (int64, error) {
	host, _ := os.Hostname()
	rows, err := w.q.db.R.QueryContext(ctx, `SELECT id, pid, host FROM queue_owners`)
	if err != nil {
		return 0, err
	}
	var dead []string
	for rows.Next() {
		var id, h string
		var pid int
		if rows.Scan(&id, &pid, &h) == nil && h == host && id != w.owner && !processAlive(pid) {
			dead = append(dead, id)
		}
	}
	rows.Close()
	now := nowMs()
	var n int64
	err = w.q.db.Tx(ctx, func(tx *sql.Tx) error {
		if len(dead) > 0 {
			ph := strings.TrimSuffix(strings.Repeat("?,", len(dead)), ",")
			args := []any{now, cancelledByUser}
			for _, d := range dead {
				args = append(args, d)
			}
			// A job whose cancel was asked for while its process was gone ends CANCELLED, not
			// run again.
			res, err := tx.ExecContext(ctx, `UPDATE jobs SET
				status=CASE WHEN cancel_requested=1 THEN 'CANCELLED' ELSE 'PENDING' END,
				attempts=CASE WHEN cancel_requested=1 THEN attempts ELSE max(attempts-1, 0) END,
				completed_at=CASE WHEN cancel_requested=1 THEN ?1 END,
				error=CASE WHEN cancel_requested=1 THEN ?2 ELSE error END,
				message=CASE WHEN cancel_requested=1 THEN 'Cancelled' ELSE 'Returned to the queue: the process running it stopped' END,
				lease_token=NULL, lease_until=NULL, lease_owner=NULL, cancel_requested=0, updated_at=?1
				WHERE status='RUNNING' AND lease_owner IN (`+ph+`)`, args...)
			if err != nil {
				return err
			}
			k, _ := res.RowsAffected()
			n += k
			if _, err := tx.ExecContext(ctx, `DELETE FROM queue_owners WHERE id IN (`+ph+`)`, args[2:]...); err != nil {
				return err
			}
		}
		lapsed := errorJSON(job.Errorf(job.E011, "the worker stopped answering (lease expired)").
			WithJa("処理中のワーカーが応答しなくなりました（リース期限切れ）。").WithName("States.HeartbeatTimeout"))
		res, err := tx.ExecContext(ctx, `UPDATE jobs SET
				status=CASE WHEN cancel_requested=1 THEN 'CANCELLED' WHEN attempts>=max_attempts THEN 'FAILED' ELSE 'PENDING' END,
				completed_at=CASE WHEN cancel_requested=1 OR attempts>=max_attempts THEN ?1 END,
				error=CASE WHEN cancel_requested=1 THEN ?3 ELSE ?2 END,
				message=CASE WHEN cancel_requested=1 THEN 'Cancelled' ELSE 'Returned to the queue: its lease expired' END,
				lease_token=NULL, lease_until=NULL, lease_owner=NULL, cancel_requested=0, updated_at=?1
			WHERE status='RUNNING' AND lease_until < ?1`, now, lapsed, cancelledByUser)
		if err != nil {
			return err
		}
		k, _ := res.RowsAffected()
		n += k
		return nil
	})
	if err != nil {
		return 0, dbError(err)
	}
	if n > 0 {
		w.q.signal()
		w.q.publish(job.Event{Kind: job.EventExternalChange, At: time.Now()})
	}
	return n, nil
}

// leaseGroup is one lease statement's worth: types sharing a limit.
type leaseGroup struct {
	types  []string
	limit  int
	global bool // takes global slots
	open   bool // the types without limits of their own (may lease ahead)
	vis    time.Duration
}

// groups returns the lease statements to run, capped types first and the open group last, and
// how many global slots are free. A capped type's limit is not reserved: dispatch takes the
// slots it actually leased from those the groups after it may use, so a capped type with nothing
// to do never starves the others.
func (w *Worker) groups() ([]leaseGroup, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	free := w.opts.Workers - w.active
	slots := free
	var gs []leaseGroup
	open := leaseGroup{global: true, open: true, limit: free, vis: w.opts.Visibility}
	for t, e := range w.types {
		vis := e.o.Visibility
		if vis <= 0 {
			vis = w.opts.Visibility
		}
		switch {
		case e.o.Orchestrator:
			if c := e.o.Concurrency - e.active; c > 0 {
				gs = append(gs, leaseGroup{types: []string{t}, limit: c, vis: vis})
			}
		case e.o.Concurrency > 0:
			if c := min(e.o.Concurrency-e.active, free); c > 0 {
				gs = append(gs, leaseGroup{types: []string{t}, limit: c, global: true, vis: vis})
			}
		default:
			open.types = append(open.types, t)
			open.vis = max(open.vis, vis)
		}
	}
	open.limit = free
	if w.quickRun < quickJob && free > 0 {
		// Short jobs: lease a batch ahead; they start from w.ready as slots free up.
		open.limit += max(0, leaseAhead-len(w.ready))
	}
	if len(open.types) > 0 && free > 0 && len(w.ready) == 0 {
		gs = append(gs, open)
	}
	return gs, slots
}

// dispatch leases work while there are free slots, and otherwise sleeps until something can
// change that: a local enqueue, a freed slot, another process's commit, or the next due time.
func (w *Worker) dispatch(ctx context.Context) {
	defer w.releaseReady()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var lastErr string
	for {
		leased, starved, failed := 0, false, false
		gs, slots := w.groups()
		free := slots
		for _, g := range gs {
			if g.global {
				// Capped types lease within what is still free; the open group may lease ahead.
				ahead := 0
				if g.open {
					ahead = max(0, g.limit-slots)
				}
				if g.limit = min(g.limit, free+ahead); g.limit <= 0 {
					continue // no slot: a freed slot wakes dispatch
				}
			}
			n, err := w.lease(ctx, g)
			if g.global {
				free -= min(n, free)
			}
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				// A database error (busy for longer than the busy timeout, disk full): say so
				// once, and try again in a second rather than at once.
				if err.Error() != lastErr {
					lastErr = err.Error()
					fmt.Fprintf(os.Stderr, "jobdesk: could not lease jobs (will keep trying): %v\n", err)
				}
				failed = true
				continue
			}
			lastErr = ""
			leased += n
			if n < g.limit {
				starved = true
			}
		}
		if leased > 0 && !starved {
			continue
		}
		wait := time.Hour
		if failed {
			wait = time.Second
		} else if starved {
			if d, ok := w.nextDue(ctx); ok {
				wait = max(d, time.Millisecond)
			}
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-w.q.wake:
		case <-w.freed:
		case <-timer.C:
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}

// anyDue reports whether a job of one of types is waiting and due at now: one index seek
// (jobs_status_type) per status and type.
func (w *Worker) anyDue(ctx context.Context, types []string, now int64) bool {
	args := []any{}
	parts := make([]string, 0, 2*len(types))
	for _, t := range types {
		for _, st := range []string{"PENDING", "RETRYING"} {
			parts = append(parts, `SELECT 1 FROM jobs WHERE status='`+st+`' AND type=? AND target='device' AND run_at<=?`)
			args = append(args, t, now)
		}
	}
	var one int
	err := w.q.db.R.QueryRowContext(ctx, `SELECT EXISTS (`+strings.Join(parts, " UNION ALL ")+`)`, args...).Scan(&one)
	return err != nil || one == 1 // on a read error, let the lease statement decide
}

// nextDue returns how long until the earliest waiting job of a handled type becomes due.
func (w *Worker) nextDue(ctx context.Context) (time.Duration, bool) {
	types := w.Types()
	if len(types) == 0 {
		return 0, false
	}
	// One index seek (jobs_status_type) per status and type, not a read of every waiting job.
	args := []any{}
	parts := make([]string, 0, 2*len(types))
	for _, t := range types {
		for _, st := range []string{"PENDING", "RETRYING"} {
			parts = append(parts, `SELECT min(run_at) AS t FROM jobs WHERE status='`+st+`' AND type=? AND target='device'`)
			args = append(args, t)
		}
	}
	var at sql.NullInt64
	err := w.q.db.R.QueryRowContext(ctx, `SELECT min(t) FROM (`+strings.Join(parts, " UNION ALL ")+`)`, args...).Scan(&at)
	if err != nil || !at.Valid {
		return 0, false
	}
	return time.Until(time.UnixMilli(at.Int64)), true
}

// numbered returns n numbered placeholders from ?first: "?6,?7".
func numbered(first, n int) string {
	ps := make([]string, n)
	for i := range ps {
		ps[i] = fmt.Sprintf("?%d", first+i)
	}
	return strings.Join(ps, ",")
}

func placeholders(n int) string { return strings.TrimSuffix(strings.Repeat("?,", n), ",") }

// stmt returns the prepared statement for query on the writer connection.
func (w *Worker) stmt(query string) (*sql.Stmt, error) {
	w.stmtMu.Lock()
	defer w.stmtMu.Unlock()
	if st, ok := w.stmts[query]; ok {
		return st, nil
	}
	st, err := w.q.db.W.Prepare(query)
	if err != nil {
		return nil, err
	}
	w.stmts[query] = st
	return st, nil
}

func (w *Worker) closeStmts() {
	w.stmtMu.Lock()
	defer w.stmtMu.Unlock()
	for k, st := range w.stmts {
		st.Close()
		delete(w.stmts, k)
	}
}

const completeSQL = `UPDATE jobs SET status=?1, result=?2, error=?3,
		progress=CASE WHEN ?1 IN ('SUCCEEDED','PARTIAL') THEN 100 ELSE progress END,
		message=?4, run_at=?5, attempts=attempts-?6, completed_at=?7, updated_at=?8,
		lease_token=NULL, lease_until=NULL, lease_owner=NULL, cancel_requested=0
	WHERE id=?9 AND lease_token=?10`

func (w *Worker) lease(ctx context.Context, g leaseGroup) (int, error) {
	now := nowMs()
	key := strings.Join(g.types, "\x00")
	if w.idle[key] && !w.anyDue(ctx, g.types, now) {
		// The group found nothing last time and nothing of its types is due now: the lease
		// statement would walk every waiting job of other types (jobs_ready is ordered by
		// priority, not type) to find none.
		return 0, nil
	}
	token := fmt.Sprintf("%s-%d", w.owner, w.tokenSeq.Add(1))
	args := []any{token, now + g.vis.Milliseconds(), w.owner, now, g.limit}
	for _, t := range g.types {
		args = append(args, t)
	}
	st, err := w.stmt(`UPDATE jobs SET status='RUNNING', attempts=attempts+1, receives=receives+1,
			lease_token=?1, lease_until=?2, lease_owner=?3, started_at=coalesce(started_at, ?4), updated_at=?4, message=''
		WHERE id IN (SELECT id FROM jobs INDEXED BY jobs_ready WHERE status IN ('PENDING','RETRYING') AND target='device' AND run_at<=?4
			AND type IN (` + numbered(6, len(g.types)) + `) ORDER BY priority DESC, run_at, id LIMIT ?5)
		RETURNING id, type, name, input, attempts, max_attempts, coalesce(parent_id, 0), cancel_requested`)
	if err != nil {
		return 0, err
	}
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return 0, err
	}
	var ls []leasedJob
	for rows.Next() {
		l := leasedJob{token: token, vis: g.vis}
		var cancel int
		if err := rows.Scan(&l.info.ID, &l.info.Type, &l.info.Name, &l.input, &l.info.Attempt, &l.info.MaxAttempts,
			&l.info.ParentID, &cancel); err != nil {
			rows.Close()
			return 0, err
		}
		l.cancel = cancel != 0
		l.info.Output = w.q.opts.DataDir
		ls = append(ls, l)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	w.idle[key] = len(ls) == 0
	at := time.Now()
	for _, l := range ls {
		w.q.publish(job.Event{JobID: l.info.ID, Kind: job.EventStarted, Status: job.Running, At: at})
	}
	if !g.open {
		// The lease took no more than the free slots of this group.
		w.mu.Lock()
		for _, l := range ls {
			w.take(l.info.Type)
		}
		w.mu.Unlock()
		for _, l := range ls {
			w.start(ctx, l)
		}
		return len(ls), nil
	}
	w.mu.Lock()
	w.ready = append(w.ready, ls...)
	w.mu.Unlock()
	w.startReady(ctx)
	return len(ls), nil
}

// take counts a job of type typ as running: it holds its type's slot and, unless its type is an
// orchestrator, a global one. Call with w.mu held.
func (w *Worker) take(typ string) {
	e := w.types[typ]
	e.active++
	if !e.o.Orchestrator {
		w.active++
	}
}

// startReady starts jobs leased ahead while global slots are free. Nothing starts once the
// worker is stopping: dispatch gives those jobs back (releaseReady).
func (w *Worker) startReady(ctx context.Context) {
	for ctx.Err() == nil {
		w.mu.Lock()
		if len(w.ready) == 0 || w.active >= w.opts.Workers {
			w.mu.Unlock()
			return
		}
		l := w.ready[0]
		w.ready = w.ready[1:]
		w.take(l.info.Type)
		w.mu.Unlock()
		w.start(ctx, l)
	}
}

// releaseReady gives the jobs leased ahead back to the queue without using an attempt; dispatch
// calls it as it stops.
func (w *Worker) releaseReady() {
	w.mu.Lock()
	ls := w.ready
	w.ready = nil
	w.mu.Unlock()
	if len(ls) == 0 {
		return
	}
	batch := make([]completion, len(ls))
	for i, l := range ls {
		batch[i] = completion{id: l.info.ID, token: l.token, attempt: l.info.Attempt, max: l.info.MaxAttempts,
			status: job.Pending, release: true, message: "Returned to the queue: JobDesk stopped"}
	}
	w.commit(batch)
}

func (w *Worker) start(ctx context.Context, l leasedJob) {
	info, input, token, vis, cancelled := l.info, l.input, l.token, l.vis, l.cancel
	w.mu.Lock()
	e := w.types[info.Type]
	hctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	r := &run{id: info.ID, typ: info.Type, token: token, visibility: vis, cancel: cancel, lastBeat: time.Now()}
	w.runs[info.ID] = r
	w.mu.Unlock()
	w.q.mu.Lock()
	w.q.running[info.ID] = func() { cancel(errUserCancel) }
	w.q.mu.Unlock()
	if cancelled {
		cancel(errUserCancel)
	}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		// Shutting down cancels the handler, and the job goes back to the queue for the next start.
		stop := context.AfterFunc(ctx, func() { cancel(context.Canceled) })
		defer stop()
		began := time.Now()
		c := w.execute(hctx, e, info, input, r)
		w.complete <- c // before the run is forgotten, so Stop's drain cannot miss it
		w.mu.Lock()
		if !e.o.Orchestrator && e.o.Concurrency <= 0 {
			w.quickRun = 0.8*w.quickRun + 0.2*time.Since(began).Seconds()
		}
		e.active--
		if !e.o.Orchestrator {
			w.active--
		}
		delete(w.runs, info.ID)
		w.mu.Unlock()
		w.q.mu.Lock()
		delete(w.q.running, info.ID)
		w.q.mu.Unlock()
		cancel(nil)
		w.startReady(ctx)
		select {
		case w.freed <- struct{}{}:
		default:
		}
	}()
}

type outcome struct {
	out json.RawMessage
	err error
}

// execute runs the handler and turns what it returned into the completion to commit.
func (w *Worker) execute(ctx context.Context, e *handlerEntry, info job.Info, input []byte, r *run) completion {
	var cancelTimeout context.CancelFunc = func() {}
	if e.o.Timeout > 0 {
		ctx, cancelTimeout = context.WithTimeoutCause(ctx, e.o.Timeout, errTimeout)
	}
	defer cancelTimeout()
	done := make(chan outcome, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				e := job.Errorf(job.E016, "the handler crashed: %v", p).
					WithJa("処理中に内部エラーが発生しました。").WithName("States.Runtime").Permanent()
				e.Cause = string(debug.Stack())
				done <- outcome{err: e}
			}
		}()
		out, err := e.h(job.WithInfo(ctx, info), json.RawMessage(input), reporterFor(w, r))
		done <- outcome{out, err}
	}()
	var res outcome
	select {
	case res = <-done:
	case <-ctx.Done():
		// The handler should return promptly now; if it does not, the outcome is recorded
		// anyway and its goroutine is abandoned.
		grace := time.NewTimer(w.opts.CancelGrace)
		select {
		case res = <-done:
		case <-grace.C:
			res = outcome{err: context.Cause(ctx)}
		}
		grace.Stop()
	}
	c := completion{id: info.ID, token: r.token, attempt: info.Attempt, max: info.MaxAttempts}
	r.mu.Lock()
	c.message = r.msg
	r.mu.Unlock()
	cause := context.Cause(ctx)
	switch {
	case errors.Is(cause, context.Canceled) && !errors.Is(cause, errUserCancel) && res.err != nil:
		// Shutdown: give the job back without using an attempt.
		c.status = job.Pending
		c.release = true
		c.message = "Returned to the queue: JobDesk stopped"
		return c
	case res.err == nil:
		c.status = job.Succeeded
		c.result = res.out
		return c
	}
	var partial *job.PartialResult
	var deferred *job.DeferredError
	switch {
	case errors.As(res.err, &partial):
		c.status = job.Partial
		c.result = partial.Result
		c.message = partial.Summary
		return c
	case errors.As(res.err, &deferred):
		c.status = job.Pending
		c.release = true
		c.delay = deferred.After
		c.message = deferred.Message
		return c
	case errors.Is(cause, errUserCancel):
		c.status = job.Cancelled
		c.err = job.Errorf(job.E013, "cancelled by the user").WithJa("ユーザーがキャンセルしました。").WithName("States.Aborted")
		c.message = "Cancelled"
		return c
	}
	var je *job.Error
	if errors.Is(cause, errTimeout) {
		je = job.Errorf(job.E011, "the job took longer than its limit of %s", e.o.Timeout).
			WithJa(fmt.Sprintf("処理が制限時間（%s）を超えたため停止しました。", e.o.Timeout)).WithName("States.Timeout")
	} else {
		je = job.AsError(res.err)
	}
	c.err = je
	if je.Retryable && info.Attempt < info.MaxAttempts {
		b := DefaultBackoff
		if e.o.Backoff != nil {
			b = *e.o.Backoff
		}
		c.status = job.Retrying
		c.delay = b.Delay(info.Attempt)
		c.message = fmt.Sprintf("Attempt %d of %d failed; retrying in %.1f s", info.Attempt, info.MaxAttempts, c.delay.Seconds())
		return c
	}
	c.status = job.Failed
	if je.Name == "States.Timeout" {
		c.status = job.TimedOut
	}
	c.message = je.Message
	return c
}

// reporterFor returns the Reporter handed to a handler: it stores the latest progress for the
// flusher, which writes it at most ten times a second.
func reporterFor(w *Worker, r *run) job.Reporter {
	return job.ReporterFunc(func(pct float64, msg string) {
		r.mu.Lock()
		r.pct, r.msg, r.dirty = clampPct(pct), msg, true
		r.mu.Unlock()
	})
}

// completion is a finished attempt waiting to be committed.
type completion struct {
	id      int64
	token   string
	attempt int
	max     int
	status  job.Status
	result  json.RawMessage
	err     *job.Error
	message string
	delay   time.Duration
	release bool // back to PENDING without using the attempt
}

// completer commits finished attempts. Whatever has queued up while the previous commit ran goes
// into the next transaction (group commit), so a completion is never held back waiting for a
// batch to fill: at most the attempts finishing during one commit are at risk in a crash.
func (w *Worker) completer() {
	batch := make([]completion, 0, 256)
	for {
		var c completion
		select {
		case c = <-w.complete:
		case <-w.done:
			w.drainOnStop()
			return
		}
		batch = append(batch[:0], c)
	drain:
		for len(batch) < cap(batch) {
			select {
			case c := <-w.complete:
				batch = append(batch, c)
			default:
				break drain
			}
		}
		w.commit(batch)
	}
}

// drainOnStop commits the outcomes of handlers still finishing after Stop.
func (w *Worker) drainOnStop() {
	for {
		select {
		case c := <-w.complete:
			w.commit([]completion{c})
			continue
		default:
		}
		w.mu.Lock()
		n := len(w.runs)
		w.mu.Unlock()
		if n == 0 && len(w.complete) == 0 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (w *Worker) commit(batch []completion) {
	now := nowMs()
	var events []job.Event
	// Prepare before the transaction: the writer pool has one connection, which the
	// transaction holds until it ends.
	prepared, err := w.stmt(completeSQL)
	if err == nil {
		err = w.q.db.Tx(context.Background(), func(tx *sql.Tx) error {
			stmt := tx.Stmt(prepared)
			defer stmt.Close()
			events = events[:0]
			for _, c := range batch {
				var completed any
				if c.status.Final() {
					completed = now
				}
				var result any
				if len(c.result) > 0 {
					result = []byte(c.result)
				}
				release := 0
				if c.release {
					release = 1
				}
				res, err := stmt.Exec(string(c.status), result, errorJSON(c.err), c.message, now+c.delay.Milliseconds(),
					release, completed, now, c.id, c.token)
				if err != nil {
					return err
				}
				if n, _ := res.RowsAffected(); n == 1 {
					ev := job.Event{JobID: c.id, Kind: kindOf(c.status), Status: c.status, Message: c.message, At: time.UnixMilli(now)}
					if c.status == job.Succeeded || c.status == job.Partial {
						ev.Progress = 100
					}
					events = append(events, ev)
				}
			}
			return nil
		})
	}
	if err != nil {
		// The leases stay; they lapse and the jobs run again. Nothing is lost.
		fmt.Fprintf(os.Stderr, "jobdesk: could not record %d finished jobs: %v\n", len(batch), err)
		return
	}
	for _, e := range events {
		w.q.publish(e)
	}
	for _, c := range batch {
		if c.status == job.Pending || c.status == job.Retrying {
			w.q.signal()
			break
		}
	}
}

func kindOf(s job.Status) string {
	switch s {
	case job.Succeeded, job.Partial:
		return job.EventSucceeded
	case job.Failed:
		return job.EventFailed
	case job.Retrying:
		return job.EventRetrying
	case job.TimedOut:
		return job.EventTimedOut
	case job.Cancelled:
		return job.EventCancelled
	case job.Pending:
		return "TaskLeaseReleased"
	}
	return string(s)
}

// housekeeping flushes coalesced progress (every 100 ms), extends leases of running jobs, picks
// up cancels requested by other processes, and reaps lapsed leases.
func (w *Worker) housekeeping(ctx context.Context) {
	flush := time.NewTicker(100 * time.Millisecond)
	defer flush.Stop()
	reap := time.NewTicker(w.opts.ReapInterval)
	defer reap.Stop()
	purge := time.NewTicker(time.Hour)
	defer purge.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-flush.C:
			w.flush(ctx)
		case <-reap.C:
			w.Reap(ctx)
		case <-purge.C:
			w.q.Purge(ctx)
		}
	}
}

func (w *Worker) flush(ctx context.Context) {
	w.mu.Lock()
	if len(w.runs) == 0 {
		w.mu.Unlock()
		return
	}
	type upd struct {
		r        *run
		pct      float64
		msg      string
		progress bool
	}
	var ups []upd
	now := time.Now()
	for _, r := range w.runs {
		r.mu.Lock()
		u := upd{r: r, pct: r.pct, msg: r.msg, progress: r.dirty}
		beat := now.Sub(r.lastBeat) > r.visibility/3
		if u.progress || beat {
			r.dirty = false
			r.lastBeat = now
			ups = append(ups, u)
		}
		r.mu.Unlock()
	}
	w.mu.Unlock()
	var cancels []int64
	ms := now.UnixMilli()
	err := w.q.db.Tx(ctx, func(tx *sql.Tx) error {
		for _, u := range ups {
			var err error
			if u.progress {
				_, err = tx.ExecContext(ctx, `UPDATE jobs SET progress=?, message=?, lease_until=?, updated_at=?
					WHERE id=? AND lease_token=?`, u.pct, u.msg, ms+u.r.visibility.Milliseconds(), ms, u.r.id, u.r.token)
			} else {
				_, err = tx.ExecContext(ctx, `UPDATE jobs SET lease_until=? WHERE id=? AND lease_token=?`,
					ms+u.r.visibility.Milliseconds(), u.r.id, u.r.token)
			}
			if err != nil {
				return err
			}
		}
		rows, err := tx.QueryContext(ctx, `SELECT id FROM jobs WHERE lease_owner=? AND status='RUNNING' AND cancel_requested=1`, w.owner)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id int64
			if rows.Scan(&id) == nil {
				cancels = append(cancels, id)
			}
		}
		return rows.Err()
	})
	if err != nil {
		return
	}
	for _, u := range ups {
		if u.progress {
			w.q.publish(job.Event{JobID: u.r.id, Kind: job.EventProgress, Status: job.Running, Progress: u.pct, Message: u.msg, At: now})
		}
	}
	for _, id := range cancels {
		w.mu.Lock()
		r := w.runs[id]
		w.mu.Unlock()
		if r != nil {
			r.cancel(errUserCancel)
		}
	}
}

// cancelledByUser is the error of a job cancelled by the user, as stored.
var cancelledByUser = errorJSON(job.Errorf(job.E013, "cancelled by the user").WithJa("ユーザーがキャンセルしました。").WithName("States.Aborted"))
