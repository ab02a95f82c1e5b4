package ui

import (
	"context"
	"fmt"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"jobdesk/engine/job"
)

// jobRow is one line of the job list: type tag, name and current message, status badge, progress
// bar, and Cancel / Retry buttons. widget.List recycles a handful of rows for thousands of jobs.
type jobRow struct {
	widget.BaseWidget
	u       *UI
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
}

func newJobRow(u *UI) *jobRow {
	r := &jobRow{u: u, typ: newBadge(88, false), badge: newBadge(104, true)}
	r.name = widget.NewLabel("")
	r.name.Truncation = fyne.TextTruncateClip
	r.msg = widget.NewLabel("")
	r.msg.SizeName = theme.SizeNameCaptionText
	r.msg.Truncation = fyne.TextTruncateClip
	r.bar = widget.NewProgressBar()
	r.bar.Max = 100
	r.cancel = widget.NewButtonWithIcon("", theme.CancelIcon(), func() { u.cancelJob(r.id) })
	r.retry = widget.NewButtonWithIcon("", theme.ViewRefreshIcon(), func() { u.retryJob(r.id) })
	r.cancel.Importance = widget.LowImportance
	r.retry.Importance = widget.LowImportance
	text := container.New(&rowText{}, r.name, r.msg)
	right := container.NewHBox(r.badge.box,
		container.NewCenter(container.New(&fixedSize{width: 150}, r.bar)),
		container.NewCenter(r.cancel), container.NewCenter(r.retry))
	r.content = container.NewBorder(nil, nil, r.typ.box, right, text)
	r.ExtendBaseWidget(r)
	return r
}

// CreateRenderer draws the row's content.
func (r *jobRow) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(r.content) }

// set shows job j in the row.
func (r *jobRow) set(j job.Job) {
	tr := r.u.tr
	r.id, r.status = j.ID, j.Status
	r.typ.set(r.u.typeText(j.Type), typeColor)
	r.badge.set(r.u.statusText(j.Status), statusColor(j.Status))
	name := j.Name
	if name == "" {
		name = fmt.Sprintf("#%d", j.ID)
	}
	if r.name.Text != name {
		r.name.SetText(name)
	}
	msg := rowMessage(tr, j)
	if r.msg.Text != msg {
		r.msg.SetText(msg)
	}
	if r.bar.Value != j.Progress {
		r.bar.SetValue(j.Progress)
	}
	setEnabled(r.cancel, canCancel(j))
	setEnabled(r.retry, canRetry(j))
}

// rowMessage is the line under a job's name: its error while it failed, otherwise the engine's
// latest message, otherwise when it was submitted.
func rowMessage(tr *translator, j job.Job) string {
	when := j.CreatedAt.Local().Format("01/02 15:04")
	switch {
	case j.Error != nil && (j.Status == job.Failed || j.Status == job.TimedOut || j.Status == job.Retrying):
		msg := j.Error.Message
		if tr.lang == LangJa && j.Error.MessageJa != "" {
			msg = j.Error.MessageJa
		}
		return fmt.Sprintf("#%d · %s · %s %s", j.ID, when, j.Error.Code, msg)
	case j.Message != "":
		return fmt.Sprintf("#%d · %s · %s", j.ID, when, j.Message)
	}
	return fmt.Sprintf("#%d · %s", j.ID, when)
}

// canCancel: a job that has not finished can be cancelled.
func canCancel(j job.Job) bool {
	return j.Status == job.Pending || j.Status == job.Running || j.Status == job.Retrying
}

// canRetry: a finished job that did not fully succeed can be run again.
func canRetry(j job.Job) bool {
	switch j.Status {
	case job.Failed, job.TimedOut, job.Cancelled, job.Partial:
		return true
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
		o.Resize(fyne.NewSize(size.Width, h))
		y += h
	}
}

// buildList makes the virtualized job list and its empty state.
func (u *UI) buildList() fyne.CanvasObject {
	u.list = widget.NewList(
		func() int { return len(u.model.rows) },
		func() fyne.CanvasObject { return newJobRow(u) },
		func(id widget.ListItemID, o fyne.CanvasObject) {
			if id < 0 || id >= len(u.model.rows) {
				return
			}
			o.(*jobRow).set(u.model.rows[id])
			if u.model.more && id >= len(u.model.rows)-pageSize/5 {
				u.loadMore()
			}
		})
	u.list.OnSelected = func(id widget.ListItemID) {
		u.selIdx = id
		if id >= 0 && id < len(u.model.rows) && u.model.rows[id].ID != u.selected {
			u.selected = u.model.rows[id].ID
			u.loadDetail(u.selected)
		}
	}
	u.emptyText = widget.NewLabel("")
	u.emptyText.Alignment = fyne.TextAlignCenter
	u.emptyText.Wrapping = fyne.TextWrapWord
	u.emptyText.Importance = widget.LowImportance
	u.empty = container.NewCenter(container.New(&fixedSize{width: 470}, u.emptyText))
	return container.NewStack(u.list, u.empty)
}

// refreshList redraws the visible rows, keeps the selection on the same job, and shows the
// empty state when there is nothing to list.
func (u *UI) refreshList() {
	if u.list == nil {
		return
	}
	u.noteLoaded()
	u.list.Refresh()
	if u.selected != 0 {
		if i, ok := u.model.index[u.selected]; !ok {
			u.selIdx = -1
			u.list.UnselectAll()
		} else if i != u.selIdx {
			u.selIdx = i
			u.list.Select(i)
		}
	}
	if len(u.model.rows) == 0 {
		if u.model.filter == "" {
			u.emptyText.SetText(u.tr.T("list.empty"))
		} else {
			u.emptyText.SetText(u.tr.T("list.empty_filter", u.statusText(u.model.filter)))
		}
		u.empty.Show()
	} else {
		u.empty.Hide()
	}
}

// loadMore reads the next older page when the list scrolls near its end.
func (u *UI) loadMore() {
	if u.loading {
		return
	}
	u.loading = true
	filter, before := u.model.filter, u.model.lastID()
	go func() {
		ctx, cancel := context.WithTimeout(u.ctx, 10*time.Second)
		defer cancel()
		rows, err := u.app.Queue.List(ctx, queueFilter(filter, pageSize+1, before))
		u.do(func() {
			u.loading = false
			if err != nil {
				u.setStatusError(err)
				return
			}
			if u.model.filter != filter || u.model.lastID() != before {
				return
			}
			more := len(rows) > pageSize
			if more {
				rows = rows[:pageSize]
			}
			u.model.appendPage(rows, more)
			u.refreshList()
		})
	}()
}

// cancelJob asks the queue to cancel job id; the event stream then updates its row.
func (u *UI) cancelJob(id int64) {
	if id == 0 {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(u.ctx, 10*time.Second)
		defer cancel()
		err := u.app.Queue.Cancel(ctx, id)
		u.do(func() {
			if err != nil {
				u.showError(u.tr.T("error.cancel_title"), err)
				return
			}
			u.setStatus(u.tr.T("status.cancelled", id))
		})
	}()
}

// retryJob asks the queue to run job id again.
func (u *UI) retryJob(id int64) {
	if id == 0 {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(u.ctx, 10*time.Second)
		defer cancel()
		_, err := u.app.Queue.Retry(ctx, id)
		u.do(func() {
			if err != nil {
				u.showError(u.tr.T("error.retry_title"), err)
				return
			}
			u.setStatus(u.tr.T("status.retried", id))
		})
	}()
}
