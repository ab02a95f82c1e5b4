package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/widget"

	"jobdesk/engine/job"
)

// This file gives the window a desktop program's keys: Ctrl+O opens files, Ctrl+F goes to the
// search box, Ctrl+R retries the selected job, Ctrl+, opens the settings, Ctrl+M the metrics, Delete cancels it (after asking), Esc closes the
// dialog on top, and the arrow keys move the selection in the list. Fyne's dialogs do not close
// on Esc by themselves; the window keeps the dialogs it opened (dialogOpened) and closes the
// newest.

// Shortcuts of the window.
var (
	shortcutOpen   = &desktop.CustomShortcut{KeyName: fyne.KeyO, Modifier: fyne.KeyModifierShortcutDefault}
	shortcutSearch = &desktop.CustomShortcut{KeyName: fyne.KeyF, Modifier: fyne.KeyModifierShortcutDefault}
	shortcutRetry  = &desktop.CustomShortcut{KeyName: fyne.KeyR, Modifier: fyne.KeyModifierShortcutDefault}
	// Ctrl+, opens the settings and Ctrl+M the metrics, as in many desktop programs.
	shortcutSettings = &desktop.CustomShortcut{KeyName: fyne.KeyComma, Modifier: fyne.KeyModifierShortcutDefault}
	shortcutMetrics  = &desktop.CustomShortcut{KeyName: fyne.KeyM, Modifier: fyne.KeyModifierShortcutDefault}
)

// setupKeys registers the shortcuts and the keys on the window's canvas.
func (u *UI) setupKeys() {
	c := u.Window.Canvas()
	c.AddShortcut(shortcutOpen, func(fyne.Shortcut) { u.pickFiles() })
	c.AddShortcut(shortcutSearch, func(fyne.Shortcut) {
		if u.search != nil {
			c.Focus(u.search)
		}
	})
	c.AddShortcut(shortcutRetry, func(fyne.Shortcut) {
		if j, ok := u.selectedJob(); ok && canRetry(j) {
			u.retryJob(j)
		}
	})
	c.AddShortcut(shortcutSettings, func(fyne.Shortcut) { u.showSettings() })
	c.AddShortcut(shortcutMetrics, func(fyne.Shortcut) { u.showMetrics() })
	c.SetOnTypedKey(u.typedKey)
}

// typedKey handles a key no focused widget took.
func (u *UI) typedKey(e *fyne.KeyEvent) {
	switch e.Name {
	case fyne.KeyEscape:
		u.closeTopDialog()
	case fyne.KeyDelete:
		if u.hasOverlay() {
			return
		}
		if j, ok := u.selectedJob(); ok && canCancel(j) {
			u.confirmCancel(j)
		}
	case fyne.KeyUp, fyne.KeyDown:
		if u.hasOverlay() {
			return
		}
		u.moveSelection(e.Name)
	}
}

// moveSelection selects the row above (KeyUp) or below (KeyDown) the selected one, or the first
// (last) row when none is selected, and scrolls it into view.
func (v *jobListView) moveSelection(key fyne.KeyName) {
	if len(v.model.rows) == 0 {
		return
	}
	i := v.selIdx
	switch {
	case i < 0 && key == fyne.KeyDown:
		i = 0
	case i < 0:
		i = len(v.model.rows) - 1
	case key == fyne.KeyDown:
		i = min(i+1, len(v.model.rows)-1)
	default:
		i = max(i-1, 0)
	}
	v.list.Select(i)
	v.list.ScrollTo(i)
}

// jobList is the job list, which keeps the window's keys when it has the focus (a click on a row
// gives it): ↑ and ↓ move the selection itself (not only the toolkit's focus mark), Delete offers
// to cancel the selected job. While it has the focus, the selected row is drawn with a focus
// ring (jobRow.focusRing); the toolkit's own mark on a row it tracks apart from the selection is
// not drawn.
type jobList struct {
	widget.List
	v       *jobListView
	focused bool
}

func newJobList(v *jobListView, length func() int, create func() fyne.CanvasObject, update func(widget.ListItemID, fyne.CanvasObject)) *jobList {
	l := &jobList{v: v}
	l.Length, l.CreateItem, l.UpdateItem = length, create, update
	l.ExtendBaseWidget(l)
	return l
}

// TypedKey moves the selection with ↑ and ↓, and offers to cancel the selected job on Delete.
func (l *jobList) TypedKey(e *fyne.KeyEvent) {
	switch e.Name {
	case fyne.KeyUp, fyne.KeyDown, fyne.KeyDelete:
		l.v.onKey(e)
	default:
		l.List.TypedKey(e)
	}
}

// FocusGained draws the selected row's focus ring.
func (l *jobList) FocusGained() {
	l.focused = true
	l.refreshRow(l.v.selIdx)
}

// FocusLost takes the focus ring away.
func (l *jobList) FocusLost() {
	l.focused = false
	l.refreshRow(l.v.selIdx)
}

// refreshRow draws row i again (its focus ring), when it is one.
func (l *jobList) refreshRow(i int) {
	if i >= 0 && i < len(l.v.model.rows) {
		l.RefreshItem(i)
	}
}

// selectedJob is the job selected in the list.
func (v *jobListView) selectedJob() (job.Job, bool) {
	i, ok := v.model.index[v.selected]
	if !ok || v.selected == 0 {
		return job.Job{}, false
	}
	return v.model.rows[i], true
}

// hasOverlay reports whether a dialog or pop-up covers the window.
func (u *UI) hasOverlay() bool { return u.Window.Canvas().Overlays().Top() != nil }

// closeTopDialog hides the newest dialog still open (one opened through dialogOpened), or else
// whatever pop-up is on top.
func (u *UI) closeTopDialog() {
	for len(u.dialogs) > 0 {
		d := u.dialogs[len(u.dialogs)-1]
		u.dialogs = u.dialogs[:len(u.dialogs)-1]
		if u.dialogShown[d] {
			d.Hide()
			return
		}
	}
	if top := u.Window.Canvas().Overlays().Top(); top != nil {
		u.Window.Canvas().Overlays().Remove(top)
	}
}

// dialogOpened notes d, about to be shown, as open until it closes: Esc closes the newest.
func (u *UI) dialogOpened(d dialog.Dialog) {
	u.dialogs = append(u.dialogs, d)
	u.dialogShown[d] = true
	d.SetOnClosed(func() {
		delete(u.dialogShown, d)
		// A field of the closed dialog would keep the focus, and with it every key and shortcut
		// (Ctrl+, after Esc from the goal's title did nothing).
		u.Window.Canvas().Unfocus()
	})
}

// keyEntry is a text entry in a dialog that gives Esc to the window, which closes the dialog on
// top: the toolkit's entry keeps every key while it has the focus, so Esc did nothing once a
// field had been clicked.
type keyEntry struct {
	widget.Entry
	esc func() // closes the dialog on top
}

// newKeyEntry makes a one-line entry, or a multi-line one that wraps at words.
func newKeyEntry(u *UI, multiLine bool) *keyEntry { return newKeyEntryEsc(u.closeTopDialog, multiLine) }

// newKeyEntryEsc is newKeyEntry giving Esc to esc.
func newKeyEntryEsc(esc func(), multiLine bool) *keyEntry {
	e := &keyEntry{esc: esc}
	e.Wrapping = fyne.TextWrap(fyne.TextTruncateClip)
	if multiLine {
		e.MultiLine = true
		e.Wrapping = fyne.TextWrapWord
	}
	e.ExtendBaseWidget(e)
	return e
}

// TypedKey closes the dialog on Esc and leaves every other key to the entry.
func (e *keyEntry) TypedKey(k *fyne.KeyEvent) {
	if k.Name == fyne.KeyEscape {
		e.esc()
		return
	}
	e.Entry.TypedKey(k)
}
