// Package queueport is the queue as a port (seed 002's port/adapter design): the few verbs a
// queue consumer and producer need, in Amazon SQS's terms — send, receive with a visibility
// timeout, extend the visibility, delete, and dead-letter after a receive limit — so the same
// worker code can take its messages from the device's SQLite queue (engine/queue's adapter,
// queue.MessageQueue) or from SQS (sync/sqsqueue). The contract both adapters keep is written down once,
// as a test suite any adapter runs: queueporttest.Run.
package queueport

import (
	"context"
	"errors"
	"time"
)

// Port is one queue of messages (one job type's queue).
//
// The contract (queueporttest.Run checks it):
//   - A received message is invisible to other receivers until its visibility timeout ends;
//     then it is delivered again, with ReceiveCount one higher.
//   - Extend(receipt, d) makes it invisible for d from now; Extend(receipt, 0) returns it at once
//     (SQS's way to give a message back).
//   - Delete removes it for good.
//   - A message received MaxReceives times without being deleted is moved to the dead-letter
//     side instead of being delivered again; DeadLetters lists it there.
//   - On an ordered queue (an SQS FIFO queue; the engine's queue always), messages sent in turn
//     are received in turn.
//   - A send whose DedupID was sent before (within SQS's five-minute window; for the engine, while
//     the first job is kept) adds nothing: one message is delivered.
type Port interface {
	// Send adds a message and returns its id.
	Send(ctx context.Context, m Outgoing) (id string, err error)
	// Receive returns up to p.Max visible messages (waiting up to p.Wait for the first one),
	// each now invisible for p.Visibility.
	Receive(ctx context.Context, p ReceiveParams) ([]Delivery, error)
	// Extend makes a received message invisible for visibility from now (0: visible at once).
	// It returns ErrReceiptInvalid when receipt no longer holds the message.
	Extend(ctx context.Context, receipt string, visibility time.Duration) error
	// Delete removes a received message. It returns ErrReceiptInvalid when receipt no longer
	// holds the message (the engine's queue; SQS may accept a stale receipt silently).
	Delete(ctx context.Context, receipt string) error
	// DeadLetters lists up to max messages that reached the receive limit, without taking them.
	DeadLetters(ctx context.Context, max int) ([]Delivery, error)
}

// Outgoing is a message to send.
type Outgoing struct {
	// Body is the message: a JSON job message (the engine's queue takes JSON only).
	Body string
	// GroupID orders messages within a group on an SQS FIFO queue (required there). The engine's
	// queue orders every message of a queue, and ignores it.
	GroupID string
	// DedupID, when set, makes a second send of the same id add nothing.
	DedupID string
}

// ReceiveParams say how to receive.
type ReceiveParams struct {
	Max        int           // messages at most (1–10; default 1)
	Visibility time.Duration // how long they stay invisible (default 30 s; SQS rounds to seconds)
	Wait       time.Duration // how long to wait for a first message (0: answer at once)
}

// Normalized returns p with its defaults filled in.
func (p ReceiveParams) Normalized() ReceiveParams {
	if p.Max <= 0 {
		p.Max = 1
	}
	if p.Max > 10 {
		p.Max = 10
	}
	if p.Visibility <= 0 {
		p.Visibility = 30 * time.Second
	}
	return p
}

// Delivery is one received message.
type Delivery struct {
	ID           string `json:"id"`
	Body         string `json:"body"`
	Receipt      string `json:"receipt,omitempty"` // names this receive for Extend and Delete
	ReceiveCount int    `json:"receive_count"`     // 1 on the first delivery
	GroupID      string `json:"group_id,omitempty"`
}

// ErrReceiptInvalid is returned by Extend and Delete when the receipt no longer holds its
// message: its visibility ended and it was received again, or it was deleted.
var ErrReceiptInvalid = errors.New("the receipt no longer holds its message")
