package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"jobdesk/engine/job"
	"jobdesk/engine/store"
)

func openQueue(t testing.TB, dir string) *Queue {
	t.Helper()
	return openQueueWith(t, dir, nil)
}

// testClock is a clock a test moves on (Options.Now) instead of waiting.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func newTestClock() *testClock { return &testClock{t: time.Now()} }

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock on by d.
func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// openQueueWith is openQueue on the given clock (nil: the real one).
func openQueueWith(t testing.TB, dir string, c *testClock) *Queue {
	t.Helper()
	db, err := store.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	o := Options{DataDir: dir, WatchInterval: 50 * time.Millisecond}
	if c != nil {
		o.Now = c.Now
	}
	q, err := Open(db, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close(); db.Close() })
	return q
}

func startWorker(t testing.TB, q *Queue, o WorkerOptions, reg func(w *Worker)) *Worker {
	t.Helper()
	w := NewWorker(q, o)
	reg(w)
	if err := w.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return w
}

func wait(t testing.TB, q *Queue, id int64) job.Job {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	j, err := q.Wait(ctx, id)
	if err != nil {
		t.Fatalf("wait %d: %v (status %s)", id, err, j.Status)
	}
	return j
}

var fastBackoff = &Backoff{Base: 10 * time.Millisecond, Factor: 2, Jitter: 0.2}

func TestEnqueueDedupAndBatch(t *testing.T) {
	q := openQueue(t, t.TempDir())
	ctx := context.Background()
	a, existed, err := q.Enqueue(ctx, Params{Type: "x", Name: "a", DedupKey: "k1", Input: json.RawMessage(`{"n":1}`)})
	if err != nil || existed {
		t.Fatal(err, existed)
	}
	b, existed, err := q.Enqueue(ctx, Params{Type: "x", Name: "b", DedupKey: "k1"})
	if err != nil || !existed || b.ID != a.ID || b.Name != "a" {
		t.Fatalf("dedup: %+v existed=%v err=%v", b, existed, err)
	}
	if a.Status != job.Pending || a.MaxAttempts != DefaultMaxAttempts || a.Target != job.TargetDevice {
		t.Fatalf("defaults: %+v", a)
	}
	ps := []Params{{Type: "x"}, {Type: "x", DedupKey: "k1"}, {Type: "y", ParentID: a.ID}}
	ids, err := q.EnqueueBatch(ctx, ps)
	if err != nil {
		t.Fatal(err)
	}
	if ids[1] != a.ID || ids[0] == ids[2] {
		t.Fatalf("batch ids %v", ids)
	}
	kids, _ := q.List(ctx, Filter{ParentID: a.ID})
	if len(kids) != 1 || kids[0].Type != "y" {
		t.Fatalf("children %+v", kids)
	}
	if _, _, err := q.Enqueue(ctx, Params{}); err == nil {
		t.Fatal("a job without a type was accepted")
	}
	if _, _, err := q.Enqueue(ctx, Params{Type: "x", Input: json.RawMessage("{")}); err == nil {
		t.Fatal("invalid JSON input was accepted")
	}
}

func TestLifecycleOutcomes(t *testing.T) {
	q := openQueue(t, t.TempDir())
	ctx := context.Background()
	var attempts sync.Map
	count := func(id int64) int {
		v, _ := attempts.LoadOrStore(id, new(atomic.Int32))
		return int(v.(*atomic.Int32).Add(1))
	}
	startWorker(t, q, WorkerOptions{Workers: 4}, func(w *Worker) {
		w.Handle("ok", func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
			r.Progress(50, "half")
			return json.RawMessage(`{"done":true}`), nil
		}, TypeOptions{})
		w.Handle("flaky", func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
			info, _ := job.InfoFrom(ctx)
			if count(info.ID) < 3 {
				return nil, job.Errorf(job.E001, "connection refused")
			}
			return json.RawMessage(`1`), nil
		}, TypeOptions{Backoff: fastBackoff})
		w.Handle("down", func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
			return nil, job.Errorf(job.E001, "connection refused")
		}, TypeOptions{Backoff: fastBackoff})
		w.Handle("bad", func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
			info, _ := job.InfoFrom(ctx)
			count(info.ID)
			return nil, job.Errorf(job.E004, "not a CSV file")
		}, TypeOptions{Backoff: fastBackoff})
		w.Handle("partial", func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
			return nil, job.PartialSuccess(json.RawMessage(`{"failed":2}`), "2 rows failed")
		}, TypeOptions{})
		w.Handle("panic", func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
			var m map[string]int
			m["x"] = 1
			return nil, nil
		}, TypeOptions{})
		w.Handle("slow", func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}, TypeOptions{Timeout: 50 * time.Millisecond, Backoff: fastBackoff})
		w.Handle("plain", func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
			return nil, errors.New("boom")
		}, TypeOptions{})
	})
	cases := []struct {
		typ      string
		status   job.Status
		code     job.Code
		attempts int
	}{
		{"ok", job.Succeeded, "", 1},
		{"flaky", job.Succeeded, "", 3},
		{"down", job.Failed, job.E001, 3},
		{"bad", job.Failed, job.E004, 1},
		{"partial", job.Partial, "", 1},
		{"panic", job.Failed, job.E016, 1},
		{"slow", job.TimedOut, job.E011, 3},
		{"plain", job.Failed, job.E016, 1},
	}
	for _, c := range cases {
		t.Run(c.typ, func(t *testing.T) {
			t.Parallel()
			j, _, err := q.Enqueue(ctx, Params{Type: c.typ, Name: c.typ})
			if err != nil {
				t.Fatal(err)
			}
			j = wait(t, q, j.ID)
			if j.Status != c.status || j.Attempts != c.attempts {
				t.Fatalf("status %s attempts %d, want %s %d (err %+v)", j.Status, j.Attempts, c.status, c.attempts, j.Error)
			}
			if c.code != "" && (j.Error == nil || j.Error.Code != c.code) {
				t.Fatalf("error %+v, want code %s", j.Error, c.code)
			}
			if c.status == job.Succeeded && j.Progress != 100 {
				t.Fatalf("progress %v", j.Progress)
			}
			if c.status.Final() && j.CompletedAt == nil {
				t.Fatal("no completed_at")
			}
			h, err := q.History(ctx, j.ID)
			if err != nil {
				t.Fatal(err)
			}
			if h[0].Kind != job.EventSubmitted || h[len(h)-1].Status != c.status {
				t.Fatalf("history %+v", h)
			}
			starts := 0
			for _, e := range h {
				if e.Kind == job.EventStarted {
					starts++
				}
			}
			if starts != c.attempts {
				t.Fatalf("%d TaskStarted events for %d attempts", starts, c.attempts)
			}
		})
	}
	if v, ok := attempts.Load(int64(0)); ok {
		t.Fatal(v)
	}
}

func TestCancel(t *testing.T) {
	q := openQueue(t, t.TempDir())
	ctx := context.Background()
	started := make(chan int64, 1)
	startWorker(t, q, WorkerOptions{Workers: 1}, func(w *Worker) {
		w.Handle("long", func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
			info, _ := job.InfoFrom(ctx)
			started <- info.ID
			<-ctx.Done()
			return nil, ctx.Err()
		}, TypeOptions{})
	})
	running, _, _ := q.Enqueue(ctx, Params{Type: "long", Priority: 10})
	if id := <-started; id != running.ID {
		t.Fatalf("started %d", id)
	}
	pending, _, _ := q.Enqueue(ctx, Params{Type: "long", Priority: 0})
	if err := q.Cancel(ctx, pending.ID); err != nil {
		t.Fatal(err)
	}
	if j, _ := q.Get(ctx, pending.ID); j.Status != job.Cancelled {
		t.Fatalf("pending job is %s", j.Status)
	}
	if err := q.Cancel(ctx, running.ID); err != nil {
		t.Fatal(err)
	}
	j := wait(t, q, running.ID)
	if j.Status != job.Cancelled || j.Error == nil || j.Error.Code != job.E013 || j.Attempts != 1 {
		t.Fatalf("running job: %+v", j)
	}
	if err := q.Cancel(ctx, 999); err == nil {
		t.Fatal("cancel of a missing job succeeded")
	}
	// Retry the cancelled job: it runs again.
	r, err := q.Retry(ctx, running.ID)
	if err != nil || r.Status != job.Pending || r.Attempts != 0 {
		t.Fatalf("retry %+v %v", r, err)
	}
	<-started
	q.Cancel(ctx, running.ID)
	wait(t, q, running.ID)
}

// A job enqueued through one connection set (another process) is picked up by a worker of a
// second one within a second, without a sleep loop: through PRAGMA data_version.
func TestCrossProcessPickup(t *testing.T) {
	dir := t.TempDir()
	a := openQueue(t, dir)
	b := openQueue(t, dir)
	got := make(chan time.Time, 1)
	startWorker(t, b, WorkerOptions{Workers: 1}, func(w *Worker) {
		w.Handle("x", func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
			got <- time.Now()
			return nil, nil
		}, TypeOptions{})
	})
	<-b.watchBegan // b notices a's commits from here on
	sent := time.Now()
	j, _, err := a.Enqueue(context.Background(), Params{Type: "x"})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-got:
	case <-time.After(5 * time.Second):
		t.Fatalf("job %d not picked up by the other process (sent %v)", j.ID, sent)
	}
	if j := wait(t, a, j.ID); j.Status != job.Succeeded {
		t.Fatal(j.Status)
	}
}

// Two workers on two connections to one file run 400 jobs: none is ever run twice at once,
// every job ends in exactly one final status, and per-type limits hold.
func TestNoDoubleLeaseAndLimits(t *testing.T) {
	dir := t.TempDir()
	a := openQueue(t, dir)
	b := openQueue(t, dir)
	var mu sync.Mutex
	runs := map[int64]int{}
	inFlight := map[int64]bool{}
	var limited, maxLimited atomic.Int32
	h := func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
		info, _ := job.InfoFrom(ctx)
		mu.Lock()
		if inFlight[info.ID] {
			mu.Unlock()
			return nil, fmt.Errorf("job %d leased twice", info.ID)
		}
		inFlight[info.ID] = true
		runs[info.ID]++
		mu.Unlock()
		if info.Type == "limited" {
			n := limited.Add(1)
			for {
				m := maxLimited.Load()
				if n <= m || maxLimited.CompareAndSwap(m, n) {
					break
				}
			}
			time.Sleep(2 * time.Millisecond)
			limited.Add(-1)
		}
		mu.Lock()
		delete(inFlight, info.ID)
		mu.Unlock()
		return nil, nil
	}
	for _, q := range []*Queue{a, b} {
		startWorker(t, q, WorkerOptions{Workers: 4}, func(w *Worker) {
			w.Handle("free", h, TypeOptions{})
			w.Handle("limited", h, TypeOptions{Concurrency: 1})
		})
	}
	var ps []Params
	for i := 0; i < 400; i++ {
		typ := "free"
		if i%4 == 0 {
			typ = "limited"
		}
		ps = append(ps, Params{Type: typ})
	}
	ids, err := a.EnqueueBatch(context.Background(), ps)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if j := wait(t, a, id); j.Status != job.Succeeded {
			t.Fatalf("job %d: %s %+v", id, j.Status, j.Error)
		}
	}
	for _, id := range ids {
		if runs[id] != 1 {
			t.Fatalf("job %d ran %d times", id, runs[id])
		}
	}
	// One per process: two processes may each run one.
	if m := maxLimited.Load(); m > 2 {
		t.Fatalf("limited type ran %d at once", m)
	}
	counts, _ := a.Counts(context.Background())
	if counts[job.Succeeded] != 400 || len(counts) != 1 {
		t.Fatalf("counts %v", counts)
	}
}

func TestBackoffSchedule(t *testing.T) {
	b := DefaultBackoff
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}
	for i, w := range want {
		if got := b.Nominal(i + 1); got != w {
			t.Fatalf("attempt %d: %v, want %v", i+1, got, w)
		}
		for k := 0; k < 200; k++ {
			d := b.Delay(i + 1)
			if d < time.Duration(float64(w)*0.8) || d > time.Duration(float64(w)*1.2) {
				t.Fatalf("attempt %d: jittered %v outside ±20%% of %v", i+1, d, w)
			}
		}
	}
	if got := b.Nominal(30); got != b.Max {
		t.Fatalf("cap: %v", got)
	}
}

func TestDeferKeepsAttempts(t *testing.T) {
	q := openQueue(t, t.TempDir())
	var n atomic.Int32
	startWorker(t, q, WorkerOptions{Workers: 1}, func(w *Worker) {
		w.Handle("ai", func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
			if n.Add(1) < 5 {
				return nil, job.Defer(5*time.Millisecond, "AI provider offline")
			}
			return nil, nil
		}, TypeOptions{})
	})
	j, _, _ := q.Enqueue(context.Background(), Params{Type: "ai"})
	j = wait(t, q, j.ID)
	if j.Status != job.Succeeded || j.Attempts != 1 || n.Load() != 5 {
		t.Fatalf("%+v after %d runs", j, n.Load())
	}
}

func TestPurge(t *testing.T) {
	dir := t.TempDir()
	db, _ := store.OpenDir(dir)
	defer db.Close()
	q, _ := Open(db, Options{Retention: time.Hour})
	defer q.Close()
	ctx := context.Background()
	old, _, _ := q.Enqueue(ctx, Params{Type: "x"})
	fresh, _, _ := q.Enqueue(ctx, Params{Type: "x"})
	live, _, _ := q.Enqueue(ctx, Params{Type: "x"})
	long := time.Now().Add(-2 * time.Hour).UnixMilli()
	db.W.Exec(`UPDATE jobs SET status='SUCCEEDED', completed_at=? WHERE id=?`, long, old.ID)
	db.W.Exec(`UPDATE jobs SET status='SUCCEEDED', completed_at=? WHERE id=?`, time.Now().UnixMilli(), fresh.ID)
	n, err := q.Purge(ctx)
	if err != nil || n != 1 {
		t.Fatal(n, err)
	}
	if _, err := q.Get(ctx, old.ID); err == nil {
		t.Fatal("old job kept")
	}
	for _, id := range []int64{fresh.ID, live.ID} {
		if _, err := q.Get(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	var ev int
	db.R.QueryRow(`SELECT count(*) FROM job_events WHERE job_id=?`, old.ID).Scan(&ev)
	if ev != 0 {
		t.Fatal("history of purged job kept")
	}
}

func TestReapLapsedLease(t *testing.T) {
	dir := t.TempDir()
	q := openQueue(t, dir)
	ctx := context.Background()
	j, _, _ := q.Enqueue(ctx, Params{Type: "x"})
	// Simulate a live-but-hung owner whose lease lapsed.
	q.db.W.Exec(`UPDATE jobs SET status='RUNNING', attempts=1, lease_token='t', lease_owner='gone', lease_until=? WHERE id=?`,
		time.Now().Add(-time.Second).UnixMilli(), j.ID)
	if n, err := q.Reap(ctx); err != nil || n != 1 {
		t.Fatal(n, err)
	}
	got, _ := q.Get(ctx, j.ID)
	if got.Status != job.Pending || got.Attempts != 1 {
		t.Fatalf("%+v", got)
	}
	_ = filepath.Join
}

// A cancel asked for while the job's process is gone (it died, or its lease lapsed) is not lost:
// the reaper ends the job CANCELLED instead of returning it to the queue.
func TestReapHonoursCancel(t *testing.T) {
	q := openQueue(t, t.TempDir())
	ctx := context.Background()
	host, _ := os.Hostname()
	lapsed, _, _ := q.Enqueue(ctx, Params{Type: "x", Name: "lapsed"})
	orphan, _, _ := q.Enqueue(ctx, Params{Type: "x", Name: "orphan"})
	q.db.W.Exec(`UPDATE jobs SET status='RUNNING', attempts=1, lease_token='t', lease_owner='hung', lease_until=? WHERE id=?`,
		time.Now().Add(-time.Second).UnixMilli(), lapsed.ID)
	// A process that no longer exists (pid far above any live one) held the other job.
	q.db.W.Exec(`INSERT INTO queue_owners(id, pid, host, started_at) VALUES('dead', 999999999, ?, 0)`, host)
	q.db.W.Exec(`UPDATE jobs SET status='RUNNING', attempts=1, lease_token='t', lease_owner='dead', lease_until=? WHERE id=?`,
		time.Now().Add(time.Hour).UnixMilli(), orphan.ID)
	for _, id := range []int64{lapsed.ID, orphan.ID} {
		if err := q.Cancel(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := q.Reap(ctx); err != nil || n != 2 {
		t.Fatal(n, err)
	}
	for _, id := range []int64{lapsed.ID, orphan.ID} {
		got, _ := q.Get(ctx, id)
		if got.Status != job.Cancelled || got.Error == nil || got.Error.Code != job.E013 || got.CompletedAt == nil {
			t.Fatalf("job %d: %+v", id, got)
		}
	}
}

// A lease group that found nothing is checked cheaply before its next lease; a job of its type
// enqueued later is still leased and run.
func TestIdleGroupStillLeases(t *testing.T) {
	q := openQueue(t, t.TempDir())
	ctx := context.Background()
	ran := make(chan string, 4)
	w := NewWorker(q, WorkerOptions{Workers: 2})
	h := func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
		info, _ := job.InfoFrom(ctx)
		ran <- info.Type
		return nil, nil
	}
	w.Handle("busy", h, TypeOptions{})
	w.Handle("rare", h, TypeOptions{Concurrency: 1})
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	q.Enqueue(ctx, Params{Type: "busy"})
	if got := <-ran; got != "busy" {
		t.Fatalf("ran %s", got)
	}
	// "rare" has been leased for and found nothing; now one arrives.
	q.Enqueue(ctx, Params{Type: "rare"})
	select {
	case got := <-ran:
		if got != "rare" {
			t.Fatalf("ran %s", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the rare job was never leased")
	}
}

// TestCloseReturnsTheWatchersConnection: once Close returns, the queue holds no connection of
// the database (its watcher has given its own back), so closing the database right after closes
// every connection, and no read of the queue's can begin while the data folder is removed (a
// read begun then creates the database's files again: "directory not empty").
func TestCloseReturnsTheWatchersConnection(t *testing.T) {
	for i := range 20 {
		dir := t.TempDir()
		db, err := store.OpenDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		q, err := Open(db, Options{DataDir: dir, WatchInterval: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		<-q.watchBegan
		q.Close()
		if n := db.R.Stats().InUse; n != 0 {
			t.Fatalf("round %d: %d connections still in use after Close", i, n)
		}
		db.Close()
	}
}
