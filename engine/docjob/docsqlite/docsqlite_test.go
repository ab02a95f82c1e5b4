package docsqlite_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"jobdesk/engine/blob"
	"jobdesk/engine/docjob"
	"jobdesk/engine/docjob/docsqlite"
	"jobdesk/engine/job"
	"jobdesk/engine/store"
)

func openDB(t *testing.T) *store.DB {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "jobdesk.db"), docsqlite.Migrations)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestMigrationSetName: the set keeps the name it had inside package docjob, so a database made
// before the cache moved here is not migrated again.
func TestMigrationSetName(t *testing.T) {
	if docsqlite.Migrations.Name != "docjob" {
		t.Fatalf("set name %q", docsqlite.Migrations.Name)
	}
	db := openDB(t)
	var n int
	if err := db.R.QueryRow(`SELECT count(*) FROM docjob_results`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("docjob_results: %d %v", n, err)
	}
}

// TestGetPut: a stored result comes back by its key only; storing the key again replaces the
// row, recording the job that stored it (from the context) and the time.
func TestGetPut(t *testing.T) {
	db := openDB(t)
	now := time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)
	c := &docsqlite.Cache{DB: db, Now: func() time.Time { return now }}
	ctx := context.Background()
	k := docjob.Key{SHA256: "ab12", Version: docjob.Version, Options: "furigana=false;ocr=true"}
	if _, found, err := c.Get(ctx, k); found || err != nil {
		t.Fatalf("empty: %v %v", found, err)
	}
	res := docjob.Result{Status: docjob.StatusReady, Name: "a.pdf", SHA256: "ab12", OutputPath: "/data/documents/a_ab12.md", PageCount: 3}
	if err := c.Put(job.WithInfo(ctx, job.Info{ID: 5}), k, res); err != nil {
		t.Fatal(err)
	}
	res.Status, res.Name, res.Error = docjob.StatusFailed, "b.pdf", job.Errorf(job.E005, "locked")
	if err := c.Put(job.WithInfo(ctx, job.Info{ID: 6}), k, res); err != nil {
		t.Fatal(err)
	}
	got, found, err := c.Get(ctx, k)
	if err != nil || !found || got.Name != "b.pdf" || got.Status != docjob.StatusFailed || got.Error == nil || got.Error.Code != job.E005 {
		t.Fatalf("get %+v %v %v", got, found, err)
	}
	var rows, jobID int64
	var status, name, out, created string
	db.R.QueryRow(`SELECT count(*), max(job_id), max(status), max(name), max(output_path), max(created_at) FROM docjob_results`).
		Scan(&rows, &jobID, &status, &name, &out, &created)
	if rows != 1 || jobID != 6 || status != "failed" || name != "b.pdf" || out != res.OutputPath || created != "2026-04-01T09:00:00Z" {
		t.Fatalf("row: %d %d %s %s %s %s", rows, jobID, status, name, out, created)
	}
	for _, other := range []docjob.Key{{SHA256: "ab12", Version: "docjob/0", Options: k.Options}, {SHA256: "ab12", Version: k.Version, Options: "x"}} {
		if _, found, _ := c.Get(ctx, other); found {
			t.Fatalf("%+v found", other)
		}
	}
	db.W.Exec(`UPDATE docjob_results SET result = '{broken'`)
	if _, found, err := c.Get(ctx, k); found || err != nil {
		t.Fatalf("broken row: %v %v", found, err)
	}
}

// TestConverterCachesInDatabase runs the converter on the database cache as the app does: the
// second conversion of the same bytes is served from the row (which records the job), a forced
// one replaces it, and a password-protected file is stored once as failed and still fails E005.
func TestConverterCachesInDatabase(t *testing.T) {
	db := openDB(t)
	c := docjob.NewConverter(docsqlite.New(db), blob.Local{})
	dataDir, in := t.TempDir(), t.TempDir()
	corpus := func(name string) string {
		b, err := os.ReadFile(filepath.Join("..", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(in, name)
		os.WriteFile(p, b, 0o600)
		return p
	}
	run := func(in docjob.Input) (docjob.Result, error) {
		raw, _ := json.Marshal(in)
		out, err := c.Handle(job.WithInfo(context.Background(), job.Info{ID: 7, Output: dataDir}), raw, job.Discard)
		var res docjob.Result
		json.Unmarshal(out, &res)
		return res, err
	}
	pdf := corpus("report.pdf")
	first, err := run(docjob.Input{Path: pdf})
	if err != nil || first.Cached || filepath.Dir(first.OutputPath) != filepath.Join(dataDir, "documents") {
		t.Fatalf("first %+v %v", first, err)
	}
	again, err := run(docjob.Input{Path: pdf})
	if err != nil || !again.Cached || again.OutputPath != first.OutputPath {
		t.Fatalf("second %+v %v", again, err)
	}
	if forced, err := run(docjob.Input{Path: pdf, Force: true}); err != nil || forced.Cached {
		t.Fatalf("forced %+v %v", forced, err)
	}
	var rows int
	db.R.QueryRow(`SELECT count(*) FROM docjob_results WHERE sha256 = ? AND job_id = 7`, first.SHA256).Scan(&rows)
	if rows != 1 {
		t.Fatalf("cache rows %d", rows)
	}
	pw := corpus("pw_user_aes256.pdf")
	for i := 0; i < 2; i++ {
		_, err := run(docjob.Input{Path: pw})
		var je *job.Error
		if !errors.As(err, &je) || je.Code != job.E005 {
			t.Fatalf("run %d: %v", i, err)
		}
	}
	db.R.QueryRow(`SELECT count(*) FROM docjob_results WHERE status = 'failed'`).Scan(&rows)
	if rows != 1 {
		t.Fatalf("failed rows %d", rows)
	}
}
