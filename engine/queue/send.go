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

// Sending: Enqueue, EnqueueTx and EnqueueBatch are the queue's send verb (SQS's SendMessage and
// SendMessageBatch). A job is sent for a target (job.TargetDevice, job.TargetCloud); the consumer
// of that target claims it (claim.go).

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

// insertSQL adds one job. A job without a parent (one a person started) takes the next number,
// any other the newest number negated (see migration 006); the last row is read inside the
// insert's own write, so no other writer can come in between.
const insertSQL = `INSERT INTO jobs(type, name, status, priority, target, input, max_attempts, run_at,
	dedup_key, parent_id, retry_of, created_at, updated_at, number)
	VALUES(?,?,'PENDING',?,?,?,?,?,?,?,?,?,?,
		(SELECT iif(?, last + 1, -last) FROM (SELECT ` + lastNumber + ` AS last)))
	ON CONFLICT(dedup_key) WHERE dedup_key > '' DO NOTHING`

// insertNumberedSQL is insertSQL returning the new job's id and number, for Enqueue, which
// returns the job: no row when the dedup key conflicts. A statement that returns rows costs
// the driver about a quarter of an enqueue more than one that does not, so only Enqueue of a
// job that gets a number uses it.
const insertNumberedSQL = insertSQL + ` RETURNING id, number`

// lastNumber is the newest number given: the magnitude of the last row's number column (one
// step back from the end of the table).
const lastNumber = `abs(ifnull((SELECT number FROM jobs ORDER BY id DESC LIMIT 1), 0))`

// blockSizes are the row counts EnqueueBatch writes with one statement, largest first: a
// statement costs about as much as a row it inserts, so plain jobs go in blocks, and the
// rest of a batch in smaller ones.
var blockSizes = []int{64, 8}

// insertRowsSQL inserts n jobs without dedup keys (so none can conflict), their number columns
// given (EnqueueBatch reads the newest number once: a statement that read it itself would
// read the table it writes, which makes SQLite gather all its rows before inserting any).
// Plain "?" parameters bind much faster in the driver than numbered ones, even repeated.
func insertRowsSQL(n int) string {
	const row = "(?,?,'PENDING',?,?,?,?,?,?,?,?,?,?)"
	var b strings.Builder
	b.WriteString(`INSERT INTO jobs(type, name, status, priority, target, input, max_attempts, run_at,
	parent_id, retry_of, created_at, updated_at, number) VALUES`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(row)
	}
	return b.String()
}

// rowParams is how many parameters one row of insertRowsSQL binds.
const rowParams = 12

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

// numbered reports whether the job gets a number: it has no parent, so a person started it.
func (p *Params) numbered() bool { return p.ParentID == 0 }

// insertArgs are p's parameters of insertSQL.
func (p *Params) insertArgs(now int64) []any {
	return []any{p.Type, p.Name, p.Priority, p.Target, []byte(p.Input), p.MaxAttempts, p.runAt(now),
		nullable(p.DedupKey), nullable(p.ParentID), nullable(p.RetryOf), now, now, p.numbered()}
}

// insertJob adds p with stmt (insertSQL) and returns its id; existed is true when p's dedup key
// is taken, and then nothing was added.
func (q *Queue) insertJob(ctx context.Context, stmt *sql.Stmt, p Params, now int64) (int64, bool, error) {
	res, err := stmt.ExecContext(ctx, p.insertArgs(now)...)
	if err != nil {
		return 0, false, err
	}
	if n, _ := res.RowsAffected(); n == 1 {
		id, err := res.LastInsertId()
		return id, false, err
	}
	return 0, true, nil
}

// enqueueNumbered adds p, which has no parent, with insertNumberedSQL and returns its id and
// number; existed is as for insertJob.
func (q *Queue) enqueueNumbered(ctx context.Context, p Params, now int64) (id, number int64, existed bool, err error) {
	err = q.insertNumbered.QueryRowContext(ctx, p.insertArgs(now)...).Scan(&id, &number)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, true, nil
	}
	return id, number, false, err
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
	id, existed, err := q.insertJob(ctx, stmt, p, q.nowMs())
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
	q.announceSubmitted(ids)
	q.signalAll()
}

func (q *Queue) announceSubmitted(ids []int64) {
	for _, id := range ids {
		q.publish(job.Event{JobID: id, Kind: job.EventSubmitted, Status: job.Pending, At: q.now()})
	}
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
	var id, number int64
	var existed bool
	var err error
	for try := 0; try < 2; try++ {
		if p.numbered() {
			id, number, existed, err = q.enqueueNumbered(ctx, p, q.nowMs())
		} else {
			id, existed, err = q.insertJob(ctx, q.insert, p, q.nowMs())
		}
		if err == nil && existed {
			err = q.db.W.QueryRowContext(ctx, `SELECT id FROM jobs WHERE dedup_key=? AND dedup_key > ''`, p.DedupKey).Scan(&id)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			break
		}
	}
	if err != nil {
		return job.Job{}, false, q.dbError(err)
	}
	if existed {
		j, err := q.Get(ctx, id)
		return j, true, err
	}
	q.announceSubmitted([]int64{id})
	q.signal(!p.NotBefore.IsZero(), p.Type)
	// The new row is exactly what p says; no need to read it back.
	now := time.UnixMilli(q.nowMs())
	j := job.Job{ID: id, Number: number, Type: p.Type, Name: p.Name, Status: job.Pending, Target: p.Target, Priority: p.Priority,
		MaxAttempts: p.MaxAttempts, Input: p.Input, ParentID: p.ParentID, RetryOf: p.RetryOf, DedupKey: p.DedupKey,
		CreatedAt: now, UpdatedAt: now}
	return j, false, nil
}

// EnqueueBatch adds many jobs in one transaction and returns their ids in order (the existing
// job's id where a dedup key matched). A batch sent while other writes of this process wait for
// the writer is committed with them (groupcommit.go).
func (q *Queue) EnqueueBatch(ctx context.Context, ps []Params) ([]int64, error) {
	return q.enqueueBatch(ctx, ps, nil)
}

// EnqueueWatched is EnqueueBatch of one job that is also watched (Watch) from before it can
// run: events has every change of the job from its commit on, so a waiter need not read the new
// job once to learn that it has not ended yet. existed reports that p's dedup key named a job
// already there, whose earlier changes are not among the events. Call stop when done.
func (q *Queue) EnqueueWatched(ctx context.Context, p Params) (id int64, existed bool, events <-chan job.Event, stop func(), err error) {
	var ch <-chan job.Event
	unwatch := func() {}
	ids, err := q.enqueueBatch(ctx, []Params{p}, func(ids []int64, old []bool) {
		// Inside the transaction that adds the job: nothing can change it before the watch.
		// A write tried again (group commit) watches the id it gives this time.
		unwatch()
		ch, unwatch = q.Watch(ids[0])
		existed = old[0]
	})
	if err != nil {
		unwatch()
		return 0, false, nil, nil, err
	}
	return ids[0], existed, ch, unwatch, nil
}

// enqueueBatch is EnqueueBatch; inserted, when set, is called inside the transaction once the
// jobs are in it, with their ids and which of them were there before (dedup key).
func (q *Queue) enqueueBatch(ctx context.Context, ps []Params, inserted func(ids []int64, existed []bool)) ([]int64, error) {
	ids := make([]int64, len(ps))
	for i := range ps {
		if err := ps[i].normalize(); err != nil {
			return nil, err
		}
	}
	// handed is the job of a batch of one written claimed by a worker of this process
	// (handoff.go), started once the write is committed; a write tried again (group commit)
	// gives back the slot its earlier try took.
	var handed *handoff
	insert := func(ctx context.Context, tx *sql.Tx) error {
		if handed != nil {
			handed.cancel()
			handed = nil
		}
		if len(ps) == 1 {
			h, err := q.handOff(ctx, tx, &ps[0], q.nowMs())
			if err != nil {
				return err
			}
			if h != nil {
				handed = h
				ids[0] = h.lease.Info.ID
				if inserted != nil {
					inserted(ids, []bool{false})
				}
				return nil
			}
		}
		stmt := tx.StmtContext(ctx, q.insert)
		defer stmt.Close()
		blocks := make([]*sql.Stmt, len(q.insertRows))
		for k, st := range q.insertRows {
			blocks[k] = tx.StmtContext(ctx, st)
			defer blocks[k].Close()
		}
		now := q.nowMs()
		var args []any // made for the first block: a batch of jobs with dedup keys has none
		// last is the newest number given, read before a block and kept up to date by the
		// blocks after it.
		last, lastRead := int64(0), false
		var existed []bool
		if inserted != nil {
			existed = make([]bool, len(ps))
		}
	next:
		for i := 0; i < len(ps); {
			for k, n := range blockSizes {
				if i+n <= len(ps) && !anyDedup(ps[i:i+n]) {
					if args == nil {
						args = make([]any, 0, blockSizes[0]*rowParams)
					}
					if !lastRead {
						st := tx.StmtContext(ctx, q.lastNumber)
						err := st.QueryRowContext(ctx).Scan(&last)
						st.Close()
						if err != nil {
							return err
						}
						lastRead = true
					}
					var err error
					if last, err = insertBlock(ctx, blocks[k], ps[i:i+n], ids[i:i+n], args[:0], now, last); err != nil {
						return err
					}
					i += n
					continue next
				}
			}
			p := ps[i]
			id, old, err := q.insertJob(ctx, stmt, p, now)
			if err != nil {
				return err
			}
			if old {
				if err := tx.QueryRowContext(ctx, `SELECT id FROM jobs WHERE dedup_key=? AND dedup_key > ''`, p.DedupKey).Scan(&id); err != nil {
					return err
				}
			} else {
				lastRead = false // the statement took the next number itself
			}
			if existed != nil {
				existed[i] = old
			}
			ids[i] = id
			i++
		}
		if inserted != nil {
			inserted(ids, existed)
		}
		return nil
	}
	announce := func() {
		q.mu.Lock()
		hasSubs := len(q.subs) > 0
		q.mu.Unlock()
		if hasSubs {
			q.announceSubmitted(ids)
		}
		if handed != nil {
			// Claimed already: no consumer need look for it.
			h := handed
			handed = nil
			h.begin()
			return
		}
		q.signal(anyLater(ps), typesOf(ps)...)
	}
	err := q.do(&write{ctx: ctx, rows: len(ps),
		run: func(ctx context.Context, tx *sql.Tx) (Announce, error) { return announce, insert(ctx, tx) },
		alone: func() error {
			if err := q.db.Tx(ctx, func(tx *sql.Tx) error { return insert(ctx, tx) }); err != nil {
				return q.dbError(err)
			}
			announce()
			return nil
		}})
	if err != nil {
		if handed != nil {
			handed.cancel()
		}
		return nil, err
	}
	return ids, nil
}

// typesOf returns the job types in ps, each once.
func typesOf(ps []Params) []string {
	var ts []string
next:
	for i := range ps {
		for _, t := range ts {
			if t == ps[i].Type {
				continue next
			}
		}
		ts = append(ts, ps[i].Type)
	}
	return ts
}

// anyLater reports whether a job of ps is not to run at once.
func anyLater(ps []Params) bool {
	for i := range ps {
		if !ps[i].NotBefore.IsZero() {
			return true
		}
	}
	return false
}

func anyDedup(ps []Params) bool {
	for i := range ps {
		if ps[i].DedupKey != "" {
			return true
		}
	}
	return false
}

// insertBlock writes jobs without dedup keys with stmt, one statement (insertRowsSQL), and
// returns the newest number given. last is the newest number so far: the jobs without a parent
// are numbered after it, the others hold it negated. Rows of one INSERT get consecutive rowids
// (each is the table's largest plus one), so the ids follow from the last.
func insertBlock(ctx context.Context, stmt *sql.Stmt, ps []Params, ids []int64, args []any, now, last int64) (int64, error) {
	for _, p := range ps {
		n := -last
		if p.numbered() {
			last++
			n = last
		}
		args = append(args, p.Type, p.Name, p.Priority, p.Target, []byte(p.Input), p.MaxAttempts, p.runAt(now),
			nullable(p.ParentID), nullable(p.RetryOf), now, now, n)
	}
	res, err := stmt.ExecContext(ctx, args...)
	if err != nil {
		return 0, err
	}
	lastID, err := res.LastInsertId()
	if err != nil {
		return 0, err
	}
	if n, _ := res.RowsAffected(); n != int64(len(ps)) {
		return 0, fmt.Errorf("inserted %d of %d jobs", n, len(ps))
	}
	for k := range ids {
		ids[k] = lastID - int64(len(ids)-1-k)
	}
	return last, nil
}
