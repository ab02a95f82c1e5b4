package ui

import (
	"time"

	"fyne.io/fyne/v2/widget"
)

// statusBar is the window's bottom line: a short message (what just happened, stamped with the
// time; or, while the pointer rests on a cut text, that text in full), and the engine's running
// and waiting counts on the right. The window builds its labels (build) and keeps one.
type statusBar struct {
	status     *widget.Label
	engineInfo *widget.Label

	// hinting is set while the bar shows a cut text in full (showHint); hintSaved and
	// hintImportance are what it said before.
	hinting        bool
	hintSaved      string
	hintImportance widget.Importance
}

// setStatus shows a short message.
func (b *statusBar) setStatus(msg string) { b.say(msg, widget.MediumImportance) }

// say shows msg, stamped with the time, in the colour of importance.
func (b *statusBar) say(msg string, importance widget.Importance) {
	b.hinting = false
	b.status.Importance = importance
	b.status.SetText(time.Now().Format("15:04:05") + "  " + msg)
}

// showHint shows text in full until hideHint, keeping what the bar said.
func (b *statusBar) showHint(text string) {
	if b.status == nil {
		return
	}
	if !b.hinting {
		b.hintSaved, b.hintImportance = b.status.Text, b.status.Importance
	}
	b.hinting = true
	b.status.Importance = widget.MediumImportance
	b.status.SetText(text)
}

// hideHint puts back what the bar said before showHint.
func (b *statusBar) hideHint() {
	if b.status == nil || !b.hinting {
		return
	}
	b.hinting = false
	b.status.Importance = b.hintImportance
	b.status.SetText(b.hintSaved)
}
