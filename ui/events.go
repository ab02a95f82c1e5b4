package ui

import (
	"context"
	"errors"
	"sync"
	"time"

	"jobdesk/engine/job"
)

// flushEvery is how often gathered engine events reach the window: ten refreshes a second look
// live and cost little however many progress reports arrive.
const flushEvery = 100 * time.Millisecond

// maxGets is how many changed jobs a flush reads one by one; beyond it, rereading the loaded
// page at once is cheaper.
const maxGets = 200

// reloadEvery spaces rereads caused by other writers: the database reports every commit,
// including this process's own, whose events already reach the window.
const reloadEvery = time.Second

// pending gathers engine events between two flushes: the latest progress of each job, the ids
// whose status changed, and whether another process changed the database.
type pending struct {
	mu       sync.Mutex
	progress map[int64]job.Event
	changed  map[int64]struct{}
	reload   bool
}

func newPending() *pending {
	return &pending{progress: map[int64]job.Event{}, changed: map[int64]struct{}{}}
}

// add records one event.
func (p *pending) add(e job.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case e.Kind == job.EventExternalChange || e.JobID == 0:
		p.reload = true
	case e.Kind == job.EventProgress:
		p.progress[e.JobID] = e
	default:
		p.changed[e.JobID] = struct{}{}
	}
}

// empty reports whether nothing was gathered since the last take.
func (p *pending) empty() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.progress) == 0 && len(p.changed) == 0 && !p.reload
}

// take returns what was gathered and starts afresh.
func (p *pending) take() (progress map[int64]job.Event, changed map[int64]struct{}, reload bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	progress, changed, reload = p.progress, p.changed, p.reload
	if len(progress) > 0 {
		p.progress = map[int64]job.Event{}
	}
	if len(changed) > 0 {
		p.changed = map[int64]struct{}{}
	}
	p.reload = false
	return progress, changed, reload
}

// update is one flush's worth of changes, read off the UI thread and applied on it.
type update struct {
	progress []job.Event
	jobs     []job.Job
	gone     []int64
	counts   map[job.Status]int
}

// watch follows the engine's event stream until ctx ends, flushing gathered events every
// flushEvery, and a status change within a quarter of that.
func (u *UI) watch(ctx context.Context) {
	events, stop := u.app.Subscribe(8192)
	defer stop()
	p := newPending()
	tick := time.NewTicker(flushEvery)
	defer tick.Stop()
	var last time.Time        // the last flush that had something to show
	var soon <-chan time.Time // a status change's flush, due a quarter period after the last
	flush := func() {
		u.flush(ctx, p)
		last, soon = time.Now(), nil
	}
	for {
		select {
		case <-ctx.Done():
			return
		case e := <-events:
			p.add(e)
			// A status change shows within a quarter period instead of at the next tick: at
			// once after a quiet spell, else a quarter period after the last flush, so a busy
			// stream flushes at most four times a period. Progress waits for the tick.
			if e.Kind == job.EventProgress || e.JobID == 0 || soon != nil {
				continue
			}
			if wait := flushEvery/4 - time.Since(last); wait > 0 {
				soon = time.After(wait)
			} else {
				flush()
			}
		case <-soon:
			flush()
		case <-tick.C:
			if !p.empty() {
				flush()
			}
		}
	}
}

// flush turns gathered events into one update: it reads the jobs whose status changed (or the
// whole loaded page when many changed or another process wrote) and posts the result to the UI.
func (u *UI) flush(ctx context.Context, p *pending) {
	progress, changed, reload := p.take()
	if reload && time.Since(u.lastReload) < reloadEvery && len(changed) <= maxGets {
		p.add(job.Event{Kind: job.EventExternalChange}) // keep it for a later flush
		reload = false
	}
	if reload || len(changed) > maxGets {
		u.lastReload = time.Now()
		u.reload()
		changed = nil
	}
	if len(progress) == 0 && len(changed) == 0 {
		return
	}
	var up update
	for _, e := range progress {
		if _, alsoChanged := changed[e.JobID]; !alsoChanged && !u.isChild(e.JobID) {
			up.progress = append(up.progress, e)
		}
	}
	for id := range changed {
		if u.isChild(id) {
			continue
		}
		j, err := u.app.Get(ctx, id)
		switch {
		case err == nil && j.ParentID != 0:
			u.markChild(id)
		case err == nil:
			up.jobs = append(up.jobs, j)
		case errors.Is(err, context.Canceled):
			return
		default:
			up.gone = append(up.gone, id)
		}
	}
	if len(changed) > 0 {
		if c, err := u.app.Counts(ctx); err == nil {
			up.counts = c
		}
	}
	if len(up.progress) == 0 && len(up.jobs) == 0 && len(up.gone) == 0 && up.counts == nil {
		return
	}
	u.do(func() { u.apply(up) })
}

// isChild reports whether id is known to be a fan-out child, which the list never shows.
func (u *UI) isChild(id int64) bool {
	u.childMu.Lock()
	defer u.childMu.Unlock()
	_, ok := u.children[id]
	return ok
}

func (u *UI) markChild(id int64) {
	u.childMu.Lock()
	defer u.childMu.Unlock()
	u.children[id] = struct{}{}
}

// apply puts an update into the model and refreshes what it touched. UI goroutine only.
func (u *UI) apply(up update) {
	changed := false
	for _, e := range up.progress {
		if u.model.applyProgress(e) {
			changed = true
		}
	}
	for _, j := range up.jobs {
		if c, _ := u.model.applyJob(j); c {
			changed = true
		}
	}
	for _, id := range up.gone {
		if u.model.removeJob(id) {
			changed = true
		}
	}
	if up.counts != nil {
		u.model.counts = up.counts
		u.refreshFilters()
	}
	if changed {
		u.refreshList()
	}
	u.noteEnded(up.jobs)
	if u.selected != 0 {
		for _, e := range up.progress {
			if e.JobID == u.selected {
				if p, ok := u.model.peak[e.JobID]; ok && p > e.Progress {
					e.Progress = p
				}
				u.detail.showProgress(e)
			}
		}
		for _, j := range up.jobs {
			if j.ID == u.selected {
				u.loadDetail(j.ID)
			}
		}
		u.followSelected()
	}
}

// followSelected rereads the detail pane when the list shows its job in another status than the
// pane does, whichever path (event, reload) brought the news.
func (u *UI) followSelected() {
	if i, ok := u.model.index[u.selected]; ok && u.detail.shown != "" && u.model.rows[i].Status != u.detail.shown {
		u.loadDetail(u.selected)
	}
}

// reload rereads the loaded page of the list and the counts (filter change, another process's
// writes, many changes at once) and posts them to the UI.
func (u *UI) reload() {
	u.mu.Lock()
	filter, query, n := u.loadFilter, u.loadQuery, u.loadedN
	u.mu.Unlock()
	n = max(n, pageSize)
	ctx, cancel := context.WithTimeout(u.ctx, 10*time.Second)
	defer cancel()
	rows, err := u.fetch(ctx, filter, query, n+1, 0) // one more tells whether more exist
	if err != nil {
		u.do(func() { u.setStatusError(err) })
		return
	}
	counts, _ := u.app.Counts(ctx)
	u.do(func() {
		if u.model.filter != filter || u.model.query != query {
			return // the filter changed meanwhile; its own reload follows
		}
		more := len(rows) > n
		if more {
			rows = rows[:n]
		}
		u.model.replace(rows, more)
		u.noteEnded(rows)
		if counts != nil {
			u.model.counts = counts
		}
		u.noteLoaded()
		u.refreshFilters()
		u.refreshList()
		if u.selected != 0 {
			u.followSelected()
		}
	})
}
