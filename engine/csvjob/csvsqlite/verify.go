package csvsqlite

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"sort"

	"jobdesk/engine/job"
)

// ErrDamagedTable is the error name of an import that found csv_users not holding what it
// wrote: the table's file is damaged, retrying cannot help.
const ErrDamagedTable = "DamagedTableError"

// damagedTable is the coded error of a read-back that did not hold: E009, not retryable, with the
// doctor's hint in both languages. Nothing the import wrote is kept (its transaction rolls back).
func damagedTable(detail string) *job.Error {
	return job.Errorf(job.E009, "the table csv_users does not hold what this import wrote (%s): the database file is damaged; "+
		"nothing was changed. Run `jobdesk doctor` to check it, and `jobdesk doctor --restore` to bring back the latest backup", detail).
		WithJa("テーブル csv_users が今回書き込んだ内容と一致しません（" + detail + "）。データベースファイルが壊れているため、何も変更していません。" +
			"`jobdesk doctor` で確認し、`jobdesk doctor --restore` で最新のバックアップを戻してください。").
		WithName(ErrDamagedTable).Permanent()
}

// verifyUsers reads csv_users back inside the transaction that upserted u, before it commits,
// and returns a damagedTable error unless the table holds what was written: the rows come in
// strictly increasing key order (a b-tree with a row out of order, which the check at open does
// not see, sends an upsert past the row it should update and leaves two rows for one user), no
// column is NULL or of the wrong type, and every user of u is there with exactly its values
// (unless a job submitted after jobOrder set them). It reads the whole table once, in key
// order, beside u in key order.
func verifyUsers(ctx context.Context, tx *sql.Tx, u userRows, jobOrder int64) error {
	order := make([]int, u.Len())
	sorted := true
	for i := range order {
		order[i] = i
		if i > 0 && sorted {
			a, _, _ := u.User(i - 1)
			b, _, _ := u.User(i)
			sorted = bytes.Compare(a, b) < 0
		}
	}
	if !sorted {
		sort.SliceStable(order, func(i, j int) bool {
			a, _, _ := u.User(order[i])
			b, _, _ := u.User(order[j])
			return bytes.Compare(a, b) < 0
		})
	}
	// One pass in key order. A row with an empty column reads as a NULL post_count, which no
	// int64 takes, so three columns carry every check.
	rows, err := tx.QueryContext(ctx, `SELECT user_id, login_count, CASE WHEN updated_at IS NULL OR source_job IS NULL
		OR source_sha256 IS NULL OR source_order IS NULL THEN NULL ELSE post_count END, source_order > ?
		FROM csv_users ORDER BY user_id`, jobOrder)
	if err != nil {
		return err
	}
	defer rows.Close()
	var (
		prev              []byte
		id                sql.RawBytes
		l, p              int64
		newer             bool
		next, seen, found int
	)
	for rows.Next() {
		if err := rows.Scan(&id, &l, &p, &newer); err != nil {
			return damagedTable(fmt.Sprintf("row %d after %q cannot be read: %v", seen+1, prev, err))
		}
		seen++
		if id == nil {
			return damagedTable(fmt.Sprintf("row %d after %q has no user id", seen, prev))
		}
		if prev != nil && bytes.Compare(prev, id) >= 0 {
			return damagedTable(fmt.Sprintf("user %q comes after %q: the rows are out of key order", id, prev))
		}
		for next < len(order) {
			want, _, _ := u.User(order[next])
			c := bytes.Compare(want, id)
			if c > 0 {
				break
			}
			if c < 0 {
				return damagedTable(fmt.Sprintf("user %q is missing", want))
			}
			_, wl, wp := u.User(order[next])
			if (wl != l || wp != p) && !newer {
				return damagedTable(fmt.Sprintf("user %q reads back as %d, %d instead of %d, %d", id, l, p, wl, wp))
			}
			next++
			found++
		}
		prev = append(prev[:0], id...)
	}
	if err := rows.Err(); err != nil {
		return damagedTable(fmt.Sprintf("the table cannot be read: %v", err))
	}
	if next < len(order) {
		want, _, _ := u.User(order[next])
		return damagedTable(fmt.Sprintf("user %q is missing (%d of %d users found)", want, found, len(order)))
	}
	return nil
}
