package aisqlite

import (
	"context"
	"database/sql"

	"jobdesk/engine/queue"
)

// EnqueueGeneration enqueues p, a generation job for goal goalID whose input carries the goal's
// id as "goal_id", unless a job of p.Type for that goal is unfinished: then it returns that job
// with existed true, and nothing is added. A new job becomes the goal's job when the goal has
// none yet. The check, the job and the link are one transaction, so starting a generation twice
// at once still makes one job. q must live in the Store's database; the caller calls q.Notify
// for a new job.
func (st *Store) EnqueueGeneration(ctx context.Context, q *queue.Queue, goalID int64, p queue.Params) (id int64, existed bool, err error) {
	err = st.db.Tx(ctx, func(tx *sql.Tx) error {
		found, err := q.FindUnfinishedTx(ctx, tx, p.Type, "goal_id", goalID)
		if err != nil || found != 0 {
			id, existed = found, found != 0
			return err
		}
		if id, _, err = q.EnqueueTx(ctx, tx, p); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE goals SET job_id=COALESCE(job_id, ?) WHERE id=?`, id, goalID)
		return err
	})
	return id, existed, err
}
