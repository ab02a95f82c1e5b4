package queue

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"jobdesk/engine/store"
	"jobdesk/internal/crashtest"
)

// Every way of enqueuing numbers the jobs a person starts (no parent) 1, 2, 3… and leaves the
// jobs with a parent (a workflow's tasks and map items) without a number, so a person's jobs
// do not jump although the children take ids in between.
func TestNumbersCountOnlyJobsWithoutParent(t *testing.T) {
	q := openQueue(t, t.TempDir())
	ctx := context.Background()
	first, _, err := q.Enqueue(ctx, Params{Type: "csv", Name: "a.csv"})
	if err != nil {
		t.Fatal(err)
	}
	if first.Number != 1 {
		t.Fatalf("first job: number %d, want 1", first.Number)
	}
	// A workflow's tasks: a batch of children, some in blocks, some with dedup keys.
	var kids []Params
	for i := 0; i < 80; i++ {
		p := Params{Type: "task", ParentID: first.ID}
		if i%9 == 0 {
			p.DedupKey = fmt.Sprintf("task-%d", i)
		}
		kids = append(kids, p)
	}
	if _, err := q.EnqueueBatch(ctx, kids); err != nil {
		t.Fatal(err)
	}
	second, _, err := q.Enqueue(ctx, Params{Type: "convert", Name: "b.pdf"})
	if err != nil {
		t.Fatal(err)
	}
	if second.Number != 2 || second.ID <= first.ID+1 {
		t.Fatalf("second job: id %d number %d, want number 2 after the children's ids", second.ID, second.Number)
	}
	// A batch mixing people's jobs (in blocks and one by one) with children.
	var mixed []Params
	for i := 0; i < 150; i++ {
		p := Params{Type: "x", Name: fmt.Sprintf("m%d", i)}
		switch {
		case i%3 == 1:
			p.ParentID = second.ID
		case i%40 == 0:
			p.DedupKey = fmt.Sprintf("m-%d", i)
		}
		mixed = append(mixed, p)
	}
	mixed = append(mixed, Params{Type: "x", Name: "again", DedupKey: "m-120"}) // the job above: no new number
	ids, err := q.EnqueueBatch(ctx, mixed)
	if err != nil {
		t.Fatal(err)
	}
	if ids[len(ids)-1] != ids[120] {
		t.Fatalf("the repeated dedup key made job %d, want %d", ids[len(ids)-1], ids[120])
	}
	// Inside a caller's transaction, and through EnqueueOnce (a retry copy, forced again).
	var txID int64
	if err := q.db.Tx(ctx, func(tx *sql.Tx) error {
		txID, _, err = q.EnqueueTx(ctx, tx, Params{Type: "goal", Name: "goal"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	once, _, err := q.EnqueueOnce(ctx, Params{Type: "csv", Name: "a.csv", DedupKey: "content:a", RetryOf: first.ID}, false)
	if err != nil {
		t.Fatal(err)
	}
	same, existed, err := q.EnqueueOnce(ctx, Params{Type: "csv", Name: "a.csv", DedupKey: "content:a"}, false)
	if err != nil || !existed || same.Number != once.Number {
		t.Fatalf("the same content again: job %+v existed=%v err=%v, want job %s", same, existed, err, once.Ref())
	}
	forced, _, err := q.EnqueueOnce(ctx, Params{Type: "csv", Name: "a.csv", DedupKey: "content:a"}, true)
	if err != nil {
		t.Fatal(err)
	}

	var want []int64 // ids of the jobs without a parent, in submission order
	want = append(want, first.ID, second.ID)
	for i, p := range mixed[:len(mixed)-1] {
		if p.ParentID == 0 {
			want = append(want, ids[i])
		}
	}
	want = append(want, txID, once.ID, forced.ID)
	for k, id := range want {
		j, err := q.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if j.Number != int64(k+1) {
			t.Fatalf("job id %d (%s): number %d, want %d", id, j.Name, j.Number, k+1)
		}
		if byNumber, err := q.GetByNumber(ctx, j.Number); err != nil || byNumber.ID != id {
			t.Fatalf("GetByNumber(%d) = id %d, %v; want id %d", j.Number, byNumber.ID, err, id)
		}
	}
	var numbered, children int
	if err := q.db.R.QueryRow(`SELECT count(*) FILTER (WHERE number > 0), count(*) FILTER (WHERE parent_id > 0 AND number <= 0) FROM jobs`).
		Scan(&numbered, &children); err != nil {
		t.Fatal(err)
	}
	if numbered != len(want) || children != 80+50 {
		t.Fatalf("%d numbered jobs and %d children without a number, want %d and 130", numbered, children, len(want))
	}
	if _, err := q.GetByNumber(ctx, int64(len(want)+1)); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("#%d", len(want)+1)) {
		t.Fatalf("a number no job has: %v", err)
	}
	// The list and the search carry the number and find a job by it.
	list, err := q.List(ctx, Filter{TopLevel: true, Limit: 1})
	if err != nil || len(list) != 1 || list[0].Number != int64(len(want)) {
		t.Fatalf("newest listed job %+v, %v; want number %d", list, err, len(want))
	}
	for _, text := range []string{"#2", " #2 "} {
		found, err := q.SearchJobs(ctx, Search{Filter: Filter{TopLevel: true}, Text: text})
		if err != nil || len(found) != 1 || found[0].ID != second.ID || found[0].Number != 2 {
			t.Fatalf("search %q: %+v, %v; want job id %d (#2)", text, found, err, second.ID)
		}
	}
}

// oldQueueDB makes a database in dir with the queue's migrations up to and including last,
// as a JobDesk of that time left it.
func oldQueueDB(t *testing.T, dir string, last int) *store.DB {
	t.Helper()
	old := fstest.MapFS{}
	ms, err := fs.ReadDir(Migrations.FS, ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		var v int
		fmt.Sscanf(m.Name(), "%d_", &v)
		if v > last {
			continue
		}
		b, err := fs.ReadFile(Migrations.FS, m.Name())
		if err != nil {
			t.Fatal(err)
		}
		old[m.Name()] = &fstest.MapFile{Data: b}
	}
	db, err := store.OpenDir(dir, store.Migrations{Name: Migrations.Name, FS: old})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// An existing database from before numbers existed keeps the numbers its jobs were shown by:
// the releases before migration 006 showed every job by its id, so a job a person started
// keeps its id as its number, a workflow's step has none, and new jobs are numbered after
// every old id (an old id never comes to name another job).
func TestNumbersMigrationKeepsTheIdsPeopleSaw(t *testing.T) {
	dir := t.TempDir()
	db := oldQueueDB(t, dir, 5)
	// Ids 1..9: people's jobs at 1, 2, 5, 9; children of 2 and 5 in between (one purged id, 7),
	// and a last child (10) after the last person's job.
	parents := map[int64]int64{3: 2, 4: 2, 6: 5, 8: 5, 10: 9}
	for _, id := range []int64{1, 2, 3, 4, 5, 6, 8, 9, 10} {
		var parent any
		if p, ok := parents[id]; ok {
			parent = p
		}
		if _, err := db.W.Exec(`INSERT INTO jobs(id, type, name, status, run_at, parent_id, created_at, updated_at)
			VALUES(?, 'x', ?, 'SUCCEEDED', 1, ?, 1, 1)`, id, fmt.Sprintf("job %d", id), parent); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	q := openQueue(t, dir)
	ctx := context.Background()
	for id, want := range map[int64]int64{1: 1, 2: 2, 3: 0, 4: 0, 5: 5, 6: 0, 8: 0, 9: 9, 10: 0} {
		j, err := q.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if j.Number != want {
			t.Errorf("job id %d: number %d after the upgrade, want %d", id, j.Number, want)
		}
	}
	next, _, err := q.Enqueue(ctx, Params{Type: "x", Name: "new"})
	if err != nil || next.Number != 11 {
		t.Fatalf("the first job after the upgrade: number %d, %v; want 11", next.Number, err)
	}
	for n, id := range map[int64]int64{1: 1, 2: 2, 5: 5, 9: 9, 11: next.ID} {
		if j, err := q.GetByNumber(ctx, n); err != nil || j.ID != id {
			t.Errorf("GetByNumber(%d) after the upgrade = id %d, %v; want id %d", n, j.ID, err, id)
		}
	}
	for _, n := range []int64{3, 4, 6, 7, 8, 10} {
		if j, err := q.GetByNumber(ctx, n); err == nil {
			t.Errorf("GetByNumber(%d) = id %d; the release showed no job a person started as %d", n, j.ID, n)
		}
	}
}

// A database that migration 006 already counted afresh, with jobs numbered since, gets the
// old jobs' ids back as their numbers, and the newer jobs move up past them in order, so
// numbers still rise with the ids and no two jobs share one.
func TestNumbersMigrationAfterCountedNumbers(t *testing.T) {
	dir := t.TempDir()
	db := oldQueueDB(t, dir, 5)
	for id, parent := range map[int64]any{1: nil, 2: 1, 3: nil, 4: 3} {
		if _, err := db.W.Exec(`INSERT INTO jobs(id, type, name, status, run_at, parent_id, created_at, updated_at)
			VALUES(?, 'x', ?, 'SUCCEEDED', 1, ?, 1, 1)`, id, fmt.Sprintf("old %d", id), parent); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	db = oldQueueDB(t, dir, 6) // 006 counts: old 1 is #1, old 3 is #2
	now := time.Now().UnixMilli() + 1000
	// Jobs made under 006's numbering: #3, a child, #4.
	for _, r := range []struct {
		id, parent, number int64
	}{{5, 0, 3}, {6, 5, -3}, {7, 0, 4}} {
		var parent any
		if r.parent > 0 {
			parent = r.parent
		}
		if _, err := db.W.Exec(`INSERT INTO jobs(id, type, name, status, run_at, parent_id, created_at, updated_at, number)
			VALUES(?, 'x', ?, 'PENDING', 1, ?, ?, ?, ?)`, r.id, fmt.Sprintf("new %d", r.id), parent, now, now, r.number); err != nil {
			t.Fatal(err)
		}
	}
	var counted int64
	db.R.QueryRow(`SELECT number FROM jobs WHERE id = 3`).Scan(&counted)
	db.Close()
	if counted != 2 {
		t.Fatalf("006 numbered old job 3 as %d, want 2 (the test's premise)", counted)
	}

	q := openQueue(t, dir)
	ctx := context.Background()
	for id, want := range map[int64]int64{1: 1, 2: 0, 3: 3, 4: 0, 5: 5, 6: 0, 7: 6} {
		j, err := q.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if j.Number != want {
			t.Errorf("job id %d (%s): number %d, want %d", id, j.Name, j.Number, want)
		}
		if want > 0 {
			if g, err := q.GetByNumber(ctx, want); err != nil || g.ID != id {
				t.Errorf("GetByNumber(%d) = id %d, %v; want id %d", want, g.ID, err, id)
			}
		}
	}
	next, _, err := q.Enqueue(ctx, Params{Type: "x", Name: "next"})
	if err != nil || next.Number != 7 {
		t.Fatalf("next job: number %d, %v; want 7", next.Number, err)
	}
}

// TestNumberChild is a submitter process of TestNumbersConcurrentSubmitters: it submits jobs to
// the database in the folder the environment names.
func TestNumberChild(t *testing.T) {
	q := openQueue(t, crashtest.Child(t, "TestNumbersConcurrentSubmitters"))
	if err := submitMixed(q, "child"+strconv.Itoa(os.Getpid()), numberRounds); err != nil {
		t.Fatal(err)
	}
}

// numberRounds is how many rounds each submitter of TestNumbersConcurrentSubmitters runs; a
// round makes numberedPerRound jobs without a parent.
const (
	numberRounds     = 150
	numberedPerRound = 5
)

// submitMixed runs rounds of every kind of enqueue on q: one job, a job in a caller's
// transaction, a job by content, and a batch of two people's jobs and two children.
func submitMixed(q *Queue, who string, rounds int) error {
	ctx := context.Background()
	for r := 0; r < rounds; r++ {
		parent, _, err := q.Enqueue(ctx, Params{Type: "x", Name: fmt.Sprintf("%s-%d", who, r)})
		if err != nil {
			return err
		}
		if err := q.db.Tx(ctx, func(tx *sql.Tx) error {
			_, _, err := q.EnqueueTx(ctx, tx, Params{Type: "x", Name: who + "-tx"})
			return err
		}); err != nil {
			return err
		}
		if _, _, err := q.EnqueueOnce(ctx, Params{Type: "x", DedupKey: fmt.Sprintf("%s-%d", who, r)}, false); err != nil {
			return err
		}
		if _, err := q.EnqueueBatch(ctx, []Params{{Type: "x"}, {Type: "task", ParentID: parent.ID},
			{Type: "x"}, {Type: "task", ParentID: parent.ID}}); err != nil {
			return err
		}
	}
	return nil
}

// Submitters in two processes and in several connections of this one, all at once on one
// database file, number their jobs exactly 1..N: none twice, none skipped.
func TestNumbersConcurrentSubmitters(t *testing.T) {
	dir := t.TempDir()
	openQueue(t, dir) // migrated before the submitters race to open it
	const procs, inProcess = 2, 3
	var wg sync.WaitGroup
	errs := make(chan error, procs+inProcess)
	for p := 0; p < procs; p++ {
		cmd := crashtest.Command(context.Background(), "TestNumberChild", dir)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if out, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Errorf("submitter process: %v\n%s", err, out)
			}
		}()
	}
	for g := 0; g < inProcess; g++ {
		q := openQueue(t, dir) // a connection pool of its own, as another process would have
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := submitMixed(q, "g"+strconv.Itoa(g), numberRounds); err != nil {
				errs <- err
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("the submitters did not finish within 2 minutes")
	}
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	q := openQueue(t, dir)
	ctx := context.Background()
	jobs, err := q.List(ctx, Filter{Limit: 100000})
	if err != nil {
		t.Fatal(err)
	}
	want := int64((procs + inProcess) * numberRounds * numberedPerRound)
	var next int64 = want // List is newest first
	for _, j := range jobs {
		switch {
		case j.ParentID != 0 && j.Number != 0:
			t.Fatalf("child job id %d has number %d", j.ID, j.Number)
		case j.ParentID == 0 && j.Number != next:
			t.Fatalf("job id %d has number %d, want %d (numbers in id order, none twice, none skipped)", j.ID, j.Number, next)
		case j.ParentID == 0:
			next--
		}
	}
	if next != 0 {
		t.Fatalf("numbered %d jobs, want %d", want-next, want)
	}
	for n := int64(1); n <= want; n++ {
		if j, err := q.GetByNumber(ctx, n); err != nil || j.Number != n {
			t.Fatalf("GetByNumber(%d) = %+v, %v", n, j, err)
		}
	}
}

// GetByNumber finds every job by its number among runs of children of any length and after
// old jobs were purged, and refuses a number whose job is gone or not yet given.
func TestGetByNumberAmongChildrenAndGaps(t *testing.T) {
	q := openQueue(t, t.TempDir())
	ctx := context.Background()
	var numbered []int64 // ids, by number - 1
	for i := 0; i < 60; i++ {
		j, _, err := q.Enqueue(ctx, Params{Type: "x", Name: fmt.Sprintf("job %d", i)})
		if err != nil {
			t.Fatal(err)
		}
		numbered = append(numbered, j.ID)
		kids := make([]Params, (i*37)%101) // 0 to 100 children after each
		for k := range kids {
			kids[k] = Params{Type: "task", ParentID: j.ID}
		}
		if _, err := q.EnqueueBatch(ctx, kids); err != nil {
			t.Fatal(err)
		}
	}
	// Purge takes jobs 1-5 with their children, job 30 alone, and the children of job 40.
	if _, err := q.db.W.Exec(`DELETE FROM jobs WHERE id < ? OR id = ? OR parent_id = ?`, numbered[5], numbered[29], numbered[39]); err != nil {
		t.Fatal(err)
	}
	for n := int64(1); n <= 61; n++ {
		j, err := q.GetByNumber(ctx, n)
		gone := n <= 5 || n == 30 || n == 61
		switch {
		case gone && err == nil:
			t.Fatalf("GetByNumber(%d) found job id %d, want none", n, j.ID)
		case !gone && (err != nil || j.ID != numbered[n-1] || j.Number != n):
			t.Fatalf("GetByNumber(%d) = id %d number %d, %v; want id %d", n, j.ID, j.Number, err, numbered[n-1])
		}
	}
	if _, err := q.GetByNumber(ctx, 0); err == nil {
		t.Fatal("GetByNumber(0) found a job")
	}
}

// Finding the newest number and a job by its number reads a few rows by id, never the whole
// queue, so neither slows down as the queue grows.
func TestNumberQueriesSeekByID(t *testing.T) {
	q := openQueue(t, t.TempDir())
	for query, arg := range map[string]any{`SELECT ` + lastNumber: nil, byNumberSQL: 3} {
		args := []any{}
		if arg != nil {
			args = append(args, arg)
		}
		rows, err := q.db.R.Query(`EXPLAIN QUERY PLAN `+query, args...)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(detail, "INDEX") || strings.Contains(detail, "TEMP B-TREE") ||
				(strings.HasPrefix(detail, "SCAN jobs") && !strings.HasPrefix(query, "SELECT "+lastNumber)) {
				t.Errorf("%s\nreads the queue through %q, want seeks by id", query, detail)
			}
		}
		rows.Close()
	}
}
