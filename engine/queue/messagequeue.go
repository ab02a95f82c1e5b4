package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"jobdesk/engine/job"
	"jobdesk/engine/queueport"
)

// One job type of the queue as a message queue: MessageQueue adapts its jobs to queueport.Port
// (the port: the SQS-like verbs the SQS adapter, sync/sqsqueue, also implements), so a consumer
// written against the port runs on either. A message is a job whose input is the message body; a
// receive is a claim (its receive count the job's attempts), a receipt names the lease, delete
// completes the job SUCCEEDED, and a message whose lease lapses on its last attempt ends FAILED:
// the engine's dead-letter side. Every message of a type is received in the order sent (same priority).

// MessageQueueOptions configure a MessageQueue.
type MessageQueueOptions struct {
	// Type is the job type whose jobs are the messages. Required.
	Type string
	// Target is whose jobs they are: job.TargetDevice (default) or job.TargetCloud.
	Target string
	// Owner names the leases it takes (default "port-TYPE-PID").
	Owner string
	// MaxReceives is how many receives a message gets before it is dead-lettered
	// (default DefaultMaxAttempts, as the queues' maxReceiveCount).
	MaxReceives int
}

// MessageQueue is one job type of the queue as a message queue: an adapter of queueport.Port.
type MessageQueue struct {
	q *Queue
	o MessageQueueOptions
}

var _ queueport.Port = (*MessageQueue)(nil)

// MessageQueue returns the queue's jobs of o.Type as a message queue (a queueport.Port).
func (q *Queue) MessageQueue(o MessageQueueOptions) (*MessageQueue, error) {
	if strings.TrimSpace(o.Type) == "" {
		return nil, job.Errorf(job.E014, "a queue port needs a job type").WithJa("キューのポートにはジョブの種類が必要です。")
	}
	if o.Target == "" {
		o.Target = job.TargetDevice
	}
	if o.Owner == "" {
		o.Owner = fmt.Sprintf("port-%s-%d", o.Type, os.Getpid())
	}
	if o.MaxReceives <= 0 {
		o.MaxReceives = DefaultMaxAttempts
	}
	return &MessageQueue{q: q, o: o}, nil
}

// dedupKey keeps a message queue's dedup ids apart from other dedup keys and other types'.
func (p *MessageQueue) dedupKey(id string) string {
	if id == "" {
		return ""
	}
	return "port:" + p.o.Type + ":" + id
}

// Send enqueues the body (JSON) as a job of the message queue's type. A DedupID sent before returns the
// existing job's id and adds nothing.
func (p *MessageQueue) Send(ctx context.Context, m queueport.Outgoing) (string, error) {
	j, _, err := p.q.Enqueue(ctx, Params{Type: p.o.Type, Input: json.RawMessage(m.Body), MaxAttempts: p.o.MaxReceives,
		DedupKey: p.dedupKey(m.DedupID), Target: p.o.Target})
	if err != nil {
		return "", err
	}
	return strconv.FormatInt(j.ID, 10), nil
}

// Receive claims up to rp.Max due jobs, waiting up to rp.Wait for one. When none is due it
// first returns lapsed leases to the queue (Reap), as SQS makes a message visible again.
func (p *MessageQueue) Receive(ctx context.Context, rp queueport.ReceiveParams) ([]queueport.Delivery, error) {
	rp = rp.Normalized()
	cp := ClaimParams{Owner: p.o.Owner, Target: p.o.Target, Types: []string{p.o.Type}, Max: rp.Max, Visibility: rp.Visibility}
	deadline := time.Now().Add(rp.Wait)
	var wake <-chan struct{}
	for {
		ls, err := p.q.Claim(ctx, cp)
		if err == nil && len(ls) == 0 {
			var n int64
			if n, err = p.q.Reap(ctx); err == nil && n > 0 {
				ls, err = p.q.Claim(ctx, cp)
			}
		}
		if err != nil || len(ls) > 0 {
			return deliveries(ls), err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return nil, nil
		}
		if wake == nil {
			ch, stop := p.q.Wakeups()
			defer stop()
			wake = ch
		}
		// A lease lapses without a signal: look again at least every 100 ms.
		t := time.NewTimer(min(left, 100*time.Millisecond))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-wake:
			t.Stop()
		case <-t.C:
		}
	}
}

func deliveries(ls []Lease) []queueport.Delivery {
	if len(ls) == 0 {
		return nil
	}
	out := make([]queueport.Delivery, len(ls))
	for i, l := range ls {
		out[i] = queueport.Delivery{ID: strconv.FormatInt(l.Info.ID, 10), Body: string(l.Input),
			Receipt: strconv.FormatInt(l.Info.ID, 10) + "/" + l.Token, ReceiveCount: l.Info.Attempt}
	}
	return out
}

// lease rebuilds the lease a receipt names.
func (p *MessageQueue) lease(receipt string) (Lease, error) {
	id, token, ok := strings.Cut(receipt, "/")
	n, err := strconv.ParseInt(id, 10, 64)
	if !ok || err != nil || token == "" {
		return Lease{}, queueport.ErrReceiptInvalid
	}
	return Lease{Info: job.Info{ID: n}, Token: token}, nil
}

// Extend extends the lease the receipt names; visibility 0 returns the job to the queue at once
// (counting the attempt, as an SQS receive counts).
func (p *MessageQueue) Extend(ctx context.Context, receipt string, visibility time.Duration) error {
	l, err := p.lease(receipt)
	if err != nil {
		return err
	}
	lost, err := p.q.Extend(ctx, Heartbeat{ID: l.Info.ID, Token: l.Token, Visibility: max(visibility, 0)})
	if err != nil {
		return err
	}
	if len(lost) > 0 {
		return queueport.ErrReceiptInvalid
	}
	return nil
}

// Delete completes the job the receipt names SUCCEEDED.
func (p *MessageQueue) Delete(ctx context.Context, receipt string) error {
	l, err := p.lease(receipt)
	if err != nil {
		return err
	}
	err = p.q.Complete(ctx, l, nil, "")
	if errors.Is(err, ErrLeaseLost) {
		return queueport.ErrReceiptInvalid
	}
	return err
}

// DeadLetters lists the message queue's FAILED jobs, newest first.
func (p *MessageQueue) DeadLetters(ctx context.Context, max int) ([]queueport.Delivery, error) {
	if max <= 0 {
		max = 10
	}
	js, err := p.q.List(ctx, Filter{Status: job.Failed, Type: p.o.Type, Limit: max})
	if err != nil {
		return nil, dbError(err)
	}
	out := make([]queueport.Delivery, 0, len(js))
	for _, j := range js {
		out = append(out, queueport.Delivery{ID: strconv.FormatInt(j.ID, 10), Body: string(j.Input), ReceiveCount: j.Attempts})
	}
	return out, nil
}
