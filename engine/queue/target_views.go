package queue

import (
	"context"
	"database/sql"
	"time"

	"jobdesk/engine/job"
)

// CountsByTarget returns how many top-level jobs of target (job.TargetCloud: the cloud's jobs,
// whose PENDING ones are the outbox) are in each status.
func (q *Queue) CountsByTarget(ctx context.Context, target string) (map[job.Status]int, error) {
	return q.statusCounts(ctx, `WHERE parent_id IS NULL AND target=?`, target)
}

// LastCompleted returns when the newest top-level job of target that succeeded (fully or
// partly) completed; zero when none has.
func (q *Queue) LastCompleted(ctx context.Context, target string) (time.Time, error) {
	var ms sql.NullInt64
	err := q.db.R.QueryRowContext(ctx, `SELECT max(completed_at) FROM jobs WHERE parent_id IS NULL AND target=?
		AND status IN ('SUCCEEDED','PARTIAL')`, target).Scan(&ms)
	if err != nil || !ms.Valid {
		return time.Time{}, err
	}
	return time.UnixMilli(ms.Int64), nil
}
