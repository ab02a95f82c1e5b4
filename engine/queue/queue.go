// Package queue is JobDesk's durable job queue on SQLite, with Amazon SQS's semantics: a job is
// leased with a visibility timeout and a lease token, heartbeats extend the lease, a lease that
// lapses (the worker died) returns the job to the queue, and retryable failures come back after an
// exponential backoff with jitter. On top of that it keeps what a desktop job runner needs: eight
// statuses (job.Status), progress and history, cancel of a running job, per-type concurrency and
// timeouts, dedup keys, parents for fan-out, a number for each job a person started (#1, #2, …,
// apart from the ids that fan-out shares; migration 006), and events published after each
// commit. It also survives what a desktop meets: a job that keeps killing its process fails
// after Options.PoisonLimit deaths (reaper.go), and a full disk pauses the workers until space
// returns (health.go).
//
// Several processes may share one database: leases keep them apart, and a watcher on
// PRAGMA data_version wakes a process when another one commits, so no process polls for work in
// a sleep loop.
//
// The queue's verbs follow SQS's, so that any consumer can use them, with …Tx twins that work
// inside the caller's transaction where a caller may need one: Enqueue (send, send.go), Claim (receive: lease due jobs
// of some types for one target, claim.go), Extend (heartbeat), and Finish with an Outcome of the
// lease — Complete, Fail and Defer for one job (complete.go). Reap returns lapsed leases to the
// queue (reaper.go). The Worker (worker.go, claimloop.go, execute.go) is the device's consumer,
// built on those verbs: it claims job.TargetDevice jobs and runs their handlers; a cloud
// dispatcher claims job.TargetCloud jobs the same way. Finish, Claim and EnqueueBatch calls made
// at the same moment share one transaction (group commit, groupcommit.go), and a job enqueued
// alone while a worker of this process would claim it at once is written claimed by that
// worker (hand-off, handoff.go). This file holds the Queue and the reads
// and changes people ask for (get, list, counts, history, cancel, retry); events.go tells
// subscribers and consumers what changed.
package queue

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"jobdesk/engine/job"
	"jobdesk/engine/store"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations is the queue's schema; Open applies it.
var Migrations = store.MigrationsFrom("queue", migrationFiles, "migrations")

// Defaults from the seeds' retry rules.
const (
	DefaultMaxAttempts = 3
	DefaultRetention   = 90 * 24 * time.Hour
	// DefaultPoisonLimit is how many times a job may be running in a process that dies before
	// it fails as the likely cause (Options.PoisonLimit).
	DefaultPoisonLimit = 3
)

// ErrNotFound is returned for a job id that does not exist.
var ErrNotFound = errors.New("job not found")

// Options configure a Queue.
type Options struct {
	// DataDir is the data folder, passed to handlers in job.Info.
	DataDir string
	// Retention is how long finished jobs are kept (default 90 days; negative keeps them forever).
	Retention time.Duration
	// PoisonLimit is how many times a job may be running in a process that dies (a crash, a
	// kill) before it fails with E016 "the job stopped JobDesk N times" instead of being
	// received again by the next start (default DefaultPoisonLimit). A death does not use an
	// attempt. Jobs of orchestrator types (TypeOptions.Orchestrator) are not counted: they
	// wait on the jobs that do the work, one of which is the likely culprit.
	PoisonLimit int
	// BackupEvery is how often a running Worker keeps a backup of the database in the data
	// folder's backups/ (store.BackupIfDue, store.DefaultBackupKeep kept; default daily;
	// negative: never). The first is taken a minute after the worker starts, when due.
	BackupEvery time.Duration
	// WatchInterval is how often PRAGMA data_version is read to notice other processes' commits
	// (default 200 ms: well inside the one-second pick-up promise, and one tiny query each time).
	WatchInterval time.Duration
	// Now is the queue's clock (default time.Now): when jobs fall due, when leases lapse, when
	// backoffs and deferrals end, what is old enough to purge, and the times recorded. A test
	// replaces it to move time on without waiting.
	Now func() time.Time
}

// Queue is the job queue on one database. It is safe for concurrent use.
type Queue struct {
	db   *store.DB
	opts Options

	wakeMu  sync.Mutex
	wakeups []chan struct{} // one per consumer waiting for due jobs (Wakeups)
	// changeSeq counts signals; typeSeq holds, per job type, the count at the last signal naming
	// it, anySeq the count at the last signal naming no type, laterSeq the count at the last one
	// that may have given a job a future due time (see changedSince, laterSince).
	changeSeq, anySeq, laterSeq uint64
	typeSeq                     map[string]uint64

	mu     sync.Mutex
	subs   map[int]chan job.Event
	nextID int
	// watchers receive one job's events (Watch), by job id.
	watchers map[int64][]chan job.Event
	watching int // how many watchers there are, for the events that go to all of them
	// ended are the final outcomes of watched jobs finished in this process (keepEnded).
	ended map[int64]endedJob
	// running maps a job id leased by a worker of this process to the cancel of its context.
	running map[int64]context.CancelFunc
	// waiters are the orchestrator types of this process's workers (Reap's poison limit
	// leaves their jobs alone).
	waiters map[string]bool
	// takers are the started workers of this process, which jobs enqueued alone may be handed
	// to (handoff.go).
	takers []*Worker

	// Statements prepared once on the writer connection: parsing one (and the history trigger
	// it fires) costs more than running it. Those a …Tx verb uses are prepared in Open, because
	// the writer's one connection is taken while a transaction is open.
	insert     *sql.Stmt   // insertSQL
	insertRows []*sql.Stmt // insertRowsSQL(blockSizes[i]): plain jobs in blocks, for EnqueueBatch
	complete   *sql.Stmt   // completeSQL
	handed     handoffStmts
	stmtMu     sync.Mutex
	claims     map[claimKey]*sql.Stmt // claimSQL(n, f), by number of types and crash filter
	dueReads   map[dueKey]*sql.Stmt   // anyDueSQL(n) and nextDueSQL(n) on the readers, by number of types
	outcome    *sql.Stmt              // outcomeSQL on the readers, prepared by the first Outcome
	tokenSeq   atomic.Int64           // numbers lease tokens
	// The statements that number jobs (migration 006), prepared in Open too.
	insertNumbered *sql.Stmt // insertNumberedSQL, for Enqueue of a job without a parent
	lastNumber     *sql.Stmt // SELECT lastNumber, for EnqueueBatch

	writes writeGroup // the writes waiting for the writer (groupcommit.go)

	healthMu sync.Mutex
	health   Health // see health.go

	watchOnce sync.Once
	// watchBegan is closed once the watcher has read PRAGMA data_version the first time: from
	// then on other connections' commits are noticed.
	watchBegan chan struct{}
	// watchEnded is closed once the watcher has returned its connection: Close waits for it,
	// so no query of the queue's own runs after Close (a read begun on a database whose files
	// are being removed creates them again).
	watchEnded chan struct{}
	closed     chan struct{}
	closeOnce  sync.Once
}

// Open applies the queue's migrations to db and returns the queue. Call Close when done.
func Open(db *store.DB, opts Options) (*Queue, error) {
	if err := db.Migrate(Migrations); err != nil {
		return nil, err
	}
	if opts.Retention == 0 {
		opts.Retention = DefaultRetention
	}
	if opts.BackupEvery == 0 {
		opts.BackupEvery = 24 * time.Hour
	}
	if opts.PoisonLimit <= 0 {
		opts.PoisonLimit = DefaultPoisonLimit
	}
	if opts.WatchInterval <= 0 {
		opts.WatchInterval = 200 * time.Millisecond
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	ins, err := db.W.Prepare(insertSQL)
	if err != nil {
		return nil, dbError(err)
	}
	q := &Queue{db: db, opts: opts, subs: map[int]chan job.Event{}, watchers: map[int64][]chan job.Event{}, running: map[int64]context.CancelFunc{},
		closed: make(chan struct{}), watchBegan: make(chan struct{}), watchEnded: make(chan struct{}), insert: ins, claims: map[claimKey]*sql.Stmt{}, dueReads: map[dueKey]*sql.Stmt{},
		typeSeq: map[string]uint64{}}
	for _, n := range blockSizes {
		st, err := db.W.Prepare(insertRowsSQL(n))
		if err != nil {
			q.closeStmts()
			return nil, q.dbError(err)
		}
		q.insertRows = append(q.insertRows, st)
	}
	if q.insertNumbered, err = db.W.Prepare(insertNumberedSQL); err != nil {
		q.closeStmts()
		return nil, q.dbError(err)
	}
	if q.lastNumber, err = db.W.Prepare(`SELECT ` + lastNumber); err != nil {
		q.closeStmts()
		return nil, q.dbError(err)
	}
	if q.complete, err = db.W.Prepare(completeSQL); err != nil {
		q.closeStmts()
		return nil, q.dbError(err)
	}
	if err = q.handed.prepare(db.W); err != nil {
		q.closeStmts()
		return nil, q.dbError(err)
	}
	q.watchOnce.Do(func() {
		go func() {
			defer close(q.watchEnded)
			q.watch()
		}()
	})
	return q, nil
}

// Close stops the queue's background watcher and waits until it has given back its
// connection. It does not close the database.
func (q *Queue) Close() {
	q.closeOnce.Do(func() {
		close(q.closed)
		q.closeStmts()
	})
	<-q.watchEnded
}

func (q *Queue) closeStmts() {
	q.insert.Close()
	for _, st := range q.insertRows {
		st.Close()
	}
	for _, st := range []*sql.Stmt{q.insertNumbered, q.lastNumber} {
		if st != nil {
			st.Close()
		}
	}
	if q.complete != nil {
		q.complete.Close()
	}
	q.handed.close()
	q.stmtMu.Lock()
	defer q.stmtMu.Unlock()
	for k, st := range q.claims {
		st.Close()
		delete(q.claims, k)
	}
	for k, st := range q.dueReads {
		st.Close()
		delete(q.dueReads, k)
	}
	if q.outcome != nil {
		q.outcome.Close()
		q.outcome = nil
	}
}

// DataDir returns the data folder given in Options.
func (q *Queue) DataDir() string { return q.opts.DataDir }

// now is the time on the queue's clock (Options.Now).
func (q *Queue) now() time.Time { return q.opts.Now() }

// nowMs is now in Unix milliseconds, as the tables keep times.
func (q *Queue) nowMs() int64 { return q.opts.Now().UnixMilli() }

// dbError is err as people read it: a database error is E009, a full disk says so (and pauses
// the worker, see Health).
func (q *Queue) dbError(err error) error {
	var je *job.Error
	if errors.As(err, &je) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if store.IsDiskFull(err) {
		q.diskFull(err)
		return q.writeFullError(err)
	}
	if store.IsDamaged(err) {
		de := &store.DamagedError{Path: q.db.Path, Detail: err.Error()}
		return job.Wrap(job.E009, de, de.Error()).
			WithJa(fmt.Sprintf("データベース %s が壊れています。`jobdesk doctor --restore` で最新のバックアップを戻すか、ファイルを別の場所に移して新しく始めてください。", q.db.Path)).
			Permanent()
	}
	return dbError(err)
}

// dbError is err as E009, for where no queue is at hand (opening one).
func dbError(err error) error {
	var je *job.Error
	if errors.As(err, &je) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return job.Wrap(job.E009, err, "the job database could not be written").
		WithJa("ジョブのデータベースに書き込めませんでした。")
}

const jobColumns = `id, max(number, 0), type, name, status, priority, target, input, result, error, progress, message,
	attempts, max_attempts, coalesce(parent_id, 0), coalesce(retry_of, 0), coalesce(dedup_key, ''),
	created_at, started_at, updated_at, completed_at`

type scanner interface{ Scan(...any) error }

func scanJob(s scanner) (job.Job, error) {
	var j job.Job
	var input, result []byte
	var errText sql.NullString
	var created, updated int64
	var started, completed sql.NullInt64
	err := s.Scan(&j.ID, &j.Number, &j.Type, &j.Name, &j.Status, &j.Priority, &j.Target, &input, &result, &errText,
		&j.Progress, &j.Message, &j.Attempts, &j.MaxAttempts, &j.ParentID, &j.RetryOf, &j.DedupKey,
		&created, &started, &updated, &completed)
	if err != nil {
		return j, err
	}
	if len(input) > 0 {
		j.Input = json.RawMessage(input)
	}
	if len(result) > 0 {
		j.Result = json.RawMessage(result)
	}
	if errText.Valid && errText.String != "" {
		var e job.Error
		if json.Unmarshal([]byte(errText.String), &e) == nil {
			j.Error = &e
		}
	}
	j.CreatedAt = time.UnixMilli(created)
	j.UpdatedAt = time.UnixMilli(updated)
	if started.Valid {
		t := time.UnixMilli(started.Int64)
		j.StartedAt = &t
	}
	if completed.Valid {
		t := time.UnixMilli(completed.Int64)
		j.CompletedAt = &t
	}
	return j, nil
}

// Get returns one job.
func (q *Queue) Get(ctx context.Context, id int64) (job.Job, error) {
	j, err := scanJob(q.db.R.QueryRowContext(ctx, `SELECT `+jobColumns+` FROM jobs WHERE id=?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return j, noJob(id)
	}
	return j, err
}

// noJob is the error for a job id that does not exist.
func noJob(id int64) error {
	return job.Errorf(job.E014, "there is no job with id %d", id).WithJa(fmt.Sprintf("ID %d のジョブは存在しません。", id))
}

// GetByNumber returns the job a person started with number n (Job.Number, the "#12" people
// see); a number no job has is refused with E014.
func (q *Queue) GetByNumber(ctx context.Context, n int64) (job.Job, error) {
	var j job.Job
	err := sql.ErrNoRows
	if n > 0 {
		j, err = scanJob(q.db.R.QueryRowContext(ctx, byNumberSQL, n))
	}
	if errors.Is(err, sql.ErrNoRows) {
		return j, job.Errorf(job.E014, "there is no job #%d", n).WithJa(fmt.Sprintf("ジョブ #%d は存在しません。", n))
	}
	return j, err
}

// byNumberSQL finds the job numbered ?1 without an index on numbers (see migration 006): the
// magnitude of the number column never falls as ids rise, so a binary search over the ids
// (search narrows [lo, hi] to the first id whose row, or the next row after it, reaches ?1)
// lands on the job, in about log2(ids) steps of one seek each.
const byNumberSQL = `WITH RECURSIVE search(lo, hi) AS (
		SELECT (SELECT min(id) FROM jobs), (SELECT max(id) FROM jobs)
		UNION ALL
		SELECT iif(` + reachesNumber + `, lo, (lo + hi) / 2 + 1), iif(` + reachesNumber + `, (lo + hi) / 2, hi)
		FROM search WHERE lo < hi)
	SELECT ` + jobColumns + ` FROM jobs WHERE number = ?1 AND number > 0
		AND id = (SELECT id FROM jobs WHERE id >= (SELECT lo FROM search WHERE lo >= hi) ORDER BY id LIMIT 1)`

// reachesNumber is whether the first row at or after the middle of [lo, hi] has a number
// column of magnitude ?1 or more.
const reachesNumber = `(SELECT abs(number) FROM jobs WHERE id >= (lo + hi) / 2 ORDER BY id LIMIT 1) >= ?1`

// Filter selects jobs for List. Zero fields match everything.
type Filter struct {
	Status   job.Status
	Type     string
	ParentID int64 // only the children of this job
	TopLevel bool  // only jobs without a parent (what a person submitted, not its fan-out)
	Limit    int   // default 1000
	BeforeID int64 // for paging: only jobs with a smaller id
}

// List returns jobs, newest first.
func (q *Queue) List(ctx context.Context, f Filter) ([]job.Job, error) {
	var where []string
	var args []any
	if f.Status != "" {
		where = append(where, "status=?")
		args = append(args, string(f.Status))
	}
	if f.Type != "" {
		where = append(where, "type=?")
		args = append(args, f.Type)
	}
	if f.ParentID != 0 {
		where = append(where, "parent_id=? AND parent_id > 0")
		args = append(args, f.ParentID)
	}
	if f.TopLevel {
		where = append(where, "parent_id IS NULL")
	}
	if f.BeforeID != 0 {
		where = append(where, "id<?")
		args = append(args, f.BeforeID)
	}
	if f.Limit <= 0 {
		f.Limit = 1000
	}
	query := `SELECT ` + jobColumns + ` FROM jobs`
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	query += " ORDER BY id DESC LIMIT ?"
	return q.queryJobs(ctx, query, append(args, f.Limit)...)
}

// queryJobs runs a SELECT of jobColumns and returns its jobs in order.
func (q *Queue) queryJobs(ctx context.Context, query string, args ...any) ([]job.Job, error) {
	rows, err := q.db.R.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []job.Job
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	return out, rows.Err()
}

// Counts returns how many jobs are in each status.
func (q *Queue) Counts(ctx context.Context) (map[job.Status]int, error) {
	return q.statusCounts(ctx, "")
}

// statusCounts returns how many jobs matching where (a WHERE clause with args; "" for all) are
// in each status.
func (q *Queue) statusCounts(ctx context.Context, where string, args ...any) (map[job.Status]int, error) {
	rows, err := q.db.R.QueryContext(ctx, `SELECT status, count(*) FROM jobs `+where+` GROUP BY status`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[job.Status]int{}
	for rows.Next() {
		var s job.Status
		var n int
		if err := rows.Scan(&s, &n); err != nil {
			return nil, err
		}
		out[s] = n
	}
	return out, rows.Err()
}

// History returns a job's events in order, beginning with its submission.
func (q *Queue) History(ctx context.Context, id int64) ([]job.Event, error) {
	j, err := q.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	out := []job.Event{{JobID: id, Kind: job.EventSubmitted, Status: job.Pending, At: j.CreatedAt}}
	rows, err := q.db.R.QueryContext(ctx, `SELECT id, at, kind, status, progress, message, detail
		FROM job_events WHERE job_id=? ORDER BY id`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		e := job.Event{JobID: id}
		var at int64
		if err := rows.Scan(&e.ID, &at, &e.Kind, &e.Status, &e.Progress, &e.Message, &e.Detail); err != nil {
			return nil, err
		}
		e.At = time.UnixMilli(at)
		out = append(out, e)
	}
	return out, rows.Err()
}

// AddEvent records an extra history entry for a job (a workflow state entered, a notification),
// keeping the job's current status.
func (q *Queue) AddEvent(ctx context.Context, id int64, kind, message, detail string) error {
	var st job.Status
	err := q.db.Tx(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT status FROM jobs WHERE id=?`, id).Scan(&st); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO job_events(job_id, at, kind, status, message, detail)
			VALUES(?,?,?,?,?,?)`, id, q.nowMs(), kind, st, message, detail)
		return err
	})
	if err != nil {
		return q.dbError(err)
	}
	q.publish(job.Event{JobID: id, Kind: kind, Status: st, Message: message, Detail: detail, At: q.now()})
	return nil
}

// SetProgress sets a job's progress and message directly, for jobs whose progress is derived
// rather than reported by a handler (a workflow execution's map counts, a cloud job's mirror).
func (q *Queue) SetProgress(ctx context.Context, id int64, pct float64, msg string) error {
	pct = clampPct(pct)
	if _, err := q.db.W.ExecContext(ctx, `UPDATE jobs SET progress=?, message=?, updated_at=? WHERE id=?`,
		pct, msg, q.nowMs(), id); err != nil {
		return q.dbError(err)
	}
	q.publish(job.Event{JobID: id, Kind: job.EventProgress, Status: job.Running, Progress: pct, Message: msg, At: q.now()})
	return nil
}

func clampPct(p float64) float64 {
	if p != p || p < 0 { // NaN or negative
		return 0
	}
	if p > 100 {
		return 100
	}
	return p
}

// Cancel cancels a job. A PENDING or RETRYING job is CANCELLED at once. A RUNNING job's handler
// sees its context cancelled (within a second, also when another process runs it) and the job
// ends CANCELLED without retry. Cancelling a finished job is an error; cancelling a cancelled
// job is not.
func (q *Queue) Cancel(ctx context.Context, id int64) error {
	var st job.Status
	var number int64
	now := q.nowMs()
	err := q.db.Tx(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT status, max(number, 0) FROM jobs WHERE id=?`, id).Scan(&st, &number); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return noJob(id)
			}
			return err
		}
		switch st {
		case job.Pending, job.Retrying:
			_, err := tx.ExecContext(ctx, `UPDATE jobs SET status='CANCELLED', error=?, message='Cancelled',
				completed_at=?, updated_at=?, lease_token=NULL, lease_until=NULL WHERE id=?`, cancelledByUser, now, now, id)
			return err
		case job.Running:
			_, err := tx.ExecContext(ctx, `UPDATE jobs SET cancel_requested=1, message='Cancelling…', updated_at=? WHERE id=?`, now, id)
			return err
		case job.Cancelled:
			return nil
		default:
			ref := job.Ref(id, number)
			return job.Errorf(job.E014, "job %s has already finished (%s)", ref, st).
				WithJa(fmt.Sprintf("ジョブ %s はすでに終了しています（%s）。", ref, st))
		}
	})
	if err != nil {
		return q.dbError(err)
	}
	if st == job.Running {
		q.mu.Lock()
		cancel := q.running[id]
		q.mu.Unlock()
		if cancel != nil {
			cancel()
		}
		q.publish(job.Event{JobID: id, Kind: job.EventProgress, Status: job.Running, Message: "Cancelling…", At: q.now()})
	} else if st != job.Cancelled {
		q.publish(job.Event{JobID: id, Kind: job.EventCancelled, Status: job.Cancelled, At: q.now()})
	}
	// Cancel the job's children as well (fan-out): a cancelled parent leaves no orphans running.
	rows, err := q.db.R.QueryContext(ctx, `SELECT id FROM jobs WHERE parent_id=? AND parent_id > 0 AND status IN ('PENDING','RETRYING','RUNNING')`, id)
	if err == nil {
		var kids []int64
		for rows.Next() {
			var k int64
			if rows.Scan(&k) == nil {
				kids = append(kids, k)
			}
		}
		rows.Close()
		for _, k := range kids {
			q.Cancel(ctx, k)
		}
	}
	return nil
}

// Retry redrives a finished job that did not succeed (FAILED, TIMED_OUT, CANCELLED or PARTIAL):
// it returns to PENDING with its attempts reset, keeping its id and history.
func (q *Queue) Retry(ctx context.Context, id int64) (job.Job, error) {
	var st job.Status
	var number int64
	err := q.db.Tx(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT status, max(number, 0) FROM jobs WHERE id=?`, id).Scan(&st, &number); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return noJob(id)
			}
			return err
		}
		switch st {
		case job.Failed, job.TimedOut, job.Cancelled, job.Partial:
		default:
			ref := job.Ref(id, number)
			return job.Errorf(job.E014, "job %s is %s; only a failed, timed-out, cancelled or partial job can be retried", ref, st).
				WithJa(fmt.Sprintf("ジョブ %s は %s です。再実行できるのは失敗・タイムアウト・キャンセル・一部成功のジョブだけです。", ref, st))
		}
		now := q.nowMs()
		_, err := tx.ExecContext(ctx, `UPDATE jobs SET status='PENDING', attempts=0, run_at=?, error=NULL, result=NULL,
			progress=0, message='Retry requested', cancel_requested=0, crashes=0, completed_at=NULL, updated_at=? WHERE id=?`, now, now, id)
		return err
	})
	if err != nil {
		return job.Job{}, q.dbError(err)
	}
	// Read the job back before waking workers, so the caller sees it as retried (PENDING), not
	// already leased again.
	j, err := q.Get(ctx, id)
	q.publish(job.Event{JobID: id, Kind: job.EventRedriven, Status: job.Pending, At: q.now()})
	q.signalAll()
	return j, err
}

// cancelledError is the error of a job a person cancelled.
func cancelledError() *job.Error {
	return job.Errorf(job.E013, "cancelled by the user").WithJa("ユーザーがキャンセルしました。").WithName("States.Aborted")
}

// cancelledByUser is cancelledError as stored.
var cancelledByUser = errorJSON(cancelledError())

func errorJSON(e *job.Error) any {
	if e == nil {
		return nil
	}
	b, _ := json.Marshal(e)
	return string(b)
}
