package queue

import (
	"context"
	"database/sql"
	"fmt"
	"os"

	"jobdesk/engine/job"
)

// Housekeeping: who holds leases (queue_owners), returning the jobs of lapsed leases and dead
// owners to the queue (Reap), and deleting finished jobs after the retention period (Purge). A
// Worker runs both on a timer; any process sharing the database may.

// RegisterOwner records owner (ClaimParams.Owner) as a consumer running in this process, so that
// Reap, in any process on this machine, returns its jobs to the queue at once when this process
// dies, instead of when their leases lapse.
func (q *Queue) RegisterOwner(ctx context.Context, owner string) error {
	host, _ := os.Hostname()
	if _, err := q.db.W.ExecContext(ctx, `INSERT INTO queue_owners(id, pid, host, started_at) VALUES(?,?,?,?)`,
		owner, os.Getpid(), host, q.nowMs()); err != nil {
		return q.dbError(err)
	}
	return nil
}

// UnregisterOwner forgets owner as its consumer stops.
func (q *Queue) UnregisterOwner(ctx context.Context, owner string) error {
	if _, err := q.db.W.ExecContext(ctx, `DELETE FROM queue_owners WHERE id=?`, owner); err != nil {
		return q.dbError(err)
	}
	return nil
}

// Reap returns to the queue the jobs whose lease lapsed or whose owning process on this machine
// is gone, and returns how many. A job whose owner died does not lose an attempt; one whose lease
// lapsed while its process lived (a hung handler) does, and fails when it has none left. A job
// that was running in Options.PoisonLimit processes that died fails (E016). A job whose cancel
// was asked for meanwhile ends CANCELLED instead.
func (q *Queue) Reap(ctx context.Context) (int64, error) {
	host, _ := os.Hostname()
	rows, err := q.db.R.QueryContext(ctx, `SELECT id, pid, host FROM queue_owners`)
	if err != nil {
		return 0, err
	}
	var dead []string
	for rows.Next() {
		var id, h string
		var pid int
		if rows.Scan(&id, &pid, &h) == nil && h == host && !processAlive(pid) {
			dead = append(dead, id)
		}
	}
	rows.Close()
	now := q.nowMs()
	var n int64
	err = q.db.Tx(ctx, func(tx *sql.Tx) error {
		if len(dead) > 0 {
			owners := make([]any, len(dead))
			for i, d := range dead {
				owners[i] = d
			}
			// A job whose cancel was asked for while its process was gone ends CANCELLED, not
			// run again; one that was running in as many dead processes as the poison limit
			// allows ends FAILED (it is likely what killed them); the others go back to the
			// queue without losing the attempt. Deaths are not counted against jobs of
			// orchestrator types: they wait on other jobs, and die with whichever one crashed;
			// nor against cloud jobs, whose work runs in the cloud while their dispatcher waits.
			args := append([]any{now, cancelledByUser, poisonedError(q.opts.PoisonLimit), q.opts.PoisonLimit}, owners...)
			counted := "target='" + job.TargetDevice + "'"
			if waiters := q.waiterTypes(); len(waiters) > 0 {
				counted += " AND type NOT IN (" + numbered(len(args)+1, len(waiters)) + ")"
				for _, t := range waiters {
					args = append(args, t)
				}
			}
			poisoned := "crashes+1 >= ?4 AND " + counted
			res, err := tx.ExecContext(ctx, `UPDATE jobs SET
				status=CASE WHEN cancel_requested=1 THEN 'CANCELLED' WHEN `+poisoned+` THEN 'FAILED' ELSE 'PENDING' END,
				attempts=CASE WHEN cancel_requested=1 OR `+poisoned+` THEN attempts ELSE max(attempts-1, 0) END,
				crashes=CASE WHEN cancel_requested=0 AND `+counted+` THEN crashes+1 ELSE crashes END,
				completed_at=CASE WHEN cancel_requested=1 OR `+poisoned+` THEN ?1 END,
				error=CASE WHEN cancel_requested=1 THEN ?2 WHEN `+poisoned+` THEN ?3 ELSE error END,
				message=CASE WHEN cancel_requested=1 THEN 'Cancelled'
					WHEN `+poisoned+` THEN 'Failed: JobDesk stopped ' || (crashes+1) || ' times while running it'
					ELSE 'Returned to the queue: the process running it stopped' END,
				lease_token=NULL, lease_until=NULL, lease_owner=NULL, cancel_requested=0, updated_at=?1
				WHERE status='RUNNING' AND lease_owner IN (`+numbered(5, len(dead))+`)`, args...)
			if err != nil {
				return err
			}
			k, _ := res.RowsAffected()
			n += k
			if _, err := tx.ExecContext(ctx, `DELETE FROM queue_owners WHERE id IN (`+numbered(1, len(dead))+`)`, owners...); err != nil {
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
		return 0, q.dbError(err)
	}
	if n > 0 {
		q.signalAll()
		q.publish(job.Event{Kind: job.EventExternalChange, At: q.now()})
	}
	return n, nil
}

// noteWaiter records jobType as an orchestrator type (TypeOptions.Orchestrator), whose jobs
// the poison limit leaves alone.
func (q *Queue) noteWaiter(jobType string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.waiters == nil {
		q.waiters = map[string]bool{}
	}
	q.waiters[jobType] = true
}

func (q *Queue) waiterTypes() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	ts := make([]string, 0, len(q.waiters))
	for t := range q.waiters {
		ts = append(ts, t)
	}
	return ts
}

// poisonedError is the error of a job that was running in limit processes that died.
func poisonedError(limit int) any {
	return errorJSON(job.Errorf(job.E016, "the job stopped JobDesk %d times; it is not run again (Retry runs it once more)", limit).
		WithJa(fmt.Sprintf("このジョブの実行中に JobDesk が %d 回停止したため、これ以上実行しません（再実行すると もう一度だけ試します）。", limit)).
		WithName("States.Runtime").Permanent())
}

// Purge deletes finished jobs (and their history) that completed before the retention period.
// It returns how many jobs it removed.
func (q *Queue) Purge(ctx context.Context) (int64, error) {
	if q.opts.Retention < 0 {
		return 0, nil
	}
	cut := q.now().Add(-q.opts.Retention).UnixMilli()
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
