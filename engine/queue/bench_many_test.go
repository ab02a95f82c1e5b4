package queue

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"

	"jobdesk/engine/job"
)

// BenchmarkLeaseManyTypes is BenchmarkLeaseComplete as a workflow engine uses the queue: jobs
// with dedup keys under one parent, and a worker handling other types that have nothing waiting
// (their lease groups must not cost a walk over every waiting job). Run it with -benchtime
// 20000x.
func BenchmarkLeaseManyTypes(b *testing.B) {
	n := b.N
	ctx := context.Background()
	q := openQueue(b, b.TempDir())
	parent, _, _ := q.Enqueue(ctx, Params{Type: "parent"})
	ps := make([]Params, n)
	for k := range ps {
		ps[k] = Params{Type: "noop", Input: benchInput, DedupKey: fmt.Sprintf("k%d", k), ParentID: parent.ID}
	}
	if _, err := q.EnqueueBatch(ctx, ps); err != nil {
		b.Fatal(err)
	}
	var done atomic.Int64
	finished := make(chan struct{})
	events, unsub := q.Subscribe(n + 16)
	defer unsub()
	go func() {
		for e := range events {
			if e.Status == job.Succeeded && done.Add(1) == int64(n) {
				close(finished)
				return
			}
		}
	}()
	w := NewWorker(q, WorkerOptions{Workers: 4})
	h := func(context.Context, json.RawMessage, job.Reporter) (json.RawMessage, error) { return nil, nil }
	w.Handle("noop", h, TypeOptions{})
	w.Handle("other", h, TypeOptions{})
	w.Handle("third", h, TypeOptions{Concurrency: 2})
	b.ResetTimer()
	if err := w.Start(ctx); err != nil {
		b.Fatal(err)
	}
	<-finished
	b.StopTimer()
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "jobs/s")
	w.Stop()
}
