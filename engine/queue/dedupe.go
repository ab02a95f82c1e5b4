package queue

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"

	"jobdesk/engine/job"
)

// ContentKey is the dedup key of a submission whose result depends only on a file's bytes and
// the options that change the result: kind (the job type), the file's SHA-256 and the options'
// canonical JSON (json.Marshal: struct fields in order, map keys sorted), hashed. Two drops of
// the same bytes with the same options give the same key, whatever the file's name.
func ContentKey(kind, sha256Hex string, options any) (string, error) {
	b, err := json.Marshal(options)
	if err != nil {
		return "", job.Wrap(job.E016, err, "cannot encode the job's options")
	}
	h := sha256.Sum256(b)
	return "content:" + kind + ":" + sha256Hex + ":" + hex.EncodeToString(h[:8]), nil
}

// maxRetryHops bounds how far EnqueueOnce follows a chain of retries.
const maxRetryHops = 100

// EnqueueOnce enqueues p unless p.DedupKey already stands for a job that still counts, and
// returns that job instead (existed = true). The job holding the key counts while it is pending,
// running or finished SUCCEEDED/PARTIAL; one that ended FAILED, CANCELLED or TIMED_OUT does not.
// A job that was retried as a new job (RetryOf) stands for its newest retry, which decides. When
// the holder does not count, or force is set (run again on purpose), the new job takes the key,
// so the key always names the newest submission for that content.
//
// The look-up and the insert happen in one write transaction, so submitters racing with the
// same key, in this process or another, make exactly one job.
func (q *Queue) EnqueueOnce(ctx context.Context, p Params, force bool) (job.Job, bool, error) {
	if p.DedupKey == "" {
		j, _, err := q.Enqueue(ctx, p)
		return j, false, err
	}
	if err := p.normalize(); err != nil {
		return job.Job{}, false, err
	}
	var id int64
	var existed bool
	err := q.db.Tx(ctx, func(tx *sql.Tx) error {
		holder, standing, err := standingJobTx(ctx, tx, p.DedupKey)
		if err != nil {
			return err
		}
		if standing != 0 && !force {
			id, existed = standing, true
			return nil
		}
		if holder != 0 {
			if _, err := tx.ExecContext(ctx, `UPDATE jobs SET dedup_key=NULL WHERE id=?`, holder); err != nil {
				return err
			}
		}
		stmt := tx.StmtContext(ctx, q.insert)
		defer stmt.Close()
		id, _, err = q.insertJob(ctx, stmt, p, q.nowMs())
		return err
	})
	if err != nil {
		return job.Job{}, false, q.dbError(err)
	}
	if !existed {
		q.Notify(id)
	}
	j, err := q.Get(ctx, id)
	return j, existed, err
}

// standingJobTx returns the job holding key (0: none) and the job that stands for it: the
// holder, or its newest retry, when that one still counts (0 when it failed, was cancelled or
// timed out).
func standingJobTx(ctx context.Context, tx *sql.Tx, key string) (holder, standing int64, err error) {
	err = tx.QueryRowContext(ctx, `SELECT id FROM jobs WHERE dedup_key=? AND dedup_key > ''`, key).Scan(&holder)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, err
	}
	id := holder
	for hops := 0; hops < maxRetryHops; hops++ {
		var next sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT max(id) FROM jobs WHERE retry_of=?`, id).Scan(&next); err != nil {
			return 0, 0, err
		}
		if !next.Valid {
			break
		}
		id = next.Int64
	}
	var status job.Status
	if err := tx.QueryRowContext(ctx, `SELECT status FROM jobs WHERE id=?`, id).Scan(&status); err != nil {
		return 0, 0, err
	}
	switch status {
	case job.Failed, job.Cancelled, job.TimedOut:
		return holder, 0, nil
	}
	return holder, id, nil
}
