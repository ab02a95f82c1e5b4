package queue

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"jobdesk/engine/job"
)

// Claiming and holding a lease: SQS's ReceiveMessage (Claim) and ChangeMessageVisibility
// (Extend). A consumer claims due jobs of the types it runs, for the target it serves (the
// Worker: the target of its WorkerOptions, the device's by default), holds each lease with
// heartbeats while the work runs, and ends each attempt with Finish (complete.go). A lease that is
// not extended lapses, and the reaper (reaper.go) returns its job to the queue.

// ErrLeaseLost is returned when a lease is no longer held: it lapsed and the job was returned to
// the queue (and perhaps claimed again), or the job was settled already. Nothing was changed.
var ErrLeaseLost = errors.New("the job's lease is no longer held")

// ClaimParams say which jobs a consumer claims.
type ClaimParams struct {
	// Owner names the consumer holding the leases: Worker.Owner, or any id unique to the
	// consumer. Register it with RegisterOwner so that its jobs return to the queue at once when
	// its process dies; otherwise they return when their leases lapse. Required.
	Owner string
	// Target is where the claimed jobs run: job.TargetDevice or job.TargetCloud. Required.
	Target string
	// Types are the job types to claim. Required.
	Types []string
	// Max is how many jobs to claim at most, in one statement (default 1).
	Max int
	// Visibility is the lease length: the jobs return to the queue unless the lease is extended
	// within it (default 30 s).
	Visibility time.Duration

	// crashed narrows the claim by whether a process died running the job (the Worker's
	// quarantine of suspects, claimloop.go); consumers elsewhere claim any.
	crashed crashFilter
}

// crashFilter selects jobs by whether a process died while running them (jobs.crashes).
type crashFilter int

const (
	anyJob      crashFilter = iota
	notCrashed              // no process died running it
	onlyCrashed             // a suspect: a process died running it
)

// sql is the filter's condition on jobs, to append to a WHERE clause.
func (f crashFilter) sql() string {
	switch f {
	case notCrashed:
		return " AND crashes=0"
	case onlyCrashed:
		return " AND crashes>0"
	}
	return ""
}

func (p *ClaimParams) normalize() error {
	if p.Owner == "" || len(p.Types) == 0 || (p.Target != job.TargetDevice && p.Target != job.TargetCloud) {
		return job.Errorf(job.E014, "a claim needs an owner, job types and a target (device or cloud)").
			WithJa("ジョブの取得には所有者・ジョブの種類・実行先（device または cloud）が必要です。")
	}
	if p.Max <= 0 {
		p.Max = 1
	}
	if p.Visibility <= 0 {
		p.Visibility = 30 * time.Second
	}
	return nil
}

// Lease is one claimed job: what its consumer needs to run it and to end the attempt.
type Lease struct {
	// Info is the job as its handler sees it; Attempt counts this claim.
	Info job.Info
	// Input is the job's input (JSON).
	Input json.RawMessage
	// Token identifies this lease: Extend and the lease's Outcome name it, so a consumer whose
	// lease lapsed cannot overwrite a later attempt.
	Token string
	// Visibility is the lease length the job was claimed with.
	Visibility time.Duration
	// CancelRequested is set when a person asked to cancel the job before this claim: end the
	// attempt with Cancelled.
	CancelRequested bool

	// started is when the job first started (Unix milliseconds; 0: not known), for the outcome
	// its waiters are given (Queue.Ended).
	started int64
}

// claimSQL leases up to ?5 due jobs of the n types ?7… for target ?6, with crash filter f, in
// one statement. The LIMIT is ?5+0, not ?5: SQLite plans with the value bound to a bare LIMIT
// parameter and so re-prepares the statement whenever the next claim asks for another number
// of jobs, which a worker's claims do nearly every time (its free slots change).
func claimSQL(n int, f crashFilter) string {
	return `UPDATE jobs SET status='RUNNING', attempts=attempts+1, receives=receives+1,
			lease_token=?1, lease_until=?2, lease_owner=?3, started_at=coalesce(started_at, ?4), updated_at=?4, message=''
		WHERE id IN (SELECT id FROM jobs INDEXED BY jobs_ready WHERE status IN ('PENDING','RETRYING') AND target=?6 AND run_at<=?4
			AND type IN (` + numbered(7, n) + `)` + f.sql() + ` ORDER BY priority DESC, run_at, id LIMIT ?5+0)
		RETURNING id, type, name, input, attempts, max_attempts, coalesce(parent_id, 0), cancel_requested, started_at`
}

// Claim leases up to p.Max due jobs (PENDING or RETRYING, run time reached) of p.Types for
// p.Target, highest priority first, each for p.Visibility. Every claim counts an attempt and
// records TaskStarted. It returns no jobs when none is due. A claim made while other writes of
// this process wait for the writer is committed with them (groupcommit.go).
func (q *Queue) Claim(ctx context.Context, p ClaimParams) ([]Lease, error) {
	ls, _, err := q.claimMarked(ctx, p)
	return ls, err
}

// claimMarked is Claim, and also returns the change mark (changes) read just before the claim
// statement ran: the jobs of every change signalled up to that mark were committed before the
// claim, so a claim that took fewer jobs than it could left none of them behind.
func (q *Queue) claimMarked(ctx context.Context, p ClaimParams) ([]Lease, uint64, error) {
	if err := p.normalize(); err != nil {
		return nil, 0, err
	}
	st, err := q.claimStmt(len(p.Types), p.crashed)
	if err != nil {
		return nil, 0, q.dbError(err)
	}
	var ls []Lease
	var mark uint64
	err = q.do(&write{ctx: ctx, claim: true,
		run: func(ctx context.Context, tx *sql.Tx) (Announce, error) {
			var err error
			mark = q.changes()
			ls, err = q.claimIn(ctx, tx, st, p)
			return q.announceClaimed(ls), err
		},
		alone: func() error {
			// One statement commits by itself: no BEGIN and COMMIT round trips.
			var err error
			mark = q.changes()
			if ls, err = q.claim(ctx, st, p); err != nil {
				return q.dbError(err)
			}
			q.announceClaimed(ls)()
			return nil
		}})
	if err != nil {
		return nil, 0, err
	}
	return ls, mark, nil
}

// ClaimTx is Claim inside the caller's write transaction, so that a claim can be recorded
// atomically with other rows (a dispatch in an outbox). Call the Announce after the commit.
func (q *Queue) ClaimTx(ctx context.Context, tx *sql.Tx, p ClaimParams) ([]Lease, Announce, error) {
	if err := p.normalize(); err != nil {
		return nil, nil, err
	}
	st, err := tx.PrepareContext(ctx, claimSQL(len(p.Types), p.crashed))
	if err != nil {
		return nil, nil, err
	}
	defer st.Close()
	ls, err := q.claim(ctx, st, p)
	if err != nil {
		return nil, nil, err
	}
	return ls, q.announceClaimed(ls), nil
}

// claimIn runs st, the claim statement prepared on the writer connection (claimStmt), in tx.
func (q *Queue) claimIn(ctx context.Context, tx *sql.Tx, st *sql.Stmt, p ClaimParams) ([]Lease, error) {
	txst := tx.StmtContext(ctx, st)
	defer txst.Close()
	return q.claim(ctx, txst, p)
}

func (q *Queue) claim(ctx context.Context, st *sql.Stmt, p ClaimParams) ([]Lease, error) {
	now := q.nowMs()
	token := fmt.Sprintf("%s-%d", p.Owner, q.tokenSeq.Add(1))
	args := make([]any, 0, 6+len(p.Types))
	args = append(args, token, now+p.Visibility.Milliseconds(), p.Owner, now, p.Max, p.Target)
	for _, t := range p.Types {
		args = append(args, t)
	}
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ls []Lease
	for rows.Next() {
		l := Lease{Token: token, Visibility: p.Visibility}
		var input []byte
		var cancel int
		if err := rows.Scan(&l.Info.ID, &l.Info.Type, &l.Info.Name, &input, &l.Info.Attempt, &l.Info.MaxAttempts,
			&l.Info.ParentID, &cancel, &l.started); err != nil {
			return nil, err
		}
		l.Input = input
		l.CancelRequested = cancel != 0
		l.Info.Output = q.opts.DataDir
		ls = append(ls, l)
	}
	return ls, rows.Err()
}

func (q *Queue) announceClaimed(ls []Lease) Announce {
	return func() {
		at := q.now()
		for _, l := range ls {
			q.publish(job.Event{JobID: l.Info.ID, Kind: job.EventStarted, Status: job.Running, At: at})
		}
	}
}

// claimStmt returns claimSQL for n types and filter f, prepared once on the writer connection:
// parsing the statement (and the history trigger it fires) would otherwise dominate a claim.
func (q *Queue) claimStmt(n int, f crashFilter) (*sql.Stmt, error) {
	q.stmtMu.Lock()
	defer q.stmtMu.Unlock()
	key := claimKey{n, f}
	if st, ok := q.claims[key]; ok {
		return st, nil
	}
	st, err := q.db.W.Prepare(claimSQL(n, f))
	if err != nil {
		return nil, err
	}
	q.claims[key] = st
	return st, nil
}

// claimKey names a prepared claim statement.
type claimKey struct {
	types   int
	crashed crashFilter
}

// numbered returns n numbered placeholders from ?first: "?6,?7".
func numbered(first, n int) string {
	ps := make([]string, n)
	for i := range ps {
		ps[i] = fmt.Sprintf("?%d", first+i)
	}
	return strings.Join(ps, ",")
}

// Heartbeat extends one lease and, when Progress is set, records the job's progress with it.
type Heartbeat struct {
	ID         int64
	Token      string        // the lease being extended (Lease.Token)
	Visibility time.Duration // the lease now lasts this long from now
	Progress   bool          // also record Percent and Message, and publish a progress event
	Percent    float64       // 0–100
	Message    string
}

// Extend extends leases in one transaction (SQS's ChangeMessageVisibilityBatch) and returns the
// ids whose lease was no longer held (ErrLeaseLost); those jobs are left as they are.
func (q *Queue) Extend(ctx context.Context, beats ...Heartbeat) (lost []int64, err error) {
	var announce Announce
	err = q.db.Tx(ctx, func(tx *sql.Tx) error {
		lost, announce, err = q.ExtendTx(ctx, tx, beats...)
		return err
	})
	if err != nil {
		return nil, q.dbError(err)
	}
	announce()
	return lost, nil
}

// ExtendTx is Extend inside the caller's write transaction. Call the Announce after the commit.
func (q *Queue) ExtendTx(ctx context.Context, tx *sql.Tx, beats ...Heartbeat) ([]int64, Announce, error) {
	now := q.now()
	ms := now.UnixMilli()
	var lost []int64
	var progressed []job.Event
	for _, b := range beats {
		var res sql.Result
		var err error
		if b.Progress {
			b.Percent = clampPct(b.Percent)
			res, err = tx.ExecContext(ctx, `UPDATE jobs SET progress=?, message=?, lease_until=?, updated_at=?
					WHERE id=? AND lease_token=?`, b.Percent, b.Message, ms+b.Visibility.Milliseconds(), ms, b.ID, b.Token)
		} else {
			res, err = tx.ExecContext(ctx, `UPDATE jobs SET lease_until=? WHERE id=? AND lease_token=?`,
				ms+b.Visibility.Milliseconds(), b.ID, b.Token)
		}
		if err != nil {
			return nil, nil, err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			lost = append(lost, b.ID)
			continue
		}
		if b.Progress {
			progressed = append(progressed, job.Event{JobID: b.ID, Kind: job.EventProgress, Status: job.Running,
				Progress: b.Percent, Message: b.Message, At: now})
		}
	}
	return lost, func() {
		for _, e := range progressed {
			q.publish(e)
		}
	}, nil
}

// CancelRequested returns the ids of owner's running jobs that a person asked to cancel (from
// this process or another). Their consumer stops the work and ends each attempt with Cancelled.
func (q *Queue) CancelRequested(ctx context.Context, owner string) ([]int64, error) {
	return cancelRequested(ctx, q.db.R, owner)
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func cancelRequested(ctx context.Context, db querier, owner string) ([]int64, error) {
	rows, err := db.QueryContext(ctx, `SELECT id FROM jobs WHERE lease_owner=? AND status='RUNNING' AND cancel_requested=1`, owner)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if rows.Scan(&id) == nil {
			ids = append(ids, id)
		}
	}
	return ids, rows.Err()
}

// NextDue returns how long until the earliest waiting job of types for target becomes due (zero
// or less when one is due now), and false when none is waiting: a consumer with nothing to claim
// sleeps that long, or until Wakeups signals. Jobs a process died running (suspects, which a
// Worker runs alone when it is idle) are left out.
func (q *Queue) NextDue(ctx context.Context, target string, types []string) (time.Duration, bool) {
	if len(types) == 0 {
		return 0, false
	}
	st, err := q.dueStmt(dueKey{nextDue, len(types)})
	if err != nil {
		return 0, false
	}
	var at sql.NullInt64
	if err := st.QueryRowContext(ctx, dueArgs(target, types)...).Scan(&at); err != nil || !at.Valid {
		return 0, false
	}
	return time.UnixMilli(at.Int64).Sub(q.now()), true
}

// anyDue reports whether a job of one of types for target is waiting and due at now, suspects
// left out (see NextDue). A consumer
// whose last claim found nothing asks this first: the claim statement walks the waiting jobs in
// priority order, all types together.
func (q *Queue) anyDue(ctx context.Context, target string, types []string, now int64) bool {
	st, err := q.dueStmt(dueKey{anyDue, len(types)})
	if err != nil {
		return true // let the claim decide
	}
	var one int
	err = st.QueryRowContext(ctx, append(dueArgs(target, types), now)...).Scan(&one)
	return err != nil || one == 1 // on a read error, let the claim decide
}

// dueKey names a prepared read of due jobs: its kind and its number of types. The types are
// bound as parameters, so one statement serves every list of that length, in any order.
type dueKey struct {
	kind  int // anyDue or nextDue
	types int
}

const (
	anyDue = iota
	nextDue
)

// liveStatus is the condition of the partial index jobs_status_type (migration 008), which a
// query repeats literally to be planned on it: the statuses of a job not yet ended, PENDING,
// RETRYING and RUNNING, are those from PENDING to RUNNING in text order. A range, not an IN
// list: every write of a job tests the condition, and SQLite tests an IN list of more than
// two constants by building a table of them for each statement run.
const liveStatus = `status >= 'PENDING' AND status <= 'RUNNING'`

// dueSQL is the statement of k: one index seek (jobs_status_type: status, type, target, run_at)
// per status and type, ?1 the target, ?2… the types, then now (anyDue). Re-parsing it on each
// pass of a dispatcher cost more than everything else the dispatcher did.
func dueSQL(k dueKey) string {
	parts := make([]string, 0, 2*k.types)
	for i := 0; i < k.types; i++ {
		for _, st := range []string{"PENDING", "RETRYING"} {
			if k.kind == anyDue {
				parts = append(parts, fmt.Sprintf(`SELECT 1 FROM jobs WHERE status='%s' AND type=?%d AND target=?1 AND run_at<=?%d AND crashes=0 AND `+liveStatus, st, i+2, k.types+2))
			} else {
				parts = append(parts, fmt.Sprintf(`SELECT min(run_at) AS t FROM jobs WHERE status='%s' AND type=?%d AND target=?1 AND crashes=0 AND `+liveStatus, st, i+2))
			}
		}
	}
	if k.kind == anyDue {
		return `SELECT EXISTS (` + strings.Join(parts, " UNION ALL ") + `)`
	}
	return `SELECT min(t) FROM (` + strings.Join(parts, " UNION ALL ") + `)`
}

func dueArgs(target string, types []string) []any {
	args := make([]any, 0, 2+len(types))
	args = append(args, target)
	for _, t := range types {
		args = append(args, t)
	}
	return args
}

// dueStmt returns dueSQL(k), prepared once on the reader pool.
func (q *Queue) dueStmt(k dueKey) (*sql.Stmt, error) {
	q.stmtMu.Lock()
	defer q.stmtMu.Unlock()
	if st, ok := q.dueReads[k]; ok {
		return st, nil
	}
	st, err := q.db.R.Prepare(dueSQL(k))
	if err != nil {
		return nil, err
	}
	q.dueReads[k] = st
	return st, nil
}
