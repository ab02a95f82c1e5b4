package queue

import (
	"context"
	"os"

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
