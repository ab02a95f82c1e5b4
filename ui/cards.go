package ui

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"jobdesk/engine/job"
)

// This file holds how the detail pane speaks about an ended job: an error card that says what
// went wrong and, when running again cannot help, what to change; a quiet note for a cancelled
// job; the question before cancelling; and the input in words.

// inputBound lists the codes whose failure depends on the input alone: the same file or request
// fails the same way again, so the window offers no Retry and says what to change instead.
var inputBound = map[job.Code]bool{job.E003: true, job.E004: true, job.E005: true, job.E006: true}

// errorCard shows an error's code and what it means in words, its sentence in both languages,
// its cause, and — when retrying alone cannot help — what to change.
func (rv *resultViews) errorCard(e *job.Error) fyne.CanvasObject {
	tr := rv.host.tr()
	title := string(e.Code)
	if tr.Has("code." + string(e.Code)) {
		title += "  " + tr.T("code."+string(e.Code))
	}
	code := widget.NewRichText(&widget.TextSegment{Text: title, Style: widget.RichTextStyle{
		ColorName: theme.ColorNameError, TextStyle: fyne.TextStyle{Bold: true}}})
	code.Wrapping = fyne.TextWrapWord
	// One label per sentence, so that each wraps the way its language does.
	card := container.NewVBox(code)
	for _, s := range strings.Split(strings.TrimPrefix(errorBody(e, tr.lang), string(e.Code)+"  "), "\n") {
		s = groupNumbers(s)
		l := widget.NewLabel(s)
		l.Wrapping = wrapFor(s)
		l.Selectable = true
		card.Add(l)
	}
	if !e.Retryable && tr.Has("advice."+string(e.Code)) {
		text := tr.T("advice." + string(e.Code))
		l := widget.NewLabel(text)
		l.Wrapping = wrapFor(text)
		l.Importance = widget.WarningImportance
		card.Add(container.NewBorder(nil, nil, widget.NewIcon(theme.InfoIcon()), nil, l))
	}
	return card
}

// cancelledCard says quietly that job j was cancelled: not an error, something a person did.
func (rv *resultViews) cancelledCard(j job.Job) fyne.CanvasObject {
	text := rv.host.tr().T("detail.cancelled")
	if j.Error != nil {
		text = errorSentence(j.Error, rv.host.tr().lang)
	}
	l := widget.NewLabel(text)
	l.Wrapping = wrapFor(text)
	code := ""
	if j.Error != nil {
		code = string(j.Error.Code)
	}
	c := hintText(code, theme.SizeNameCaptionText, fyne.TextWrapOff, fyne.TextAlignTrailing)
	return container.NewBorder(nil, nil, widget.NewIcon(theme.CancelIcon()), c, l)
}

// confirmCancel asks before cancelling job j; Cancel runs only on yes.
func (u *UI) confirmCancel(j job.Job) {
	name := j.Name
	if name == "" {
		name = jobNumber(j)
	}
	msg := widget.NewLabel(wrapText(u.tr.T("cancel.question", jobNumber(j), name), 48))
	d := dialog.NewCustomConfirm(u.tr.T("cancel.title"), u.tr.T("cancel.yes"), u.tr.T("cancel.no"), msg, func(yes bool) {
		if yes {
			u.cancelJob(j)
		}
	}, u.Window)
	u.dialogOpened(d)
	d.Show()
}

// inputSummary is a job's input for people: its file path, a goal's title, or its fields that
// have a name in the window's language as "name: value" — never raw JSON or internal names.
func inputSummary(tr *translator, raw json.RawMessage) string {
	var obj map[string]any
	if json.Unmarshal(raw, &obj) != nil {
		return clip(strings.TrimSpace(string(raw)), 300)
	}
	if p, ok := obj["payload"].(map[string]any); ok {
		b, _ := json.Marshal(p)
		return inputSummary(tr, b)
	}
	for _, k := range []string{"path", "title"} {
		if s, ok := obj[k].(string); ok && s != "" {
			return clip(s, 300)
		}
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		if tr.Has("field." + k) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		name := tr.T("field." + k)
		switch v := obj[k].(type) {
		case string:
			if v != "" {
				parts = append(parts, fmt.Sprintf("%s: %s", name, v))
			}
		case float64:
			if k == "goal_id" || strings.HasSuffix(k, "job_id") {
				parts = append(parts, fmt.Sprintf("%s #%v", name, v))
			} else {
				parts = append(parts, fmt.Sprintf("%s: %v", name, v))
			}
		}
	}
	return clip(strings.Join(parts, " · "), 300)
}
