package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"time"

	"jobdesk/engine/job"
	"jobdesk/engine/store"
)

// Execution: the Worker runs a claimed job's handler (with its timeout, cancel and a recovered
// panic), turns what the handler returned into the attempt's Outcome, and commits outcomes in
// groups (completer).

// start runs l's handler in its own goroutine; the caller has taken its slots.
func (w *Worker) start(ctx context.Context, l Lease) {
	w.launch(ctx, l, false)
}

// launch is start; unlessStopping makes it start nothing once Stop has begun, and return
// false: a run started then could be missed by the completer's last drain (drainOnStop).
func (w *Worker) launch(ctx context.Context, l Lease, unlessStopping bool) bool {
	id := l.Info.ID
	w.mu.Lock()
	if unlessStopping && w.stopping {
		w.mu.Unlock()
		return false
	}
	e := w.types[l.Info.Type]
	hctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	r := &run{lease: l, cancel: cancel, lastBeat: w.q.now()}
	w.runs[id] = r
	w.mu.Unlock()
	w.q.mu.Lock()
	w.q.running[id] = func() { cancel(errUserCancel) }
	w.q.mu.Unlock()
	if l.CancelRequested {
		cancel(errUserCancel)
	}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		// Shutting down cancels the handler, and the job goes back to the queue for the next start.
		stop := context.AfterFunc(ctx, func() { cancel(context.Canceled) })
		defer stop()
		began := time.Now()
		o := w.execute(hctx, e, r)
		w.uncommitted.Add(1)
		w.complete <- o // before the run is forgotten, so Stop's drain cannot miss it
		w.mu.Lock()
		if !e.o.Orchestrator && e.o.Concurrency <= 0 {
			w.quickRun = 0.8*w.quickRun + 0.2*time.Since(began).Seconds()
		}
		// The claim loop waits for this slot only when the slots were all taken (the global
		// ones, or the type's own), when a suspect ran alone, or when it may claim a suspect
		// now that nothing runs (leaseSuspect); otherwise its last claims took every due job
		// there was, and a freed slot changes nothing.
		wake := (e.o.Concurrency > 0 && e.active >= e.o.Concurrency) || w.soloID == id ||
			(!e.o.Orchestrator && (w.active >= w.opts.Workers || w.active == 1))
		e.active--
		if !e.o.Orchestrator {
			w.active--
		}
		delete(w.runs, id)
		if w.soloID == id {
			w.soloID = 0
		}
		w.mu.Unlock()
		w.q.mu.Lock()
		delete(w.q.running, id)
		w.q.mu.Unlock()
		cancel(nil)
		w.startReady(ctx)
		if wake {
			select {
			case w.freed <- struct{}{}:
			default:
			}
		}
	}()
	return true
}

type handlerResult struct {
	out json.RawMessage
	err error
}

// execute runs the handler and turns what it returned into the attempt's outcome.
func (w *Worker) execute(ctx context.Context, e *handlerEntry, r *run) Outcome {
	l := &r.lease
	var cancelTimeout context.CancelFunc = func() {}
	if e.o.Timeout > 0 {
		ctx, cancelTimeout = context.WithTimeoutCause(ctx, e.o.Timeout, errTimeout)
	}
	defer cancelTimeout()
	done := make(chan handlerResult, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				e := job.Errorf(job.E016, "the handler crashed: %v", p).
					WithJa("処理中に内部エラーが発生しました。").WithName("States.Runtime").Permanent()
				e.Cause = string(debug.Stack())
				done <- handlerResult{err: e}
			}
		}()
		out, err := e.h(job.WithInfo(ctx, l.Info), l.Input, reporterFor(r))
		done <- handlerResult{out, err}
	}()
	var res handlerResult
	select {
	case res = <-done:
	case <-ctx.Done():
		// The handler should return promptly now; if it does not, the outcome is recorded
		// anyway and its goroutine is abandoned.
		grace := time.NewTimer(w.opts.CancelGrace)
		select {
		case res = <-done:
		case <-grace.C:
			res = handlerResult{err: context.Cause(ctx)}
		}
		grace.Stop()
	}
	cause := context.Cause(ctx)
	switch {
	case errors.Is(cause, context.Canceled) && !errors.Is(cause, errUserCancel) && res.err != nil:
		// Shutdown: give the job back without using an attempt.
		return l.Released(w.stoppedMessage())
	case res.err == nil:
		r.mu.Lock()
		msg := r.msg
		r.mu.Unlock()
		return l.Succeeded(res.out, msg)
	}
	var partial *job.PartialResult
	var deferred *job.DeferredError
	switch {
	case errors.As(res.err, &partial):
		return l.Partial(partial.Result, partial.Summary)
	case errors.As(res.err, &deferred):
		return l.Deferred(deferred.After, deferred.Message)
	case errors.Is(cause, errUserCancel):
		return l.Cancelled()
	}
	err := res.err
	if store.IsDiskFull(err) {
		// Retrying cannot help until space is freed: the job fails, and the worker pauses.
		return l.Failed(w.q.diskFull(err), DefaultBackoff)
	}
	if errors.Is(cause, errTimeout) {
		err = job.Errorf(job.E011, "the job took longer than its limit of %s", e.o.Timeout).
			WithJa(fmt.Sprintf("処理が制限時間（%s）を超えたため停止しました。", e.o.Timeout)).WithName("States.Timeout")
	}
	b := DefaultBackoff
	if e.o.Backoff != nil {
		b = *e.o.Backoff
	}
	return l.Failed(err, b)
}

// reporterFor returns the Reporter handed to a handler: it stores the latest progress for the
// heartbeat, which writes it at most ten times a second.
func reporterFor(r *run) job.Reporter {
	return job.ReporterFunc(func(pct float64, msg string) {
		r.mu.Lock()
		r.pct, r.msg, r.dirty = clampPct(pct), msg, true
		r.mu.Unlock()
	})
}

// completer commits finished attempts. Whatever has queued up while the previous commit ran goes
// into the next transaction (group commit), so an outcome is never held back waiting for a batch
// to fill: at most the attempts finishing during one commit are at risk in a crash. When the disk
// is full, the outcomes are kept and committed once it has room again.
func (w *Worker) completer() {
	batch := make([]Outcome, 0, 256)
	retry := time.NewTimer(time.Hour)
	defer retry.Stop()
	for {
		if len(batch) == 0 {
			select {
			case o := <-w.complete:
				batch = append(batch, o)
			case <-w.done:
				w.drainOnStop()
				return
			}
		}
	drain:
		for len(batch) < cap(batch) {
			select {
			case o := <-w.complete:
				batch = append(batch, o)
			default:
				break drain
			}
		}
		if err := w.commit(batch); err == nil || !store.IsDiskFull(err) {
			if w.uncommitted.Add(-int64(len(batch))) == 0 && w.suspectWaits.Load() {
				select { // a suspect waits for every outcome to be in (leaseSuspect)
				case w.freed <- struct{}{}:
				default:
				}
			}
			batch = batch[:0]
			w.holding.Store(false)
			continue
		}
		// The disk is full: hold the outcomes (their jobs stay leased to this worker) and try
		// again in a second.
		w.holding.Store(true)
		retry.Reset(time.Second)
		select {
		case <-retry.C:
		case <-w.done:
			w.commit(batch) // last try; otherwise the leases lapse and the jobs run again
			w.drainOnStop()
			return
		}
	}
}

// drainOnStop commits the outcomes of handlers still finishing after Stop.
func (w *Worker) drainOnStop() {
	for {
		select {
		case o := <-w.complete:
			w.commit([]Outcome{o})
			continue
		default:
		}
		w.mu.Lock()
		n := len(w.runs)
		w.mu.Unlock()
		if n == 0 && len(w.complete) == 0 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// commit finishes a group of attempts in one transaction. Should it fail, the leases stay; they
// lapse and the jobs run again (or, on a full disk, the completer tries again). Nothing is lost.
// A failure is said once, not at every retry.
func (w *Worker) commit(batch []Outcome) error {
	_, err := w.q.Finish(context.Background(), batch...)
	if err != nil && !w.holding.Load() && store.IsDiskFull(err) {
		fmt.Fprintf(os.Stderr, "jobdesk: could not record %d finished jobs yet, the disk is full: JobDesk tries again each second while it runs (%v)\n", len(batch), err)
	} else if err != nil && !w.holding.Load() {
		fmt.Fprintf(os.Stderr, "jobdesk: could not record %d finished jobs: %v\n", len(batch), err)
	}
	return err
}
