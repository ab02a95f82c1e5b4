package queue

import (
	"context"
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

// signal wakes every consumer waiting for due jobs.
func (q *Queue) signal() {
	q.wakeMu.Lock()
	for _, ch := range q.wakeups {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	q.wakeMu.Unlock()
}

// Wait blocks until job id is final (or ctx ends) and returns it.
func (q *Queue) Wait(ctx context.Context, id int64) (job.Job, error) {
	events, stop := q.Subscribe(64)
	defer stop()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		j, err := q.Get(ctx, id)
		if err != nil || j.Status.Final() {
			return j, err
		}
	wait:
		for {
			select {
			case <-ctx.Done():
				return j, ctx.Err()
			case e := <-events:
				if e.JobID == id && (e.Status.Final() || e.Kind == job.EventRedriven) || e.Kind == job.EventExternalChange {
					break wait
				}
			case <-tick.C:
				break wait
			}
		}
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
			q.signal()
			q.publish(job.Event{Kind: job.EventExternalChange, At: time.Now()})
		}
		last = v
	}
}
