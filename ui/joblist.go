package ui

import (
	"context"
	"time"
	"unicode/utf8"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"jobdesk/engine/job"
)

// jobRow is one line of the job list: type tag, name and current message, status badge, progress
// bar, and Cancel / Retry buttons. widget.List recycles a handful of rows for thousands of jobs.
type jobRow struct {
	widget.BaseWidget
	v       *jobListView
	id      int64
	status  job.Status
	typ     *badge
	badge   *badge
	name    *widget.Label
	msg     *widget.Label
	bar     *widget.ProgressBar
	cancel  *widget.Button
	retry   *widget.Button
	content fyne.CanvasObject
	// ring outlines the selected row while the list has the keyboard focus.
	ring *canvas.Rectangle
}

func newJobRow(v *jobListView) *jobRow {
	r := &jobRow{v: v, typ: newBadge(88, false), badge: newBadge(104, true)}
	r.name = widget.NewLabel("")
	// Clipped, not ellipsized: an ellipsis shapes the text again on every bind and made
	// scrolling through thousands of rows (BenchmarkJobList) about 2.5 times slower.
	r.name.Truncation = fyne.TextTruncateClip
	r.msg = widget.NewLabel("")
	r.msg.SizeName = theme.SizeNameCaptionText
	// The message ends with "…" when cut, and reads in full while the pointer rests on the row.
	r.msg.Truncation = fyne.TextTruncateEllipsis
	r.bar = widget.NewProgressBar()
	r.bar.Max = 100
	r.cancel = widget.NewButtonWithIcon("", theme.CancelIcon(), func() {
		if i, ok := v.model.index[r.id]; ok {
			v.confirmCancel(v.model.rows[i])
		}
	})
	r.retry = widget.NewButtonWithIcon("", theme.ViewRefreshIcon(), func() {
		if i, ok := v.model.index[r.id]; ok {
			v.retryJob(v.model.rows[i])
		}
	})
	r.cancel.Importance = widget.LowImportance
	r.retry.Importance = widget.LowImportance
	text := container.New(&rowText{}, r.name, r.msg)
	r.content = container.New(&rowLayout{}, r.typ.box, text, r.badge.box, r.bar, r.cancel, r.retry)
	r.ring = newFocusRing()
	r.ExtendBaseWidget(r)
	return r
}

// MouseIn shows the row's whole name and message in the status bar while the pointer rests on
// the row and either is cut. (A pop-up would take the pointer's hover away from the row and
// close at once: Fyne sends hover events only to an overlay while one is shown.)
func (r *jobRow) MouseIn(*desktop.MouseEvent) {
	w := r.name.Size().Width - 2*theme.InnerPadding()
	if fyne.MeasureText(r.name.Text, theme.TextSize(), r.name.TextStyle).Width > w ||
		fyne.MeasureText(r.msg.Text, theme.CaptionTextSize(), r.msg.TextStyle).Width > w {
		r.v.bar.showHint(r.name.Text + "  —  " + r.msg.Text)
	}
}

// MouseMoved does nothing: the hint stays while the pointer is on the row.
func (r *jobRow) MouseMoved(*desktop.MouseEvent) {}

// MouseOut puts the status bar back.
func (r *jobRow) MouseOut() { r.v.bar.hideHint() }

// CreateRenderer draws the row's content.
func (r *jobRow) CreateRenderer() fyne.WidgetRenderer {
	return widget.NewSimpleRenderer(container.NewStack(r.content, r.ring))
}

// set shows job j in the row.
func (r *jobRow) set(j job.Job) {
	tr := r.v.tr
	r.id, r.status = j.ID, j.Status
	r.typ.set(typeLabel(tr, j.Type), typeColor)
	r.badge.set(statusLabel(tr, j.Status), statusColor(j.Status))
	name := j.Name
	if name == "" {
		name = jobNumber(j)
	}
	if r.name.Text != name {
		fitName(r.name, name, r.name.Size().Width)
	}
	left := ""
	if j.Status == job.Running && r.v.timeLeft != nil {
		left = r.v.timeLeft(j.ID)
	}
	msg := rowMessage(tr, j, left)
	if r.msg.Text != msg {
		r.msg.SetText(msg)
	}
	v, shown := barValue(j)
	setVisible(r.bar, shown)
	if shown && r.bar.Value != v {
		r.bar.SetValue(v)
	}
	setEnabled(r.cancel, canCancel(j))
	setEnabled(r.retry, canRetry(j))
	setVisible(r.ring, r.v.list != nil && r.v.list.focused && j.ID == r.v.selected)
}

// rowMessage is the line under a job's name: its number and submission time, then what became
// of it. A job that ended with an error shows the error; a finished one its outcome (the
// result's summary, else its status), never the last progress report, which is stale once the
// job is done; a job under way shows the engine's latest message, after its time left (left,
// timeleft.go; "" for none), since a narrow list cuts the end of the line first.
func rowMessage(tr *translator, j job.Job, left string) string {
	line := jobNumber(j) + " · " + j.CreatedAt.Local().Format("01/02 15:04")
	if left != "" {
		line += " · " + left
	}
	if tail := rowTail(tr, j); tail != "" {
		line += " · " + tail
	}
	return line
}

func rowTail(tr *translator, j job.Job) string {
	switch {
	case j.Status == job.Cancelled && j.Error != nil:
		return errorSentence(j.Error, tr.lang) // something a person did, not an error: no code
	case j.Error != nil && (j.Status == job.Failed || j.Status == job.TimedOut || j.Status == job.Retrying):
		return string(j.Error.Code) + " " + groupNumbers(errorSentence(j.Error, tr.lang))
	case j.Status.Final():
		return groupNumbers(outcomeText(tr, j))
	}
	return humanMessage(tr, j.Message)
}

// errorSentence is an error's sentence in lang, else in the other language.
func errorSentence(e *job.Error, lang string) string {
	if lang == LangJa && e.MessageJa != "" {
		return e.MessageJa
	}
	if e.Message == "" {
		return e.MessageJa
	}
	return e.Message
}

// barValue is what a job's progress bar shows: 100 once it succeeded, fully or in part; its
// progress while it waits or runs; and no bar at all (shown false) once it ended without
// success, where a "0 %" bar would only suggest it never started.
func barValue(j job.Job) (value float64, shown bool) {
	switch j.Status {
	case job.Succeeded, job.Partial:
		return 100, true
	case job.Failed, job.Cancelled, job.TimedOut:
		return 0, false
	}
	return j.Progress, true
}

// canCancel: a job that has not finished can be cancelled.
func canCancel(j job.Job) bool {
	return j.Status == job.Pending || j.Status == job.Running || j.Status == job.Retrying
}

// canRetry: a finished job that did not fully succeed can be run again — unless it failed in a
// way that depends on its input alone (a damaged or protected file, a wrong header, a bad
// request: inputBound), which running it again cannot change.
func canRetry(j job.Job) bool {
	switch j.Status {
	case job.Cancelled, job.Partial:
		return true
	case job.Failed, job.TimedOut:
		return j.Error == nil || j.Error.Retryable || !inputBound[j.Error.Code]
	}
	return false
}

func setEnabled(b *widget.Button, on bool) {
	if on && b.Disabled() {
		b.Enable()
	} else if !on && !b.Disabled() {
		b.Disable()
	}
}

// Widths of a row's progress bar: its usual width, and the narrowest it gets in a narrow list
// before the type tag gives way.
const (
	barWidth    = 150
	barMinWidth = 72
	// rowTextMin is the width the name and message keep before the bar narrows and the type
	// tag goes: enough for a file name of about twenty characters.
	rowTextMin = 180
)

// rowLayout places a row's parts: type tag, name and message, status badge, progress bar,
// Cancel, Retry; its objects come in that order. The badges, bar and buttons line up in
// columns from row to row; the text takes what is left. In a narrow list (a small window, a
// split dragged left) the bar narrows first and then the type tag is left out, so the file's
// name stays readable.
type rowLayout struct{}

// MinSize is the narrowest row: the text's minimum, the status badge, the narrowest bar and
// the buttons, without the type tag.
func (rowLayout) MinSize(objects []fyne.CanvasObject) fyne.Size {
	pad := theme.Padding()
	w, h := float32(0), float32(0)
	for i, o := range objects {
		ms := o.MinSize()
		h = max(h, ms.Height)
		switch i {
		case 0: // the type tag can go
		case 3:
			w += barMinWidth + pad
		default:
			w += ms.Width + pad
		}
	}
	return fyne.NewSize(w-pad, h)
}

// Layout gives the fixed columns their width from the right edge and the text the rest.
func (rowLayout) Layout(objects []fyne.CanvasObject, size fyne.Size) {
	typ, text, badge, bar, cancel, retry := objects[0], objects[1], objects[2], objects[3], objects[4], objects[5]
	pad := theme.Padding()
	right := badge.MinSize().Width + cancel.MinSize().Width + retry.MinSize().Width + 3*pad
	typW := typ.MinSize().Width + pad
	barW := float32(barWidth)
	if room := size.Width - right - typW - barW - pad; room < rowTextMin {
		barW = max(barMinWidth, barW-(rowTextMin-room))
	}
	showTyp := size.Width-right-typW-barW-pad >= rowTextMin
	setVisible(typ, showTyp)
	if !showTyp {
		typW = 0
	}
	place := func(o fyne.CanvasObject, x, w float32) {
		h := o.MinSize().Height
		o.Move(fyne.NewPos(x, (size.Height-h)/2))
		o.Resize(fyne.NewSize(w, h))
	}
	if showTyp {
		place(typ, 0, typW-pad)
	}
	x := size.Width
	for _, c := range []struct {
		o fyne.CanvasObject
		w float32
	}{{retry, retry.MinSize().Width}, {cancel, cancel.MinSize().Width}, {bar, barW}, {badge, badge.MinSize().Width}} {
		x -= c.w
		place(c.o, x, c.w)
		x -= pad
	}
	text.Move(fyne.NewPos(typW, 0))
	text.Resize(fyne.NewSize(max(0, x-typW), size.Height))
}

// rowText stacks the name over the message, each one line high, both truncated to the width.
type rowText struct{}

// MinSize is the two lines' height; the width may shrink to nothing (text truncates).
func (rowText) MinSize(objects []fyne.CanvasObject) fyne.Size {
	h := float32(0)
	for _, o := range objects {
		h += o.MinSize().Height
	}
	return fyne.NewSize(40, h-theme.Padding()*2)
}

// Layout puts the name on top and the message under it, overlapping their inner padding.
func (rowText) Layout(objects []fyne.CanvasObject, size fyne.Size) {
	y := float32(0)
	for i, o := range objects {
		h := o.MinSize().Height
		if i > 0 {
			y -= theme.Padding() * 2
		}
		o.Move(fyne.NewPos(0, y))
		if l, ok := o.(*widget.Label); ok && i == 0 && l.Size().Width != size.Width {
			fitName(l, l.Text, size.Width) // a new width may cut the name, or no longer
		}
		o.Resize(fyne.NewSize(size.Width, h))
		y += h
	}
}

// fitName shows name in l, a row's name of the given width: ending in "…" when cut (an
// ellipsis only then: shaping one on every bind made scrolling thousands of rows about 2.5
// times slower), clipped otherwise.
func fitName(l *widget.Label, name string, width float32) {
	trunc := fyne.TextTruncateClip
	room := width - 2*theme.InnerPadding()
	// No glyph is wider than the text size: a name that fits at that width needs no measuring.
	if width > 0 && float32(utf8.RuneCountInString(name))*theme.TextSize() > room &&
		fyne.MeasureText(name, theme.TextSize(), l.TextStyle).Width > room {
		trunc = fyne.TextTruncateEllipsis
	}
	if l.Truncation != trunc {
		l.Truncation = trunc
		if l.Text == name {
			l.Refresh()
		}
	}
	if l.Text != name {
		l.SetText(name)
	}
}

// jobListView is the job list screen: the virtualized list of jobs (its rows, the keys it
// keeps), its empty state, the selected job, and the paging of older jobs as it scrolls; and
// the actions its rows and the detail offer on a job (cancel, retry, redrive). The window
// builds its widgets (buildList), keeps one, and wires it to the other screens by callbacks.
type jobListView struct {
	tr    *translator // the window's, set again by buildList when the language changes
	model *jobModel   // the jobs read, shared with the window's event handling

	list      *jobList
	empty     fyne.CanvasObject
	emptyText *widget.Label

	selected int64 // the job shown in the detail pane (0: none)
	selIdx   int   // its row in the list (-1: not loaded)
	loading  bool  // an older page is being read
	revealID int64 // a job just submitted: scrolled into view when its row arrives

	ctx     context.Context
	actions jobActions
	bar     *statusBar // the window's status bar, for what an action did and cut texts

	// do runs a function on the UI goroutine.
	do func(func())
	// fetch reads up to n jobs older than before that the filter and query keep.
	fetch func(ctx context.Context, s job.Status, q listQuery, n int, before int64) ([]job.Job, error)
	// onSelect shows job id in the detail pane.
	onSelect func(id int64)
	// onLoaded publishes the list's filter and size to the event loop.
	onLoaded func()
	// onKey takes the window's keys the list keeps (↑, ↓, Delete).
	onKey func(*fyne.KeyEvent)
	// confirmCancel asks before cancelling a job.
	confirmCancel func(job.Job)
	// showError opens an error dialog; setStatusError says an error in the status bar.
	showError      func(title string, err error)
	setStatusError func(error)
	// timeLeft says about how long job id still takes, "" when that cannot be said (timeleft.go).
	timeLeft func(id int64) string
}

// jobActions is what the job list asks of the app.
type jobActions interface {
	Cancel(ctx context.Context, id int64) error
	Retry(ctx context.Context, id int64) (job.Job, error)
	Redrive(ctx context.Context, id int64) (job.Job, error)
}

// statusLabel is the translated name of a job status.
func statusLabel(tr *translator, s job.Status) string { return tr.T("job.status." + string(s)) }

// typeLabel is the translated name of a job type (the type itself when there is none).
func typeLabel(tr *translator, t string) string {
	if tr.Has("job.type." + t) {
		return tr.T("job.type." + t)
	}
	return t
}

// buildList makes the virtualized job list and its empty state, in tr's language.
func (v *jobListView) buildList(tr *translator) fyne.CanvasObject {
	v.tr = tr
	v.list = newJobList(v,
		func() int { return len(v.model.rows) },
		func() fyne.CanvasObject { return newJobRow(v) },
		func(id widget.ListItemID, o fyne.CanvasObject) {
			if id < 0 || id >= len(v.model.rows) {
				return
			}
			o.(*jobRow).set(v.model.rows[id])
			if v.model.more && id >= len(v.model.rows)-pageSize/5 {
				v.loadMore()
			}
		})
	v.list.OnSelected = func(id widget.ListItemID) {
		before := v.selIdx
		v.selIdx = id
		if id >= 0 && id < len(v.model.rows) && v.model.rows[id].ID != v.selected {
			v.selected = v.model.rows[id].ID
			v.onSelect(v.selected)
		}
		if v.list.focused && before != id { // the list redrew before it said what was selected
			v.list.refreshRow(before)
			v.list.refreshRow(id)
		}
	}
	v.emptyText = widget.NewLabel("")
	v.emptyText.Alignment = fyne.TextAlignCenter
	v.emptyText.Wrapping = fyne.TextWrapWord
	v.empty = container.NewCenter(container.New(&fixedSize{width: 470}, v.emptyText))
	return container.NewStack(v.list, v.empty)
}

// refreshList redraws the visible rows, keeps the selection on the same job, and shows the
// empty state when there is nothing to list.
func (v *jobListView) refreshList() {
	if v.list == nil {
		return
	}
	v.onLoaded()
	v.list.Refresh()
	if v.selected != 0 {
		if i, ok := v.model.index[v.selected]; !ok {
			v.selIdx = -1
			v.list.UnselectAll()
		} else if i != v.selIdx {
			v.selIdx = i
			v.list.Select(i)
		}
	}
	if v.revealID != 0 {
		if i, ok := v.model.index[v.revealID]; ok {
			v.list.ScrollTo(i)
			v.revealID = 0
		}
	}
	if len(v.model.rows) == 0 {
		text := v.tr.T("list.empty")
		if v.model.filter != "" {
			text = v.tr.T("list.empty_filter", statusLabel(v.tr, v.model.filter))
		}
		if v.model.query.active() {
			text = v.tr.T("list.empty_search")
		}
		v.emptyText.Wrapping = wrapFor(text)
		v.emptyText.SetText(text)
		v.empty.Show()
	} else {
		v.empty.Hide()
	}
}

// loadMore reads the next older page when the list scrolls near its end.
func (v *jobListView) loadMore() {
	if v.loading {
		return
	}
	v.loading = true
	filter, query, before := v.model.filter, v.model.query, v.model.lastID()
	go func() {
		ctx, cancel := context.WithTimeout(v.ctx, 10*time.Second)
		defer cancel()
		rows, err := v.fetch(ctx, filter, query, pageSize+1, before)
		v.do(func() {
			v.loading = false
			if err != nil {
				v.setStatusError(err)
				return
			}
			if v.model.filter != filter || v.model.query != query || v.model.lastID() != before {
				// A reload replaced the rows meanwhile: redraw, so that an end still on screen
				// asks for its next page again instead of waiting for the next scroll.
				v.refreshList()
				return
			}
			more := len(rows) > pageSize
			if more {
				rows = rows[:pageSize]
			}
			v.model.appendPage(rows, more)
			v.refreshList()
		})
	}()
}

// cancelJob asks the app to cancel job j; the event stream then updates its row.
func (v *jobListView) cancelJob(j job.Job) {
	if j.ID == 0 {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(v.ctx, 10*time.Second)
		defer cancel()
		err := v.actions.Cancel(ctx, j.ID)
		v.do(func() {
			if err != nil {
				v.showError(v.tr.T("error.cancel_title"), err)
				return
			}
			v.bar.setStatus(v.tr.T("status.cancelled", jobNumber(j)))
		})
	}()
}

// retryJob runs job old again (App.Retry: the same job, or for an AI job a new one linked to
// it).
func (v *jobListView) retryJob(old job.Job) {
	if old.ID == 0 {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(v.ctx, 10*time.Second)
		defer cancel()
		j, err := v.actions.Retry(ctx, old.ID)
		v.do(func() {
			if err != nil {
				v.showError(v.tr.T("error.retry_title"), err)
				return
			}
			if j.ID != old.ID {
				v.bar.setStatus(v.tr.T("status.retried_new", jobNumber(old), jobNumber(j)))
				return
			}
			v.bar.setStatus(v.tr.T("status.retried", jobNumber(old)))
		})
	}()
}

// redriveJob continues failed workflow job j from the state that did not finish.
func (v *jobListView) redriveJob(j job.Job) {
	go func() {
		ctx, cancel := context.WithTimeout(v.ctx, 10*time.Second)
		defer cancel()
		_, err := v.actions.Redrive(ctx, j.ID)
		v.do(func() {
			if err != nil {
				v.showError(v.tr.T("error.retry_title"), err)
				return
			}
			v.bar.setStatus(v.tr.T("status.redriven", jobNumber(j)))
		})
	}()
}
