package ui

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"fyne.io/fyne/v2"

	"jobdesk/app"
	"jobdesk/engine/job"
)

// submitN submits a small checksum job for each name and returns the jobs (not run).
func submitN(t *testing.T, h *harness, names ...string) []job.Job {
	t.Helper()
	var paths []string
	for _, n := range names {
		fileSeq++
		p, _ := writeFile(t, n, 64+fileSeq) // different bytes: the same bytes are the same job
		paths = append(paths, p)
	}
	jobs, err := h.app.Submit(context.Background(), paths, app.SubmitOptions{Type: "checksum"})
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

// fileSeq makes each file submitN writes a different size.
var fileSeq int

func (h *harness) key(name fyne.KeyName) {
	h.ui.Window.Canvas().OnTypedKey()(&fyne.KeyEvent{Name: name})
}

func (h *harness) shortcut(s fyne.Shortcut) {
	h.ui.Window.Canvas().(fyne.Shortcutable).TypedShortcut(s)
}

// TestKeyboard: arrows move the selection, Delete asks before cancelling, Esc closes the dialog
// on top (and only it), Ctrl+F goes to the search box, Ctrl+O opens the file picker, Ctrl+R
// retries a finished job that can run again.
func TestKeyboard(t *testing.T) {
	h := newHarness(t, LangJa)
	u := h.ui
	jobs := submitN(t, h, "a.bin", "b.bin", "c.bin")
	u.Start()
	h.waitFor("three rows", func() bool { return len(u.model.rows) == 3 })
	h.key(fyne.KeyDown)
	if u.selected != jobs[2].ID {
		t.Fatalf("Down selected %d, want the newest %d", u.selected, jobs[2].ID)
	}
	h.key(fyne.KeyDown)
	h.key(fyne.KeyDown)
	h.key(fyne.KeyDown)
	if u.selected != jobs[0].ID {
		t.Fatalf("Down ×4 selected %d, want the last %d", u.selected, jobs[0].ID)
	}
	h.key(fyne.KeyUp)
	if u.selected != jobs[1].ID {
		t.Fatalf("Up selected %d, want %d", u.selected, jobs[1].ID)
	}

	// Delete on a waiting job asks first; Esc closes the question and cancels nothing.
	h.key(fyne.KeyDelete)
	if !u.hasOverlay() {
		t.Fatal("Delete did not ask before cancelling")
	}
	h.key(fyne.KeyDelete) // a second Delete while asked does nothing more
	h.key(fyne.KeyEscape)
	if u.hasOverlay() {
		t.Fatal("Esc did not close the question")
	}
	if j, _ := h.app.Get(u.ctx, jobs[1].ID); j.Status != job.Pending {
		t.Fatalf("job %s after Esc", j.Status)
	}

	// Two dialogs: Esc closes the newest, then the other.
	u.showSettings()
	u.showMetrics()
	h.key(fyne.KeyEscape)
	if !u.hasOverlay() {
		t.Fatal("Esc closed both dialogs")
	}
	h.key(fyne.KeyEscape)
	if u.hasOverlay() {
		t.Fatal("the second Esc left a dialog")
	}

	h.shortcut(shortcutSearch)
	if u.Window.Canvas().Focused() != u.search {
		t.Fatal("Ctrl+F did not focus the search box")
	}
	u.Window.Canvas().Unfocus()
	h.shortcut(shortcutOpen)
	if !u.hasOverlay() {
		t.Fatal("Ctrl+O did not open the file picker")
	}
	h.key(fyne.KeyEscape)

	// Ctrl+R retries a cancelled job.
	if err := h.app.Cancel(u.ctx, jobs[1].ID); err != nil {
		t.Fatal(err)
	}
	h.waitFor("the cancelled row", h.statusIs(jobs[1].ID, job.Cancelled))
	h.shortcut(shortcutRetry)
	h.waitFor("the retried row", h.statusIs(jobs[1].ID, job.Pending))
}

// TestSearchAndFilters: the search box finds by name part and by number, the type and date
// filters narrow the list, and a new job that does not match stays out of it.
func TestSearchAndFilters(t *testing.T) {
	h := newHarness(t, LangEn)
	u := h.ui
	jobs := submitN(t, h, "請求書-4月.bin", "売上.bin", "invoice-May.bin")
	seen := h.recordApplied()
	u.Start()
	h.waitFor("three rows", func() bool { return len(u.model.rows) == 3 })
	u.search.SetText("請求書")
	h.waitFor("one match", func() bool { return len(u.model.rows) == 1 && u.model.rows[0].ID == jobs[0].ID })
	u.search.SetText("INVOICE")
	h.waitFor("case-insensitive", func() bool { return len(u.model.rows) == 1 && u.model.rows[0].ID == jobs[2].ID })
	u.search.SetText("#" + itoa64(jobs[1].Number))
	h.waitFor("by number", func() bool { return len(u.model.rows) == 1 && u.model.rows[0].ID == jobs[1].ID })
	u.search.SetText("")
	h.waitFor("all again", func() bool { return len(u.model.rows) == 3 })
	u.typeSel.SetSelected(u.typeText("csv"))
	// The list empties at once; the reread has come back when the counts follow the type too.
	h.waitFor("no csv jobs", func() bool { return len(u.model.rows) == 0 && u.model.total() == 0 })
	if u.model.query.typ != "csv" || !u.empty.Visible() {
		t.Fatalf("type filter %q, empty state shown %v", u.model.query.typ, u.empty.Visible())
	}
	u.typeSel.SetSelectedIndex(0)
	u.dateSel.SetSelectedIndex(1) // today
	h.waitFor("today's jobs", func() bool { return len(u.model.rows) == 3 })
	u.search.SetText("売上")
	h.waitFor("one match", func() bool { return len(u.model.rows) == 1 })
	more := submitN(t, h, "other.bin")
	h.waitFor("the window to take in the new job", seen.sawJob(more[0].ID, len(jobs)+1))
	if _, shown := u.model.index[more[0].ID]; shown {
		t.Fatal("a new job that does not match the search entered the list")
	}
}

func itoa64(n int64) string { return fmtInt(n) }

// TestProgressHoldsAfterRestart: a job under way that reports a lower progress (it started
// again) keeps showing the highest until it passes it; once finished and retried it starts over.
func TestProgressHoldsAfterRestart(t *testing.T) {
	m := newJobModel()
	j := job.Job{ID: 1, Status: job.Running, Progress: 34}
	m.replace([]job.Job{j}, false)
	m.applyProgress(job.Event{JobID: 1, Status: job.Running, Progress: 5})
	if m.rows[0].Progress != 34 {
		t.Fatalf("progress went back to %v", m.rows[0].Progress)
	}
	m.applyJob(job.Job{ID: 1, Status: job.Pending, Progress: 5})
	if m.rows[0].Progress != 34 {
		t.Fatalf("reread job went back to %v", m.rows[0].Progress)
	}
	m.applyProgress(job.Event{JobID: 1, Status: job.Running, Progress: 50})
	if m.rows[0].Progress != 50 {
		t.Fatalf("progress %v, want 50", m.rows[0].Progress)
	}
	m.applyJob(job.Job{ID: 1, Status: job.Failed, Progress: 60})
	m.applyJob(job.Job{ID: 1, Status: job.Pending, Progress: 0})
	if m.rows[0].Progress != 0 {
		t.Fatalf("a retried job shows %v, want 0", m.rows[0].Progress)
	}
}

// TestGoalDeadlineHint: the deadline's placeholder is a hint, not a date that looks entered.
func TestGoalDeadlineHint(t *testing.T) {
	h := newHarness(t, LangJa)
	u := h.ui
	u.showGoalForm()
	for _, e := range findAll[*keyEntry](u.Window.Canvas().Overlays().Top()) {
		if _, err := parseDeadline(e.PlaceHolder); err == nil && e.PlaceHolder != "" {
			t.Fatalf("placeholder %q reads as a date", e.PlaceHolder)
		}
	}
}

func fmtInt(n int64) string { return strconv.FormatInt(n, 10) }

// press sends a key as the desktop driver does: to the focused widget when one has the focus,
// else to the window's canvas.
func (h *harness) press(name fyne.KeyName) {
	e := &fyne.KeyEvent{Name: name}
	if f := h.ui.Window.Canvas().Focused(); f != nil {
		f.TypedKey(e)
		return
	}
	h.ui.Window.Canvas().OnTypedKey()(e)
}

// TestKeysWhileTheListHasFocus: once a row was clicked (the list has the keyboard focus), ↑ and
// ↓ still move the selection, Delete still offers to cancel, and the selected row shows a focus
// ring while the list has the focus.
func TestKeysWhileTheListHasFocus(t *testing.T) {
	h := newHarness(t, LangJa)
	u := h.ui
	jobs := submitN(t, h, "a.bin", "b.bin", "c.bin")
	u.Start()
	h.waitFor("three rows", func() bool { return len(u.model.rows) == 3 })
	u.list.Select(0) // a click: the row is selected and the list takes the focus
	u.Window.Canvas().Focus(u.list)
	if u.selected != jobs[2].ID {
		t.Fatalf("selected %d, want %d", u.selected, jobs[2].ID)
	}
	h.press(fyne.KeyDown)
	if u.selected != jobs[1].ID {
		t.Fatalf("Down with the list focused selected %d, want %d", u.selected, jobs[1].ID)
	}
	h.press(fyne.KeyDown)
	h.press(fyne.KeyUp)
	if u.selected != jobs[1].ID {
		t.Fatalf("Down, Up selected %d, want %d", u.selected, jobs[1].ID)
	}
	if r := h.row(jobs[1].ID); r == nil || !r.ring.Visible() {
		t.Fatal("the selected row of the focused list shows no focus ring")
	}
	if r := h.row(jobs[2].ID); r == nil || r.ring.Visible() {
		t.Fatal("a row that is not selected shows a focus ring")
	}
	h.press(fyne.KeyDelete)
	if !u.hasOverlay() {
		t.Fatal("Delete with the list focused did not offer to cancel")
	}
	h.key(fyne.KeyEscape)
	u.Window.Canvas().Unfocus()
	if r := h.row(jobs[1].ID); r == nil || r.ring.Visible() {
		t.Fatal("the focus ring stayed after the list lost the focus")
	}
}

// TestDialogsKeepTheKeys: the goal dialog opens with its title field focused (typed text lands
// there), and Esc closes a dialog even while one of its fields has the focus.
func TestDialogsKeepTheKeys(t *testing.T) {
	h := newHarness(t, LangJa)
	u := h.ui
	c := u.Window.Canvas()
	u.showGoalForm()
	f, ok := c.Focused().(*keyEntry)
	if !ok || f.PlaceHolder != u.tr.T("goal.title_hint") {
		t.Fatalf("the goal dialog focused %T, want its title field", c.Focused())
	}
	c.Focused().TypedRune('売')
	if f.Text != "売" {
		t.Fatalf("typed text went elsewhere: the title reads %q", f.Text)
	}
	h.press(fyne.KeyEscape)
	if u.hasOverlay() {
		t.Fatal("Esc in the goal's title left the dialog open")
	}
	if c.Focused() != nil {
		t.Fatalf("the closed dialog's field %T kept the focus (and the window's shortcuts)", c.Focused())
	}

	u.showSettings()
	u.settingsDlg.tabs.SelectIndex(2) // CSV
	c.Focus(u.settingsDlg.percent)
	if c.Focused() != u.settingsDlg.percent {
		t.Fatal("the settings' tolerance field took no focus")
	}
	h.press(fyne.KeyEscape)
	if u.hasOverlay() {
		t.Fatal("Esc in a settings field left the settings open")
	}
}

// TestSearchUpdatesCounts: while a search narrows the list, the counts beside the status filter
// count what it keeps; cleared, every job again.
func TestSearchUpdatesCounts(t *testing.T) {
	h := newHarness(t, LangJa)
	u := h.ui
	submitN(t, h, "請求書-4月.bin", "売上.bin", "売上-5月.bin")
	u.Start()
	h.waitFor("three rows", func() bool { return len(u.model.rows) == 3 })
	total := func() int {
		n := 0
		for _, c := range u.model.counts {
			n += c
		}
		return n
	}
	u.search.SetText("売上")
	h.waitFor("two matches counted", func() bool { return len(u.model.rows) == 2 && total() == 2 })
	if !strings.Contains(u.allBtn.Text, "2") {
		t.Fatalf("the All chip reads %q during a search with 2 matches", u.allBtn.Text)
	}
	u.refreshEngineInfo()
	if want := u.tr.T("status.engine", "0", "3"); u.engineInfo.Text != want {
		t.Fatalf("the status bar reads %q during a search, want every job's %q", u.engineInfo.Text, want)
	}
	u.search.SetText("")
	h.waitFor("all three counted", func() bool { return len(u.model.rows) == 3 && total() == 3 })
}
