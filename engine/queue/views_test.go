package queue

import (
	"context"
	"os"
	"testing"

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
