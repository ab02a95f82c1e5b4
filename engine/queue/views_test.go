package queue

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"jobdesk/engine/job"
)

// TopLevelCounts counts what a person submitted, not its fan-out children.
func TestTopLevelCounts(t *testing.T) {
	q := openQueue(t, t.TempDir())
	ctx := context.Background()
	parent, _, _ := q.Enqueue(ctx, Params{Type: "x", Name: "parent"})
	q.Enqueue(ctx, Params{Type: "x", Name: "other"})
	for range 3 {
		q.Enqueue(ctx, Params{Type: "x", Name: "child", ParentID: parent.ID})
	}
	got, err := q.TopLevelCounts(ctx)
	if err != nil || len(got) != 1 || got[job.Pending] != 2 {
		t.Fatalf("top-level counts %v, %v; want 2 PENDING", got, err)
	}
	if all, _ := q.Counts(ctx); all[job.Pending] != 5 {
		t.Fatalf("all counts %v; want 5 PENDING", all)
	}
}

// WorkerElsewhere sees a live process's worker, and neither this process's own nor a dead one's.
func TestWorkerElsewhere(t *testing.T) {
	q := openQueue(t, t.TempDir())
	ctx := context.Background()
	host, _ := os.Hostname()
	elsewhere := func() bool {
		t.Helper()
		ok, err := q.WorkerElsewhere(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if elsewhere() {
		t.Fatal("an empty queue has a worker elsewhere")
	}
	w := NewWorker(q, WorkerOptions{})
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	// A process that no longer exists (pid far above any live one) once had a worker.
	q.db.W.Exec(`INSERT INTO queue_owners(id, pid, host, started_at) VALUES('dead', 999999999, ?, 0)`, host)
	if elsewhere() {
		t.Fatal("this process's own worker or a dead process's counted as elsewhere")
	}
	// The parent of this test process lives.
	q.db.W.Exec(`INSERT INTO queue_owners(id, pid, host, started_at) VALUES('parent', ?, ?, 0)`, os.Getppid(), host)
	if !elsewhere() {
		t.Fatal("a live process's worker was not seen")
	}
}

// Outcome reads what a waiter needs of a job; SucceededByKey finds a dedup key's job only once
// it succeeded (or succeeded partly).
func TestOutcomeAndSucceededByKey(t *testing.T) {
	q := openQueue(t, t.TempDir())
	ctx := context.Background()
	if _, err := q.Outcome(ctx, 999); err != ErrNotFound {
		t.Fatalf("outcome of a missing job: %v, want ErrNotFound", err)
	}
	j, _, err := q.Enqueue(ctx, Params{Type: "x", DedupKey: "k1"})
	if err != nil {
		t.Fatal(err)
	}
	if o, err := q.Outcome(ctx, j.ID); err != nil || o.Status != job.Pending || o.StartedAt != nil || o.Result != nil {
		t.Fatalf("outcome of a pending job: %+v, %v", o, err)
	}
	if id, err := q.SucceededByKey(ctx, "k1"); err != nil || id != 0 {
		t.Fatalf("a pending job counted as succeeded: %d, %v", id, err)
	}
	ls, err := q.Claim(ctx, ClaimParams{Owner: "t", Target: job.TargetDevice, Types: []string{"x"}, Max: 1, Visibility: time.Minute})
	if err != nil || len(ls) != 1 {
		t.Fatalf("claim: %v, %v", ls, err)
	}
	if err := q.Complete(ctx, ls[0], json.RawMessage(`{"n":1}`), ""); err != nil {
		t.Fatal(err)
	}
	o, err := q.Outcome(ctx, j.ID)
	if err != nil || o.Status != job.Succeeded || string(o.Result) != `{"n":1}` || o.StartedAt == nil {
		t.Fatalf("outcome of a finished job: %+v, %v", o, err)
	}
	if id, err := q.SucceededByKey(ctx, "k1"); err != nil || id != j.ID {
		t.Fatalf("succeeded by key: %d, %v; want %d", id, err, j.ID)
	}
	if id, err := q.SucceededByKey(ctx, ""); err != nil || id != 0 {
		t.Fatalf("the empty key found job %d, %v", id, err)
	}
}

// A watch receives its job's events and those that concern every job, not other jobs'; one
// that falls behind keeps the newest. A watch of job 0 receives only those for every job.
func TestWatch(t *testing.T) {
	q := openQueue(t, t.TempDir())
	ctx := context.Background()
	a, _, _ := q.Enqueue(ctx, Params{Type: "x"})
	b, _, _ := q.Enqueue(ctx, Params{Type: "x"})
	events, stop := q.Watch(a.ID)
	defer stop()
	all, stopAll := q.Watch(0)
	defer stopAll()
	for i := range watchBuffer + 5 {
		q.SetProgress(ctx, b.ID, float64(i), "other")
		q.SetProgress(ctx, a.ID, float64(i), "mine")
	}
	q.publish(job.Event{Kind: job.EventExternalChange})
	var got []job.Event
	for len(events) > 0 {
		got = append(got, <-events)
	}
	if len(got) != watchBuffer {
		t.Fatalf("a watch held %d events, want %d", len(got), watchBuffer)
	}
	for _, e := range got[:len(got)-1] {
		if e.JobID != a.ID || e.Message != "mine" {
			t.Fatalf("a watch of job %d got %+v", a.ID, e)
		}
	}
	if last := got[len(got)-1]; last.Kind != job.EventExternalChange {
		t.Fatalf("the newest event was lost: last %+v", last)
	}
	if got[len(got)-2].Progress != float64(watchBuffer+4) {
		t.Fatalf("the newest progress was lost: %+v", got[len(got)-2])
	}
	if len(all) != 1 {
		t.Fatalf("a watch of job 0 got %d events, want only the ExternalChange", len(all))
	}
	stop()
	stop() // twice is harmless
	q.SetProgress(ctx, a.ID, 1, "after")
	if len(events) != 0 {
		t.Fatal("an ended watch still receives")
	}
}

// A job enqueued watched is watched from its commit on: a claim and finish that follow at once
// reach the watch, so its waiter never needs to read the job first; a dedup key naming a job
// already there says so.
func TestEnqueueWatchedSeesEveryChange(t *testing.T) {
	q := openQueue(t, t.TempDir())
	ctx := context.Background()
	id, existed, events, stop, err := q.EnqueueWatched(ctx, Params{Type: "a", DedupKey: "k1"})
	if err != nil || existed || id == 0 {
		t.Fatalf("enqueue: id %d existed %v err %v", id, existed, err)
	}
	defer stop()
	ls, err := q.Claim(ctx, ClaimParams{Owner: "o", Target: job.TargetDevice, Types: []string{"a"}, Max: 1})
	if err != nil || len(ls) != 1 || ls[0].Info.ID != id {
		t.Fatalf("claim %v %v", ls, err)
	}
	if _, err := q.Finish(ctx, ls[0].Succeeded(json.RawMessage(`{"n":1}`), "done")); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	final := false
	for !final {
		select {
		case e := <-events:
			if e.JobID != id {
				t.Fatalf("a watch of job %d got %+v", id, e)
			}
			kinds = append(kinds, e.Kind)
			final = e.Status.Final()
		case <-time.After(10 * time.Second):
			t.Fatalf("the watch missed the job's end; it saw %v", kinds)
		}
	}
	if len(kinds) != 2 || kinds[0] != job.EventStarted || kinds[1] != job.EventSucceeded {
		t.Fatalf("events %v, want the claim and the end", kinds)
	}

	again, existed, _, stop2, err := q.EnqueueWatched(ctx, Params{Type: "a", DedupKey: "k1"})
	if err != nil || !existed || again != id {
		t.Fatalf("the same dedup key: id %d (want %d) existed %v err %v", again, id, existed, err)
	}
	stop2()
}

// ByKey finds a dedup key's job whatever its status, and no job for a key nobody holds.
func TestByKey(t *testing.T) {
	q := openQueue(t, t.TempDir())
	ctx := context.Background()
	j, _, err := q.Enqueue(ctx, Params{Type: "x", DedupKey: "k-by"})
	if err != nil {
		t.Fatal(err)
	}
	if id, st, err := q.ByKey(ctx, "k-by"); err != nil || id != j.ID || st != job.Pending {
		t.Fatalf("ByKey = %d %s %v; want %d PENDING", id, st, err, j.ID)
	}
	if id, st, err := q.ByKey(ctx, "k-none"); err != nil || id != 0 || st != "" {
		t.Fatalf("ByKey of a key nobody holds = %d %q %v", id, st, err)
	}
}
