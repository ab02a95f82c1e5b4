// Package bridge carries the engine's events to the window: it follows the app's event stream,
// gathers what arrives between two flushes (the latest progress of each job, the ids whose status
// changed, whether another process wrote), reads the changed jobs off the UI goroutine, and hands
// the window one Update at a time through Do (fyne.Do in the window). Screens never read the event
// stream themselves; they apply Updates.
package bridge

import (
	"context"
	"errors"
	"sync"
	"time"

	"jobdesk/engine/job"
)

// FlushEvery is how often gathered engine events reach the window: ten refreshes a second look
// live and cost little however many progress reports arrive.
const FlushEvery = 100 * time.Millisecond

// maxGets is how many changed jobs a flush reads one by one; beyond it, rereading the loaded
// page at once is cheaper.
const maxGets = 200

// reloadEvery spaces rereads caused by other writers: the database reports every commit,
// including this process's own, whose events already reach the window.
const reloadEvery = time.Second

// Source is what the bridge reads: the app's event stream, and jobs and counts by id.
type Source interface {
	Subscribe(buffer int) (<-chan job.Event, func())
	Get(ctx context.Context, id int64) (job.Job, error)
	Counts(ctx context.Context) (map[job.Status]int, error)
}

// Update is one flush's worth of changes, read off the UI goroutine and applied on it.
type Update struct {
	Progress []job.Event        // the latest progress of jobs whose status did not change
	Jobs     []job.Job          // jobs whose status changed, as read after the change
	Gone     []int64            // jobs that no longer exist
	Counts   map[job.Status]int // the counts after a status change (nil: unchanged)
}

// Bridge follows one event stream for one window.
type Bridge struct {
	src Source
	// Do runs a function on the UI goroutine (fyne.Do in the window).
	do func(func())
	// apply receives each Update on the UI goroutine.
	apply func(Update)
	// reload rereads everything the window shows (many changes at once, another writer); it runs
	// on the bridge's goroutine and posts its own result.
	reload func()

	lastReload time.Time // when the loop last called reload (its goroutine only)

	childMu  sync.Mutex
	children map[int64]struct{}
}

// New returns a bridge reading src, applying updates with apply on the goroutine do runs, and
// calling reload when the whole page must be read again.
func New(src Source, do func(func()), apply func(Update), reload func()) *Bridge {
	return &Bridge{src: src, do: do, apply: apply, reload: reload, children: map[int64]struct{}{}}
}

// Listen subscribes to the engine's event stream now and returns the loop that follows it until
// ctx ends, flushing gathered events every FlushEvery, and a status change within a quarter of
// that. A caller that reads the jobs after Listen returns misses no change made in between.
func (b *Bridge) Listen() func(ctx context.Context) {
	events, stop := b.src.Subscribe(8192)
	return func(ctx context.Context) {
		defer stop()
		b.follow(ctx, events)
	}
}

func (b *Bridge) follow(ctx context.Context, events <-chan job.Event) {
	p := NewPending()
	tick := time.NewTicker(FlushEvery)
	defer tick.Stop()
	var last time.Time        // the last flush that had something to show
	var soon <-chan time.Time // a status change's flush, due a quarter period after the last
	flush := func() {
		b.Flush(ctx, p)
		last, soon = time.Now(), nil
	}
	for {
		select {
		case <-ctx.Done():
			return
		case e := <-events:
			p.Add(e)
			// A status change shows within a quarter period instead of at the next tick: at
			// once after a quiet spell, else a quarter period after the last flush, so a busy
			// stream flushes at most four times a period. Progress waits for the tick.
			if e.Kind == job.EventProgress || e.JobID == 0 || soon != nil {
				continue
			}
			if wait := FlushEvery/4 - time.Since(last); wait > 0 {
				soon = time.After(wait)
			} else {
				flush()
			}
		case <-soon:
			flush()
		case <-tick.C:
			if !p.Empty() {
				flush()
			}
		}
	}
}

// Flush turns gathered events into one Update: it reads the jobs whose status changed (or the
// whole loaded page when many changed or another process wrote) and posts the result to the UI.
func (b *Bridge) Flush(ctx context.Context, p *Pending) {
	progress, changed, reload := p.Take()
	if reload && time.Since(b.lastReload) < reloadEvery && len(changed) <= maxGets {
		p.Add(job.Event{Kind: job.EventExternalChange}) // keep it for a later flush
		reload = false
	}
	if reload || len(changed) > maxGets {
		b.lastReload = time.Now()
		b.reload()
		changed = nil
	}
	if len(progress) == 0 && len(changed) == 0 {
		return
	}
	var up Update
	for _, e := range progress {
		if _, alsoChanged := changed[e.JobID]; !alsoChanged && !b.IsChild(e.JobID) {
			up.Progress = append(up.Progress, e)
		}
	}
	for id := range changed {
		if b.IsChild(id) {
			continue
		}
		j, err := b.src.Get(ctx, id)
		switch {
		case err == nil && j.ParentID != 0:
			b.markChild(id)
		case err == nil:
			up.Jobs = append(up.Jobs, j)
		case errors.Is(err, context.Canceled):
			return
		default:
			up.Gone = append(up.Gone, id)
		}
	}
	if len(changed) > 0 {
		if c, err := b.src.Counts(ctx); err == nil {
			up.Counts = c
		}
	}
	if len(up.Progress) == 0 && len(up.Jobs) == 0 && len(up.Gone) == 0 && up.Counts == nil {
		return
	}
	b.do(func() { b.apply(up) })
}

// IsChild reports whether id is known to be a fan-out child, which the list never shows.
func (b *Bridge) IsChild(id int64) bool {
	b.childMu.Lock()
	defer b.childMu.Unlock()
	_, ok := b.children[id]
	return ok
}

func (b *Bridge) markChild(id int64) {
	b.childMu.Lock()
	defer b.childMu.Unlock()
	b.children[id] = struct{}{}
}
