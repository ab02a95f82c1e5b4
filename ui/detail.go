package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"jobdesk/app"
	"jobdesk/engine/job"
)

// maxHistory is how many of a job's latest history events the pane lists.
const maxHistory = 200

// detailPane shows the selected job: what it is, its progress, input, result, error and
// history, with Cancel and Retry.
type detailPane struct {
	tr    *translator
	root  *fyne.Container
	seq   int        // guards against an older read overwriting a newer one
	shown job.Status // status of the job on show ("" when none)

	shownID     int64     // the job on show
	shownAt     time.Time // its UpdatedAt when shown
	shownEvents int       // the history events it had
	scroll      *container.Scroll
	gen         int // counts rebuilds: a view read in the background fills only the pane it was made for

	bar *widget.ProgressBar
	msg *widget.Label
	// left is the time left of the job on show while it runs, hidden when none can be said.
	left *widget.Label

	// redrivable: the job on show is a workflow execution that failed and can continue from
	// the state that did not finish (read with the job).
	redrivable bool
	// cloudDetail is where the job on show runs in the cloud (nil for a device job).
	cloudDetail *app.CloudDetail

	ctx   context.Context
	svc   detailService
	model *jobModel // the jobs read: the job shown is held in it
	// do runs a function on the UI goroutine.
	do func(func())
	// selected is the job selected in the list: a read for another job is dropped.
	selected func() int64
	// cloudConfigured reports whether the cloud is set up (the pane then offers to run there).
	cloudConfigured func() bool
	// timeLeft says about how long job id still takes, "" when that cannot be said (timeleft.go).
	timeLeft func(id int64) string

	// The job's actions, done by the job list and the cloud.
	confirmCancel, retry, redrive, runInCloud func(job.Job)

	// The result views and cards the pane shows (cards.go, result.go, results_view.go).
	cancelledCard func(job.Job) fyne.CanvasObject
	errorCard     func(*job.Error) fyne.CanvasObject
	resultExtras  func(job.Job) fyne.CanvasObject
	resultForm    func([]resultRow) fyne.CanvasObject
}

// detailService is what the detail pane reads from the app.
type detailService interface {
	Get(ctx context.Context, id int64) (job.Job, error)
	History(ctx context.Context, id int64) ([]job.Event, error)
	CanRedrive(ctx context.Context, j job.Job) bool
	CloudDetail(ctx context.Context, id int64) (app.CloudDetail, error)
	MapRuns(ctx context.Context, id int64) ([]app.MapRun, error)
}

// newDetailPane makes the pane, empty, in the window's language; the window wires it to the
// other screens.
func (u *UI) newDetailPane() *detailPane {
	d := &detailPane{
		tr:              u.tr,
		root:            container.NewStack(),
		ctx:             u.ctx,
		svc:             u.app,
		model:           u.model,
		do:              func(f func()) { u.do(f) },
		selected:        func() int64 { return u.selected },
		cloudConfigured: func() bool { return u.cloud.Configured },
		timeLeft:        func(id int64) string { return u.eta.text(u.tr, id) },
		confirmCancel:   u.confirmCancel,
		retry:           u.retryJob,
		redrive:         u.redriveJob,
		runInCloud:      u.runInCloud,
		cancelledCard:   u.cancelledCard,
		errorCard:       u.errorCard,
		resultExtras:    u.resultExtras,
		resultForm:      u.resultForm,
	}
	d.showEmpty()
	return d
}

// showEmpty tells the person how to fill the pane.
func (d *detailPane) showEmpty() {
	text := d.tr.T("detail.empty")
	l := hintText(text, theme.SizeNameText, wrapFor(text), fyne.TextAlignCenter)
	d.bar, d.msg, d.left, d.shown, d.shownID = nil, nil, nil, "", 0
	d.root.Objects = []fyne.CanvasObject{container.NewCenter(container.New(&fixedSize{width: 300}, l))}
	d.root.Refresh()
}

// showProgress updates the pane's progress bar and message from a progress report.
func (d *detailPane) showProgress(e job.Event) {
	if d.bar == nil || d.shown.Final() {
		return // a late report must not bring back a finished job's old message
	}
	d.bar.SetValue(e.Progress)
	d.msg.SetText(humanMessage(d.tr, e.Message))
	d.showTimeLeft()
}

// showTimeLeft says again how long the job on show still takes (or hides the line).
func (d *detailPane) showTimeLeft() {
	if d.left == nil {
		return
	}
	text := ""
	if !d.shown.Final() {
		text = d.timeLeft(d.shownID)
	}
	if d.left.Text != text {
		d.left.SetText(text)
	}
	setVisible(d.left, text != "")
}

// load reads job id and its history off the UI goroutine and shows them.
func (d *detailPane) load(id int64) {
	d.seq++
	seq := d.seq
	go func() {
		ctx, cancel := context.WithTimeout(d.ctx, 10*time.Second)
		defer cancel()
		j, err := d.svc.Get(ctx, id)
		var hist []job.Event
		if err == nil {
			hist, err = d.svc.History(ctx, id)
		}
		redrivable := err == nil && d.svc.CanRedrive(ctx, j)
		var cloud *app.CloudDetail
		if err == nil && j.Target == job.TargetCloud {
			if c, cerr := d.svc.CloudDetail(ctx, id); cerr == nil {
				cloud = &c
			}
		}
		d.do(func() {
			if seq != d.seq || d.selected() != id {
				return
			}
			if err != nil {
				d.showEmpty()
				return
			}
			d.redrivable, d.cloudDetail = redrivable, cloud
			d.model.hold(&j)
			d.show(j, hist)
		})
	}()
}

// show renders job j with its history. A finished job shown again unchanged keeps the pane as
// it is, so a person reading its result (a chosen page, a table page) does not lose their place.
func (d *detailPane) show(j job.Job, hist []job.Event) {
	tr := d.tr
	if j.Status.Final() && j.ID == d.shownID && j.Status == d.shown && j.UpdatedAt.Equal(d.shownAt) && len(hist) == d.shownEvents {
		return
	}
	sameJob := j.ID == d.shownID
	d.shownID, d.shownAt, d.shownEvents = j.ID, j.UpdatedAt, len(hist)
	d.gen++
	d.shown = j.Status
	name := widget.NewLabel(j.Name)
	name.SizeName = theme.SizeNameSubHeadingText
	name.Wrapping = fyne.TextWrapBreak
	st := newBadge(110, true)
	st.set(statusLabel(tr, j.Status), statusColor(j.Status))
	ty := newBadge(96, false)
	ty.set(typeLabel(tr, j.Type), typeColor)

	d.bar = widget.NewProgressBar()
	d.bar.Max = 100
	v, barShown := barValue(j)
	d.bar.SetValue(v)
	setVisible(d.bar, barShown)
	// While the job is under way the line under the bar is the engine's latest message; once it
	// finished, that message is stale and the line says what became of it instead.
	line := humanMessage(tr, j.Message)
	if j.Status.Final() {
		line = groupNumbers(outcomeText(tr, j))
	}
	d.msg = widget.NewLabel(line)
	d.msg.Wrapping = wrapFor(line)
	d.left = widget.NewLabel("")
	d.showTimeLeft()

	cancel := widget.NewButtonWithIcon(tr.T("action.cancel"), theme.CancelIcon(), func() { d.confirmCancel(j) })
	retry := widget.NewButtonWithIcon(tr.T("action.retry"), theme.ViewRefreshIcon(), func() { d.retry(j) })
	retry.Importance = widget.HighImportance
	setEnabled(cancel, canCancel(j))
	setEnabled(retry, canRetry(j))

	facts := []fyne.CanvasObject{}
	add := func(key, value string) {
		if value == "" {
			return
		}
		k := hintText(tr.T(key), theme.SizeNameCaptionText, fyne.TextWrapOff, fyne.TextAlignLeading)
		v := widget.NewLabel(value)
		v.SizeName = theme.SizeNameCaptionText
		v.Wrapping = fyne.TextWrapBreak
		v.Selectable = true
		facts = append(facts, k, v)
	}
	add("detail.id", jobNumber(j))
	add("detail.attempts", fmt.Sprintf("%d / %d", j.Attempts, j.MaxAttempts))
	if j.Target == job.TargetCloud {
		add("detail.target", tr.T("detail.target.cloud"))
	} else {
		add("detail.target", tr.T("detail.target.device"))
	}
	if j.Target == job.TargetCloud {
		d.cloudFacts(add, &facts)
	}
	add("detail.created", formatTime(&j.CreatedAt))
	add("detail.started", formatTime(j.StartedAt))
	add("detail.completed", formatTime(j.CompletedAt))
	if j.StartedAt != nil && j.CompletedAt != nil {
		add("detail.duration", shortDuration(j.CompletedAt.Sub(*j.StartedAt)))
	}
	add("detail.input", inputSummary(tr, j.Input))

	sections := []fyne.CanvasObject{container.NewHBox(ty.box, st.box), name}
	if barShown {
		sections = append(sections, d.bar)
	}
	if line != "" && line != statusLabel(tr, j.Status) && (j.Error == nil || !j.Status.Final()) && j.Status != job.Cancelled {
		sections = append(sections, d.msg) // a finished job's error card says it better
	}
	if !j.Status.Final() {
		sections = append(sections, d.left)
	}
	actions := container.NewHBox(cancel, retry)
	if d.redrivable {
		redrive := widget.NewButtonWithIcon(tr.T("action.redrive"), theme.MediaSkipNextIcon(), func() { d.redrive(j) })
		actions.Add(redrive)
	}
	if d.cloudConfigured() && canRunInCloud(j) {
		again := widget.NewButtonWithIcon(tr.T("action.run_in_cloud"), theme.UploadIcon(), func() { d.runInCloud(j) })
		actions.Add(again)
	}
	sections = append(sections, actions)
	switch {
	case j.Status == job.Cancelled:
		sections = append(sections, d.cancelledCard(j))
	case j.Error != nil:
		sections = append(sections, section(tr.T("detail.error")), d.errorCard(j.Error))
	}
	// The result: what a person came for (rejected rows, the document, the goal) and the save
	// buttons first, then its figures field by field.
	rows := resultRows(tr, app.DescribeResult(j))
	extra := d.resultExtras(j)
	if len(rows) > 0 || extra != nil {
		sections = append(sections, section(tr.T("detail.result")))
	}
	if extra != nil {
		sections = append(sections, extra)
	}
	if len(rows) > 0 {
		sections = append(sections, d.resultForm(rows))
	}
	sections = append(sections, widget.NewSeparator(), container.New(layout.NewFormLayout(), facts...),
		section(tr.T("detail.history")), d.timeline(j, hist))
	// The same job shown again (its status or history moved on) keeps where the person scrolled to.
	scroll := container.NewVScroll(container.NewPadded(container.NewVBox(sections...)))
	if d.scroll != nil && sameJob {
		scroll.Offset = d.scroll.Offset
	}
	d.scroll = scroll
	d.root.Objects = []fyne.CanvasObject{scroll}
	d.root.Refresh()
}

// section is a small heading inside the pane.
func section(title string) fyne.CanvasObject {
	l := widget.NewLabel(title)
	l.Importance = widget.HighImportance
	return container.NewVBox(widget.NewSeparator(), l)
}

// formatTime is a local date and time, or "" for none.
func formatTime(t *time.Time) string {
	if t == nil || t.IsZero() {
		return ""
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// clip shortens s to at most n runes, marking the cut.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
