package csvsqlite

import (
	"context"
	"database/sql"
	"strings"

	"jobdesk/engine/job"
)

// ErrDamagedTable is the error name of an import that found csv_users damaged after writing to
// it: retrying cannot help.
const ErrDamagedTable = "DamagedTableError"

// damagedTable is the coded error of a table that fails its check: E009, not retryable, with the
// doctor's hint in both languages. Nothing the import wrote is kept (its transaction rolls back).
func damagedTable(detail string) *job.Error {
	return job.Errorf(job.E009, "the table csv_users is damaged (%s), so this import cannot vouch for what it wrote; "+
		"nothing was changed. Run `jobdesk doctor` to check the database, and `jobdesk doctor --restore` to bring back the latest backup", detail).
		WithJa("テーブル csv_users が壊れているため（" + detail + "）、今回の取り込み結果を保証できません。何も変更していません。" +
			"`jobdesk doctor` でデータベースを確認し、`jobdesk doctor --restore` で最新のバックアップを戻してください。").
		WithName(ErrDamagedTable).Permanent()
}

// checkUsersTable runs SQLite's integrity check on csv_users alone, inside the transaction that
// upserted an import's users and before it commits, and returns a damagedTable error when it
// finds anything. It sees what the check made when the database opens (quick_check) does not: a
// row out of key order, which sends an upsert past the row it should update (two rows for one
// user, the old values left) and makes an import's totals wrong while it reports success. It
// also checks every row's NOT NULL columns and the b-tree's pages. On a b-tree that holds,
// the upsert's own semantics put every user's values in place.
func checkUsersTable(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `PRAGMA integrity_check(csv_users)`)
	if err != nil {
		return err
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return damagedTable(err.Error())
		}
		if s != "ok" && len(problems) < 3 {
			problems = append(problems, s)
		}
	}
	if err := rows.Err(); err != nil {
		if strings.Contains(err.Error(), "malformed") || strings.Contains(err.Error(), "SQLITE_CORRUPT") {
			return damagedTable(err.Error())
		}
		return err
	}
	if len(problems) > 0 {
		return damagedTable(strings.Join(problems, "; "))
	}
	return nil
}
