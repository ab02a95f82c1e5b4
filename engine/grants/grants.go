// Package grants records the files a person handed to JobDesk (`jobdesk run`, a drop on the
// window), so that handlers and workflows may read those files although they lie outside the
// folders JobDesk may use; a path that only an API caller or a workflow definition named is never
// in it. It owns the granted_files table. Its migration 002 grants the files of the jobs people
// submitted before the table existed (it reads the queue's jobs table, so the queue's
// migrations run first).
package grants

import (
	"context"
	"database/sql"
	"embed"
	"path/filepath"
	"time"

	"jobdesk/engine/store"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations is the schema of granted files.
var Migrations = store.MigrationsFrom("files", migrationFiles, "migrations")

// Add records that a person chose the files at paths (absolute).
func Add(ctx context.Context, db *store.DB, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	now := time.Now().UnixMilli()
	return db.Tx(ctx, func(tx *sql.Tx) error {
		for _, p := range paths {
			if _, err := tx.ExecContext(ctx, `INSERT INTO granted_files(path, granted_at) VALUES(?, ?)
				ON CONFLICT(path) DO UPDATE SET granted_at=excluded.granted_at`, filepath.Clean(p), now); err != nil {
				return err
			}
		}
		return nil
	})
}

// Has reports whether a person chose the file at path.
func Has(db *store.DB, path string) bool {
	var one int
	return db.R.QueryRow(`SELECT 1 FROM granted_files WHERE path=?`, path).Scan(&one) == nil
}
