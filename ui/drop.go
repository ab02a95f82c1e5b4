package ui

import (
	"context"
	"image/color"
	"os"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"jobdesk/app"
	"jobdesk/engine/job"
)

// buildDropZone is the band that tells people what to drop, with a file picker and the goal
// form beside it. The whole window accepts drops; the band only says so.
func (u *UI) buildDropZone() fyne.CanvasObject {
	bg := canvas.NewRectangle(color.NRGBA{0x2E, 0x6B, 0xE6, 0x14})
	bg.StrokeColor = color.NRGBA{0x2E, 0x6B, 0xE6, 0x90}
	bg.StrokeWidth = 2
	bg.CornerRadius = 12

	head := widget.NewLabel(u.tr.T("drop.title"))
	head.SizeName = theme.SizeNameSubHeadingText
	kinds := widget.NewLabel(u.tr.T("drop.kinds"))
	kinds.Importance = widget.LowImportance
	kinds.Wrapping = fyne.TextWrapWord
	icon := widget.NewIcon(theme.UploadIcon())
	iconBox := container.New(&fixedSize{width: 56, height: 56}, icon)

	pick := widget.NewButtonWithIcon(u.tr.T("drop.pick"), theme.FolderOpenIcon(), u.pickFile)
	pick.Importance = widget.HighImportance
	goal := widget.NewButtonWithIcon(u.tr.T("goal.button"), theme.DocumentCreateIcon(), u.showGoalForm)

	text := container.NewVBox(head, kinds)
	buttons := container.NewHBox(container.NewCenter(pick), container.NewCenter(goal))
	row := container.NewBorder(nil, nil, container.NewCenter(iconBox), buttons, text)
	return container.NewPadded(container.NewStack(bg, container.NewPadded(row)))
}

// handleDrop is the window's drop callback: every dropped file becomes a job. Folders are
// skipped with a message; the rest is submitted off the UI goroutine.
func (u *UI) handleDrop(_ fyne.Position, uris []fyne.URI) {
	var paths []string
	skipped := 0
	for _, uri := range uris {
		if uri == nil || uri.Scheme() != "file" {
			skipped++
			continue
		}
		st, err := os.Stat(uri.Path())
		if err == nil && st.IsDir() {
			skipped++
			continue
		}
		paths = append(paths, uri.Path())
	}
	if skipped > 0 {
		u.setStatus(u.tr.T("drop.skipped", skipped))
	}
	if len(paths) > 0 {
		u.submit(paths)
	}
}

// submit enqueues one job per path and reports the outcome in the status bar (or a dialog for
// an error).
func (u *UI) submit(paths []string) {
	go func() {
		ctx, cancel := context.WithTimeout(u.ctx, 30*time.Second)
		defer cancel()
		jobs, err := u.app.Submit(ctx, paths, app.SubmitOptions{})
		u.do(func() {
			if len(jobs) > 0 {
				u.setStatus(u.tr.T("drop.added", len(jobs)))
			}
			if err != nil {
				u.setStatusError(err)
				u.showError(u.tr.T("error.submit_title"), err)
			}
		})
	}()
}

// pickFile opens the file picker; the chosen file becomes a job.
func (u *UI) pickFile() {
	d := dialog.NewFileOpen(func(rc fyne.URIReadCloser, err error) {
		if err != nil {
			u.showError(u.tr.T("error.submit_title"), job.Wrap(job.E014, err, "the file could not be opened").
				WithJa("ファイルを開けませんでした。"))
			return
		}
		if rc == nil {
			return // cancelled
		}
		path := rc.URI().Path()
		rc.Close()
		u.submit([]string{path})
	}, u.Window)
	d.Resize(fyne.NewSize(880, 580))
	d.Show()
}
