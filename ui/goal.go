package ui

import (
	"context"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"jobdesk/app"
	"jobdesk/engine/job"
)

// showGoalForm asks for a goal (title, description, deadline) and submits it with
// app.SubmitGoal. A build without AI generation answers E014; the form says so plainly.
func (u *UI) showGoalForm() {
	title := newKeyEntry(u, false)
	title.SetPlaceHolder(u.tr.T("goal.title_hint"))
	title.Validator = func(s string) error {
		if strings.TrimSpace(s) == "" {
			return job.Errorf(job.E014, "%s", u.tr.T("goal.title_required"))
		}
		return nil
	}
	desc := newKeyEntry(u, true)
	desc.SetPlaceHolder(u.tr.T("goal.description_hint"))
	desc.SetMinRowsVisible(4)
	// A plain entry: fyne's DateEntry refuses an empty date, and the deadline is optional.
	deadline := newKeyEntry(u, false)
	// A hint, not a date: a real date in grey looked filled in although it saved nothing.
	deadline.SetPlaceHolder(u.tr.T("goal.deadline_hint"))
	deadline.Validator = func(s string) error {
		if _, err := parseDeadline(s); err != nil {
			return job.Errorf(job.E014, "%s", u.tr.T("goal.deadline_invalid"))
		}
		return nil
	}

	items := []*widget.FormItem{
		widget.NewFormItem(u.tr.T("goal.title"), title),
		widget.NewFormItem(u.tr.T("goal.description"), desc),
		widget.NewFormItem(u.tr.T("goal.deadline"), deadline),
	}
	d := dialog.NewForm(u.tr.T("goal.dialog_title"), u.tr.T("goal.submit"), u.tr.T("dialog.cancel"), items, func(ok bool) {
		if !ok {
			return
		}
		g := app.GoalRequest{Title: strings.TrimSpace(title.Text), Description: strings.TrimSpace(desc.Text)}
		g.Deadline, _ = parseDeadline(deadline.Text)
		u.submitGoal(g)
	}, u.Window)
	d.Resize(fyne.NewSize(560, 380))
	u.dialogOpened(d)
	d.Show()
	u.Window.Canvas().Focus(title) // typing starts in the title, not into nowhere
}

// submitGoal sends g to the app off the UI goroutine and reports the outcome.
func (u *UI) submitGoal(g app.GoalRequest) {
	go func() {
		ctx, cancel := context.WithTimeout(u.ctx, 30*time.Second)
		defer cancel()
		j, err := u.app.SubmitGoal(ctx, g)
		u.do(func() {
			if err != nil {
				u.setStatusError(err)
				u.showError(u.tr.T("goal.failed_title"), err)
				return
			}
			u.setStatus(u.tr.T("goal.added", jobNumber(j)))
			u.revealJob(j.ID) // the new goal is selected, its detail shown
		})
	}()
}

// parseDeadline reads an optional date as staff type it: 2026-12-31, 2026/12/31 or 20261231
// (the end of that day, local time). Empty means no deadline.
func parseDeadline(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	var err error
	for _, layout := range []string{"2006-01-02", "2006/01/02", "20060102", "2006-1-2", "2006/1/2"} {
		var t time.Time
		if t, err = time.ParseInLocation(layout, s, time.Local); err == nil {
			return t.Add(24*time.Hour - time.Second), nil
		}
	}
	return time.Time{}, err
}
