// Package queue is JobDesk's durable job queue on SQLite, with Amazon SQS's semantics: a job is
// leased with a visibility timeout and a lease token, heartbeats extend the lease, a lease that
// lapses (the worker died) returns the job to the queue, and retryable failures come back after an
// exponential backoff with jitter. On top of that it keeps what a desktop job runner needs: eight
// statuses (job.Status), progress and history, cancel of a running job, per-type concurrency and
// timeouts, dedup keys, parents for fan-out, and events published after each commit.
//
// Several processes may share one database: leases keep them apart, and a watcher on
// PRAGMA data_version wakes a process when another one commits, so no process polls for work in
// a sleep loop. The Worker (worker.go) runs handlers; Queue (this file) is the API every caller
// uses.
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
)

// ErrNotFound is returned for a job id that does not exist.
var ErrNotFound = errors.New("job not found")

// Options configure a Queue.
type Options struct {
	// DataDir is the data folder, passed to handlers in job.Info.
	DataDir string
	// Retention is how long finished jobs are kept (default 90 days; negative keeps them forever).
	Retention time.Duration
	// WatchInterval is how often PRAGMA data_version is read to notice other processes' commits
	// (default 200 ms: well inside the one-second pick-up promise, and one tiny query each time).
	WatchInterval time.Duration
}

// Queue is the job queue on one database. It is safe for concurrent use.
type Queue struct {
	db   *store.DB
	opts Options

	wake chan struct{} // signalled when work may be available (enqueue, retry, external commit)

	mu     sync.Mutex
	subs   map[int]chan job.Event
	nextID int
	// running maps a job id leased by a worker of this process to the cancel of its context.
	running map[int64]context.CancelFunc

	insert     *sql.Stmt   // insertSQL prepared once on the writer connection
	insertRows []*sql.Stmt // insertRowsSQL(blockSizes[i]): plain jobs in blocks, for EnqueueBatch

	watchOnce sync.Once
	closed    chan struct{}
	closeOnce sync.Once
}

// Open applies the queue's migrations to db and returns the queue. Call Close when done.
func Open(db *store.DB, opts Options) (*Queue, error) {
	if err := db.Migrate(Migrations); err != nil {
		return nil, err
	}
	if opts.Retention == 0 {
		opts.Retention = DefaultRetention
	}
	if opts.WatchInterval <= 0 {
		opts.WatchInterval = 200 * time.Millisecond
	}
	ins, err := db.W.Prepare(insertSQL)
	if err != nil {
		return nil, dbError(err)
	}
	var insRows []*sql.Stmt
	for _, n := range blockSizes {
		st, err := db.W.Prepare(insertRowsSQL(n))
		if err != nil {
			ins.Close()
			return nil, dbError(err)
		}
		insRows = append(insRows, st)
	}
	q := &Queue{db: db, opts: opts, wake: make(chan struct{}, 1), subs: map[int]chan job.Event{},
		running: map[int64]context.CancelFunc{}, closed: make(chan struct{}), insert: ins, insertRows: insRows}
	q.watchOnce.Do(func() { go q.watch() })
	return q, nil
}

// Close stops the queue's background watcher. It does not close the database.
func (q *Queue) Close() {
	q.closeOnce.Do(func() {
		close(q.closed)
		q.insert.Close()
		for _, st := range q.insertRows {
			st.Close()
		}
	})
}

// DB returns the database the queue lives in.
func (q *Queue) DB() *store.DB { return q.db }

// DataDir returns the data folder given in Options.
func (q *Queue) DataDir() string { return q.opts.DataDir }

// Params describe a job to enqueue.
type Params struct {
	Type        string          // the handler that runs it (required)
	Name        string          // what people see, e.g. the file name
	Input       json.RawMessage // the handler's input (JSON; null when empty)
	Priority    int             // higher runs first
	NotBefore   time.Time       // do not run before this time (zero: now)
	MaxAttempts int             // attempts in all (0: DefaultMaxAttempts)
	DedupKey    string          // when set, enqueuing the same key again returns the existing job
	ParentID    int64           // the parent job when fanned out
	Target      string          // job.TargetDevice (default) or job.TargetCloud
	RetryOf     int64           // the finished job this one retries
}

func nowMs() int64 { return time.Now().UnixMilli() }

func (q *Queue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

const insertSQL = `INSERT INTO jobs(type, name, status, priority, target, input, max_attempts, run_at,
	dedup_key, parent_id, retry_of, created_at, updated_at)
	VALUES(?,?,'PENDING',?,?,?,?,?,?,?,?,?,?) ON CONFLICT(dedup_key) WHERE dedup_key > '' DO NOTHING`

// blockSizes are the row counts EnqueueBatch writes with one statement, largest first: a
// statement costs about as much as a row it inserts, so plain jobs go in blocks, and the
// rest of a batch in smaller ones.
var blockSizes = []int{64, 8}

// insertRowsSQL inserts n jobs without dedup keys (so none can conflict). Plain "?"
// parameters bind much faster in the driver than numbered ones, even repeated.
func insertRowsSQL(n int) string {
	var b strings.Builder
	b.WriteString(`INSERT INTO jobs(type, name, status, priority, target, input, max_attempts, run_at,
	parent_id, retry_of, created_at, updated_at) VALUES`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("(?,?,'PENDING',?,?,?,?,?,?,?,?,?)")
	}
	return b.String()
}

// rowParams is how many parameters one row of insertRowsSQL binds.
const rowParams = 11

func (p *Params) normalize() error {
	if strings.TrimSpace(p.Type) == "" {
		return job.Errorf(job.E014, "a job needs a type").WithJa("ジョブの種類が指定されていません。")
	}
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = DefaultMaxAttempts
	}
	if p.Target == "" {
		p.Target = job.TargetDevice
	}
	if len(p.Input) == 0 {
		p.Input = json.RawMessage("null")
	}
	if !json.Valid(p.Input) {
		return job.Errorf(job.E014, "the job input is not valid JSON").WithJa("ジョブの入力が正しいJSONではありません。")
	}
	return nil
}

// runAt is when the job may first run, in Unix milliseconds.
func (p *Params) runAt(now int64) int64 {
	if p.NotBefore.IsZero() {
		return now
	}
	return p.NotBefore.UnixMilli()
}

func nullable[T comparable](v T) any {
	var zero T
	if v == zero {
		return nil
	}
	return v
}

func (q *Queue) insertJob(ctx context.Context, stmt *sql.Stmt, p Params, now int64) (int64, bool, error) {
	res, err := stmt.ExecContext(ctx, p.Type, p.Name, p.Priority, p.Target, []byte(p.Input), p.MaxAttempts, p.runAt(now),
		nullable(p.DedupKey), nullable(p.ParentID), nullable(p.RetryOf), now, now)
	if err != nil {
		return 0, false, err
	}
	if n, _ := res.RowsAffected(); n == 1 {
		id, err := res.LastInsertId()
		return id, false, err
	}
	return 0, true, nil
}

// EnqueueTx enqueues p inside the caller's write transaction (so a job can be created atomically
// with other rows). existed is true when p.DedupKey named an existing job, whose id is returned.
// Subscribers hear of the job once the caller commits and calls Notify.
func (q *Queue) EnqueueTx(ctx context.Context, tx *sql.Tx, p Params) (int64, bool, error) {
	if err := p.normalize(); err != nil {
		return 0, false, err
	}
	stmt := tx.StmtContext(ctx, q.insert)
	defer stmt.Close()
	id, existed, err := q.insertJob(ctx, stmt, p, nowMs())
	if err != nil {
		return 0, false, err
	}
	if existed {
		err = tx.QueryRowContext(ctx, `SELECT id FROM jobs WHERE dedup_key=? AND dedup_key > ''`, p.DedupKey).Scan(&id)
	}
	return id, existed, err
}

// Notify tells workers and subscribers that jobs were enqueued through EnqueueTx.
func (q *Queue) Notify(ids ...int64) {
	for _, id := range ids {
		q.publish(job.Event{JobID: id, Kind: job.EventSubmitted, Status: job.Pending, At: time.Now()})
	}
	q.signal()
}

// Enqueue adds one job and returns it. When p.DedupKey names an existing job, that job is
// returned with existed = true and nothing is added.
func (q *Queue) Enqueue(ctx context.Context, p Params) (job.Job, bool, error) {
	if err := p.normalize(); err != nil {
		return job.Job{}, false, err
	}
	// One statement commits by itself: an explicit transaction would only add its BEGIN and
	// COMMIT round trips. A conflicting dedup key names a row that almost always stays; should
	// the retention purge delete it in between, the insert is simply tried again.
	var id int64
	var existed bool
	var err error
	for try := 0; try < 2; try++ {
		id, existed, err = q.insertJob(ctx, q.insert, p, nowMs())
		if err == nil && existed {
			err = q.db.W.QueryRowContext(ctx, `SELECT id FROM jobs WHERE dedup_key=? AND dedup_key > ''`, p.DedupKey).Scan(&id)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			break
		}
	}
	if err != nil {
		return job.Job{}, false, dbError(err)
	}
	if existed {
		j, err := q.Get(ctx, id)
		return j, true, err
	}
	q.Notify(id)
	// The new row is exactly what p says; no need to read it back.
	now := time.UnixMilli(nowMs())
	j := job.Job{ID: id, Type: p.Type, Name: p.Name, Status: job.Pending, Target: p.Target, Priority: p.Priority,
		MaxAttempts: p.MaxAttempts, Input: p.Input, ParentID: p.ParentID, RetryOf: p.RetryOf, DedupKey: p.DedupKey,
		CreatedAt: now, UpdatedAt: now}
	return j, false, nil
}

// EnqueueBatch adds many jobs in one transaction and returns their ids in order (the existing
// job's id where a dedup key matched).
func (q *Queue) EnqueueBatch(ctx context.Context, ps []Params) ([]int64, error) {
	ids := make([]int64, len(ps))
	for i := range ps {
		if err := ps[i].normalize(); err != nil {
			return nil, err
		}
	}
	err := q.db.Tx(ctx, func(tx *sql.Tx) error {
		stmt := tx.StmtContext(ctx, q.insert)
		defer stmt.Close()
		blocks := make([]*sql.Stmt, len(q.insertRows))
		for k, st := range q.insertRows {
			blocks[k] = tx.StmtContext(ctx, st)
			defer blocks[k].Close()
		}
		now := nowMs()
		args := make([]any, 0, blockSizes[0]*rowParams)
	next:
		for i := 0; i < len(ps); {
			for k, n := range blockSizes {
				if i+n <= len(ps) && !anyDedup(ps[i:i+n]) {
					if err := insertBlock(ctx, blocks[k], ps[i:i+n], ids[i:i+n], args[:0], now); err != nil {
						return err
					}
					i += n
					continue next
				}
			}
			p := ps[i]
			id, existed, err := q.insertJob(ctx, stmt, p, now)
			if err != nil {
				return err
			}
			if existed {
				if err := tx.QueryRowContext(ctx, `SELECT id FROM jobs WHERE dedup_key=? AND dedup_key > ''`, p.DedupKey).Scan(&id); err != nil {
					return err
				}
			}
			ids[i] = id
			i++
		}
		return nil
	})
	if err != nil {
		return nil, dbError(err)
	}
	q.mu.Lock()
	hasSubs := len(q.subs) > 0
	q.mu.Unlock()
	if hasSubs {
		q.Notify(ids...)
	} else {
		q.signal()
	}
	return ids, nil
}

func anyDedup(ps []Params) bool {
	for i := range ps {
		if ps[i].DedupKey != "" {
			return true
		}
	}
	return false
}

// insertBlock writes jobs without dedup keys with one statement. Rows of one INSERT
// get consecutive rowids (each is the table's largest plus one), so the ids follow from the last.
func insertBlock(ctx context.Context, stmt *sql.Stmt, ps []Params, ids []int64, args []any, now int64) error {
	for _, p := range ps {
		args = append(args, p.Type, p.Name, p.Priority, p.Target, []byte(p.Input), p.MaxAttempts, p.runAt(now),
			nullable(p.ParentID), nullable(p.RetryOf), now, now)
	}
	res, err := stmt.ExecContext(ctx, args...)
	if err != nil {
		return err
	}
	last, err := res.LastInsertId()
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n != int64(len(ps)) {
		return fmt.Errorf("inserted %d of %d jobs", n, len(ps))
	}
	for k := range ids {
		ids[k] = last - int64(len(ids)-1-k)
	}
	return nil
}

func dbError(err error) error {
	var je *job.Error
	if errors.As(err, &je) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return job.Wrap(job.E009, err, "the job database could not be written").
		WithJa("ジョブのデータベースに書き込めませんでした。")
}

const jobColumns = `id, type, name, status, priority, target, input, result, error, progress, message,
	attempts, max_attempts, coalesce(parent_id, 0), coalesce(retry_of, 0), coalesce(dedup_key, ''),
	created_at, started_at, updated_at, completed_at`

type scanner interface{ Scan(...any) error }

func scanJob(s scanner) (job.Job, error) {
	var j job.Job
	var input, result []byte
	var errText sql.NullString
	var created, updated int64
	var started, completed sql.NullInt64
	err := s.Scan(&j.ID, &j.Type, &j.Name, &j.Status, &j.Priority, &j.Target, &input, &result, &errText,
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
		return j, job.Errorf(job.E014, "there is no job %d", id).WithJa(fmt.Sprintf("ジョブ %d は存在しません。", id))
	}
	return j, err
}

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
	args = append(args, f.Limit)
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
	rows, err := q.db.R.QueryContext(ctx, `SELECT status, count(*) FROM jobs GROUP BY status`)
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
			VALUES(?,?,?,?,?,?)`, id, nowMs(), kind, st, message, detail)
		return err
	})
	if err != nil {
		return dbError(err)
	}
	q.publish(job.Event{JobID: id, Kind: kind, Status: st, Message: message, Detail: detail, At: time.Now()})
	return nil
}

// SetProgress sets a job's progress and message directly, for jobs whose progress is derived
// rather than reported by a handler (a workflow execution's map counts, a cloud job's mirror).
func (q *Queue) SetProgress(ctx context.Context, id int64, pct float64, msg string) error {
	pct = clampPct(pct)
	if _, err := q.db.W.ExecContext(ctx, `UPDATE jobs SET progress=?, message=?, updated_at=? WHERE id=?`,
		pct, msg, nowMs(), id); err != nil {
		return dbError(err)
	}
	q.publish(job.Event{JobID: id, Kind: job.EventProgress, Status: job.Running, Progress: pct, Message: msg, At: time.Now()})
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
	now := nowMs()
	errJSON := errorJSON(job.Errorf(job.E013, "cancelled by the user").WithJa("ユーザーがキャンセルしました。").WithName("States.Aborted"))
	err := q.db.Tx(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT status FROM jobs WHERE id=?`, id).Scan(&st); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return job.Errorf(job.E014, "there is no job %d", id).WithJa(fmt.Sprintf("ジョブ %d は存在しません。", id))
			}
			return err
		}
		switch st {
		case job.Pending, job.Retrying:
			_, err := tx.ExecContext(ctx, `UPDATE jobs SET status='CANCELLED', error=?, message='Cancelled',
				completed_at=?, updated_at=?, lease_token=NULL, lease_until=NULL WHERE id=?`, errJSON, now, now, id)
			return err
		case job.Running:
			_, err := tx.ExecContext(ctx, `UPDATE jobs SET cancel_requested=1, message='Cancelling…', updated_at=? WHERE id=?`, now, id)
			return err
		case job.Cancelled:
			return nil
		default:
			return job.Errorf(job.E014, "job %d has already finished (%s)", id, st).
				WithJa(fmt.Sprintf("ジョブ %d はすでに終了しています（%s）。", id, st))
		}
	})
	if err != nil {
		return dbError(err)
	}
	if st == job.Running {
		q.mu.Lock()
		cancel := q.running[id]
		q.mu.Unlock()
		if cancel != nil {
			cancel()
		}
		q.publish(job.Event{JobID: id, Kind: job.EventProgress, Status: job.Running, Message: "Cancelling…", At: time.Now()})
	} else if st != job.Cancelled {
		q.publish(job.Event{JobID: id, Kind: job.EventCancelled, Status: job.Cancelled, At: time.Now()})
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
	err := q.db.Tx(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT status FROM jobs WHERE id=?`, id).Scan(&st); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return job.Errorf(job.E014, "there is no job %d", id).WithJa(fmt.Sprintf("ジョブ %d は存在しません。", id))
			}
			return err
		}
		switch st {
		case job.Failed, job.TimedOut, job.Cancelled, job.Partial:
		default:
			return job.Errorf(job.E014, "job %d is %s; only a failed, timed-out, cancelled or partial job can be retried", id, st).
				WithJa(fmt.Sprintf("ジョブ %d は %s です。再実行できるのは失敗・タイムアウト・キャンセル・一部成功のジョブだけです。", id, st))
		}
		now := nowMs()
		_, err := tx.ExecContext(ctx, `UPDATE jobs SET status='PENDING', attempts=0, run_at=?, error=NULL, result=NULL,
			progress=0, message='Retry requested', cancel_requested=0, completed_at=NULL, updated_at=? WHERE id=?`, now, now, id)
		return err
	})
	if err != nil {
		return job.Job{}, dbError(err)
	}
	// Read the job back before waking workers, so the caller sees it as retried (PENDING), not
	// already leased again.
	j, err := q.Get(ctx, id)
	q.publish(job.Event{JobID: id, Kind: job.EventRedriven, Status: job.Pending, At: time.Now()})
	q.signal()
	return j, err
}

// Wait blocks until job id is final (or ctx ends) and returns it.
func (q *Queue) Wait(ctx context.Context, id int64) (job.Job, error) {
	events, stop := q.Subscribe(64)
	defer stop()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		j, err := q.Get(ctx, id)
		if err != nil || j.Status.Final() {
			return j, err
		}
	wait:
		for {
			select {
			case <-ctx.Done():
				return j, ctx.Err()
			case e := <-events:
				if e.JobID == id && (e.Status.Final() || e.Kind == job.EventRedriven) || e.Kind == job.EventExternalChange {
					break wait
				}
			case <-tick.C:
				break wait
			}
		}
	}
}

// Subscribe returns a channel that receives every event after its commit, and a function that
// ends the subscription. A subscriber that falls more than buffer events behind loses events
// (never blocks the queue); an ExternalChange event tells it to re-read.
func (q *Queue) Subscribe(buffer int) (<-chan job.Event, func()) {
	if buffer <= 0 {
		buffer = 256
	}
	ch := make(chan job.Event, buffer)
	q.mu.Lock()
	id := q.nextID
	q.nextID++
	q.subs[id] = ch
	q.mu.Unlock()
	return ch, func() {
		q.mu.Lock()
		delete(q.subs, id)
		q.mu.Unlock()
	}
}

func (q *Queue) publish(e job.Event) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, ch := range q.subs {
		select {
		case ch <- e:
		default:
		}
	}
}

// watch reads PRAGMA data_version on one dedicated read connection: its value changes whenever
// another connection (of this process or another) commits. A change wakes the workers and tells
// subscribers to re-read, at most once per WatchInterval.
func (q *Queue) watch() {
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-q.closed; cancel() }()
	conn, err := q.db.R.Conn(ctx)
	if err != nil {
		return
	}
	defer conn.Close()
	var last int64 = -1
	t := time.NewTicker(q.opts.WatchInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var v int64
		if err := conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v); err != nil {
			continue
		}
		if last >= 0 && v != last {
			q.signal()
			q.publish(job.Event{Kind: job.EventExternalChange, At: time.Now()})
		}
		last = v
	}
}

// Purge deletes finished jobs (and their history) that completed before the retention period.
// It returns how many jobs it removed.
func (q *Queue) Purge(ctx context.Context) (int64, error) {
	if q.opts.Retention < 0 {
		return 0, nil
	}
	cut := time.Now().Add(-q.opts.Retention).UnixMilli()
	var n int64
	err := q.db.Tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM job_events WHERE job_id IN
			(SELECT id FROM jobs WHERE completed_at < ? AND completed_at > 0 AND status IN ('SUCCEEDED','PARTIAL','FAILED','TIMED_OUT','CANCELLED'))`, cut); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM jobs WHERE completed_at < ? AND completed_at > 0
			AND status IN ('SUCCEEDED','PARTIAL','FAILED','TIMED_OUT','CANCELLED')`, cut)
		if err != nil {
			return err
		}
		n, _ = res.RowsAffected()
		return nil
	})
	return n, err
}

func errorJSON(e *job.Error) any {
	if e == nil {
		return nil
	}
	b, _ := json.Marshal(e)
	return string(b)
}
