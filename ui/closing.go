package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"jobdesk/engine/job"
)

// askBeforeClosing is the window's close request: with no job running it closes; with jobs
// running it asks first, says that they stop and start over at the next launch, and offers to
// keep them working with the window hidden in the tray (where the desktop has one).
func (u *UI) askBeforeClosing() {
	running := u.engineCounts()[job.Running]
	if running == 0 || u.closing != nil {
		if running == 0 {
			u.Window.Close()
		}
		return
	}
	tr := u.tr
	msg := widget.NewLabel(tr.T("close.running", groupInt(int64(running))))
	msg.Wrapping = wrapFor(msg.Text)
	var d *dialog.CustomDialog
	closeBtn := widget.NewButtonWithIcon(tr.T("close.anyway"), theme.CancelIcon(), func() {
		d.Hide()
		u.Window.Close()
	})
	closeBtn.Importance = widget.DangerImportance
	keep := widget.NewButton(tr.T("close.keep"), func() { d.Hide() })
	buttons := []fyne.CanvasObject{keep, closeBtn}
	if u.trayMenu != nil {
		tray := widget.NewButtonWithIcon(tr.T("close.tray"), theme.VisibilityOffIcon(), func() {
			d.Hide()
			u.Window.Hide() // the jobs go on; the tray's menu shows the window again
		})
		tray.Importance = widget.HighImportance
		buttons = append([]fyne.CanvasObject{tray}, buttons...)
	}
	d = dialog.NewCustomWithoutButtons(tr.T("close.title"), container.NewVBox(msg, container.NewCenter(container.NewHBox(buttons...))), u.Window)
	d.Resize(fyne.NewSize(520, 200))
	u.closing = d
	u.dialogOpened(d)
	d.SetOnClosed(func() {
		delete(u.dialogShown, d)
		u.Window.Canvas().Unfocus()
		u.closing = nil
	})
	d.Show()
}
