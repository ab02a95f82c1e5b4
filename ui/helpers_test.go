package ui

import (
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"jobdesk/app"
	"jobdesk/engine/job"
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
func (h *harness) waitFor(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		h.pump()
		if cond() {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
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
