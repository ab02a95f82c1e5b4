// Package csvsqlite keeps the CSV jobs' state in the device's SQLite database: the csvjob.Store
// of the desktop engine, and what only the device does with CSV jobs: exporting a job's result
// files. It owns the tables and
// their migrations (migration set "csvjob", so existing databases keep working):
//
//   - csv_users: the users the CSV jobs reflect (one upsert of the distinct users per file, the
//     table checked before it commits: a damaged one fails the import with E009 and the doctor's
//     hint instead of a SUCCESS over wrong rows; the last submitted job's values win);
//   - csv_stage: chunk results waiting for aggregation, one row per chunk;
//   - csv_imports: one row per execution, with its Summary or Failure and its result files;
//   - csv_audit: the audit log, each AUDIT_LOGGING call's records replaceable by its call key.
//
// (A file dropped twice is found by the queue's dedup key, as for every family: the
// csv_submissions table that did it for CSV alone is dropped.)
//
// Package csvjob declares the Store it needs and never imports this one, so the handler links
// into a binary without SQLite.
package csvsqlite

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"jobdesk/engine/csvjob"
	"jobdesk/engine/job"
	"jobdesk/engine/store"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// Migrations is the CSV jobs' migration set.
var Migrations = store.MigrationsFrom("csvjob", migrationFS, "migrations")

// Store is the csvjob.Store on a SQLite database migrated with Migrations.
type Store struct {
	DB *store.DB
}

var _ csvjob.Store = (*Store)(nil)

// New returns the Store on db.
func New(db *store.DB) *Store { return &Store{DB: db} }

// dbError turns a database failure into the seed's retryable errors: DatabaseConnectionError when
// the database is busy or locked, TemporaryError otherwise (both E009, retryable).
func dbError(err error, what string) *job.Error {
	if je := (*job.Error)(nil); errors.As(err, &je) {
		return je
	}
	msg := err.Error()
	name := "TemporaryError"
	if strings.Contains(msg, "SQLITE_BUSY") || strings.Contains(msg, "locked") || strings.Contains(msg, "busy") ||
		strings.Contains(msg, "database is closed") || strings.Contains(msg, "bad connection") {
		name = "DatabaseConnectionError"
	}
	return job.Wrap(job.E009, err, "the database could not be written ("+what+")").
		WithJa("データベースに書き込めませんでした（" + what + "）。").WithName(name).Transient()
}

// StageChunk implements csvjob.Store.
func (s *Store) StageChunk(ctx context.Context, run csvjob.Run, chunk int, data []byte) error {
	_, err := s.DB.W.ExecContext(ctx, `INSERT OR REPLACE INTO csv_stage(execution, chunk, data, created_at) VALUES(?,?,?,?)`,
		run.Execution, chunk, data, time.Now().UnixMilli())
	if err != nil {
		return dbError(err, "chunk result")
	}
	return nil
}

// StagedChunk implements csvjob.Store.
func (s *Store) StagedChunk(ctx context.Context, run csvjob.Run, chunk int) ([]byte, error) {
	var b []byte
	err := s.DB.R.QueryRowContext(ctx, `SELECT data FROM csv_stage WHERE execution=? AND chunk=?`, run.Execution, chunk).Scan(&b)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, dbError(err, "read chunk results")
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}

// ClearStaged implements csvjob.Store.
func (s *Store) ClearStaged(ctx context.Context, run csvjob.Run) {
	s.DB.W.ExecContext(ctx, `DELETE FROM csv_stage WHERE execution=?`, run.Execution)
}

// ApplyResult implements csvjob.Store: the users' upsert (when users is not nil) and the
// execution's csv_imports row in one transaction; s.UsersChanged counts the users whose values
// changed.
func (s *Store) ApplyResult(ctx context.Context, run csvjob.Run, sum *csvjob.Summary, users *csvjob.Users) error {
	now := time.Now().UnixMilli()
	err := s.DB.Tx(ctx, func(tx *sql.Tx) error {
		if users != nil {
			n, err := upsertUsers(ctx, tx, users, run.Execution, sum.SHA256, run.JobID, now)
			if err != nil {
				return err
			}
			if err := checkUsersTable(ctx, tx); err != nil {
				return err
			}
			sum.UsersChanged = n
		}
		b, _ := json.Marshal(sum)
		_, err := tx.ExecContext(ctx, `INSERT INTO csv_imports(execution, job_id, source, sha256, status, rows_total, rows_ok,
			rows_failed, users, users_changed, errors_csv, report_xlsx, summary, created_at) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)
			ON CONFLICT(execution) DO UPDATE SET status=excluded.status, rows_total=excluded.rows_total, rows_ok=excluded.rows_ok,
			rows_failed=excluded.rows_failed, users=excluded.users, users_changed=excluded.users_changed,
			errors_csv=excluded.errors_csv, report_xlsx=excluded.report_xlsx, summary=excluded.summary`,
			run.Execution, sum.JobID, sum.Source, sum.SHA256, sum.Status, sum.TotalRows, sum.SuccessCount, sum.ErrorCount, sum.Users,
			sum.UsersChanged, sum.ErrorsCSV, sum.ReportXLSX, string(b), now)
		return err
	})
	if err != nil {
		return dbError(err, "users")
	}
	return nil
}

// userRows are users in key order, as upsertUsers writes them: *csvjob.Users from an
// aggregation on this device, or the users a cloud run left in its users.json (ApplyCloudResult).
type userRows interface {
	Len() int
	User(i int) (id []byte, login, post int64)
}

// upsertUsers writes the users in one statement per 200 and returns how many rows changed. A
// user whose values are already in the table is not touched (updated_at stays), so a re-run of
// the same file changes nothing; nor is a user whose values a later submitted job set (its
// source_order above order, the job's id): the last submitted file wins, whichever import
// finishes last.
func upsertUsers(ctx context.Context, tx *sql.Tx, u userRows, execution, sha string, order, now int64) (int64, error) {
	const batch = 200
	var changed int64
	stmts := map[int]*sql.Stmt{}
	defer func() {
		for _, s := range stmts {
			s.Close()
		}
	}()
	args := make([]any, 0, batch*7)
	for start := 0; start < u.Len(); start += batch {
		end := min(start+batch, u.Len())
		n := end - start
		st := stmts[n]
		if st == nil {
			var q strings.Builder
			q.WriteString(`INSERT INTO csv_users(user_id, login_count, post_count, updated_at, source_job, source_sha256, source_order) VALUES `)
			for i := 0; i < n; i++ {
				if i > 0 {
					q.WriteByte(',')
				}
				q.WriteString("(?,?,?,?,?,?,?)")
			}
			q.WriteString(` ON CONFLICT(user_id) DO UPDATE SET login_count=excluded.login_count, post_count=excluded.post_count,
				updated_at=excluded.updated_at, source_job=excluded.source_job, source_sha256=excluded.source_sha256,
				source_order=excluded.source_order
				WHERE excluded.source_order >= csv_users.source_order AND (csv_users.login_count IS NOT excluded.login_count
				OR csv_users.post_count IS NOT excluded.post_count)`)
			var err error
			if st, err = tx.PrepareContext(ctx, q.String()); err != nil {
				return 0, err
			}
			stmts[n] = st
		}
		args = args[:0]
		for i := start; i < end; i++ {
			id, login, post := u.User(i)
			args = append(args, string(id), login, post, now, execution, sha, order)
		}
		res, err := st.ExecContext(ctx, args...)
		if err != nil {
			return 0, err
		}
		k, _ := res.RowsAffected()
		changed += k
	}
	return changed, nil
}

// RecordFailure implements csvjob.Store: a csv_imports row with the Failure, or only its
// status when the execution already has a row.
func (s *Store) RecordFailure(ctx context.Context, run csvjob.Run, f *csvjob.Failure) error {
	b, _ := json.Marshal(f)
	_, err := s.DB.W.ExecContext(ctx, `INSERT INTO csv_imports(execution, job_id, source, status, summary, created_at)
		VALUES(?,?,?,?,?,?) ON CONFLICT(execution) DO UPDATE SET status=excluded.status`,
		run.Execution, run.JobID, run.Source, csvjob.StatusFailed, string(b), time.Now().UnixMilli())
	if err != nil {
		return dbError(err, "failure record")
	}
	return nil
}

// Audit implements csvjob.Store.
func (s *Store) Audit(ctx context.Context, run csvjob.Run, call string, recs []csvjob.AuditRecord) error {
	now := time.Now().UnixMilli()
	err := s.DB.Tx(ctx, func(tx *sql.Tx) error {
		if call != "" {
			if _, err := tx.ExecContext(ctx, `DELETE FROM csv_audit WHERE execution=? AND call_key=? AND call_key > ''`, run.Execution, call); err != nil {
				return err
			}
		}
		st, err := tx.PrepareContext(ctx, `INSERT INTO csv_audit(execution, item_index, log_type, line, rows_ok, rows_failed, detail, call_key, created_at)
			VALUES(?,?,?,?,?,?,?,?,?)`)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, r := range recs {
			if _, err := st.ExecContext(ctx, run.Execution, r.Item, r.LogType, r.Line, r.OK, r.Failed, r.Detail, call, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return dbError(err, "audit log")
	}
	return nil
}

// Outcome implements csvjob.Store: the summary of the execution's csv_imports row.
func (s *Store) Outcome(ctx context.Context, run csvjob.Run) (json.RawMessage, error) {
	var raw sql.NullString
	err := s.DB.R.QueryRowContext(ctx, `SELECT summary FROM csv_imports WHERE execution=?`, run.Execution).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) || err == nil && !raw.Valid {
		return nil, nil
	}
	if err != nil {
		return nil, dbError(err, "read the outcome")
	}
	return json.RawMessage(raw.String), nil
}
