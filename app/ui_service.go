package app

import (
	"context"

	"jobdesk/engine/job"
)

// TopLevelCounts returns how many jobs a person submitted (jobs without a parent, as the
// window's list shows them) are in each status. Queue.Counts counts fan-out children too, which
// would make the window's filter counts disagree with its list.
func (a *App) TopLevelCounts(ctx context.Context) (map[job.Status]int, error) {
	rows, err := a.DB.R.QueryContext(ctx, `SELECT status, count(*) FROM jobs WHERE parent_id IS NULL GROUP BY status`)
	if err != nil {
		return nil, job.Wrap(job.E009, err, "the job counts could not be read").WithJa("ジョブの件数を読み取れませんでした。")
	}
	defer rows.Close()
	out := map[job.Status]int{}
	for rows.Next() {
		var s job.Status
		var n int
		if err := rows.Scan(&s, &n); err != nil {
			return nil, job.Wrap(job.E009, err, "the job counts could not be read").WithJa("ジョブの件数を読み取れませんでした。")
		}
		out[s] = n
	}
	return out, rows.Err()
}
