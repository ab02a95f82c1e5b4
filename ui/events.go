package ui

import (
	"context"
	"time"

	"jobdesk/engine/job"
	"jobdesk/ui/bridge"
)

// bridge returns the window's engine-to-widget bridge, made on first use (after tests have
// chosen u.do).
func (u *UI) bridge() *bridge.Bridge {
	u.bridgeOnce.Do(func() { u.events = bridge.New(listSource{u.app, u}, func(f func()) { u.do(f) }, u.apply, u.reload) })
	return u.events
}

// apply puts an update into the model and refreshes what it touched. UI goroutine only.
func (u *UI) apply(up bridge.Update) {
	changed := false
	u.noteTimeLeft(up)
	for _, e := range up.Progress {
		if u.model.applyProgress(e) {
			changed = true
		}
	}
	for _, j := range up.Jobs {
		if c, _ := u.model.applyJob(j); c {
			changed = true
		}
	}
	for _, id := range up.Gone {
		if u.model.removeJob(id) {
			changed = true
		}
	}
	if up.Counts != nil {
		u.model.counts = up.Counts
		u.refreshFilters()
	}
	if changed {
		u.refreshList()
	}
	u.noteEnded(up.Jobs)
	if u.selected != 0 {
		for _, e := range up.Progress {
			if e.JobID == u.selected {
				if p, ok := u.model.peak[e.JobID]; ok && p > e.Progress {
					e.Progress = p
				}
				u.detail.showProgress(e)
			}
		}
		for _, j := range up.Jobs {
			if j.ID == u.selected {
				u.detail.load(j.ID)
			}
		}
		u.followSelected()
	}
}

// followSelected rereads the detail pane when the list shows its job in another status than the
// pane does, whichever path (event, reload) brought the news.
func (u *UI) followSelected() {
	if i, ok := u.model.index[u.selected]; ok && u.detail.shown != "" && u.model.rows[i].Status != u.detail.shown {
		u.detail.load(u.selected)
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
	counts, _ := u.listCounts(ctx)
	u.do(func() {
		if u.model.filter != filter || u.model.query != query {
			return // the filter changed meanwhile; its own reload follows
		}
		more := len(rows) > n
		if more {
			rows = rows[:n]
		}
		u.followTimeLeft(rows)
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

// timeLeftEvery is how often the time-left estimates are worked out again between progress
// reports: a countdown moves, and a job that stands still loses its estimate.
const timeLeftEvery = time.Second

// noteTimeLeft feeds an update's progress and status changes to the time-left estimator: the
// progress reports of jobs under way, a job that (re)started with its progress as read; the
// others (ended, waiting again, gone) are forgotten. UI goroutine only.
func (u *UI) noteTimeLeft(up bridge.Update) {
	now := u.eta.now()
	for _, e := range up.Progress {
		if e.Status == job.Running {
			u.eta.observeAt(e.JobID, e.Progress, now)
		}
	}
	for _, j := range up.Jobs {
		if j.Status == job.Running {
			u.eta.observeAt(j.ID, j.Progress, now)
		} else {
			u.eta.forget(j.ID)
		}
	}
	for _, id := range up.Gone {
		u.eta.forget(id)
	}
}

// followTimeLeft notes the running jobs of a reread page the estimator does not follow yet
// (the window opened on them) and forgets the loaded jobs that no longer run. A reread's
// progress may be older than the reports already seen, so a followed job keeps its marks.
// UI goroutine only.
func (u *UI) followTimeLeft(rows []job.Job) {
	for _, j := range rows {
		switch {
		case j.Status != job.Running:
			u.eta.forget(j.ID)
		case !u.eta.follows(j.ID):
			u.eta.observe(j.ID, j.Progress)
		}
	}
}

// tickTimeLeft works the time-left estimates out again every timeLeftEvery until ctx ends.
func (u *UI) tickTimeLeft(ctx context.Context) {
	t := time.NewTicker(timeLeftEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			u.do(u.refreshTimeLeft)
		}
	}
}

// refreshTimeLeft redraws the list's rows and the detail when a job's time left reads
// differently now (a countdown moved, an estimate appeared or went). UI goroutine only.
func (u *UI) refreshTimeLeft() {
	if !u.eta.tick(u.tr) {
		return
	}
	if u.list != nil {
		u.list.Refresh()
	}
	if u.detail != nil {
		u.detail.showTimeLeft()
	}
}
