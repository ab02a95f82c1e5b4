// Package queueporttest is the contract of queueport.Port as one test suite: every adapter (the
// engine's SQLite queue, SQS) runs Run against fresh queues of its own and must pass it
// unchanged. Every wait in it is bounded.
package queueporttest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"jobdesk/engine/queueport"
)

// Config says what queue the suite needs from the adapter's factory.
type Config struct {
	// FIFO asks for an ordered queue with deduplication (an SQS FIFO queue; the engine's queue
	// is always one).
	FIFO bool
	// MaxReceives is the receive limit after which a message is dead-lettered (an SQS redrive
	// policy's maxReceiveCount; the engine's max attempts).
	MaxReceives int
}

// NewQueue returns a fresh, empty queue configured as c, removed when t ends.
type NewQueue func(t *testing.T, c Config) queueport.Port

// Bound is the longest any step of the suite waits for a message.
const Bound = 10 * time.Second

// Run runs the contract against queues made by newQueue.
func Run(t *testing.T, newQueue NewQueue) {
	t.Run("SendReceiveDelete", func(t *testing.T) { testSendReceiveDelete(t, newQueue(t, Config{MaxReceives: 3})) })
	t.Run("Visibility", func(t *testing.T) { testVisibility(t, newQueue(t, Config{MaxReceives: 5})) })
	t.Run("ExtendAndGiveBack", func(t *testing.T) { testExtend(t, newQueue(t, Config{MaxReceives: 5})) })
	t.Run("DeadLetterAfterLimit", func(t *testing.T) { testDeadLetter(t, newQueue(t, Config{MaxReceives: 3})) })
	t.Run("FIFOOrder", func(t *testing.T) { testOrder(t, newQueue(t, Config{FIFO: true, MaxReceives: 3})) })
	t.Run("FIFODeduplication", func(t *testing.T) { testDedup(t, newQueue(t, Config{FIFO: true, MaxReceives: 3})) })
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 4*Bound)
	t.Cleanup(cancel)
	return ctx
}

func send(t *testing.T, ctx context.Context, p queueport.Port, m queueport.Outgoing) string {
	t.Helper()
	if m.GroupID == "" {
		m.GroupID = "g1"
	}
	id, err := p.Send(ctx, m)
	if err != nil {
		t.Fatalf("send %s: %v", m.Body, err)
	}
	if id == "" {
		t.Fatalf("send %s returned no message id", m.Body)
	}
	return id
}

// receiveOne waits up to Bound for one message.
func receiveOne(t *testing.T, ctx context.Context, p queueport.Port, visibility time.Duration) queueport.Delivery {
	t.Helper()
	deadline := time.Now().Add(Bound)
	for time.Now().Before(deadline) {
		ds, err := p.Receive(ctx, queueport.ReceiveParams{Max: 1, Visibility: visibility, Wait: time.Second})
		if err != nil {
			t.Fatalf("receive: %v", err)
		}
		if len(ds) > 1 {
			t.Fatalf("receive with Max 1 returned %d messages", len(ds))
		}
		if len(ds) == 1 {
			return ds[0]
		}
	}
	t.Fatalf("no message within %s", Bound)
	return queueport.Delivery{}
}

// expectNone fails when a message is received within wait.
func expectNone(t *testing.T, ctx context.Context, p queueport.Port, wait time.Duration, why string) {
	t.Helper()
	ds, err := p.Receive(ctx, queueport.ReceiveParams{Max: 10, Visibility: 30 * time.Second, Wait: wait})
	if err != nil {
		t.Fatalf("receive: %v", err)
	}
	if len(ds) > 0 {
		t.Fatalf("%s, yet received %q (receive count %d)", why, ds[0].Body, ds[0].ReceiveCount)
	}
}

func testSendReceiveDelete(t *testing.T, p queueport.Port) {
	ctx := ctxFor(t)
	id := send(t, ctx, p, queueport.Outgoing{Body: `{"n":1}`})
	d := receiveOne(t, ctx, p, 30*time.Second)
	if d.ID != id || d.Body != `{"n":1}` || d.ReceiveCount != 1 || d.Receipt == "" {
		t.Fatalf("received %+v; want id %s, body {\"n\":1}, receive count 1 and a receipt", d, id)
	}
	if err := p.Delete(ctx, d.Receipt); err != nil {
		t.Fatalf("delete: %v", err)
	}
	expectNone(t, ctx, p, 500*time.Millisecond, "the message was deleted")
	if dead, err := p.DeadLetters(ctx, 10); err != nil || len(dead) != 0 {
		t.Fatalf("dead letters = %v, %v; want none", dead, err)
	}
}

func testVisibility(t *testing.T, p queueport.Port) {
	ctx := ctxFor(t)
	id := send(t, ctx, p, queueport.Outgoing{Body: `{"v":1}`})
	first := receiveOne(t, ctx, p, time.Second)
	start := time.Now()
	expectNone(t, ctx, p, 0, "the message is in flight")
	again := receiveOne(t, ctx, p, 30*time.Second)
	if waited := time.Since(start); waited < 900*time.Millisecond {
		t.Fatalf("redelivered after %s, before its 1 s visibility ended", waited)
	}
	if again.ID != id || again.Body != first.Body {
		t.Fatalf("redelivered %+v; want message %s again", again, id)
	}
	if first.ReceiveCount != 1 || again.ReceiveCount != 2 {
		t.Fatalf("receive counts %d then %d; want 1 then 2", first.ReceiveCount, again.ReceiveCount)
	}
	if err := p.Delete(ctx, again.Receipt); err != nil {
		t.Fatalf("delete with the second receipt: %v", err)
	}
	expectNone(t, ctx, p, 1500*time.Millisecond, "the message was deleted")
}

func testExtend(t *testing.T, p queueport.Port) {
	ctx := ctxFor(t)
	send(t, ctx, p, queueport.Outgoing{Body: `{"e":1}`})
	d := receiveOne(t, ctx, p, time.Second)
	if err := p.Extend(ctx, d.Receipt, 5*time.Second); err != nil {
		t.Fatalf("extend: %v", err)
	}
	// Past the first visibility timeout, the extended one still holds.
	expectNone(t, ctx, p, 2*time.Second, "the visibility was extended to 5 s")
	if err := p.Extend(ctx, d.Receipt, 0); err != nil {
		t.Fatalf("give back (extend to 0): %v", err)
	}
	back := receiveOne(t, ctx, p, 30*time.Second)
	// A second delivery counts at least 2 (local-aws-sqs also counts each ChangeMessageVisibility
	// as a receive; AWS and the engine count receives only).
	if back.ID != d.ID || back.ReceiveCount < 2 {
		t.Fatalf("given back, received %+v; want message %s with receive count 2 or more", back, d.ID)
	}
	if err := p.Delete(ctx, back.Receipt); err != nil {
		t.Fatalf("delete: %v", err)
	}
}

func testDeadLetter(t *testing.T, p queueport.Port) {
	ctx := ctxFor(t)
	id := send(t, ctx, p, queueport.Outgoing{Body: `{"d":1}`})
	keep := send(t, ctx, p, queueport.Outgoing{Body: `{"d":2}`})
	// Message 2 is received once and deleted; message 1 is received three times and never
	// deleted (its consumer fails), each visibility timeout lapsing: then it is dead.
	for i := 1; i <= 3; i++ {
		d := receiveOne(t, ctx, p, time.Second)
		if d.ID == keep {
			if err := p.Delete(ctx, d.Receipt); err != nil {
				t.Fatal(err)
			}
			d = receiveOne(t, ctx, p, time.Second)
		}
		if d.ID != id || d.ReceiveCount != i {
			t.Fatalf("receive %d: got %+v; want message %s with receive count %d", i, d, id, i)
		}
	}
	time.Sleep(1100 * time.Millisecond) // the third visibility timeout lapses
	expectNone(t, ctx, p, 1500*time.Millisecond, "the message reached its 3 receives")
	var dead []queueport.Delivery
	deadline := time.Now().Add(Bound)
	for len(dead) == 0 && time.Now().Before(deadline) {
		var err error
		if dead, err = p.DeadLetters(ctx, 10); err != nil {
			t.Fatalf("dead letters: %v", err)
		}
		if len(dead) == 0 {
			time.Sleep(100 * time.Millisecond)
		}
	}
	if len(dead) != 1 || dead[0].Body != `{"d":1}` {
		t.Fatalf("dead letters = %+v; want the one message {\"d\":1}", dead)
	}
	// Listing takes nothing: the dead letter is still there.
	if again, err := p.DeadLetters(ctx, 10); err != nil || len(again) != 1 {
		t.Fatalf("dead letters listed again = %+v, %v; want the same one", again, err)
	}
}

func testOrder(t *testing.T, p queueport.Port) {
	ctx := ctxFor(t)
	const n = 6
	for i := 0; i < n; i++ {
		send(t, ctx, p, queueport.Outgoing{Body: fmt.Sprintf(`{"seq":%d}`, i), DedupID: fmt.Sprintf("order-%d", i)})
	}
	for i := 0; i < n; i++ {
		d := receiveOne(t, ctx, p, 30*time.Second)
		if want := fmt.Sprintf(`{"seq":%d}`, i); d.Body != want {
			t.Fatalf("receive %d: got %s; want %s (messages in the order sent)", i, d.Body, want)
		}
		if err := p.Delete(ctx, d.Receipt); err != nil {
			t.Fatal(err)
		}
	}
	expectNone(t, ctx, p, 500*time.Millisecond, "every message was deleted")
}

func testDedup(t *testing.T, p queueport.Port) {
	ctx := ctxFor(t)
	first := send(t, ctx, p, queueport.Outgoing{Body: `{"dup":"first"}`, DedupID: "same-job"})
	send(t, ctx, p, queueport.Outgoing{Body: `{"dup":"second"}`, DedupID: "same-job"})
	send(t, ctx, p, queueport.Outgoing{Body: `{"dup":"other"}`, DedupID: "other-job"})
	var got []string
	for i := 0; i < 2; i++ {
		d := receiveOne(t, ctx, p, 30*time.Second)
		if i == 0 && d.ID != first {
			t.Fatalf("first delivery is %s; want the first send's message %s", d.ID, first)
		}
		got = append(got, d.Body)
		if err := p.Delete(ctx, d.Receipt); err != nil {
			t.Fatal(err)
		}
	}
	if got[0] != `{"dup":"first"}` || got[1] != `{"dup":"other"}` {
		t.Fatalf("received %v; want the first send of same-job, then other-job", got)
	}
	expectNone(t, ctx, p, time.Second, "the second send of same-job was a duplicate")
}
