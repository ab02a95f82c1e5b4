package queue

import (
	"context"
	"fmt"
	"testing"
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
	drainBench(b, q, n, "noop", "other", "third")
}
