package queue

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"jobdesk/engine/job"
)

// The consumer verbs on their own, as a consumer other than the Worker (a cloud dispatcher) uses
// them.

func claimOne(t *testing.T, q *Queue, p ClaimParams) Lease {
	t.Helper()
	ls, err := q.Claim(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 1 {
		t.Fatalf("claimed %d jobs, want 1", len(ls))
	}
	return ls[0]
}

// nextEvent returns the next event other than the watcher's ExternalChange (which any commit may
// cause), or fails after a second.
func nextEvent(t *testing.T, events <-chan job.Event) job.Event {
	t.Helper()
	for {
		select {
		case e := <-events:
			if e.Kind != job.EventExternalChange {
				return e
			}
		case <-time.After(time.Second):
			t.Fatal("no event")
		}
	}
}

func cloudClaim(types ...string) ClaimParams {
	return ClaimParams{Owner: "dispatcher", Target: job.TargetCloud, Types: types, Max: 10, Visibility: time.Minute}
}

func deviceClaim(types ...string) ClaimParams {
	return ClaimParams{Owner: "device", Target: job.TargetDevice, Types: types, Max: 10, Visibility: time.Minute}
}

func TestClaimByTarget(t *testing.T) {
	q := openQueue(t, t.TempDir())
	ctx := context.Background()
	dev, _, _ := q.Enqueue(ctx, Params{Type: "csv", Name: "here.csv", Input: json.RawMessage(`{"n":1}`)})
	cloud, _, _ := q.Enqueue(ctx, Params{Type: "csv", Name: "there.csv", Target: job.TargetCloud, Input: json.RawMessage(`{"n":2}`)})

	l := claimOne(t, q, cloudClaim("csv"))
	if l.Info.ID != cloud.ID || l.Info.Attempt != 1 || l.Info.Name != "there.csv" || string(l.Input) != `{"n":2}` ||
		l.Token == "" || l.Visibility != time.Minute || l.Info.Output != q.DataDir() {
		t.Fatalf("cloud claim: %+v", l)
	}
	if ls, err := q.Claim(ctx, cloudClaim("csv")); err != nil || len(ls) != 0 {
		t.Fatalf("a second cloud claim got %d jobs (%v): a device job went to the cloud", len(ls), err)
	}
	d := claimOne(t, q, deviceClaim("csv", "other"))
	if d.Info.ID != dev.ID {
		t.Fatalf("device claim got job %d, want %d", d.Info.ID, dev.ID)
	}
	if ls, _ := q.Claim(ctx, deviceClaim("csv")); len(ls) != 0 {
		t.Fatalf("a second device claim got %d jobs", len(ls))
	}
	j, _ := q.Get(ctx, cloud.ID)
	if j.Status != job.Running || j.Attempts != 1 {
		t.Fatalf("claimed cloud job: %+v", j)
	}
	var owner string
	q.db.R.QueryRow(`SELECT lease_owner FROM jobs WHERE id=?`, cloud.ID).Scan(&owner)
	if owner != "dispatcher" {
		t.Fatalf("lease owner %q", owner)
	}

	// A claim names its owner, its target and its types.
	for _, p := range []ClaimParams{
		{Target: job.TargetCloud, Types: []string{"csv"}},
		{Owner: "x", Types: []string{"csv"}},
		{Owner: "x", Target: "moon", Types: []string{"csv"}},
		{Owner: "x", Target: job.TargetCloud},
	} {
		if _, err := q.Claim(ctx, p); err == nil {
			t.Fatalf("claim %+v accepted", p)
		}
	}
}

func TestClaimOrderAndMax(t *testing.T) {
	q := openQueue(t, t.TempDir())
	ctx := context.Background()
	low, _, _ := q.Enqueue(ctx, Params{Type: "x", Target: job.TargetCloud})
	high, _, _ := q.Enqueue(ctx, Params{Type: "x", Target: job.TargetCloud, Priority: 5})
	q.Enqueue(ctx, Params{Type: "x", Target: job.TargetCloud, NotBefore: time.Now().Add(time.Hour)})
	p := cloudClaim("x")
	p.Max = 1
	if l := claimOne(t, q, p); l.Info.ID != high.ID {
		t.Fatalf("claimed %d first, want the higher priority %d", l.Info.ID, high.ID)
	}
	ls, err := q.Claim(ctx, cloudClaim("x"))
	if err != nil || len(ls) != 1 || ls[0].Info.ID != low.ID {
		t.Fatalf("claimed %+v (%v); the job not yet due must stay", ls, err)
	}
	if d, ok := q.NextDue(ctx, job.TargetCloud, []string{"x"}); !ok || d < 59*time.Minute {
		t.Fatalf("next due in %v (%v)", d, ok)
	}
	if _, ok := q.NextDue(ctx, job.TargetDevice, []string{"x"}); ok {
		t.Fatal("a device consumer was told of a cloud job")
	}
}

func TestExtend(t *testing.T) {
	q := openQueue(t, t.TempDir())
	ctx := context.Background()
	q.Enqueue(ctx, Params{Type: "x", Target: job.TargetCloud})
	p := cloudClaim("x")
	p.Visibility = time.Second
	l := claimOne(t, q, p)
	events, stop := q.Subscribe(16)
	defer stop()
	leaseUntil := func() int64 {
		var until int64
		q.db.R.QueryRow(`SELECT lease_until FROM jobs WHERE id=?`, l.Info.ID).Scan(&until)
		return until
	}
	before := leaseUntil()
	lost, err := q.Extend(ctx, Heartbeat{ID: l.Info.ID, Token: l.Token, Visibility: time.Hour, Progress: true, Percent: 140, Message: "uploading"})
	if err != nil || len(lost) != 0 {
		t.Fatal(lost, err)
	}
	if after := leaseUntil(); after < before+50*60*1000 {
		t.Fatalf("lease until %d, was %d", after, before)
	}
	j, _ := q.Get(ctx, l.Info.ID)
	if j.Progress != 100 || j.Message != "uploading" || j.Status != job.Running {
		t.Fatalf("after extend: %+v", j)
	}
	if e := nextEvent(t, events); e.Kind != job.EventProgress || e.JobID != l.Info.ID || e.Progress != 100 {
		t.Fatalf("event %+v", e)
	}
	// A lease the caller no longer holds is reported, and nothing changes.
	lost, err = q.Extend(ctx, Heartbeat{ID: l.Info.ID, Token: "stale", Visibility: time.Second})
	if err != nil || len(lost) != 1 || lost[0] != l.Info.ID {
		t.Fatal(lost, err)
	}
	if leaseUntil() < before+50*60*1000 {
		t.Fatal("a stale heartbeat moved the lease")
	}
}

func TestCompleteFailDefer(t *testing.T) {
	ctx := context.Background()
	retryable := job.Errorf(job.E001, "connection refused")
	permanent := job.Errorf(job.E004, "not a CSV file")
	timeout := job.Errorf(job.E011, "the job took too long").WithName("States.Timeout")
	cases := []struct {
		name     string
		max      int
		end      func(q *Queue, l Lease) error
		status   job.Status
		attempts int
		code     job.Code
		result   string
		message  string
		due      bool // due again at once (claimable now)
	}{
		{"complete", 3, func(q *Queue, l Lease) error { return q.Complete(ctx, l, json.RawMessage(`{"rows":3}`), "3 rows") },
			job.Succeeded, 1, "", `{"rows":3}`, "3 rows", false},
		{"partial", 3, func(q *Queue, l Lease) error {
			_, err := q.Finish(ctx, l.Partial(json.RawMessage(`{"failed":1}`), "1 row failed"))
			return err
		}, job.Partial, 1, "", `{"failed":1}`, "1 row failed", false},
		{"retryable", 3, func(q *Queue, l Lease) error { return q.Fail(ctx, l, retryable, Backoff{Base: time.Hour, Factor: 1}) },
			job.Retrying, 1, job.E001, "", "Attempt 1 of 3 failed; retrying in 3600.0 s", false},
		{"retryable, last attempt", 1, func(q *Queue, l Lease) error { return q.Fail(ctx, l, retryable, DefaultBackoff) },
			job.Failed, 1, job.E001, "", "connection refused", false},
		{"permanent", 3, func(q *Queue, l Lease) error { return q.Fail(ctx, l, permanent, DefaultBackoff) },
			job.Failed, 1, job.E004, "", "not a CSV file", false},
		{"timed out", 1, func(q *Queue, l Lease) error { return q.Fail(ctx, l, timeout, DefaultBackoff) },
			job.TimedOut, 1, job.E011, "", "the job took too long", false},
		{"plain error", 3, func(q *Queue, l Lease) error { return q.Fail(ctx, l, errors.New("boom"), DefaultBackoff) },
			job.Failed, 1, job.E016, "", "boom", false},
		{"defer", 3, func(q *Queue, l Lease) error { return q.Defer(ctx, l, time.Hour, "provider offline") },
			job.Pending, 0, "", "", "provider offline", false},
		{"release", 3, func(q *Queue, l Lease) error {
			_, err := q.Finish(ctx, l.Released("stopping"))
			return err
		}, job.Pending, 0, "", "", "stopping", true},
		{"cancelled", 3, func(q *Queue, l Lease) error {
			_, err := q.Finish(ctx, l.Cancelled())
			return err
		}, job.Cancelled, 1, job.E013, "", "Cancelled", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := openQueue(t, t.TempDir())
			j, _, _ := q.Enqueue(ctx, Params{Type: "x", Target: job.TargetCloud, MaxAttempts: c.max})
			l := claimOne(t, q, cloudClaim("x"))
			if err := c.end(q, l); err != nil {
				t.Fatal(err)
			}
			j, _ = q.Get(ctx, j.ID)
			if j.Status != c.status || j.Attempts != c.attempts || j.Message != c.message || string(j.Result) != c.result {
				t.Fatalf("%+v", j)
			}
			if (c.code == "") != (j.Error == nil) || (j.Error != nil && j.Error.Code != c.code) {
				t.Fatalf("error %+v, want code %q", j.Error, c.code)
			}
			if c.status.Final() != (j.CompletedAt != nil) {
				t.Fatalf("completed_at %v for %s", j.CompletedAt, j.Status)
			}
			if (c.status == job.Succeeded || c.status == job.Partial) && j.Progress != 100 {
				t.Fatalf("progress %v", j.Progress)
			}
			h, _ := q.History(ctx, j.ID)
			if len(h) != 3 || h[1].Kind != job.EventStarted || h[2].Status != c.status {
				t.Fatalf("history %+v", h)
			}
			if ls, _ := q.Claim(ctx, cloudClaim("x")); (len(ls) == 1) != c.due {
				t.Fatalf("claimable again at once: %v, want %v", len(ls) == 1, c.due)
			}
			// The lease is spent: ending the attempt again changes nothing.
			if err := q.Complete(ctx, l, nil, ""); !errors.Is(err, ErrLeaseLost) {
				t.Fatalf("second end of one lease: %v", err)
			}
		})
	}
}

// A retryable failure comes back after its backoff as the next attempt; with none left it fails.
func TestFailRetriesThenFails(t *testing.T) {
	clock := newTestClock()
	q := openQueueWith(t, t.TempDir(), clock)
	ctx := context.Background()
	j, _, _ := q.Enqueue(ctx, Params{Type: "x", Target: job.TargetCloud, MaxAttempts: 2})
	quick := Backoff{Base: 20 * time.Millisecond, Factor: 1}
	l := claimOne(t, q, cloudClaim("x"))
	if err := q.Fail(ctx, l, job.Errorf(job.E010, "S3 unavailable"), quick); err != nil {
		t.Fatal(err)
	}
	clock.Advance(30 * time.Millisecond)
	l = claimOne(t, q, cloudClaim("x"))
	if l.Info.ID != j.ID || l.Info.Attempt != 2 {
		t.Fatalf("second claim %+v", l.Info)
	}
	if err := q.Fail(ctx, l, job.Errorf(job.E010, "S3 unavailable"), quick); err != nil {
		t.Fatal(err)
	}
	if j, _ = q.Get(ctx, j.ID); j.Status != job.Failed || j.Attempts != 2 || j.Error.Code != job.E010 {
		t.Fatalf("%+v", j)
	}
}

// A deferred job is not due until its time, and its next claim is still its first attempt.
func TestDeferThenClaim(t *testing.T) {
	clock := newTestClock()
	q := openQueueWith(t, t.TempDir(), clock)
	ctx := context.Background()
	q.Enqueue(ctx, Params{Type: "x", Target: job.TargetCloud})
	l := claimOne(t, q, cloudClaim("x"))
	if err := q.Defer(ctx, l, 30*time.Millisecond, "offline"); err != nil {
		t.Fatal(err)
	}
	if ls, _ := q.Claim(ctx, cloudClaim("x")); len(ls) != 0 {
		t.Fatal("a deferred job was claimed before its time")
	}
	clock.Advance(40 * time.Millisecond)
	if l = claimOne(t, q, cloudClaim("x")); l.Info.Attempt != 1 {
		t.Fatalf("attempt %d after a defer", l.Info.Attempt)
	}
}

// A lease that lapses returns its job to the queue (Reap); the next claim gets it as a new
// attempt, and the lapsed lease can no longer end it.
func TestClaimAfterLeaseExpiry(t *testing.T) {
	clock := newTestClock()
	q := openQueueWith(t, t.TempDir(), clock)
	ctx := context.Background()
	j, _, _ := q.Enqueue(ctx, Params{Type: "x", Target: job.TargetCloud})
	p := cloudClaim("x")
	p.Visibility = 10 * time.Millisecond
	old := claimOne(t, q, p)
	if ls, _ := q.Claim(ctx, cloudClaim("x")); len(ls) != 0 {
		t.Fatal("a leased job was claimed twice")
	}
	clock.Advance(20 * time.Millisecond)
	if n, err := q.Reap(ctx); err != nil || n != 1 {
		t.Fatal(n, err)
	}
	l := claimOne(t, q, cloudClaim("x"))
	if l.Info.ID != j.ID || l.Info.Attempt != 2 || l.Token == old.Token {
		t.Fatalf("claim after expiry: %+v", l)
	}
	if err := q.Complete(ctx, old, nil, ""); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("the lapsed lease ended the job: %v", err)
	}
	if lost, _ := q.Extend(ctx, Heartbeat{ID: old.Info.ID, Token: old.Token, Visibility: time.Hour}); len(lost) != 1 {
		t.Fatal("the lapsed lease was extended")
	}
	if err := q.Complete(ctx, l, nil, ""); err != nil {
		t.Fatal(err)
	}
}

// A cancel asked for while a consumer holds the job reaches that consumer.
func TestCancelRequestedReachesConsumer(t *testing.T) {
	q := openQueue(t, t.TempDir())
	ctx := context.Background()
	j, _, _ := q.Enqueue(ctx, Params{Type: "x", Target: job.TargetCloud})
	l := claimOne(t, q, cloudClaim("x"))
	if ids, _ := q.CancelRequested(ctx, "dispatcher"); len(ids) != 0 {
		t.Fatal(ids)
	}
	if err := q.Cancel(ctx, j.ID); err != nil {
		t.Fatal(err)
	}
	ids, err := q.CancelRequested(ctx, "dispatcher")
	if err != nil || len(ids) != 1 || ids[0] != j.ID {
		t.Fatal(ids, err)
	}
	if ids, _ := q.CancelRequested(ctx, "device"); len(ids) != 0 {
		t.Fatal("another owner was told to cancel", ids)
	}
	if _, err := q.Finish(ctx, l.Cancelled()); err != nil {
		t.Fatal(err)
	}
	if j, _ = q.Get(ctx, j.ID); j.Status != job.Cancelled {
		t.Fatal(j.Status)
	}
}

// The …Tx twins change nothing when the caller's transaction rolls back, and announce nothing
// unless told to.
func TestTxTwinsRollBack(t *testing.T) {
	q := openQueue(t, t.TempDir())
	ctx := context.Background()
	j, _, _ := q.Enqueue(ctx, Params{Type: "x", Target: job.TargetCloud})
	events, stop := q.Subscribe(16)
	defer stop()
	rollback := errors.New("roll back")
	var claimed []Lease
	err := q.db.Tx(ctx, func(tx *sql.Tx) error {
		ls, _, err := q.ClaimTx(ctx, tx, cloudClaim("x"))
		if err != nil || len(ls) != 1 {
			t.Fatalf("%d claimed (%v)", len(ls), err)
		}
		claimed = ls
		if _, _, err := q.ExtendTx(ctx, tx, Heartbeat{ID: j.ID, Token: ls[0].Token, Visibility: time.Hour, Progress: true, Percent: 50}); err != nil {
			t.Fatal(err)
		}
		if lost, _, err := q.FinishTx(ctx, tx, ls[0].Succeeded(json.RawMessage(`1`), "")); err != nil || len(lost) != 0 {
			t.Fatal(lost, err)
		}
		if _, _, err := q.EnqueueTx(ctx, tx, Params{Type: "y"}); err != nil {
			t.Fatal(err)
		}
		return rollback
	})
	if !errors.Is(err, rollback) {
		t.Fatal(err)
	}
	got, _ := q.Get(ctx, j.ID)
	if got.Status != job.Pending || got.Attempts != 0 || got.Progress != 0 || got.Result != nil {
		t.Fatalf("after rollback: %+v", got)
	}
	if h, _ := q.History(ctx, j.ID); len(h) != 1 {
		t.Fatalf("history after rollback: %+v", h)
	}
	if all, _ := q.List(ctx, Filter{}); len(all) != 1 {
		t.Fatalf("%d jobs after rollback", len(all))
	}
	for len(events) > 0 {
		if e := <-events; e.Kind != job.EventExternalChange {
			t.Fatalf("announced without a commit: %+v", e)
		}
	}
	if err := q.Complete(ctx, claimed[0], nil, ""); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("a rolled-back claim's lease ended the job: %v", err)
	}

	// Committed, and announced after the commit.
	var announce Announce
	err = q.db.Tx(ctx, func(tx *sql.Tx) error {
		ls, a, err := q.ClaimTx(ctx, tx, cloudClaim("x"))
		if err != nil || len(ls) != 1 {
			t.Fatalf("%d claimed (%v)", len(ls), err)
		}
		announce = a
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	announce()
	if e := nextEvent(t, events); e.Kind != job.EventStarted || e.JobID != j.ID {
		t.Fatalf("event %+v", e)
	}
}

// Every consumer gets its own wake-up: one taking a signal does not hide it from another.
func TestWakeupsPerConsumer(t *testing.T) {
	q := openQueue(t, t.TempDir())
	a, stopA := q.Wakeups()
	defer stopA()
	b, stopB := q.Wakeups()
	q.Enqueue(context.Background(), Params{Type: "x"})
	for _, ch := range []<-chan struct{}{a, b} {
		select {
		case <-ch:
		case <-time.After(time.Second):
			t.Fatal("a consumer was not woken")
		}
	}
	stopB()
	select { // a signal of the watcher's before the stop
	case <-b:
	default:
	}
	q.Enqueue(context.Background(), Params{Type: "x"})
	select {
	case <-b:
		t.Fatal("a consumer that stopped was woken")
	case <-a:
	}
}
