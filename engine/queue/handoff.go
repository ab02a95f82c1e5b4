package queue

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"jobdesk/engine/job"
)

// Hand-off: a job enqueued alone (EnqueueWatched, an EnqueueBatch of one) while a Worker of this
// process has a free slot for it and nothing else is due is written already claimed by that
// worker, in the enqueue's own transaction, and started after the commit. It is the claim the
// worker would make at that moment — the same lease, attempt count, TaskStarted history row and
// events — without the job's PENDING row being written, indexed as ready, then updated again by
// a claim statement in a transaction of its own. A workflow's tasks (a Map's items) each cost
// two writes of the job instead of three.
//
// A job is handed off only when the claim would surely take it: the worker runs (not stopping,
// no suspect alone, the disk not full, no outcome held back), has a free global slot, holds no
// job claimed ahead, handles the job's type without a limit of its own (the types of its open
// claim group), serves the job's target, and no other job for that target is due (read inside
// the transaction; a suspect counts). Otherwise the job is enqueued PENDING as always. A crash
// right after the commit leaves a RUNNING job leased to the dead process, as after a claim:
// the reaper returns it to the queue.

// handedSQL is insertSQL writing the job claimed: RUNNING, its first attempt counted, leased by
// the 17th parameter with the 18th as token until the 19th, started at its creation. It writes
// nothing when a job for its target is due at its creation (the 7th and 8th parameters), any
// type, suspects too, since a claim could take that one first: its run_at is then NULL, which
// the column refuses, and OR IGNORE skips the row, as it does when the dedup key names a job
// already there. So a hand-off costs one statement, not a read and a write.
const handedSQL = `INSERT OR IGNORE INTO jobs(type, name, status, priority, target, input, max_attempts, run_at,
	dedup_key, parent_id, retry_of, created_at, updated_at, number,
	attempts, receives, lease_owner, lease_token, lease_until, started_at)
	VALUES(?,?,'RUNNING',?,?,?,?,
		iif(EXISTS (SELECT 1 FROM jobs INDEXED BY jobs_ready
			WHERE status IN ('PENDING','RETRYING') AND target=? AND run_at<=?), NULL, ?),
		?,?,?,?,?,
		(SELECT iif(?, last + 1, -last) FROM (SELECT ` + lastNumber + ` AS last)),
		1, 1, ?, ?, ?, ?)`

// handedEventSQL is the history row a claim's status change writes (the jobs_history trigger,
// migration 003): TaskStarted, RUNNING, no progress, no message.
const handedEventSQL = `INSERT INTO job_events(job_id, at, kind, status, progress, message, detail)
	VALUES(?, ?, 'TaskStarted', 'RUNNING', 0, '', '')`

// handoffStmts are the hand-off's statements, prepared on the writer connection in Open.
type handoffStmts struct {
	insert, event *sql.Stmt
}

func (h *handoffStmts) prepare(db *sql.DB) error {
	var err error
	if h.insert, err = db.Prepare(handedSQL); err != nil {
		return err
	}
	h.event, err = db.Prepare(handedEventSQL)
	return err
}

func (h *handoffStmts) close() {
	for _, st := range []*sql.Stmt{h.insert, h.event} {
		if st != nil {
			st.Close()
		}
	}
}

// handoff is a job written claimed by a worker, to start once the write is committed.
type handoff struct {
	w     *Worker
	lease Lease
}

// addTaker lets w take jobs enqueued in this process (Worker.Start); removeTaker stops that.
func (q *Queue) addTaker(w *Worker) {
	q.mu.Lock()
	q.takers = append(q.takers, w)
	q.mu.Unlock()
}

func (q *Queue) removeTaker(w *Worker) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i, t := range q.takers {
		if t == w {
			q.takers = append(q.takers[:i], q.takers[i+1:]...)
			return
		}
	}
}

// handOff writes p, due at once, claimed by a worker of this process that can start it now, in
// tx, and returns the hand-off; nil (and nothing written) when no worker can, another job for
// p's target is due, or p's dedup key names a job already there. On an error the caller's
// transaction is to be rolled back.
func (q *Queue) handOff(ctx context.Context, tx *sql.Tx, p *Params, now int64) (*handoff, error) {
	if !p.NotBefore.IsZero() || p.Target == "" {
		return nil, nil
	}
	q.mu.Lock()
	takers := q.takers
	q.mu.Unlock()
	if len(takers) == 0 || q.Health().DiskFull {
		return nil, nil
	}
	var w *Worker
	var vis time.Duration
	for _, t := range takers {
		if v, ok := t.reserve(p.Type, p.Target); ok {
			w, vis = t, v
			break
		}
	}
	if w == nil {
		return nil, nil
	}
	token := fmt.Sprintf("%s-%d", w.owner, q.tokenSeq.Add(1))
	args := []any{p.Type, p.Name, p.Priority, p.Target, []byte(p.Input), p.MaxAttempts, p.Target, now, now,
		nullable(p.DedupKey), nullable(p.ParentID), nullable(p.RetryOf), now, now, p.numbered(),
		w.owner, token, now + vis.Milliseconds(), now}
	res, err := tx.StmtContext(ctx, q.handed.insert).ExecContext(ctx, args...)
	if err != nil {
		w.unreserve(p.Type)
		return nil, err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		w.unreserve(p.Type) // a job is due for the target, or the dedup key names one already there
		return nil, nil
	}
	id, err := res.LastInsertId()
	if err == nil {
		_, err = tx.StmtContext(ctx, q.handed.event).ExecContext(ctx, id, now)
	}
	if err != nil {
		w.unreserve(p.Type)
		return nil, err
	}
	l := Lease{Info: job.Info{ID: id, Type: p.Type, Name: p.Name, Attempt: 1, MaxAttempts: p.MaxAttempts, ParentID: p.ParentID,
		Output: q.opts.DataDir}, Input: p.Input, Token: token, Visibility: vis, started: now}
	return &handoff{w: w, lease: l}, nil
}

// begin starts the handed-off job (its write committed) and tells subscribers it started.
func (h *handoff) begin() {
	q := h.w.q
	q.publish(job.Event{JobID: h.lease.Info.ID, Kind: job.EventStarted, Status: job.Running, At: q.now()})
	h.w.begin(h.lease)
}

// cancel gives the slot back (the write was not committed).
func (h *handoff) cancel() { h.w.unreserve(h.lease.Info.Type) }

// reserve takes a slot of w for a job of typ for target about to be handed off, and returns the
// lease length a claim would give it; false when w would not claim such a job now (see the
// hand-off's conditions above). Each reservation ends in begin or unreserve.
func (w *Worker) reserve(typ, target string) (time.Duration, bool) {
	if w.opts.Target != target || w.holding.Load() {
		return 0, false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	e := w.types[typ]
	if w.runCtx == nil || w.stopping || w.soloID != 0 || len(w.ready) > 0 || w.active >= w.opts.Workers ||
		e == nil || e.o.Orchestrator || e.o.Concurrency > 0 {
		return 0, false
	}
	// The open claim group's lease length: the longest of its types'.
	vis := w.opts.Visibility
	for _, o := range w.types {
		if !o.o.Orchestrator && o.o.Concurrency <= 0 {
			vis = max(vis, o.o.Visibility)
		}
	}
	w.take(typ)
	w.wg.Add(1) // Stop waits for the reservation to end
	return vis, true
}

// unreserve gives back a slot taken by reserve.
func (w *Worker) unreserve(typ string) {
	w.mu.Lock()
	e := w.types[typ]
	e.active--
	w.active--
	w.mu.Unlock()
	w.wg.Done()
	select {
	case w.freed <- struct{}{}:
	default:
	}
}

// begin starts a handed-off job in the slot reserve took. Should the worker be stopping, the
// job is given back to the queue instead, as the jobs claimed ahead are (releaseReady), from a
// goroutine of its own: begin runs after the commit, maybe in the goroutine writing the group.
func (w *Worker) begin(l Lease) {
	if w.launch(w.runCtx, l, true) {
		w.wg.Done()
		return
	}
	go func() {
		defer w.unreserve(l.Info.Type)
		w.commit([]Outcome{l.Released(w.stoppedMessage())})
	}()
}
