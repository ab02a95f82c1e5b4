package queue

import (
	"context"
	"testing"
)

func TestLatestRetry(t *testing.T) {
	ctx := context.Background()
	q := openQueue(t, t.TempDir())
	first, _, err := q.Enqueue(ctx, Params{Type: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if next, err := q.LatestRetry(ctx, first.ID); err != nil || next != 0 {
		t.Fatalf("never retried: %d %v", next, err)
	}
	var last int64
	for range 2 {
		j, _, err := q.Enqueue(ctx, Params{Type: "t", RetryOf: first.ID})
		if err != nil {
			t.Fatal(err)
		}
		last = j.ID
	}
	if next, err := q.LatestRetry(ctx, first.ID); err != nil || next != last {
		t.Fatalf("LatestRetry = %d %v, want %d", next, err, last)
	}
}
