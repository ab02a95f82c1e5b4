package ui

import (
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"jobdesk/app"
	"jobdesk/engine/job"
	"jobdesk/ui/bridge"
)

// harness is a real window on a real App (SQLite file in t.TempDir()) driven by fyne's test
// driver. Work the UI would do on its own goroutine through fyne.Do is queued instead and run by
// pump on the test's goroutine, so the test and the UI never touch widgets at the same time.
type harness struct {
	t     testing.TB
	app   *app.App
	ui    *UI
	calls chan func()
}

func newHarness(t testing.TB, lang string) *harness {
	t.Helper()
	fa := test.NewTempApp(t)
	fa.Preferences().SetString(prefLanguage, lang)
	// Two workers, as on a two-core office laptop: every family is registered, and the
	// checksum type must still get a slot beside the types with their own limits.
	a, err := app.Open(app.Config{DataDir: t.TempDir(), Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, app: a, calls: make(chan func(), 1<<14)}
	u := New(fa, a)
	u.do = func(f func()) {
		select {
		case h.calls <- f:
		case <-u.ctx.Done():
		}
	}
	h.ui = u
	u.Window.Resize(fyne.NewSize(1180, 760))
	t.Cleanup(func() {
		u.stop()
		a.Close()
	})
	return h
}

// pump runs what the background goroutines handed to the UI so far.
func (h *harness) pump() {
	for {
		select {
		case f := <-h.calls:
			f()
		default:
			return
		}
	}
}

// waitFor pumps until cond holds, failing after a generous deadline (a hang, not a speed limit).
// Between two looks it waits for the next piece of UI work, which is what changes what cond
// reads; the short poll covers conditions read from outside the UI (the database, a process).
func (h *harness) waitFor(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.NewTimer(60 * time.Second)
	defer deadline.Stop()
	poll := time.NewTicker(5 * time.Millisecond)
	defer poll.Stop()
	for {
		h.pump()
		if cond() {
			return
		}
		select {
		case f := <-h.calls:
			f()
		case <-poll.C:
		case <-deadline.C:
			h.pump()
			if cond() {
				return
			}
			h.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// applied is what the window took in from the engine's event stream, recorded on the UI
// goroutine (the test's, through pump): the jobs its updates carried, and how many jobs there
// were in all when the latest reread of the whole list that the stream asked for read them.
type applied struct {
	jobs     map[int64]bool
	reloadOf int
}

// sawJob returns a condition: the window has taken in job id, the total-th job, either carried by
// an update or in a reread that counted total jobs or more.
func (a *applied) sawJob(id int64, total int) func() bool {
	return func() bool { return a.jobs[id] || a.reloadOf >= total }
}

// recordApplied makes the window's event bridge record what it applies; call it before Start.
func (h *harness) recordApplied() *applied {
	u := h.ui
	a := &applied{jobs: map[int64]bool{}}
	u.bridgeOnce.Do(func() {
		apply := func(up bridge.Update) {
			u.apply(up)
			for _, j := range up.Jobs {
				a.jobs[j.ID] = true
			}
		}
		reload := func() {
			u.reload() // posts its result through u.do before it returns
			u.mu.Lock()
			n := 0
			for _, c := range u.allCounts { // as the reread read them
				n += c
			}
			u.mu.Unlock()
			u.do(func() { a.reloadOf = max(a.reloadOf, n) })
		}
		u.events = bridge.New(listSource{u.app, u}, func(f func()) { u.do(f) }, apply, reload)
	})
	return a
}

// row returns the rendered list row showing job id, or nil when none is on screen.
func (h *harness) row(id int64) *jobRow {
	for _, o := range test.LaidOutObjects(h.ui.Window.Canvas().Content()) {
		if r, ok := o.(*jobRow); ok && r.Visible() && r.id == id && r.status != "" {
			if i, ok := h.ui.model.index[id]; ok && i >= 0 {
				return r
			}
		}
	}
	return nil
}

// rowState is what a person reads on a row.
type rowState struct {
	status   string
	progress float64
	bar      bool // the progress bar is shown
	message  string
	cancelOn bool
	retryOn  bool
}

func (h *harness) rowState(id int64) (rowState, bool) {
	r := h.row(id)
	if r == nil {
		return rowState{}, false
	}
	return rowState{r.badge.text.Text, r.bar.Value, r.bar.Visible(), r.msg.Text, !r.cancel.Disabled(), !r.retry.Disabled()}, true
}

// statusIs returns a condition: job id's row shows status s.
func (h *harness) statusIs(id int64, s job.Status) func() bool {
	return func() bool {
		st, ok := h.rowState(id)
		return ok && st.status == h.ui.statusText(s)
	}
}
