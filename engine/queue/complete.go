package queue

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"jobdesk/engine/job"
)

// Ending an attempt: SQS's DeleteMessage, with JobDesk's outcomes. A consumer turns how the work
// ended into an Outcome of its Lease (Succeeded, Partial, Failed, Cancelled, Deferred, Released)
// and commits it with Finish; Complete, Fail and Defer are the one-job shorthands. Outcomes that
// finish together are committed in one transaction (group commit): that is what lets the Worker
// run thousands of short jobs a second.

// Outcome is how one claimed attempt ended, ready for Finish. Make it from the attempt's Lease.
type Outcome struct {
	id      int64
	typ     string // the job's type, for waking the consumers of jobs it returns to the queue
	token   string
	status  job.Status
	result  json.RawMessage
	err     *job.Error
	message string
	delay   time.Duration // until the job may run again (RETRYING, or PENDING when released)
	release bool          // back to PENDING without counting the attempt
	started int64         // the lease's started
}

func (l *Lease) outcome(st job.Status, message string) Outcome {
	return Outcome{id: l.Info.ID, typ: l.Info.Type, token: l.Token, status: st, message: message, started: l.started}
}

// Succeeded ends the attempt SUCCEEDED with result; message is what people last saw (the final
// progress message).
func (l Lease) Succeeded(result json.RawMessage, message string) Outcome {
	o := l.outcome(job.Succeeded, message)
	o.result = result
	return o
}

// Partial ends the attempt PARTIAL: the work finished but tolerated failed parts, which summary
// tells (job.PartialResult).
func (l Lease) Partial(result json.RawMessage, summary string) Outcome {
	o := l.outcome(job.Partial, summary)
	o.result = result
	return o
}

// Failed ends the attempt with err (a *job.Error keeps its code; any other error is E016). A
// retryable error with attempts left makes the job RETRYING, due again after b's delay for this
// attempt; otherwise the job ends FAILED, or TIMED_OUT when the error is named States.Timeout.
func (l Lease) Failed(err error, b Backoff) Outcome {
	je := job.AsError(err)
	if je == nil {
		je = job.Errorf(job.E016, "the attempt failed without an error").WithJa("処理中に内部エラーが発生しました。")
	}
	attempt, max := l.Info.Attempt, l.Info.MaxAttempts
	if je.Retryable && attempt < max {
		o := l.outcome(job.Retrying, "")
		o.err = je
		o.delay = b.Delay(attempt)
		o.message = fmt.Sprintf("Attempt %d of %d failed; retrying in %.1f s", attempt, max, o.delay.Seconds())
		return o
	}
	st := job.Failed
	if je.Name == "States.Timeout" {
		st = job.TimedOut
	}
	o := l.outcome(st, je.Message)
	o.err = je
	return o
}

// Cancelled ends the attempt CANCELLED (E013, States.Aborted), without retry: a person cancelled
// the job (Queue.Cancel; see Lease.CancelRequested and CancelRequested).
func (l Lease) Cancelled() Outcome {
	o := l.outcome(job.Cancelled, "Cancelled")
	o.err = cancelledError()
	return o
}

// Deferred returns the job to PENDING, due again after after, without counting the attempt
// (job.DeferredError): it cannot start yet for a reason outside the job. message tells why.
func (l Lease) Deferred(after time.Duration, message string) Outcome {
	o := l.outcome(job.Pending, message)
	o.delay = after
	o.release = true
	return o
}

// Released returns the job to PENDING at once without counting the attempt: its consumer stops
// before running it to the end (JobDesk is closing). message tells why.
func (l Lease) Released(message string) Outcome {
	return l.Deferred(0, message)
}

const completeSQL = `UPDATE jobs SET status=?1, result=?2, error=?3,
		progress=CASE WHEN ?1 IN ('SUCCEEDED','PARTIAL') THEN 100 ELSE progress END,
		message=?4, run_at=?5, attempts=attempts-?6, completed_at=?7, updated_at=?8,
		lease_token=NULL, lease_until=NULL, lease_owner=NULL, cancel_requested=0
	WHERE id=?9 AND lease_token=?10`

// Finish commits outcomes in one transaction and returns the ids whose lease was no longer held
// (ErrLeaseLost); those jobs are left as they are. Each status change is recorded in the job's
// history and published to subscribers after the commit. Outcomes finished while other writes
// of this process wait for the writer (the worker's next claim) are committed with them
// (groupcommit.go).
func (q *Queue) Finish(ctx context.Context, outs ...Outcome) (lost []int64, err error) {
	err = q.do(&write{ctx: ctx, rows: len(outs),
		run: func(ctx context.Context, tx *sql.Tx) (Announce, error) {
			var announce Announce
			var err error
			lost, announce, err = q.FinishTx(ctx, tx, outs...)
			return announce, err
		},
		alone: func() error {
			var announce Announce
			err := q.db.Tx(ctx, func(tx *sql.Tx) error {
				var err error
				lost, announce, err = q.FinishTx(ctx, tx, outs...)
				return err
			})
			if err != nil {
				return q.dbError(err)
			}
			announce()
			return nil
		}})
	if err != nil {
		return nil, err
	}
	return lost, nil
}

// FinishTx is Finish inside the caller's write transaction, so that an attempt's end can be
// recorded atomically with other rows. Call the Announce after the commit.
func (q *Queue) FinishTx(ctx context.Context, tx *sql.Tx, outs ...Outcome) ([]int64, Announce, error) {
	stmt := tx.StmtContext(ctx, q.complete)
	defer stmt.Close()
	now := q.nowMs()
	var lost []int64
	events := make([]job.Event, 0, len(outs))
	var ended []endedJob // the final outcomes, for their waiters (Ended)
	var wake []string
	later := false
	for _, o := range outs {
		var completed any
		if o.status.Final() {
			completed = now
		}
		var result any
		if len(o.result) > 0 {
			result = []byte(o.result)
		}
		release := 0
		if o.release {
			release = 1
		}
		res, err := stmt.ExecContext(ctx, string(o.status), result, errorJSON(o.err), o.message, now+o.delay.Milliseconds(),
			release, completed, now, o.id, o.token)
		if err != nil {
			return nil, nil, err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			lost = append(lost, o.id)
		} else {
			ev := job.Event{JobID: o.id, Kind: kindOf(o.status), Status: o.status, Message: o.message, At: time.UnixMilli(now)}
			if o.status == job.Succeeded || o.status == job.Partial {
				ev.Progress = 100
			}
			events = append(events, ev)
			if o.status.Final() && o.started > 0 {
				ended = append(ended, endedJob{event: ev, err: o.err, result: o.result, started: o.started})
			}
		}
		if o.status == job.Pending || o.status == job.Retrying {
			wake = append(wake, o.typ)
			later = later || o.delay > 0
		}
	}
	if slices.Contains(wake, "") {
		wake = []string{} // a lease made without its type: wake the consumers of every type
	}
	return lost, func() {
		q.keepEnded(ended)
		for _, e := range events {
			q.publish(e)
		}
		if wake != nil {
			q.signal(later, wake...) // none named: every type
		}
	}, nil
}

// Complete ends one attempt SUCCEEDED with result (see Lease.Succeeded). It returns ErrLeaseLost
// when the lease was no longer held.
func (q *Queue) Complete(ctx context.Context, l Lease, result json.RawMessage, message string) error {
	return q.finishOne(ctx, l.Succeeded(result, message))
}

// Fail ends one attempt with err: RETRYING after b's delay while attempts are left and err is
// retryable, FAILED or TIMED_OUT otherwise (see Lease.Failed). It returns ErrLeaseLost when the
// lease was no longer held.
func (q *Queue) Fail(ctx context.Context, l Lease, err error, b Backoff) error {
	return q.finishOne(ctx, l.Failed(err, b))
}

// Defer returns one job to PENDING for after without counting the attempt (see Lease.Deferred).
// It returns ErrLeaseLost when the lease was no longer held.
func (q *Queue) Defer(ctx context.Context, l Lease, after time.Duration, message string) error {
	return q.finishOne(ctx, l.Deferred(after, message))
}

func (q *Queue) finishOne(ctx context.Context, o Outcome) error {
	lost, err := q.Finish(ctx, o)
	if err == nil && len(lost) > 0 {
		err = ErrLeaseLost
	}
	return err
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
