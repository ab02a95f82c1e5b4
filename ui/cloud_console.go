package ui

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"jobdesk/app"
)

// consoleTimeout bounds one call of the operations console (a redrive by receive-and-resend
// moves message by message, so it gets the longest).
const consoleTimeout = 2 * time.Minute

// consoleView is the cloud operations console (the specifications' operating procedures), the
// window's side of `jobdesk cloud queues/dlq/redrive/purge/send/executions`: a dialog with one
// tab for the queues and their dead letters, one to send a job message by hand and one for the
// state machines' executions. Every AWS call runs off the UI goroutine; its outcome, or its
// error as a coded sentence, shows on the line under the tabs. Redrive and purge ask first,
// saying how many messages they touch.
type consoleView struct {
	tr  *translator
	ctx context.Context
	svc consoleService
	// do runs a function on the UI goroutine.
	do func(func())
	// window is the dialogs' parent; dialogOpened notes a dialog for Esc.
	window       fyne.Window
	dialogOpened func(dialog.Dialog)

	d       *dialog.CustomDialog
	con     *app.CloudConsole // nil until connected
	tabs    *container.AppTabs
	message *widget.Label

	queues      []app.CloudQueue
	queueTable  *widget.List
	selected    string // the job type whose dead letters are shown
	dlqTitle    *widget.Label
	deadLetters []app.CloudDeadLetter
	dlqList     *widget.List
	redrive     *widget.Button
	purge       *widget.Button
	purgeDLQ    *widget.Button

	jobTypes []app.CloudJobType
	typeSel  *widget.Select
	body     *widget.Entry
	sent     *widget.Label

	machineSel *widget.Select
	statusSel  *widget.Select
	execLoads  int // listings of executions asked for, so that only the newest one is shown
	queueLoads int // readings of the queues asked for, likewise
	executions []app.CloudExecution
	execList   *widget.List

	// confirm is the confirmation open last (redrive, purge, an execution's redrive).
	confirm dialog.Dialog
}

// consoleService is what the console asks of the app: a connection to the cloud.
type consoleService interface {
	CloudConsole(ctx context.Context) (*app.CloudConsole, error)
}

// showCloudConsole opens the operations console of the cloud cloud.json configures.
func (u *UI) showCloudConsole() { u.openCloudConsole() }

func (u *UI) openCloudConsole() *consoleView {
	tr := u.tr
	cv := &consoleView{
		tr:           u.tr,
		ctx:          u.ctx,
		svc:          u.app,
		do:           func(f func()) { u.do(f) },
		window:       u.Window,
		dialogOpened: u.dialogOpened,
	}
	cv.message = widget.NewLabel(tr.T("console.connecting"))
	cv.message.Wrapping = fyne.TextWrapWord
	cv.tabs = container.NewAppTabs(
		container.NewTabItemWithIcon(tr.T("console.tab.queues"), theme.ListIcon(), cv.queuesPage()),
		container.NewTabItemWithIcon(tr.T("console.tab.send"), theme.MailSendIcon(), cv.sendPage()),
		container.NewTabItemWithIcon(tr.T("console.tab.executions"), theme.MediaPlayIcon(), cv.executionsPage()),
	)
	cv.tabs.OnSelected = func(t *container.TabItem) {
		if t.Text == tr.T("console.tab.executions") {
			cv.loadExecutions()
		}
	}
	body := container.NewBorder(nil, cv.message, nil, nil, cv.tabs)
	cv.d = dialog.NewCustom(tr.T("console.title"), tr.T("dialog.close"), body, u.Window)
	cv.d.Resize(fyne.NewSize(1100, 700))
	u.dialogOpened(cv.d)
	cv.d.Show()
	cv.connect()
	return cv
}

// run calls work with the console off the UI goroutine, then done with its error on the UI
// goroutine: an error shows on the message line.
func (cv *consoleView) run(work func(ctx context.Context, con *app.CloudConsole) error, done func()) {
	con := cv.con
	if con == nil {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(cv.ctx, consoleTimeout)
		defer cancel()
		err := work(ctx, con)
		if err != nil && cv.ctx.Err() != nil {
			return // the window closed
		}
		cv.do(func() {
			if err != nil {
				cv.fail(err)
				return
			}
			if done != nil {
				done()
			}
		})
	}()
}

// fail shows err as its code and sentence on the message line.
func (cv *consoleView) fail(err error) {
	cv.message.Importance = widget.DangerImportance
	cv.message.SetText(errorLine(cv.tr, err))
}

// say shows an outcome on the message line.
func (cv *consoleView) say(text string) {
	cv.message.Importance = widget.MediumImportance
	cv.message.SetText(text)
}

// connect opens the console (no AWS call yet) and reads the queues.
func (cv *consoleView) connect() {
	go func() {
		con, err := cv.svc.CloudConsole(cv.ctx)
		cv.do(func() {
			if err != nil {
				cv.fail(err)
				return
			}
			cv.con = con
			cv.jobTypes = con.JobTypes()
			cv.fillSendChoices()
			cv.fillExecutionChoices()
			cv.loadQueues()
		})
	}()
}

// --- Queues -------------------------------------------------------------------------------

// queueColumns are the queue table's columns.
var queueColumns = []struct {
	key   string
	width float32
}{
	{"console.col.job_type", 360}, {"console.col.visible", 100}, {"console.col.in_flight", 100}, {"console.col.delayed", 90},
	{"console.col.dead_letters", 130}, {"console.col.oldest", 160},
}

func (cv *consoleView) queuesPage() fyne.CanvasObject {
	tr := cv.tr
	widths := make([]float32, len(queueColumns))
	header := make([]fyne.CanvasObject, len(queueColumns))
	for i, c := range queueColumns {
		widths[i] = c.width
		l := widget.NewLabel(tr.T(c.key))
		l.TextStyle = fyne.TextStyle{Bold: true}
		l.Truncation = fyne.TextTruncateEllipsis
		header[i] = l
	}
	cv.queueTable = widget.NewList(func() int { return len(cv.queues) },
		func() fyne.CanvasObject {
			cells := make([]fyne.CanvasObject, len(queueColumns))
			for i := range cells {
				l := widget.NewLabel("")
				l.Truncation = fyne.TextTruncateEllipsis
				cells[i] = l
			}
			return container.New(columnsLayout(widths), cells...)
		},
		func(i widget.ListItemID, o fyne.CanvasObject) {
			if i >= len(cv.queues) {
				return
			}
			for col, c := range o.(*fyne.Container).Objects {
				c.(*widget.Label).SetText(cv.queueCell(cv.queues[i], col))
			}
		})
	cv.queueTable.OnSelected = func(i widget.ListItemID) {
		if i >= 0 && i < len(cv.queues) {
			cv.selectQueue(cv.queues[i].JobType)
		}
	}
	refresh := widget.NewButtonWithIcon(tr.T("console.refresh"), theme.ViewRefreshIcon(), cv.loadQueues)

	cv.dlqTitle = widget.NewLabel(tr.T("console.dlq.choose"))
	cv.dlqTitle.TextStyle = fyne.TextStyle{Bold: true}
	cv.dlqTitle.Wrapping = fyne.TextWrapWord
	cv.dlqList = widget.NewList(func() int { return len(cv.deadLetters) },
		func() fyne.CanvasObject {
			head := widget.NewLabel("")
			head.TextStyle = fyne.TextStyle{Bold: true}
			head.Truncation = fyne.TextTruncateEllipsis
			errText := widget.NewLabel("")
			errText.Wrapping = fyne.TextWrapWord
			errText.Importance = widget.DangerImportance
			return container.NewVBox(head, errText)
		},
		func(i widget.ListItemID, o fyne.CanvasObject) {
			if i >= len(cv.deadLetters) {
				return
			}
			d := cv.deadLetters[i]
			box := o.(*fyne.Container)
			id := d.JobID
			if id == "" {
				id = d.MessageID
			}
			sent := "—"
			if !d.SentAt.IsZero() {
				sent = d.SentAt.Local().Format(time.DateTime)
			}
			box.Objects[0].(*widget.Label).SetText(tr.T("console.dlq.item", id, sent, d.ReceiveCount))
			e := d.Error
			if e == "" {
				e = tr.T("console.dlq.no_error")
			}
			box.Objects[1].(*widget.Label).SetText(e)
			cv.dlqList.SetItemHeight(i, box.MinSize().Height)
		})
	cv.redrive = widget.NewButtonWithIcon(tr.T("console.redrive"), theme.MediaReplayIcon(), func() { cv.askRedrive(cv.selected) })
	cv.purge = widget.NewButtonWithIcon(tr.T("console.purge"), theme.DeleteIcon(), func() { cv.askPurge(cv.selected, false) })
	cv.purgeDLQ = widget.NewButtonWithIcon(tr.T("console.purge_dlq"), theme.DeleteIcon(), func() { cv.askPurge(cv.selected, true) })
	cv.purge.Importance, cv.purgeDLQ.Importance = widget.DangerImportance, widget.DangerImportance
	cv.setQueueButtons()

	top := container.NewBorder(container.NewVBox(container.NewHBox(refresh), container.New(columnsLayout(widths), header...)), nil, nil, nil, cv.queueTable)
	bottom := container.NewBorder(container.NewVBox(cv.dlqTitle, container.NewHBox(cv.redrive, cv.purge, cv.purgeDLQ)), nil, nil, nil, cv.dlqList)
	split := container.NewVSplit(top, bottom)
	split.Offset = 0.62
	return split
}

// columnsLayout places objects side by side at the given widths, the last one taking what is
// left: a list's rows and their header line up as a table's would.
type columnsLayout []float32

func (w columnsLayout) MinSize(objects []fyne.CanvasObject) fyne.Size {
	var s fyne.Size
	for i, o := range objects {
		m := o.MinSize()
		s.Height = max(s.Height, m.Height)
		if i < len(w) {
			s.Width += w[i]
		}
	}
	return s
}

func (w columnsLayout) Layout(objects []fyne.CanvasObject, size fyne.Size) {
	x := float32(0)
	for i, o := range objects {
		width := float32(0)
		if i < len(w) {
			width = w[i]
		}
		if i == len(objects)-1 {
			width = max(width, size.Width-x)
		}
		o.Move(fyne.NewPos(x, 0))
		o.Resize(fyne.NewSize(width, size.Height))
		x += width
	}
}

// queueCell is what column col of q's row says.
func (cv *consoleView) queueCell(q app.CloudQueue, col int) string {
	tr := cv.tr
	switch col {
	case 0:
		return cv.jobTypeLabel(q.JobType)
	case 1:
		return groupInt(int64(q.Queue.Visible))
	case 2:
		return groupInt(int64(q.Queue.InFlight))
	case 3:
		return groupInt(int64(q.Queue.Delayed))
	case 4:
		if q.DeadLetter == nil {
			return tr.T("console.none")
		}
		return groupInt(int64(q.DeadLetter.Visible + q.DeadLetter.InFlight))
	case 5:
		if q.DeadLetter == nil || q.DeadLetter.OldestAge == nil {
			return "—"
		}
		return shortDuration(time.Duration(*q.DeadLetter.OldestAge).Round(time.Second))
	}
	return ""
}

// jobTypeLabel is a job type with its title in the window's language.
func (cv *consoleView) jobTypeLabel(name string) string {
	for _, t := range cv.jobTypes {
		if t.Name == name {
			title := t.Title
			if cv.tr.lang == LangJa {
				title = t.TitleJa
			}
			return name + " — " + title
		}
	}
	return name
}

// setQueueButtons enables the queue actions that apply to the selected queue.
func (cv *consoleView) setQueueButtons() {
	q, ok := cv.queue(cv.selected)
	setEnabled(cv.redrive, ok && q.DeadLetter != nil && q.DeadLetter.Visible > 0)
	setEnabled(cv.purge, ok)
	setEnabled(cv.purgeDLQ, ok && q.DeadLetter != nil)
}

func (cv *consoleView) queue(jobType string) (app.CloudQueue, bool) {
	for _, q := range cv.queues {
		if q.JobType == jobType {
			return q, true
		}
	}
	return app.CloudQueue{}, false
}

// loadQueues reads every queue's counts, then the selected queue's dead letters.
func (cv *consoleView) loadQueues() {
	var qs []app.CloudQueue
	cv.say(cv.tr.T("console.loading"))
	cv.queueLoads++
	load := cv.queueLoads
	cv.run(func(ctx context.Context, con *app.CloudConsole) (err error) {
		qs, err = con.Queues(ctx)
		return err
	}, func() {
		if load != cv.queueLoads {
			return // a newer reading is on its way
		}
		cv.queues = qs
		cv.queueTable.Refresh()
		cv.say(cv.tr.T("console.loaded", time.Now().Format("15:04:05")))
		cv.setQueueButtons()
		if cv.selected != "" {
			cv.selectQueue(cv.selected)
		}
	})
}

// selectQueue shows jobType's dead letters.
func (cv *consoleView) selectQueue(jobType string) {
	tr := cv.tr
	cv.selected = jobType
	cv.setQueueButtons()
	q, _ := cv.queue(jobType)
	if q.DeadLetter == nil {
		cv.deadLetters = nil
		cv.dlqList.Refresh()
		cv.dlqTitle.SetText(tr.T("console.dlq.none", cv.jobTypeLabel(jobType)))
		return
	}
	cv.dlqTitle.SetText(tr.T("console.dlq.title", cv.jobTypeLabel(jobType)))
	var dls []app.CloudDeadLetter
	cv.run(func(ctx context.Context, con *app.CloudConsole) (err error) {
		dls, err = con.DeadLetters(ctx, jobType, 10)
		return err
	}, func() {
		if cv.selected != jobType {
			return
		}
		cv.deadLetters = dls
		cv.dlqList.Refresh()
		if len(dls) == 0 {
			cv.dlqTitle.SetText(tr.T("console.dlq.empty", cv.jobTypeLabel(jobType)))
		}
	})
}

// askConfirm asks question before a change; yes runs act.
func (cv *consoleView) askConfirm(title, question, yes string, act func()) {
	tr := cv.tr
	msg := widget.NewLabel(wrapText(question, 56))
	d := dialog.NewCustomConfirm(title, yes, tr.T("console.cancel"), msg, func(ok bool) {
		if ok {
			act()
		}
	}, cv.window)
	cv.confirm = d
	cv.dialogOpened(d)
	d.Show()
}

// askRedrive counts the dead letters of jobType afresh, asks, then moves them back.
func (cv *consoleView) askRedrive(jobType string) {
	tr := cv.tr
	var n int
	cv.run(func(ctx context.Context, con *app.CloudConsole) (err error) {
		n, err = con.RedriveCount(ctx, jobType)
		return err
	}, func() {
		label := cv.jobTypeLabel(jobType)
		cv.askConfirm(tr.T("console.redrive.title"), tr.T("console.redrive.question", groupInt(int64(n)), label), tr.T("console.redrive"), func() {
			var r app.CloudRedriven
			cv.run(func(ctx context.Context, con *app.CloudConsole) (err error) {
				r, err = con.Redrive(ctx, jobType)
				return err
			}, func() {
				if r.Method == "move-task" {
					cv.say(tr.T("console.redrive.started", groupInt(int64(r.ToMove)), label))
				} else {
					cv.say(tr.T("console.redrive.moved", groupInt(int64(r.Moved)), label))
				}
				cv.loadQueuesKeepingMessage()
			})
		})
	})
}

// askPurge counts the messages of jobType's queue (or dead-letter queue) afresh, asks, then
// deletes them.
func (cv *consoleView) askPurge(jobType string, deadLetter bool) {
	tr := cv.tr
	var n int
	cv.run(func(ctx context.Context, con *app.CloudConsole) (err error) {
		n, err = con.PurgeCount(ctx, jobType, deadLetter)
		return err
	}, func() {
		label := cv.jobTypeLabel(jobType)
		which := tr.T("console.which.queue")
		if deadLetter {
			which = tr.T("console.which.dlq")
		}
		cv.askConfirm(tr.T("console.purge.title"), tr.T("console.purge.question", label, which, groupInt(int64(n))), tr.T("console.purge.yes"), func() {
			cv.run(func(ctx context.Context, con *app.CloudConsole) error {
				_, err := con.Purge(ctx, jobType, deadLetter)
				return err
			}, func() {
				cv.say(tr.T("console.purge.started", label, which))
				cv.loadQueuesKeepingMessage()
			})
		})
	})
}

// loadQueuesKeepingMessage reads the queues again without replacing what the line says.
func (cv *consoleView) loadQueuesKeepingMessage() {
	var qs []app.CloudQueue
	cv.run(func(ctx context.Context, con *app.CloudConsole) (err error) {
		qs, err = con.Queues(ctx)
		return err
	}, func() {
		cv.queues = qs
		cv.queueTable.Refresh()
		cv.setQueueButtons()
		if cv.selected != "" {
			cv.selectQueue(cv.selected)
		}
	})
}

// --- Send ---------------------------------------------------------------------------------

func (cv *consoleView) sendPage() fyne.CanvasObject {
	tr := cv.tr
	cv.typeSel = newSelect(cv.tr, nil, func(string) { cv.startMessage() })
	cv.typeSel.PlaceHolder = tr.T("console.send.choose")
	cv.body = widget.NewMultiLineEntry()
	cv.body.TextStyle = fyne.TextStyle{Monospace: true}
	cv.body.Wrapping = fyne.TextWrapBreak
	cv.sent = widget.NewLabel("")
	cv.sent.Wrapping = fyne.TextWrapWord
	cv.sent.Selectable = true
	fill := widget.NewButtonWithIcon(tr.T("console.send.fill"), theme.ContentPasteIcon(), cv.fillMessage)
	send := widget.NewButtonWithIcon(tr.T("console.send.send"), theme.MailSendIcon(), cv.sendMessage)
	send.Importance = widget.HighImportance
	note := hintText(tr.T("console.send.note"), theme.SizeNameText, fyne.TextWrapWord, fyne.TextAlignLeading)
	head := container.NewVBox(
		container.New(layout.NewFormLayout(), hintText(tr.T("console.send.type"), theme.SizeNameText, fyne.TextWrapOff, fyne.TextAlignLeading), cv.typeSel),
		note)
	return container.NewBorder(head, container.NewVBox(container.NewHBox(fill, send), cv.sent), nil, nil, cv.body)
}

// fillSendChoices lists the job types, with their titles, in the type choice.
func (cv *consoleView) fillSendChoices() {
	opts := make([]string, len(cv.jobTypes))
	for i, t := range cv.jobTypes {
		opts[i] = cv.jobTypeLabel(t.Name)
	}
	cv.typeSel.SetOptions(opts)
}

// sendType is the chosen job type ("" for none).
func (cv *consoleView) sendType() string {
	if i := cv.typeSel.SelectedIndex(); i >= 0 && i < len(cv.jobTypes) {
		return cv.jobTypes[i].Name
	}
	return ""
}

// startMessage puts the chosen job type's template in the editor.
func (cv *consoleView) startMessage() {
	jt := cv.sendType()
	if jt == "" || cv.con == nil {
		return
	}
	tmpl, err := cv.con.MessageTemplate(jt)
	if err != nil {
		cv.showSent(err, "")
		return
	}
	cv.body.SetText(tmpl)
	cv.sent.SetText("")
}

// fillMessage completes the editor's message with the common fields, checked (no AWS call).
func (cv *consoleView) fillMessage() {
	jt := cv.sendType()
	if jt == "" || cv.con == nil {
		cv.showSent(nil, cv.tr.T("console.send.choose"))
		return
	}
	full, err := cv.con.FillMessage(jt, cv.body.Text)
	if err != nil {
		cv.showSent(err, "")
		return
	}
	cv.body.SetText(full)
	cv.showSent(nil, cv.tr.T("console.send.filled"))
}

// sendMessage checks and sends the editor's message.
func (cv *consoleView) sendMessage() {
	tr := cv.tr
	jt := cv.sendType()
	if jt == "" {
		cv.showSent(nil, tr.T("console.send.choose"))
		return
	}
	body := cv.body.Text
	var sent app.CloudSent
	var sendErr error
	cv.sent.Importance = widget.MediumImportance
	cv.sent.SetText(tr.T("console.send.sending"))
	cv.run(func(ctx context.Context, con *app.CloudConsole) error {
		sent, sendErr = con.SendMessage(ctx, jt, body)
		return nil // shown under the editor, not on the console's line
	}, func() {
		if sendErr != nil {
			cv.showSent(sendErr, "")
			return
		}
		cv.showSent(nil, tr.T("console.send.sent", cv.jobTypeLabel(jt), sent.JobID, sent.MessageID))
	})
}

// showSent shows the send's outcome under the editor: an error as its code and sentence.
func (cv *consoleView) showSent(err error, text string) {
	if err != nil {
		cv.sent.Importance = widget.DangerImportance
		cv.sent.SetText(errorLine(cv.tr, err))
		return
	}
	cv.sent.Importance = widget.SuccessImportance
	cv.sent.SetText(text)
}

// --- Executions ---------------------------------------------------------------------------

func (cv *consoleView) executionsPage() fyne.CanvasObject {
	tr := cv.tr
	cv.machineSel = newSelect(cv.tr, nil, func(string) { cv.loadExecutions() })
	statuses := []string{tr.T("console.exec.any")}
	for _, s := range app.CloudExecutionStatuses {
		statuses = append(statuses, cv.executionStatus(s))
	}
	cv.statusSel = newSelect(cv.tr, statuses, func(string) { cv.loadExecutions() })
	cv.statusSel.SetSelectedIndex(0)
	refresh := widget.NewButtonWithIcon(tr.T("console.refresh"), theme.ViewRefreshIcon(), cv.loadExecutions)
	cv.execList = widget.NewList(func() int { return len(cv.executions) },
		func() fyne.CanvasObject {
			name := widget.NewLabel("")
			name.TextStyle = fyne.TextStyle{Bold: true}
			name.Truncation = fyne.TextTruncateEllipsis
			when := widget.NewLabel("")
			when.Truncation = fyne.TextTruncateEllipsis
			redrive := widget.NewButtonWithIcon(tr.T("console.exec.redrive"), theme.MediaReplayIcon(), nil)
			link := widget.NewHyperlink(tr.T("detail.cloud.open_console"), nil)
			return container.NewBorder(nil, nil, nil, container.NewCenter(container.NewHBox(redrive, link)), container.NewVBox(name, when))
		},
		func(i widget.ListItemID, o fyne.CanvasObject) {
			if i >= len(cv.executions) {
				return
			}
			e := cv.executions[i]
			row := o.(*fyne.Container)
			texts := row.Objects[0].(*fyne.Container)
			acts := row.Objects[1].(*fyne.Container).Objects[0].(*fyne.Container)
			texts.Objects[0].(*widget.Label).SetText(fmt.Sprintf("%s  ·  %s  ·  %s", e.Name, e.Workflow, cv.executionStatus(e.Status)))
			stop := "—"
			if !e.StopDate.IsZero() {
				stop = e.StopDate.Local().Format(time.DateTime)
			}
			texts.Objects[1].(*widget.Label).SetText(tr.T("console.exec.times", e.StartDate.Local().Format(time.DateTime), stop, e.RedriveCount))
			redrive := acts.Objects[0].(*widget.Button)
			redrive.OnTapped = func() { cv.askRedriveExecution(e) }
			setVisible(redrive, app.CanRedriveExecution(e.Status))
			link := acts.Objects[1].(*widget.Hyperlink)
			if u, err := url.Parse(cv.con.ExecutionConsoleURL(e.ARN)); err == nil {
				link.SetURL(u)
			}
		})
	// Wide enough for a workflow's name (document-conversion) and a status in either language.
	wide := func(o fyne.CanvasObject, w float32) fyne.CanvasObject {
		return container.New(layout.NewGridWrapLayout(fyne.NewSize(w, o.MinSize().Height)), o)
	}
	head := container.NewHBox(
		hintText(tr.T("console.exec.machine"), theme.SizeNameText, fyne.TextWrapOff, fyne.TextAlignLeading), wide(cv.machineSel, 280),
		hintText(tr.T("console.exec.status"), theme.SizeNameText, fyne.TextWrapOff, fyne.TextAlignLeading), wide(cv.statusSel, 200), refresh)
	return container.NewBorder(head, nil, nil, nil, cv.execList)
}

// executionStatus is a Step Functions status in the window's language.
func (cv *consoleView) executionStatus(s string) string {
	if key := "console.exec.status." + strings.ToLower(s); cv.tr.Has(key) {
		return cv.tr.T(key)
	}
	return s
}

// fillExecutionChoices lists the state machines: all of them first.
func (cv *consoleView) fillExecutionChoices() {
	cv.machineSel.SetOptions(append([]string{cv.tr.T("console.exec.all")}, cv.con.StateMachines()...))
	cv.machineSel.SetSelectedIndex(0)
}

// executionFilter is what the choices select.
func (cv *consoleView) executionFilter() app.CloudExecutionFilter {
	var f app.CloudExecutionFilter
	if i := cv.machineSel.SelectedIndex(); i > 0 {
		f.StateMachine = cv.machineSel.Selected
	}
	if i := cv.statusSel.SelectedIndex(); i > 0 && i <= len(app.CloudExecutionStatuses) {
		f.Status = app.CloudExecutionStatuses[i-1]
	}
	return f
}

// loadExecutions lists the executions the choices select.
func (cv *consoleView) loadExecutions() { cv.listExecutions("") }

// listExecutions lists the executions the choices select, then says done ("": how many).
func (cv *consoleView) listExecutions(done string) {
	if cv.con == nil || cv.machineSel == nil {
		return
	}
	tr := cv.tr
	if len(cv.con.StateMachines()) == 0 {
		cv.executions = []app.CloudExecution{}
		cv.execList.Refresh()
		cv.say(tr.T("console.exec.no_machines"))
		return
	}
	f := cv.executionFilter()
	var es []app.CloudExecution
	cv.say(tr.T("console.loading"))
	cv.execLoads++
	load := cv.execLoads
	cv.run(func(ctx context.Context, con *app.CloudConsole) (err error) {
		es, err = con.Executions(ctx, f)
		return err
	}, func() {
		if load != cv.execLoads {
			return // the choices changed since: a newer listing is on its way
		}
		if es == nil {
			es = []app.CloudExecution{}
		}
		cv.executions = es
		cv.execList.Refresh()
		if done == "" {
			done = tr.T("console.exec.loaded", groupInt(int64(len(es))), time.Now().Format("15:04:05"))
		}
		cv.say(done)
	})
}

// askRedriveExecution asks, then redrives execution e.
func (cv *consoleView) askRedriveExecution(e app.CloudExecution) {
	tr := cv.tr
	cv.askConfirm(tr.T("console.exec.redrive.title"), tr.T("console.exec.redrive.question", e.Name, e.Workflow, cv.executionStatus(e.Status)),
		tr.T("console.exec.redrive"), func() {
			cv.run(func(ctx context.Context, con *app.CloudConsole) error {
				_, err := con.RedriveExecution(ctx, e.ARN, "")
				return err
			}, func() { cv.listExecutions(tr.T("console.exec.redriven", e.Name)) })
		})
}
