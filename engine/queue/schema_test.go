package queue

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"maps"
	"strings"
	"testing"
	"testing/fstest"

	"jobdesk/engine/job"
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

// Migration 008 on a database with jobs in every state: the status index keeps only the jobs
// not yet ended, the reads that seek it still do (when a type's next job falls due, an
// unfinished job of a type, the queue's depth), and the jobs, counts and lists are as before.
func TestLiveStatusIndexAfterUpgrade(t *testing.T) {
	dir := t.TempDir()
	db := oldQueueDB(t, dir, 7)
	for _, r := range []struct {
		id            int64
		typ, status   string
		runAt, parent any
	}{
		{1, "a", "PENDING", 5, nil},
		{2, "a", "SUCCEEDED", 1, nil},
		{3, "a", "RUNNING", 1, nil},
		{4, "b", "FAILED", 1, 1},
		{5, "b", "RETRYING", 9, nil},
		{6, "b", "CANCELLED", 1, nil},
	} {
		if _, err := db.W.Exec(`INSERT INTO jobs(id, type, name, status, run_at, parent_id, input, created_at, updated_at, number)
			VALUES(?, ?, ?, ?, ?, ?, '{"k":1}', 1, 1, ?)`, r.id, r.typ, fmt.Sprintf("job %d", r.id), r.status, r.runAt, r.parent, r.id); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	q := openQueue(t, dir)
	ctx := context.Background()
	var partial int
	if err := q.db.R.QueryRow(`SELECT partial FROM pragma_index_list('jobs') WHERE name='jobs_status_type'`).Scan(&partial); err != nil || partial != 1 {
		t.Fatalf("jobs_status_type partial=%d (%v): an ended job still has an entry in it", partial, err)
	}
	plans := map[string][]any{
		dueSQL(dueKey{anyDue, 2}):  {"device", "a", "b", 100},
		dueSQL(dueKey{nextDue, 2}): {"device", "a", "b"},
		`SELECT id FROM jobs WHERE type=? AND status IN ('PENDING','RUNNING','RETRYING') AND ` + liveStatus + ` ORDER BY id LIMIT 1`: {"a"},
		`SELECT count(*) FROM jobs WHERE parent_id IS NULL AND ` + liveStatus:                                                        {},
	}
	for query, args := range plans {
		rows, err := q.db.R.Query(`EXPLAIN QUERY PLAN `+query, args...)
		if err != nil {
			t.Fatal(err)
		}
		var all []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			all = append(all, detail)
			if strings.HasPrefix(detail, "SCAN jobs") {
				t.Errorf("%s\nreads every job (%q), want a seek of jobs_status_type", query, detail)
			}
		}
		rows.Close()
		if !strings.Contains(strings.Join(all, "; "), "jobs_status_type") {
			t.Errorf("%s\nplan %q does not use jobs_status_type", query, all)
		}
	}

	// The condition holds exactly for the statuses of a job not yet ended.
	for _, st := range []job.Status{job.Pending, job.Running, job.Retrying, job.Succeeded, job.Partial, job.Failed, job.TimedOut, job.Cancelled} {
		var live bool
		if err := q.db.R.QueryRow(`SELECT `+strings.ReplaceAll(liveStatus, "status", "?1"), string(st)).Scan(&live); err != nil || live == st.Final() {
			t.Errorf("status %s: in jobs_status_type %v (%v), ended %v", st, live, err, st.Final())
		}
	}
	// Writing a job tests the condition without building a table of constants.
	rows, err := q.db.W.Query(`EXPLAIN `+completeSQL, make([]any, 10)...)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var addr, p1, p2, p3 int
		var op string
		var p4, p5, comment sql.NullString
		if err := rows.Scan(&addr, &op, &p1, &p2, &p3, &p4, &p5, &comment); err != nil {
			t.Fatal(err)
		}
		if op == "OpenEphemeral" {
			t.Errorf("finishing a job opens a temporary table (%d)", addr)
		}
	}
	rows.Close()

	if d, ok := q.NextDue(ctx, "device", []string{"a", "b"}); !ok || d > 0 {
		t.Fatalf("NextDue after the upgrade: %v, %v; want job 1, due", d, ok)
	}
	if !q.anyDue(ctx, "device", []string{"a"}, 100) || q.anyDue(ctx, "device", []string{"b"}, 5) {
		t.Fatal("anyDue after the upgrade: want job 1 of a due at 100, no job of b due at 5")
	}
	tx, err := q.db.W.Begin()
	if err != nil {
		t.Fatal(err)
	}
	id, err := q.FindUnfinishedTx(ctx, tx, "a", "k", 1)
	tx.Rollback()
	if err != nil || id != 1 {
		t.Fatalf("FindUnfinishedTx = %d, %v; want job 1", id, err)
	}
	counts, err := q.Counts(ctx)
	want := map[job.Status]int{job.Pending: 1, job.Succeeded: 1, job.Running: 1, job.Failed: 1, job.Retrying: 1, job.Cancelled: 1}
	if err != nil || !maps.Equal(counts, want) {
		t.Fatalf("Counts = %v, %v; want %v", counts, err, want)
	}
	top, err := q.TopLevelCounts(ctx)
	delete(want, job.Failed)
	if err != nil || !maps.Equal(top, want) {
		t.Fatalf("TopLevelCounts = %v, %v; want %v", top, err, want)
	}
	for st, id := range map[job.Status]int64{job.Succeeded: 2, job.Cancelled: 6, job.Pending: 1} {
		js, err := q.List(ctx, Filter{Status: st})
		if err != nil || len(js) != 1 || js[0].ID != id {
			t.Fatalf("List(%s) = %+v, %v; want job %d", st, js, err, id)
		}
	}

	// A job enqueued, claimed and finished after the upgrade.
	j, _, err := q.Enqueue(ctx, Params{Type: "c", Name: "new"})
	if err != nil {
		t.Fatal(err)
	}
	ls, err := q.Claim(ctx, ClaimParams{Owner: "test", Target: "device", Types: []string{"c"}, Max: 1})
	if err != nil || len(ls) != 1 || ls[0].Info.ID != j.ID {
		t.Fatalf("claim after the upgrade: %+v, %v", ls, err)
	}
	if err := q.Complete(ctx, ls[0], nil, "done"); err != nil {
		t.Fatal(err)
	}
	if _, ok := q.NextDue(ctx, "device", []string{"c"}); ok {
		t.Fatal("NextDue finds a job of c waiting after it ended")
	}
	if js, err := q.List(ctx, Filter{Status: job.Succeeded, Type: "c"}); err != nil || len(js) != 1 || js[0].ID != j.ID {
		t.Fatalf("List(SUCCEEDED, c) = %+v, %v; want job %d", js, err, j.ID)
	}
}
