package queue

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"jobdesk/engine/store"
)

// A batch mixing plain jobs (written in multi-row blocks) with dedup-keyed ones (written one by
// one) returns every job's own id, in order.
func TestEnqueueBatchIDsInOrder(t *testing.T) {
	q := openQueue(t, t.TempDir())
	ctx := context.Background()
	first, _, err := q.Enqueue(ctx, Params{Type: "x", Name: "existing", DedupKey: "dup"})
	if err != nil {
		t.Fatal(err)
	}
	var ps []Params
	for i := 0; i < 211; i++ {
		p := Params{Type: "x", Name: fmt.Sprintf("job-%d", i)}
		switch {
		case i == 70:
			p.DedupKey = "dup" // names the existing job
		case i%50 == 3:
			p.DedupKey = fmt.Sprintf("k%d", i)
		}
		ps = append(ps, p)
	}
	ps = append(ps, Params{Type: "x", Name: "again", DedupKey: "k3"}) // a key first seen in this batch
	ids, err := q.EnqueueBatch(ctx, ps)
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range ids {
		j, err := q.Get(ctx, id)
		if err != nil {
			t.Fatalf("job %d (id %d): %v", i, id, err)
		}
		want := ps[i].Name
		switch i {
		case 70:
			want = first.Name
		case len(ps) - 1:
			want = "job-3"
		}
		if j.Name != want {
			t.Fatalf("ids[%d] = %d names %q, want %q", i, id, j.Name, want)
		}
	}
	var n int
	if err := q.db.R.QueryRow(`SELECT count(*) FROM jobs`).Scan(&n); err != nil || n != 1+210 {
		t.Fatalf("%d jobs stored (%v), want 211", n, err)
	}
}

// The queries that lean on partial indexes repeat the index condition, so SQLite can use them
// (a full scan of a large queue would make them slow without failing anything else).
func TestQueriesUsePartialIndexes(t *testing.T) {
	q := openQueue(t, t.TempDir())
	for query, index := range map[string]string{
		`SELECT id FROM jobs WHERE dedup_key=? AND dedup_key > ''`:                                    "jobs_dedup",
		`SELECT id FROM jobs WHERE parent_id=? AND parent_id > 0 AND status IN ('PENDING','RUNNING')`: "jobs_parent",
		`SELECT id FROM jobs WHERE completed_at < ? AND completed_at > 0`:                             "jobs_completed",
	} {
		plan := explain(t, q.db.R, query)
		if !strings.Contains(plan, "INDEX "+index) {
			t.Errorf("%s\nplan: %s\nwant index %s", query, plan, index)
		}
	}
}

func explain(t *testing.T, db *sql.DB, query string) string {
	t.Helper()
	rows, err := db.Query(`EXPLAIN QUERY PLAN `+query, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		b.WriteString(detail + "; ")
	}
	return b.String()
}

// A database written before migration 003 keeps its jobs, history and dedup keys.
func TestUpgradeKeepsJobs(t *testing.T) {
	dir := t.TempDir()
	old := fstest.MapFS{}
	for _, name := range []string{"001_jobs.sql", "002_full_indexes.sql"} {
		b, err := fs.ReadFile(Migrations.FS, name)
		if err != nil {
			t.Fatal(err)
		}
		old[name] = &fstest.MapFile{Data: b}
	}
	db, err := store.OpenDir(dir, store.Migrations{Name: Migrations.Name, FS: old})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.W.Exec(`INSERT INTO jobs(type, name, status, run_at, dedup_key, created_at, updated_at)
		VALUES('x', 'kept', 'PENDING', 1, 'file-sha', 1, 1)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.W.Exec(`UPDATE jobs SET status='CANCELLED', updated_at=2`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	q := openQueue(t, dir)
	ctx := context.Background()
	j, existed, err := q.Enqueue(ctx, Params{Type: "x", Name: "new", DedupKey: "file-sha"})
	if err != nil || !existed || j.Name != "kept" || j.Status != "CANCELLED" {
		t.Fatalf("after upgrade: %+v existed=%v err=%v", j, existed, err)
	}
	hist, err := q.History(ctx, j.ID)
	if err != nil || len(hist) == 0 || hist[len(hist)-1].Status != "CANCELLED" {
		t.Fatalf("history %+v, %v", hist, err)
	}
	// The history trigger was recreated with the table.
	k, _, err := q.Enqueue(ctx, Params{Type: "x", Name: "next"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.db.W.Exec(`UPDATE jobs SET status='RUNNING', updated_at=3 WHERE id=?`, k.ID); err != nil {
		t.Fatal(err)
	}
	if hist, _ := q.History(ctx, k.ID); len(hist) == 0 || hist[len(hist)-1].Status != "RUNNING" {
		t.Fatalf("no history row for a status change after the upgrade: %+v", hist)
	}
}
