package queue

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"time"

	"jobdesk/engine/job"
)

// This file holds the queue's read verbs for the service above it (app): questions the window
// and the command line ask about the queue as a whole, answered here so that no SQL leaves the
// package that owns the tables.

// TopLevelCounts returns how many jobs a person submitted (jobs without a parent, as the window
// lists them) are in each status. Counts counts fan-out children too, which would make a list's
// filter counts disagree with the list.
func (q *Queue) TopLevelCounts(ctx context.Context) (map[job.Status]int, error) {
	return q.statusCounts(ctx, `WHERE parent_id IS NULL`)
}

// WorkerElsewhere reports whether another live process on this machine has a worker started on
// this queue (a registered lease owner whose process still runs). This process's own workers do
// not count: the caller knows about those.
func (q *Queue) WorkerElsewhere(ctx context.Context) (bool, error) {
	host, _ := os.Hostname()
	rows, err := q.db.R.QueryContext(ctx, `SELECT pid FROM queue_owners WHERE host=?`, host)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	self := os.Getpid()
	for rows.Next() {
		var pid int
		if err := rows.Scan(&pid); err != nil {
			return false, err
		}
		if pid != self && processAlive(pid) {
			return true, nil
		}
	}
	return false, rows.Err()
}

// outcomeSQL reads what Outcome returns of a job.
const outcomeSQL = `SELECT status, result, error, started_at FROM jobs WHERE id=?`

// Outcome returns what a waiter needs of job id: its status, result, error and start time (the
// other fields are left zero). It reads them with a statement prepared once: a workflow waiting
// on the tasks of thousands of map items asks thousands of times. A job that does not exist is
// ErrNotFound.
func (q *Queue) Outcome(ctx context.Context, id int64) (job.Job, error) {
	q.stmtMu.Lock()
	if q.outcome == nil {
		st, err := q.db.R.Prepare(outcomeSQL)
		if err != nil {
			q.stmtMu.Unlock()
			return job.Job{ID: id}, err
		}
		q.outcome = st
	}
	stmt := q.outcome
	q.stmtMu.Unlock()
	j := job.Job{ID: id}
	var result []byte
	var errText sql.NullString
	var started sql.NullInt64
	err := stmt.QueryRowContext(context.WithoutCancel(ctx), id).Scan(&j.Status, &result, &errText, &started)
	if errors.Is(err, sql.ErrNoRows) {
		return j, ErrNotFound
	}
	if err != nil {
		return j, err
	}
	if len(result) > 0 {
		j.Result = json.RawMessage(result)
	}
	if errText.Valid && errText.String != "" {
		var je job.Error
		if json.Unmarshal([]byte(errText.String), &je) == nil {
			j.Error = &je
		}
	}
	if started.Valid {
		t := time.UnixMilli(started.Int64)
		j.StartedAt = &t
	}
	return j, nil
}

// SucceededByKey returns the id of the job holding dedup key that ended SUCCEEDED or PARTIAL
// (0 when none does): a redriven workflow asks it so as not to run a finished task again.
func (q *Queue) SucceededByKey(ctx context.Context, key string) (int64, error) {
	var id int64
	err := q.db.R.QueryRowContext(ctx, `SELECT id FROM jobs WHERE dedup_key=? AND dedup_key > '' AND status IN ('SUCCEEDED','PARTIAL')`,
		key).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return id, err
}

// ByKey returns the id and status of the job holding dedup key (0 when none does): a redriven
// workflow asks it for a task's job of an earlier try that may still be ending.
func (q *Queue) ByKey(ctx context.Context, key string) (int64, job.Status, error) {
	var id int64
	var st job.Status
	err := q.db.R.QueryRowContext(ctx, `SELECT id, status FROM jobs WHERE dedup_key=? AND dedup_key > ''`, key).Scan(&id, &st)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, "", nil
	}
	return id, st, err
}

// endedJob is a job's final outcome as the Finish that committed it wrote it, with the event
// that tells it.
type endedJob struct {
	event   job.Event
	err     *job.Error
	result  json.RawMessage
	started int64
}

// keepEnded keeps the final outcomes of the watched jobs among ended for their waiters (Ended),
// before their events are published. They go when the job's last watcher stops watching.
func (q *Queue) keepEnded(ended []endedJob) {
	if len(ended) == 0 {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, e := range ended {
		if len(q.watchers[e.event.JobID]) == 0 {
			continue
		}
		if q.ended == nil {
			q.ended = map[int64]endedJob{}
		}
		q.ended[e.event.JobID] = e
	}
}

// Ended returns the outcome (as Outcome reads it) of the job whose final event ev a watcher
// received (Watch, EnqueueWatched), when the Finish that committed it is known to this process;
// false otherwise, and the caller reads it with Outcome. A workflow waiting on the tasks of
// thousands of map items is so spared a read for each.
func (q *Queue) Ended(ev job.Event) (job.Job, bool) {
	q.mu.Lock()
	e, ok := q.ended[ev.JobID]
	if ok {
		delete(q.ended, ev.JobID)
	}
	q.mu.Unlock()
	if !ok || e.event.Status != ev.Status || !e.event.At.Equal(ev.At) || e.event.Kind != ev.Kind {
		return job.Job{}, false
	}
	j := job.Job{ID: ev.JobID, Status: ev.Status}
	if len(e.result) > 0 {
		j.Result = e.result
	}
	if e.err != nil {
		// As stored and read back (Outcome).
		var je job.Error
		if b, isStr := errorJSON(e.err).(string); isStr && json.Unmarshal([]byte(b), &je) == nil {
			j.Error = &je
		}
	}
	t := time.UnixMilli(e.started)
	j.StartedAt = &t
	return j, true
}
