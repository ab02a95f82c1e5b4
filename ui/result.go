package ui

import (
	"net/url"
	"path/filepath"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"jobdesk/app"
)

// resultRow is one line of a job's result as the detail pane shows it: a label in the
// window's language and a value written for people; File is set when the value is a file the
// job wrote, which the pane offers to open.
type resultRow struct {
	Label, Value, File string
}

// resultRows puts a job's result as the app describes it (app.DescribeResult) into the
// window's language: label and word keys become sentences, and fields left out beyond the
// limit become a last row that says how many.
func resultRows(tr *translator, v app.ResultView) []resultRow {
	var rows []resultRow
	for _, r := range v.Rows {
		row := resultRow{Label: r.Label, Value: r.Value, File: r.File}
		if r.LabelKey != "" {
			row.Label = tr.T(r.LabelKey)
		}
		switch {
		case r.ValueKey != "" && r.Value != "":
			row.Value = tr.T(r.ValueKey, r.Value)
		case r.ValueKey != "":
			row.Value = tr.T(r.ValueKey)
		}
		rows = append(rows, row)
	}
	if v.More > 0 {
		rows = append(rows, resultRow{Value: tr.T("result.more", v.More)})
	}
	return rows
}

// resultForm renders rows as a two-column form; a file's value carries a button that opens it
// with the desktop's default application.
func (u *UI) resultForm(rows []resultRow) fyne.CanvasObject {
	var cells []fyne.CanvasObject
	for _, r := range rows {
		label := widget.NewLabel(r.Label)
		label.TextStyle.Bold = true
		value := widget.NewLabel(r.Value)
		value.Wrapping = fyne.TextWrapWord
		value.Selectable = r.File == ""
		if r.File == "" {
			cells = append(cells, label, value)
			continue
		}
		path := r.File
		open := widget.NewButtonWithIcon(u.tr.T("result.open"), theme.FileIcon(), func() { u.openFile(path) })
		open.Importance = widget.LowImportance
		cells = append(cells, label, container.NewBorder(nil, nil, nil, open, value))
	}
	return container.New(layout.NewFormLayout(), cells...)
}

// openFile opens path with the desktop's default application (xdg-open on Linux).
func (u *UI) openFile(path string) {
	if u.fyneApp == nil {
		return
	}
	link, err := url.Parse(storage.NewFileURI(path).String())
	if err != nil {
		return
	}
	if err := u.fyneApp.OpenURL(link); err != nil {
		u.setStatus(u.tr.T("result.open_failed", filepath.Base(path)))
	}
}
