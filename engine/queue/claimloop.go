package queue

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"jobdesk/engine/job"
)

// Dispatch: the Worker's loop that claims jobs while it has free slots, and sleeps until
// something can change that.

// leaseGroup is one claim statement's worth: types sharing a limit.
type leaseGroup struct {
	types  []string
	limit  int
	global bool // takes global slots
	open   bool // the types without limits of their own (may claim ahead)
	vis    time.Duration
}

// Claiming ahead: when the open group's handlers take less than quickJob on average, a claim
// statement takes up to leaseAhead jobs more than there are free slots.
const (
	quickJob   = 0.020 // seconds
	leaseAhead = 64
)

// groups returns the claim statements to run, capped types first and the open group last, and
// how many global slots are free. A capped type's limit is not reserved: the claim loop takes the
// slots it actually claimed from those the groups after it may use, so a capped type with nothing
// to do never starves the others.
func (w *Worker) groups() ([]leaseGroup, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.soloID != 0 {
		return nil, 0 // a suspect runs alone (leaseSuspect)
	}
	free := w.opts.Workers - w.active
	slots := free
	var gs []leaseGroup
	open := leaseGroup{global: true, open: true, limit: free, vis: w.opts.Visibility}
	for t, e := range w.types {
		vis := e.o.Visibility
		if vis <= 0 {
			vis = w.opts.Visibility
		}
		switch {
		case e.o.Orchestrator:
			if c := e.o.Concurrency - e.active; c > 0 {
				gs = append(gs, leaseGroup{types: []string{t}, limit: c, vis: vis})
			}
		case e.o.Concurrency > 0:
			if c := min(e.o.Concurrency-e.active, free); c > 0 {
				gs = append(gs, leaseGroup{types: []string{t}, limit: c, global: true, vis: vis})
			}
		default:
			open.types = append(open.types, t)
			open.vis = max(open.vis, vis)
		}
	}
	open.limit = free
	if w.quickRun < quickJob && free > 0 {
		// Short jobs: claim a batch ahead; they start from w.ready as slots free up.
		open.limit += max(0, leaseAhead-len(w.ready))
	}
	if len(open.types) > 0 && free > 0 && len(w.ready) == 0 {
		gs = append(gs, open)
	}
	return gs, slots
}

// claimLoop claims work while there are free slots, and otherwise sleeps until something can
// change that: a wake-up (a local enqueue, another process's commit), a freed slot, or the next
// due time. A lease group that found nothing is not asked again until a job of one of its types
// may have become due (Queue.changedSince) or its next due time comes, so a slot freed by a
// finished job costs no query when there is nothing to claim.
func (w *Worker) claimLoop(ctx context.Context, wake <-chan struct{}) {
	defer w.releaseReady()
	var lastErr string
	for {
		paused := w.q.Health().DiskFull
		if paused && (w.holding.Load() || !w.q.spaceReturned()) {
			// The disk is full: claim nothing until it has room and the held outcomes are in.
			if !w.sleep(ctx, time.Second, nil) {
				return
			}
			continue
		}
		leased, failed := 0, false
		var starved []string // the types of the groups that took every due job there was
		gs, slots := w.groups()
		free := slots
		mark := w.q.changes() // before the claims: a change during them shows as a later mark
		for _, g := range gs {
			if g.global {
				// Capped types claim within what is still free; the open group may claim ahead.
				ahead := 0
				if g.open {
					ahead = max(0, g.limit-slots)
				}
				if g.limit = min(g.limit, free+ahead); g.limit <= 0 {
					continue // no slot: a freed slot wakes the claim loop
				}
			}
			n, err := w.lease(ctx, g, mark)
			if g.global {
				free -= min(n, free)
			}
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				// A database error (busy for longer than the busy timeout, disk full): say so
				// once, and try again in a second rather than at once.
				if err.Error() != lastErr {
					lastErr = err.Error()
					fmt.Fprintf(os.Stderr, "jobdesk: could not lease jobs (will keep trying): %v\n", err)
				}
				failed = true
				continue
			}
			lastErr = ""
			leased += n
			if n < g.limit {
				starved = append(starved, g.types...)
			}
		}
		if !failed {
			n, err := w.leaseSuspect(ctx, mark)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				failed = true
			}
			leased += n
		}
		if paused && !failed {
			w.q.resumed() // the claims could write again
		}
		if leased > 0 && len(starved) == 0 {
			continue
		}
		wait := time.Hour
		if failed {
			wait = time.Second
		} else if len(starved) > 0 {
			if at := w.nextDue(ctx, starved, mark); !at.IsZero() {
				wait = max(at.Sub(w.q.now()), time.Millisecond)
			}
		}
		if !w.sleep(ctx, wait, wake) {
			return
		}
	}
}

// sleep waits for d, a wake-up or a freed slot, and returns false when ctx ended.
func (w *Worker) sleep(ctx context.Context, d time.Duration, wake <-chan struct{}) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-wake:
	case <-w.freed:
	case <-timer.C:
	}
	return true
}

// nextDue returns when the earliest waiting job of types falls due, or zero when none is
// waiting. The answer is kept while nothing of those types changed and its time has not come.
func (w *Worker) nextDue(ctx context.Context, types []string, mark uint64) time.Time {
	if w.dueKnown(types) {
		if w.dueAt.Equal(never) {
			return time.Time{}
		}
		return w.dueAt
	}
	clear(w.dueTypes)
	for _, t := range types {
		w.dueTypes[t] = true
	}
	w.dueMark = mark + 1
	d, ok := w.q.NextDue(ctx, w.opts.Target, types)
	switch {
	case !ok:
		w.dueAt = never
		return time.Time{}
	case d <= 0:
		// Due now, yet the claims just took every due job: it was enqueued meanwhile (and its
		// signal is on its way). Ask again next time.
		w.dueMark = 0
		return w.q.now()
	}
	w.dueAt = w.q.now().Add(d)
	return w.dueAt
}

// never is the due time of types with no waiting job.
var never = time.Unix(1<<40, 0)

// lease claims a group's jobs and starts them, or holds the open group's extra ones in
// w.ready. A group that took every due job of its types is remembered as idle at mark.
func (w *Worker) lease(ctx context.Context, g leaseGroup, mark uint64) (int, error) {
	key := strings.Join(g.types, "\x00")
	if m, idle := w.idle[key]; idle {
		typed, other := w.q.changedSince(g.types, m)
		if !typed && !other && w.dueKnown(g.types) {
			return 0, nil // nothing of its types was enqueued or returned, and none fell due
		}
		if !typed && !w.q.anyDue(ctx, w.opts.Target, g.types, w.q.nowMs()) {
			// The claim statement would walk every waiting job of other types (jobs_ready is
			// ordered by priority, not type) to find none.
			w.idle[key] = mark
			return 0, nil
		}
	}
	ls, seen, err := w.q.claimMarked(ctx, ClaimParams{Owner: w.owner, Target: w.opts.Target, Types: g.types, Max: g.limit,
		Visibility: g.vis, crashed: notCrashed})
	if err != nil {
		return 0, err
	}
	if len(ls) < g.limit {
		// Idle from the claim's own mark, not the pass's: the jobs whose signals came before
		// the claim ran are the ones it took, and do not call for another claim.
		w.idle[key] = seen
	} else {
		delete(w.idle, key)
	}
	if !g.open {
		// The claim took no more than the free slots of this group.
		w.mu.Lock()
		for _, l := range ls {
			w.take(l.Info.Type)
		}
		w.mu.Unlock()
		for _, l := range ls {
			w.start(ctx, l)
		}
		return len(ls), nil
	}
	w.mu.Lock()
	w.ready = append(w.ready, ls...)
	w.mu.Unlock()
	w.startReady(ctx)
	return len(ls), nil
}

// leaseSuspect claims one job that was running when a process died (a suspect: it may be what
// killed it) and runs it alone: only while no other job of this worker runs (orchestrators
// aside) and every outcome is committed, and claiming nothing else until it ends. A job that kills the process again then
// takes no innocent job down with it, and reaches the poison limit (Options.PoisonLimit) alone.
// Suspects appear only when leases are reaped, so after finding none it asks again only after
// a change of unknown kind (Queue.changedSince).
func (w *Worker) leaseSuspect(ctx context.Context, mark uint64) (int, error) {
	w.mu.Lock()
	idle := w.soloID == 0 && w.active == 0 && len(w.ready) == 0
	w.mu.Unlock()
	if !idle {
		return 0, nil
	}
	if w.uncommitted.Load() > 0 {
		// The jobs that just ended are not recorded yet: should the suspect kill the process
		// now, they would count as running beside it. The completer frees the claim loop when done.
		w.suspectWaits.Store(true)
		if w.uncommitted.Load() > 0 {
			return 0, nil
		}
	}
	w.suspectWaits.Store(false)
	if w.suspectsMark > 0 {
		if _, other := w.q.changedSince(nil, w.suspectsMark-1); !other {
			return 0, nil
		}
	}
	ls, err := w.q.Claim(ctx, ClaimParams{Owner: w.owner, Target: w.opts.Target, Types: w.Types(), Max: 1,
		Visibility: w.opts.Visibility, crashed: onlyCrashed})
	if err != nil || len(ls) == 0 {
		if err == nil {
			w.suspectsMark = mark + 1
		}
		return 0, err
	}
	l := ls[0]
	w.mu.Lock()
	if !w.types[l.Info.Type].o.Orchestrator {
		w.soloID = l.Info.ID
	}
	w.take(l.Info.Type)
	w.mu.Unlock()
	w.start(ctx, l)
	return 1, nil
}

// dueKnown reports whether the kept due time (nextDue) holds for types: it was read for all of
// them, no job was given a future due time since, and it has not come yet. (Jobs due at once
// that arrive meanwhile do not change it: the claims that follow their signal take them.)
func (w *Worker) dueKnown(types []string) bool {
	if w.dueMark == 0 || !w.q.now().Before(w.dueAt) || w.q.laterSince(w.dueMark-1) {
		return false
	}
	for _, t := range types {
		if !w.dueTypes[t] {
			return false
		}
	}
	return true
}

// take counts a job of type typ as running: it holds its type's slot and, unless its type is an
// orchestrator, a global one. Call with w.mu held.
func (w *Worker) take(typ string) {
	e := w.types[typ]
	e.active++
	if !e.o.Orchestrator {
		w.active++
	}
}

// startReady starts jobs claimed ahead while global slots are free. Nothing starts once the
// worker is stopping: the claim loop gives those jobs back (releaseReady).
func (w *Worker) startReady(ctx context.Context) {
	for ctx.Err() == nil {
		w.mu.Lock()
		if len(w.ready) == 0 || w.active >= w.opts.Workers {
			w.mu.Unlock()
			return
		}
		l := w.ready[0]
		w.ready = w.ready[1:]
		w.take(l.Info.Type)
		w.mu.Unlock()
		w.start(ctx, l)
	}
}

// releaseReady gives the jobs claimed ahead back to the queue without using an attempt; the claim
// loop calls it as it stops.
func (w *Worker) releaseReady() {
	w.mu.Lock()
	ls := w.ready
	w.ready = nil
	w.mu.Unlock()
	if len(ls) == 0 {
		return
	}
	batch := make([]Outcome, len(ls))
	for i, l := range ls {
		batch[i] = l.Released(w.stoppedMessage())
	}
	w.commit(batch)
}

// stoppedMessage is the message of a job given back to the queue as JobDesk stops.
const stoppedMessage = "Returned to the queue: JobDesk stopped"

// stoppedFullMessage is stoppedMessage when JobDesk stops on a full disk: the job runs again
// once JobDesk runs with room (the worker does not claim while the disk is full).
const stoppedFullMessage = "Returned to the queue: the disk is full; it runs again when JobDesk runs with room on the disk"

// stoppedCloudMessage is the message of a cloud job given back to the queue as JobDesk stops:
// its execution runs on, and is found again by name when the job is claimed again.
const stoppedCloudMessage = "JobDesk closed; the cloud execution goes on"

// stoppedMessage is the message of a job of this worker given back to the queue as it stops.
func (w *Worker) stoppedMessage() string {
	if w.opts.Target == job.TargetCloud {
		return stoppedCloudMessage
	}
	return w.q.stoppedMessage()
}

// stoppedMessage is the message of a job given back to the queue as this process stops.
func (q *Queue) stoppedMessage() string {
	if q.Health().DiskFull {
		return stoppedFullMessage
	}
	return stoppedMessage
}
