package queue

import "context"

// LatestRetry returns the newest job that retries job id (jobdesk retry makes a new job with
// retry_of = id), 0 when it was never retried.
func (q *Queue) LatestRetry(ctx context.Context, id int64) (int64, error) {
	var next *int64
	if err := q.db.R.QueryRowContext(ctx, `SELECT max(id) FROM jobs WHERE retry_of=?`, id).Scan(&next); err != nil {
		return 0, err
	}
	if next == nil {
		return 0, nil
	}
	return *next, nil
}
