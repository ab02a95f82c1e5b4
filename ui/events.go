package ui

import (
	"context"
	"time"

	"jobdesk/ui/bridge"
)

// watch follows the engine's event stream until ctx ends, through the bridge, which applies
// each gathered update with apply on the UI goroutine.
func (u *UI) watch(ctx context.Context) {
	u.bridge().Run(ctx)
}

// bridge returns the window's engine-to-widget bridge, made on first use (after tests have
// chosen u.do).
func (u *UI) bridge() *bridge.Bridge {
	u.bridgeOnce.Do(func() { u.events = bridge.New(listSource{u.app, u}, func(f func()) { u.do(f) }, u.apply, u.reload) })
	return u.events
}

// apply puts an update into the model and refreshes what it touched. UI goroutine only.
func (u *UI) apply(up bridge.Update) {
	changed := false
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
