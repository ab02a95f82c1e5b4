package queue

import (
	"context"
	"sync"
	"testing"
)

func TestContentKey(t *testing.T) {
	type opts struct {
		A bool `json:"a"`
	}
	k1, _ := ContentKey("convert", "abc", opts{})
	k2, _ := ContentKey("convert", "abc", opts{})
	k3, _ := ContentKey("convert", "abc", opts{A: true})
	k4, _ := ContentKey("checksum", "abc", opts{})
	k5, _ := ContentKey("convert", "abd", opts{})
	if k1 != k2 || k1 == k3 || k1 == k4 || k1 == k5 {
		t.Fatalf("keys %q %q %q %q %q", k1, k2, k3, k4, k5)
	}
}

// EnqueueOnce: the same key returns the standing job; a failed or cancelled one does not count;
// a retried one stands for its newest retry; force makes a new job that takes the key.
func TestEnqueueOnce(t *testing.T) {
	q := openQueue(t, t.TempDir())
	ctx := context.Background()
	p := Params{Type: "x", Name: "f", DedupKey: "content:x:1"}
	a, existed, err := q.EnqueueOnce(ctx, p, false)
	if err != nil || existed {
		t.Fatal(a, existed, err)
	}
	b, existed, err := q.EnqueueOnce(ctx, p, false)
	if err != nil || !existed || b.ID != a.ID {
		t.Fatalf("again: %d %v %v", b.ID, existed, err)
	}
	forced, existed, err := q.EnqueueOnce(ctx, p, true)
	if err != nil || existed || forced.ID == a.ID {
		t.Fatalf("force: %d %v %v", forced.ID, existed, err)
	}
	if again, _, _ := q.EnqueueOnce(ctx, p, false); again.ID != forced.ID {
		t.Fatalf("after force: %d, want the forced job %d", again.ID, forced.ID)
	}
	// The forced job is cancelled: it no longer counts.
	if err := q.Cancel(ctx, forced.ID); err != nil {
		t.Fatal(err)
	}
	fresh, existed, err := q.EnqueueOnce(ctx, p, false)
	if err != nil || existed || fresh.ID == forced.ID {
		t.Fatalf("after cancel: %d %v %v", fresh.ID, existed, err)
	}
	// A job retried as a new job (RetryOf) stands for its newest retry.
	if err := q.Cancel(ctx, fresh.ID); err != nil {
		t.Fatal(err)
	}
	retry, _, err := q.Enqueue(ctx, Params{Type: "x", Name: "f", RetryOf: fresh.ID})
	if err != nil {
		t.Fatal(err)
	}
	if got, existed, _ := q.EnqueueOnce(ctx, p, false); !existed || got.ID != retry.ID {
		t.Fatalf("retried: %d %v, want the retry %d", got.ID, existed, retry.ID)
	}
}

// Submitters racing with the same keys make one job per key.
func TestEnqueueOnceConcurrent(t *testing.T) {
	q := openQueue(t, t.TempDir())
	ctx := context.Background()
	keys := []string{"k1", "k2", "k3", "k4", "k5"}
	var wg sync.WaitGroup
	ids := make(chan int64, 8*len(keys))
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, k := range keys {
				j, _, err := q.EnqueueOnce(ctx, Params{Type: "x", DedupKey: k}, false)
				if err != nil {
					t.Error(err)
					return
				}
				ids <- j.ID
			}
		}()
	}
	wg.Wait()
	close(ids)
	seen := map[int64]bool{}
	for id := range ids {
		seen[id] = true
	}
	all, _ := q.List(ctx, Filter{Type: "x"})
	if len(seen) != len(keys) || len(all) != len(keys) {
		t.Fatalf("%d ids, %d jobs for %d keys", len(seen), len(all), len(keys))
	}
}
