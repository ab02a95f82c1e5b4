package csvjob

import (
	"bytes"
	"context"
	"database/sql"
	"embed"
	"encoding/gob"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"jobdesk/engine/job"
	"jobdesk/engine/store"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// Migrations is csvjob's migration set: csv_users (the users the CSV jobs reflect), csv_stage
// (chunk results awaiting aggregation), csv_imports (one row per execution) and csv_audit.
var Migrations = store.Migrations{Name: "csvjob", FS: mustSub(migrationFS, "migrations")}

// Table is the table the default schema writes.
const Table = "csv_users"

func mustSub(f fs.FS, dir string) fs.FS {
	s, err := fs.Sub(f, dir)
	if err != nil {
		panic(err)
	}
	return s
}

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

func encodePartial(p *partial) ([]byte, error) {
	var b bytes.Buffer
	err := gob.NewEncoder(&b).Encode(p)
	return b.Bytes(), err
}

func decodePartial(b []byte) (*partial, error) {
	var p partial
	err := gob.NewDecoder(bytes.NewReader(b)).Decode(&p)
	return &p, err
}

// stage keeps chunk p of execution until aggregation: in the database when there is one, else
// as a file in the work folder. Staging the same chunk again replaces it.
func stage(ctx context.Context, db *store.DB, workDir, execution string, p *partial) error {
	data, err := encodePartial(p)
	if err != nil {
		return job.Wrap(job.E016, err, "cannot encode a chunk result")
	}
	if db == nil {
		return writeFileAtomic(filepath.Join(workDir, fmt.Sprintf("chunk-%06d.gob", p.Chunk)), data)
	}
	_, err = db.W.ExecContext(ctx, `INSERT OR REPLACE INTO csv_stage(execution, chunk, data, created_at) VALUES(?,?,?,?)`,
		execution, p.Chunk, data, time.Now().UnixMilli())
	if err != nil {
		return dbError(err, "chunk result")
	}
	return nil
}

func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err == nil {
		if err = os.Rename(tmp, path); err == nil {
			return nil
		}
	} else {
		return job.Wrap(job.E009, err, "cannot write "+filepath.Base(path)).Transient().WithName("TemporaryError")
	}
	return job.Errorf(job.E009, "cannot write %s", filepath.Base(path)).Transient().WithName("TemporaryError")
}

// loadStaged returns the staged chunks of execution by index: all of them, or only those listed.
func loadStaged(ctx context.Context, db *store.DB, workDir, execution string, only ...int) (map[int]*partial, error) {
	out := map[int]*partial{}
	if db == nil {
		ms, _ := filepath.Glob(filepath.Join(workDir, "chunk-*.gob"))
		if only != nil {
			ms = ms[:0]
			for _, n := range only {
				ms = append(ms, filepath.Join(workDir, fmt.Sprintf("chunk-%06d.gob", n)))
			}
		}
		for _, m := range ms {
			b, err := os.ReadFile(m)
			if os.IsNotExist(err) && only != nil {
				continue
			}
			if err != nil {
				return nil, job.Wrap(job.E009, err, "cannot read a chunk result").Transient().WithName("TemporaryError")
			}
			p, err := decodePartial(b)
			if err != nil {
				return nil, job.Wrap(job.E016, err, "a chunk result is damaged")
			}
			out[p.Chunk] = p
		}
		return out, nil
	}
	q, args := `SELECT chunk, data FROM csv_stage WHERE execution=?`, []any{execution}
	if only != nil {
		q += ` AND chunk IN (` + strings.TrimSuffix(strings.Repeat("?,", len(only)), ",") + `)`
		for _, n := range only {
			args = append(args, n)
		}
	}
	if len(only) == 0 && only != nil {
		return out, nil
	}
	rows, err := db.R.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, dbError(err, "read chunk results")
	}
	defer rows.Close()
	for rows.Next() {
		var n int
		var b []byte
		if err := rows.Scan(&n, &b); err != nil {
			return nil, dbError(err, "read chunk results")
		}
		p, err := decodePartial(b)
		if err != nil {
			return nil, job.Wrap(job.E016, err, "a chunk result is damaged")
		}
		out[n] = p
	}
	if err := rows.Err(); err != nil {
		return nil, dbError(err, "read chunk results")
	}
	return out, nil
}

func clearStaged(ctx context.Context, db *store.DB, workDir, execution string) {
	if db == nil {
		ms, _ := filepath.Glob(filepath.Join(workDir, "chunk-*.gob"))
		for _, m := range ms {
			os.Remove(m)
		}
		return
	}
	db.W.ExecContext(ctx, `DELETE FROM csv_stage WHERE execution=?`, execution)
}

// upsertUsers writes the combined users in one transaction and returns how many rows changed.
// A user whose values are already in the table is not touched (updated_at stays), so a re-run
// of the same file changes nothing.
func upsertUsers(ctx context.Context, tx *sql.Tx, u *users, loginK, postK int, execution, sha string, now int64) (int64, error) {
	const batch = 200
	var changed int64
	stmts := map[int]*sql.Stmt{}
	defer func() {
		for _, s := range stmts {
			s.Close()
		}
	}()
	args := make([]any, 0, batch*6)
	// Write in key order: the table's B-tree then grows at its end instead of splitting pages all
	// over a table larger than the page cache (about 2.5× faster for 50k users).
	order := make([]int32, u.n())
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return bytes.Compare(u.key(int(a)), u.key(int(b))) })
	for start := 0; start < u.n(); start += batch {
		end := min(start+batch, u.n())
		n := end - start
		st := stmts[n]
		if st == nil {
			var q strings.Builder
			q.WriteString(`INSERT INTO csv_users(user_id, login_count, post_count, updated_at, source_job, source_sha256) VALUES `)
			for i := 0; i < n; i++ {
				if i > 0 {
					q.WriteByte(',')
				}
				q.WriteString("(?,?,?,?,?,?)")
			}
			q.WriteString(` ON CONFLICT(user_id) DO UPDATE SET login_count=excluded.login_count, post_count=excluded.post_count,
				updated_at=excluded.updated_at, source_job=excluded.source_job, source_sha256=excluded.source_sha256
				WHERE csv_users.login_count IS NOT excluded.login_count OR csv_users.post_count IS NOT excluded.post_count`)
			var err error
			if st, err = tx.PrepareContext(ctx, q.String()); err != nil {
				return 0, err
			}
			stmts[n] = st
		}
		args = args[:0]
		for _, i := range order[start:end] {
			i := int(i)
			var login, post int64
			if loginK >= 0 {
				login = u.val(loginK, i)
			}
			if postK >= 0 {
				post = u.val(postK, i)
			}
			args = append(args, string(u.key(i)), login, post, now, execution, sha)
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
