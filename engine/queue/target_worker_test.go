package queue

import (
	"context"
	"encoding/json"
	"testing"

	"jobdesk/engine/job"
)

// A worker of cloud jobs claims only the jobs whose target is the cloud, and one it gives back
// as it stops says that the cloud execution goes on.
func TestWorkerOfCloudJobs(t *testing.T) {
	q := openQueue(t, t.TempDir())
	ctx := context.Background()
	device, _, err := q.Enqueue(ctx, Params{Type: "x", Name: "device", Target: job.TargetDevice})
	if err != nil {
		t.Fatal(err)
	}
	done, _, err := q.Enqueue(ctx, Params{Type: "x", Name: "done", Target: job.TargetCloud})
	if err != nil {
		t.Fatal(err)
	}
	held, _, err := q.Enqueue(ctx, Params{Type: "x", Name: "held", Target: job.TargetCloud, Priority: -1})
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan int64, 3)
	w := NewWorker(q, WorkerOptions{Workers: 1, Target: job.TargetCloud})
	w.Handle("x", func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
		info, _ := job.InfoFrom(ctx)
		started <- info.ID
		if info.ID == held.ID {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return json.RawMessage(`{}`), nil
	}, TypeOptions{})
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if j := wait(t, q, done.ID); j.Status != job.Succeeded {
		t.Fatalf("cloud job %s %v", j.Status, j.Error)
	}
	if id := <-started; id != done.ID {
		t.Fatalf("started job %d first, want %d", id, done.ID)
	}
	if id := <-started; id != held.ID {
		t.Fatalf("started job %d, want %d", id, held.ID)
	}
	w.Stop()
	j, err := q.Get(ctx, held.ID)
	if err != nil || j.Status != job.Pending || j.Message != "JobDesk closed; the cloud execution goes on" || j.Attempts != 0 {
		t.Fatalf("held cloud job after stop: %s %q, %d attempts, %v", j.Status, j.Message, j.Attempts, err)
	}
	select {
	case id := <-started:
		t.Fatalf("the cloud worker ran job %d", id)
	default:
	}
	if j, err := q.Get(ctx, device.ID); err != nil || j.Status != job.Pending || j.Attempts != 0 {
		t.Fatalf("device job after the cloud worker: %s, %d attempts, %v", j.Status, j.Attempts, err)
	}
}
