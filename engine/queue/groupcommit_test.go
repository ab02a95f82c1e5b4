package queue

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"jobdesk/engine/job"
)

// inOneGroup runs fns while the writer is held by a write of the test's own, so that the writes
// they make queue up, in the order of fns, and go to the writer together; it returns when all
// have returned.
func inOneGroup(t *testing.T, q *Queue, fns ...func()) {
	t.Helper()
	ctx := context.Background()
	entered, release, held := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		held <- q.do(&write{ctx: ctx, alone: func() error { close(entered); <-release; return nil }})
	}()
	<-entered
	var wg sync.WaitGroup
	for i, f := range fns {
		wg.Add(1)
		go func() { defer wg.Done(); f() }()
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
			q.writes.mu.Lock()
			n := len(q.writes.pending)
			q.writes.mu.Unlock()
			if n == i+1 {
				break
			}
			if time.Now().After(deadline) {
				close(release)
				t.Fatalf("%d of %d writes waiting for the writer", n, i+1)
			}
		}
	}
	close(release)
	wg.Wait()
	if err := <-held; err != nil {
		t.Fatal(err)
	}
}

// probe is a write that counts how it was done: in a group's transaction or alone.
type probe struct {
	err            error
	inGroup, alone int
}

func (p *probe) write() *write {
	return &write{ctx: context.Background(),
		run:   func(context.Context, *sql.Tx) (Announce, error) { p.inGroup++; return nil, p.err },
		alone: func() error { p.alone++; return p.err }}
}

func TestGroupCommitFinishesClaimsAndEnqueuesInOneTransaction(t *testing.T) {
	q := openQueue(t, t.TempDir())
	ctx := context.Background()
	ids, err := q.EnqueueBatch(ctx, []Params{{Type: "a"}, {Type: "a"}})
	if err != nil {
		t.Fatal(err)
	}
	first, err := q.Claim(ctx, ClaimParams{Owner: "o", Target: job.TargetDevice, Types: []string{"a"}, Max: 1})
	if err != nil || len(first) != 1 || first[0].Info.ID != ids[0] {
		t.Fatalf("first claim %v %v", first, err)
	}
	events, unsubscribe := q.Subscribe(64)
	defer unsubscribe()

	var (
		lost               []int64
		next               []Lease
		added              []int64
		finErr, claimErr   error
		enqueueErr, topErr error
		p                  probe
	)
	inOneGroup(t, q,
		func() { lost, finErr = q.Finish(ctx, first[0].Succeeded(json.RawMessage(`{"n":1}`), "done")) },
		func() {
			next, claimErr = q.Claim(ctx, ClaimParams{Owner: "o", Target: job.TargetDevice, Types: []string{"a"}, Max: 5})
		},
		func() { added, enqueueErr = q.EnqueueBatch(ctx, []Params{{Type: "b", DedupKey: "k1"}}) },
		func() { topErr = q.do(p.write()) })
	if finErr != nil || claimErr != nil || enqueueErr != nil || topErr != nil || len(lost) > 0 {
		t.Fatalf("finish %v (lost %v), claim %v, enqueue %v, probe %v", finErr, lost, claimErr, enqueueErr, topErr)
	}
	if p.inGroup != 1 || p.alone != 0 {
		t.Fatalf("the writes were not committed as one group: probe ran %d times in a group, %d alone", p.inGroup, p.alone)
	}
	if len(next) != 1 || next[0].Info.ID != ids[1] {
		t.Fatalf("the claim in the group took %+v, want job %d", next, ids[1])
	}
	if j, err := q.Get(ctx, ids[0]); err != nil || j.Status != job.Succeeded || string(j.Result) != `{"n":1}` {
		t.Fatalf("finished job: %+v %v", j, err)
	}
	if j, err := q.Get(ctx, ids[1]); err != nil || j.Status != job.Running {
		t.Fatalf("claimed job: %+v %v", j, err)
	}
	if j, err := q.Get(ctx, added[0]); err != nil || j.Type != "b" || j.Status != job.Pending {
		t.Fatalf("enqueued job: %+v %v", j, err)
	}
	// Each change is published once, after the commit.
	seen := map[int64][]job.Status{}
	for len(seen[ids[0]])+len(seen[ids[1]])+len(seen[added[0]]) < 3 {
		select {
		case e := <-events:
			seen[e.JobID] = append(seen[e.JobID], e.Status)
		case <-time.After(5 * time.Second):
			t.Fatalf("events published: %v", seen)
		}
	}
	if len(seen[ids[0]]) != 1 || seen[ids[0]][0] != job.Succeeded || len(seen[ids[1]]) != 1 || seen[ids[1]][0] != job.Running ||
		len(seen[added[0]]) != 1 || seen[added[0]][0] != job.Pending {
		t.Fatalf("events published: %v", seen)
	}
}

func TestGroupCommitFailedWriteDoesNotFailTheOthers(t *testing.T) {
	q := openQueue(t, t.TempDir())
	ctx := context.Background()
	refused := errors.New("refused")
	bad := probe{err: refused}
	var added []int64
	var enqueueErr, badErr, cancelledErr error
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	inOneGroup(t, q,
		func() { added, enqueueErr = q.EnqueueBatch(ctx, []Params{{Type: "b", DedupKey: "k1"}, {Type: "b"}}) },
		func() { badErr = q.do(bad.write()) },
		func() { _, cancelledErr = q.EnqueueBatch(cancelled, []Params{{Type: "c"}}) })
	if !errors.Is(badErr, refused) || bad.inGroup != 1 || bad.alone != 1 {
		t.Fatalf("failing write: %v, ran %d times in the group and %d alone", badErr, bad.inGroup, bad.alone)
	}
	if !errors.Is(cancelledErr, context.Canceled) {
		t.Fatalf("a write whose context ended: %v", cancelledErr)
	}
	if enqueueErr != nil || len(added) != 2 {
		t.Fatalf("the other write failed with the group: %v %v", enqueueErr, added)
	}
	// Written once: the group's try was rolled back before the write was done alone.
	for typ, want := range map[string]int{"b": 2, "c": 0} {
		var n int
		if err := q.db.R.QueryRow(`SELECT count(*) FROM jobs WHERE type=?`, typ).Scan(&n); err != nil || n != want {
			t.Fatalf("%d jobs of type %s (%v), want %d", n, typ, err, want)
		}
	}
}

func TestGroupCommitClaimGoesAheadOfALargeGroup(t *testing.T) {
	q := openQueue(t, t.TempDir())
	ctx := context.Background()
	ps := make([]Params, claimBeside+2)
	for i := range ps {
		ps[i] = Params{Type: "a"}
	}
	ids, err := q.EnqueueBatch(ctx, ps)
	if err != nil {
		t.Fatal(err)
	}
	running, err := q.Claim(ctx, ClaimParams{Owner: "o", Target: job.TargetDevice, Types: []string{"a"}, Max: claimBeside + 1})
	if err != nil || len(running) != claimBeside+1 {
		t.Fatalf("claimed %d jobs: %v", len(running), err)
	}
	outs := make([]Outcome, len(running))
	for i, l := range running {
		outs[i] = l.Succeeded(nil, "")
	}
	events, unsubscribe := q.Subscribe(64)
	defer unsubscribe()
	var next []Lease
	var finErr, claimErr error
	var p probe
	inOneGroup(t, q,
		func() { _, finErr = q.Finish(ctx, outs...) },
		func() {
			next, claimErr = q.Claim(ctx, ClaimParams{Owner: "o", Target: job.TargetDevice, Types: []string{"a"}, Max: 5})
		},
		func() { q.do(p.write()) })
	if finErr != nil || claimErr != nil || len(next) != 1 || next[0].Info.ID != ids[len(ids)-1] {
		t.Fatalf("finish %v, claim %v took %+v", finErr, claimErr, next)
	}
	if p.inGroup != 1 {
		t.Fatalf("the finished attempts were not committed as a group: %+v", p)
	}
	for _, l := range running {
		if j, err := q.Get(ctx, l.Info.ID); err != nil || j.Status != job.Succeeded {
			t.Fatalf("job %d: %+v %v", l.Info.ID, j, err)
		}
	}
	// The claim, queued after the finished attempts, was committed (and published) before them.
	select {
	case e := <-events:
		if e.JobID != next[0].Info.ID || e.Status != job.Running {
			t.Fatalf("first event after the group: %+v, want the claim of job %d", e, next[0].Info.ID)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no event published")
	}
}
