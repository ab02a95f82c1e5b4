package queue

import (
	"context"
	"sync"
	"time"

	"jobdesk/engine/job"
)

// What the queue tells the rest of the process after a commit: events for subscribers (the
// window, Wait, the workflow engine) and wake-ups for consumers waiting for due jobs.

// Announce tells subscribers and waiting consumers what a committed change did. The …Tx verbs
// return one because they cannot know when, or whether, the caller's transaction commits: call it
// after the commit, and drop it when the transaction rolls back.
type Announce func()

// Wakeups returns a channel that receives a signal whenever jobs may have become due (an
// enqueue, a retry or release, a lapsed lease, another process's commit), and a function that
// ends it. Each consumer (a Worker, a cloud dispatcher) takes its own: a signal one consumer
// takes is not lost to another. Signals coalesce; after one, claim until nothing is left.
func (q *Queue) Wakeups() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	q.wakeMu.Lock()
	q.wakeups = append(q.wakeups, ch)
	q.wakeMu.Unlock()
	return ch, func() {
		q.wakeMu.Lock()
		defer q.wakeMu.Unlock()
		for i, c := range q.wakeups {
			if c == ch {
				q.wakeups = append(q.wakeups[:i], q.wakeups[i+1:]...)
				return
			}
		}
	}
}

// signal wakes every consumer waiting for due jobs, after jobs of types (any type when none is
// named) may have become due; later says that some may fall due only later (a delayed retry,
// a job not to run before some time). Each change is counted before the wake-up, so a consumer
// that reads the count (changes) before it claims, and finds nothing new after, knows its claim
// saw every due job; and one that read when the next job falls due knows that this still holds.
func (q *Queue) signal(later bool, types ...string) {
	q.wakeMu.Lock()
	q.changeSeq++
	if len(types) == 0 {
		q.anySeq = q.changeSeq
	}
	if later {
		q.laterSeq = q.changeSeq
	}
	for _, t := range types {
		q.typeSeq[t] = q.changeSeq
	}
	for _, ch := range q.wakeups {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	q.wakeMu.Unlock()
}

// signalAll is signal for a change of jobs of any type, due now or later (another process's
// commit, a reaped lease, a redriven job).
func (q *Queue) signalAll() { q.signal(true) }

// changes returns the count of changes so far: a mark for changedSince.
func (q *Queue) changes() uint64 {
	q.wakeMu.Lock()
	defer q.wakeMu.Unlock()
	return q.changeSeq
}

// changedSince reports whether jobs of one of types may have become due since mark (a value of
// changes): typed when a job of one of those types was enqueued, retried or released, any when
// a change of unknown types happened.
func (q *Queue) changedSince(types []string, mark uint64) (typed, any bool) {
	q.wakeMu.Lock()
	defer q.wakeMu.Unlock()
	for _, t := range types {
		if q.typeSeq[t] > mark {
			typed = true
			break
		}
	}
	return typed, q.anySeq > mark
}

// laterSince reports whether a job may have been given a future due time since mark (the
// earliest waiting job may now fall due sooner than a consumer last read).
func (q *Queue) laterSince(mark uint64) bool {
	q.wakeMu.Lock()
	defer q.wakeMu.Unlock()
	return q.laterSeq > mark || q.anySeq > mark
}

// Wait blocks until job id is final (or ctx ends) and returns it. While this process's workers
// are paused because the disk is full (Health), it returns the job as it stands with the E009
// error that says so, rather than wait for space that may never come.
func (q *Queue) Wait(ctx context.Context, id int64) (job.Job, error) {
	events, stop := q.Watch(id)
	defer stop()
	for {
		j, err := q.Get(ctx, id)
		if err != nil || j.Status.Final() {
			return j, err
		}
		if h := q.Health(); h.DiskFull {
			return j, h.Error
		}
	wait:
		for {
			select {
			case <-ctx.Done():
				return j, ctx.Err()
			case e := <-events:
				if e.Status.Final() || e.Kind == job.EventRedriven || e.Kind == job.EventExternalChange || e.Kind == EventDiskFull {
					break wait
				}
			}
		}
	}
}

// watchBuffer is how many events a watcher holds before it loses the oldest.
const watchBuffer = 4

// Watch returns a channel that receives job id's events after their commit, and the events
// that concern every job (ExternalChange: another process changed the database, re-read;
// EventDiskFull, EventResumed), and a function that ends it. A watcher that falls behind loses
// its oldest events, never the newest: the last event it receives tells it where the job
// stands. A watch of job 0 receives only the events that concern every job. Every way to wait
// for a job (Wait, the workflow engine's tasks and executions) waits
// on a watch: register first, then read the job, then wait for an event.
func (q *Queue) Watch(id int64) (<-chan job.Event, func()) {
	ch := make(chan job.Event, watchBuffer)
	q.mu.Lock()
	q.watchers[id] = append(q.watchers[id], ch)
	q.watching++
	q.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			q.mu.Lock()
			defer q.mu.Unlock()
			ws := q.watchers[id]
			for i, w := range ws {
				if w == ch {
					ws = append(ws[:i], ws[i+1:]...)
					break
				}
			}
			if len(ws) == 0 {
				delete(q.watchers, id)
				delete(q.ended, id)
			} else {
				q.watchers[id] = ws
			}
			q.watching--
		})
	}
}

// deliver hands e to a watcher, making room by dropping its oldest event when it is full. Only
// publish sends (holding q.mu), so the room made is there for e.
func deliver(ch chan job.Event, e job.Event) {
	select {
	case ch <- e:
		return
	default:
	}
	select {
	case <-ch:
	default:
	}
	select {
	case ch <- e:
	default:
	}
}

// Subscribe returns a channel that receives every event after its commit, and a function that
// ends the subscription. A subscriber that falls more than buffer events behind loses events
// (never blocks the queue); an ExternalChange event tells it to re-read.
func (q *Queue) Subscribe(buffer int) (<-chan job.Event, func()) {
	if buffer <= 0 {
		buffer = 256
	}
	ch := make(chan job.Event, buffer)
	q.mu.Lock()
	id := q.nextID
	q.nextID++
	q.subs[id] = ch
	q.mu.Unlock()
	return ch, func() {
		q.mu.Lock()
		delete(q.subs, id)
		q.mu.Unlock()
	}
}

func (q *Queue) publish(e job.Event) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, ch := range q.subs {
		select {
		case ch <- e:
		default:
		}
	}
	if q.watching == 0 {
		return
	}
	if e.JobID != 0 {
		for _, ch := range q.watchers[e.JobID] {
			deliver(ch, e)
		}
		return
	}
	for _, ws := range q.watchers {
		for _, ch := range ws {
			deliver(ch, e)
		}
	}
}

// watch reads PRAGMA data_version on one dedicated read connection: its value changes whenever
// another connection (of this process or another) commits. A change wakes the workers and tells
// subscribers to re-read, at most once per WatchInterval.
func (q *Queue) watch() {
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-q.closed; cancel() }()
	conn, err := q.db.R.Conn(ctx)
	if err != nil {
		return
	}
	defer conn.Close()
	var last int64 = -1
	t := time.NewTicker(q.opts.WatchInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var v int64
		if err := conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v); err != nil {
			continue
		}
		if last >= 0 && v != last {
			q.signalAll()
			q.publish(job.Event{Kind: job.EventExternalChange, At: q.now()})
		}
		if last < 0 {
			close(q.watchBegan)
		}
		last = v
	}
}
