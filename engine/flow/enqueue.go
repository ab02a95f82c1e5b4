package flow

import (
	"context"
	"sync"

	"jobdesk/engine/queue"
)

// taskEnqueuer enqueues the engine's task jobs with group commit: the Tasks that ask while a
// batch is being written go together in the next one, one transaction and one wake of the
// workers for all of them. A Map's iterations start their tasks at about the same moment (a
// completed batch of the worker frees several at once), so this turns many small transactions
// into a few larger ones without delaying a lone task: a batch is written as soon as the one
// before it has committed.
type taskEnqueuer struct {
	q *queue.Queue

	mu      sync.Mutex
	pending []*enqueueRequest
	busy    bool // a goroutine is writing batches
}

type enqueueRequest struct {
	p   queue.Params
	id  int64
	err error
	// wake receives false when the request is done, true when its goroutine is to write the
	// next batch (which holds the request).
	wake chan bool
}

// enqueue adds p (whose dedup key, when set, finds the existing job) and returns its job id.
// The job is committed when it returns, whatever ctx does meanwhile, so that the caller always
// knows the job it must wait for or cancel.
func (t *taskEnqueuer) enqueue(ctx context.Context, p queue.Params) (int64, error) {
	req := &enqueueRequest{p: p, wake: make(chan bool, 1)}
	t.mu.Lock()
	t.pending = append(t.pending, req)
	lead := !t.busy
	t.busy = true
	t.mu.Unlock()
	if !lead && !<-req.wake {
		return req.id, req.err
	}
	// Write everything waiting (this request included), then hand the writing on to the
	// oldest request that came meanwhile, so that no caller waits for more than two batches.
	t.mu.Lock()
	batch := t.pending
	t.pending = nil
	t.mu.Unlock()
	ps := make([]queue.Params, len(batch))
	for i, r := range batch {
		ps[i] = r.p
	}
	ids, err := t.q.EnqueueBatch(context.WithoutCancel(ctx), ps)
	for i, r := range batch {
		if err != nil {
			r.err = err
		} else {
			r.id = ids[i]
		}
		if r != req {
			r.wake <- false
		}
	}
	t.mu.Lock()
	if len(t.pending) > 0 {
		t.pending[0].wake <- true
	} else {
		t.busy = false
	}
	t.mu.Unlock()
	return req.id, req.err
}
