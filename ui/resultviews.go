package ui

import (
	"context"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"

	"jobdesk/app"
)

// resultViews are the views of an ended job the detail pane shows under its fields: the
// labelled result form, the full view of a finished job's result (a CSV job's rejected rows, a
// converted document, an AI goal's chart, an eligibility extraction's requirements) with its
// save buttons, the error and cancelled cards, and the files a job wrote, opened or shown in
// the window (result.go, results_view.go, results_csv.go, results_doc.go, results_ai.go,
// cards.go). It reads results through a narrow resultService and reaches the window only
// through its host. The question before cancelling a job (confirmCancel in cards.go) is a job
// action the job list, the keys and the detail pane share, and stays with the window.
type resultViews struct {
	host resultHost
}

// resultService is what the result views read from the app.
type resultService interface {
	CSVErrors(ctx context.Context, id int64, offset, limit int) (app.CSVErrorPage, error)
	Document(ctx context.Context, id int64) (app.DocumentView, error)
	GoalOfJob(ctx context.Context, id int64) (app.GoalView, error)
	ExportResult(ctx context.Context, id int64, format, out string) error
}

// resultHost is what the window gives the result views: the service, the desktop, the window's
// current language, window and detail pane, and its status line, dialogs and file picker.
type resultHost struct {
	svc resultService
	// desktop opens files and folders and holds the clipboard; nil: nothing answers.
	desktop fyne.App
	ctx     context.Context
	// do runs a function on the UI goroutine.
	do func(func())
	// tr and window are the window's translator and window as they are now (a language change
	// rebuilds the window).
	tr     func() *translator
	window func() fyne.Window
	// gen is the detail pane's rebuild count: a view read in the background fills only the
	// pane it was made for.
	gen func() int

	setStatus      func(msg string)
	setStatusError func(err error)
	showError      func(title string, err error)
	errorText      func(err error) string
	// dialogOpened records a dialog the window's Esc closes.
	dialogOpened func(d dialog.Dialog)
	// hoverText shows full over content when the pointer rests on it and content is cut.
	hoverText func(content fyne.CanvasObject, full string) fyne.CanvasObject
	// openSaver asks where to save a file, JobDesk's picker opening in the folder used last.
	openSaver func(name string, onSave func(path string))
}

// newResultViews wires the result views to window u.
func newResultViews(u *UI) resultViews {
	return resultViews{host: resultHost{
		svc:            u.app,
		desktop:        u.fyneApp,
		ctx:            u.ctx,
		do:             func(f func()) { u.do(f) },
		tr:             func() *translator { return u.tr },
		window:         func() fyne.Window { return u.Window },
		gen:            func() int { return u.detail.gen },
		setStatus:      u.setStatus,
		setStatusError: u.setStatusError,
		showError:      u.showError,
		errorText:      u.errorText,
		dialogOpened:   u.dialogOpened,
		hoverText:      func(c fyne.CanvasObject, full string) fyne.CanvasObject { return newHoverText(u, c, full) },
		openSaver:      func(name string, onSave func(string)) { u.openSaver(u.pickerStart(), name, onSave) },
	}}
}
