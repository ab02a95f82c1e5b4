// Package docsqlite is the device's cache of document conversions: docjob.Cache on the
// docjob_results table of JobDesk's SQLite database. It lives apart from package docjob so the
// converter itself links no SQLite and can run as a Lambda function; the app wires this cache in
// on the device. The table and its migrations keep the set name "docjob", so databases made
// before the split keep their rows.
package docsqlite

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"time"

	"jobdesk/engine/docjob"
	"jobdesk/engine/job"
	"jobdesk/engine/store"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// Migrations is the cache's migration set: the docjob_results table. Pass it to store.Open (the
// app does) before using a Cache on that database.
var Migrations = store.MigrationsFrom("docjob", migrationFS, "migrations")

// Cache is docjob.Cache on db's docjob_results table. Each row also records the result's name,
// status and Markdown file, the job that stored it (from the context's job.Info) and when.
type Cache struct {
	DB *store.DB
	// Now is the clock for created_at (time.Now when nil).
	Now func() time.Time
}

// New returns the cache on db (opened with Migrations).
func New(db *store.DB) *Cache { return &Cache{DB: db} }

var _ docjob.Cache = (*Cache)(nil)

// Get implements docjob.Cache. A row whose JSON no longer decodes counts as not stored.
func (c *Cache) Get(ctx context.Context, k docjob.Key) (docjob.Result, bool, error) {
	var raw string
	err := c.DB.R.QueryRowContext(ctx, `SELECT result FROM docjob_results WHERE sha256 = ? AND version = ? AND options = ?`,
		k.SHA256, k.Version, k.Options).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return docjob.Result{}, false, nil
	}
	if err != nil {
		return docjob.Result{}, false, err
	}
	var res docjob.Result
	if err := json.Unmarshal([]byte(raw), &res); err != nil {
		return docjob.Result{}, false, nil
	}
	return res, true, nil
}

// stamp is the time a row is written (Now, or the clock), as stored.
func (c *Cache) stamp() string {
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	return now().UTC().Format(time.RFC3339Nano)
}

// Put implements docjob.Cache: it inserts the row, or replaces the row of the same key.
func (c *Cache) Put(ctx context.Context, k docjob.Key, res docjob.Result) error {
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	var jobID int64
	if info, ok := job.InfoFrom(ctx); ok {
		jobID = info.ID
	}
	_, err = c.DB.W.ExecContext(ctx, `INSERT INTO docjob_results
		(sha256, version, options, name, status, result, output_path, job_id, created_at) VALUES (?,?,?,?,?,?,?,?,?)
		ON CONFLICT (sha256, version, options) DO UPDATE SET name = excluded.name, status = excluded.status,
		result = excluded.result, output_path = excluded.output_path, job_id = excluded.job_id, created_at = excluded.created_at`,
		k.SHA256, k.Version, k.Options, res.Name, string(res.Status), string(b), res.OutputPath, jobID, c.stamp())
	return err
}
