package queue

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"jobdesk/engine/job"
)

// kindsOf returns the history's events as "kind status progress message detail", without times.
func kindsOf(t *testing.T, q *Queue, id int64) []string {
	t.Helper()
	h, err := q.History(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range h {
		out = append(out, fmt.Sprintf("%s %s %q %q %g", e.Kind, e.Status, e.Message, e.Detail, e.Progress))
	}
	return out
}

// heldWorker starts a worker of n slots for type "x" whose jobs return their input once
// release is closed.
func heldWorker(t *testing.T, q *Queue, n int) (*Worker, chan struct{}) {
	release := make(chan struct{})
	w := startWorker(t, q, WorkerOptions{Workers: n}, func(w *Worker) {
		w.Handle("x", func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
			<-release
			return in, nil
		}, TypeOptions{})
	})
	return w, release
}

// A job enqueued alone while a worker has a free slot and nothing else is due is written
// claimed: running when EnqueueWatched returns, with the lease, attempt and history a claim
// gives, and it ends as a claimed job does.
func TestHandOffWritesTheClaim(t *testing.T) {
	q := openQueue(t, t.TempDir())
	ctx := context.Background()
	w, release := heldWorker(t, q, 2)
	// The reference: a job claimed by the worker's claim loop.
	ref, _, err := q.Enqueue(ctx, Params{Type: "x", Input: json.RawMessage(`{"n":0}`), MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if j, _ := q.Get(ctx, ref.ID); j.Status == job.Running {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the reference job was not claimed")
		}
	}

	id, existed, events, stop, err := q.EnqueueWatched(ctx, Params{Type: "x", Input: json.RawMessage(`{"n":1}`), MaxAttempts: 1, ParentID: ref.ID})
	if err != nil || existed {
		t.Fatal(err, existed)
	}
	defer stop()
	j, err := q.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if j.Status != job.Running || j.Attempts != 1 || j.StartedAt == nil || j.StartedAt.UnixMilli() != j.CreatedAt.UnixMilli() {
		t.Fatalf("handed-off job = %+v; want RUNNING, attempt 1, started as it was created", j)
	}
	var owner string
	var receives int
	var until int64
	if err := q.db.R.QueryRow(`SELECT lease_owner, receives, lease_until FROM jobs WHERE id=?`, id).Scan(&owner, &receives, &until); err != nil {
		t.Fatal(err)
	}
	if owner != w.Owner() || receives != 1 || until <= time.Now().UnixMilli() {
		t.Fatalf("lease owner %q receives %d until %d; want the worker's, 1, in the future", owner, receives, until)
	}
	if e := nextEvent(t, events); e.Kind != job.EventStarted || e.Status != job.Running {
		t.Fatalf("first event %+v; want TaskStarted", e)
	}

	close(release)
	for _, jid := range []int64{ref.ID, id} {
		if j := wait(t, q, jid); j.Status != job.Succeeded {
			t.Fatalf("job %d ended %s", jid, j.Status)
		}
	}
	if a, b := kindsOf(t, q, ref.ID), kindsOf(t, q, id); !reflect.DeepEqual(a, b) {
		t.Fatalf("history of the handed-off job\n%q\ndiffers from the claimed one's\n%q", b, a)
	}
}

// A job is handed off only when the worker would claim it now: not while another job for the
// target is due (it might come first), nor with no free slot, nor once the worker stops.
func TestHandOffOnlyWhenTheClaimWouldTakeIt(t *testing.T) {
	q := openQueue(t, t.TempDir())
	ctx := context.Background()
	w, release := heldWorker(t, q, 1)
	try := func() *handoff {
		t.Helper()
		h, err := handOffX(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}

	// A job of a type no worker here handles is due: it may be claimed first elsewhere.
	other, _, err := q.Enqueue(ctx, Params{Type: "elsewhere"})
	if err != nil {
		t.Fatal(err)
	}
	if h := try(); h != nil {
		t.Fatal("handed off while another job was due")
	}
	if err := q.Cancel(ctx, other.ID); err != nil {
		t.Fatal(err)
	}
	// Nothing due: handed off, and it takes the worker's only slot.
	h := try()
	if h == nil {
		t.Fatal("not handed off with a free slot and nothing due")
	}
	h.begin()
	if h2 := try(); h2 != nil {
		t.Fatal("handed off with no free slot")
	}
	close(release)
	if j := wait(t, q, h.lease.Info.ID); j.Status != job.Succeeded {
		t.Fatalf("handed-off job ended %s", j.Status)
	}
	w.Stop()
	if h := try(); h != nil {
		t.Fatal("handed off to a stopped worker")
	}
	// Stopped without waiting for ever on a slot taken and given back.
}

// The outcome a waiter is given from a finished job's event (Ended) is the one Outcome reads.
func TestEndedIsTheOutcome(t *testing.T) {
	q := openQueue(t, t.TempDir())
	ctx := context.Background()
	startWorker(t, q, WorkerOptions{Workers: 2}, func(w *Worker) {
		w.Handle("ok", func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
			return json.RawMessage(`{"done":true}`), nil
		}, TypeOptions{})
		w.Handle("bad", func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
			return nil, job.Errorf(job.E006, "bad input").WithJa("入力が正しくありません。").WithName("Bad").Permanent()
		}, TypeOptions{})
	})
	for _, typ := range []string{"ok", "bad"} {
		id, _, events, stop, err := q.EnqueueWatched(ctx, Params{Type: typ, MaxAttempts: 1})
		if err != nil {
			t.Fatal(err)
		}
		var final job.Event
		for final.JobID == 0 {
			if e := nextEvent(t, events); e.Status.Final() {
				final = e
			}
		}
		got, ok := q.Ended(final)
		stop()
		if !ok {
			t.Fatalf("%s: no outcome kept for the final event %+v", typ, final)
		}
		want, err := q.Outcome(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: Ended = %+v (error %+v)\nOutcome = %+v (error %+v)", typ, got, got.Error, want, want.Error)
		}
		if _, again := q.Ended(final); again {
			t.Fatalf("%s: the outcome was given twice", typ)
		}
	}
}

// A job handed off as its worker stops is given back to the queue (PENDING, the attempt not
// counted), not left RUNNING with an outcome nobody commits.
func TestHandOffAsTheWorkerStops(t *testing.T) {
	q := openQueue(t, t.TempDir())
	ctx := context.Background()
	w := startWorker(t, q, WorkerOptions{Workers: 1}, func(w *Worker) {
		w.Handle("x", func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
			return in, nil
		}, TypeOptions{})
	})
	h, err := handOffX(ctx, q)
	if err != nil || h == nil {
		t.Fatalf("not handed off: %v", err)
	}
	stopped := make(chan struct{})
	go func() { w.Stop(); close(stopped) }()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		w.mu.Lock()
		stopping := w.stopping
		w.mu.Unlock()
		if stopping {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the worker did not begin to stop")
		}
	}
	select {
	case <-stopped:
		t.Fatal("Stop returned while a handed-off job was not begun")
	case <-time.After(50 * time.Millisecond):
	}
	h.begin()
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("Stop did not return")
	}
	j, err := q.Get(ctx, h.lease.Info.ID)
	if err != nil || j.Status != job.Pending || j.Attempts != 0 || j.Message != stoppedMessage {
		t.Fatalf("job after the stop: %+v %v; want PENDING, no attempt, %q", j, err, stoppedMessage)
	}
}

// handOffX asks q, in a transaction of its own, to hand off a new job of type x: the hand-off,
// or nil when the job would be left to the claim.
func handOffX(ctx context.Context, q *Queue) (*handoff, error) {
	var h *handoff
	err := q.db.Tx(ctx, func(tx *sql.Tx) error {
		p := Params{Type: "x"}
		if err := p.normalize(); err != nil {
			return err
		}
		var err error
		h, err = q.handOff(ctx, tx, &p, q.nowMs())
		return err
	})
	return h, err
}
