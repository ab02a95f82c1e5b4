package queue

import (
	"context"
	"database/sql"
	"errors"
	"strings"
)

// FindUnfinishedTx returns the oldest unfinished job (PENDING, RUNNING or RETRYING) of type typ
// whose JSON input holds value at its top-level field, or 0 when there is none. It reads inside
// the caller's write transaction, so that a caller enqueues a job only when no such job is under
// way (EnqueueTx in the same transaction): "one generation per goal at a time", say.
func (q *Queue) FindUnfinishedTx(ctx context.Context, tx *sql.Tx, typ, field string, value any) (int64, error) {
	path := `$."` + strings.ReplaceAll(field, `"`, `\"`) + `"`
	var id int64
	err := tx.QueryRowContext(ctx, `SELECT id FROM jobs WHERE type=? AND status IN ('PENDING','RUNNING','RETRYING') AND `+liveStatus+`
		AND json_extract(CAST(input AS TEXT), ?)=? ORDER BY id LIMIT 1`, typ, path, value).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return id, err
}
