package ui

import (
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
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
		} else if r.LabelJa != "" && tr.lang == LangJa {
			row.Label = r.LabelJa // a label the result carries in both languages (a CSV layout's entity)
		}
		if r.LabelKey != "" && r.ValueKey == "" && tr.Has(r.LabelKey+"."+r.Value) {
			row.Value = tr.T(r.LabelKey + "." + r.Value) // a word a family writes, such as NATIVE
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
func (rv *resultViews) resultForm(rows []resultRow) fyne.CanvasObject {
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
		open := widget.NewButtonWithIcon(rv.host.tr().T("result.open"), theme.FileIcon(), func() { rv.openFile(path) })
		open.Importance = widget.LowImportance
		cells = append(cells, label, container.NewBorder(nil, nil, nil, open, value))
	}
	return container.New(layout.NewFormLayout(), cells...)
}

// openFile opens path with the desktop's default application (xdg-open on Linux); where none
// answers, the window shows the file itself and offers to save it elsewhere.
func (rv *resultViews) openFile(path string) {
	if !rv.openURI(path) {
		rv.showFileInApp(path)
	}
}

// openURI asks the desktop to open a file or folder; it reports whether something answered.
func (rv *resultViews) openURI(path string) bool {
	if rv.host.desktop == nil {
		return false
	}
	link, err := url.Parse(storage.NewFileURI(path).String())
	if err != nil {
		return false
	}
	if err := rv.host.desktop.OpenURL(link); err != nil {
		rv.host.setStatus(rv.host.tr().T("result.open_failed", filepath.Base(path)))
		return false
	}
	return true
}

// maxPreviewBytes bounds the text shown of a file the desktop could not open.
const maxPreviewBytes = 64 << 10

// showFileInApp shows path in a dialog — Markdown rendered, text as text, anything else by its
// name and size — with a button that saves a copy where the person chooses.
func (rv *resultViews) showFileInApp(path string) {
	tr := rv.host.tr()
	var body fyne.CanvasObject
	data, err := readHead(path, maxPreviewBytes)
	switch ext := strings.ToLower(filepath.Ext(path)); {
	case err != nil:
		body = widget.NewLabel(rv.host.errorText(err))
	case ext == ".md":
		rt := markdownRichText(string(data))
		rt.Wrapping = fyne.TextWrapWord
		body = rt
	case ext == ".csv" || ext == ".txt" || ext == ".json" || ext == ".log":
		l := widget.NewLabel(strings.TrimPrefix(string(data), "\uFEFF"))
		l.TextStyle.Monospace = true
		l.Selectable = true
		body = l
	default:
		l := widget.NewLabel(tr.T("open.no_preview"))
		l.Wrapping = wrapFor(l.Text)
		body = l
	}
	where := widget.NewLabel(path)
	where.Selectable = true
	where.Wrapping = fyne.TextWrapBreak
	save := widget.NewButtonWithIcon(tr.T("open.save_as"), theme.DocumentSaveIcon(), func() { rv.askCopy(path) })
	save.Importance = widget.HighImportance
	content := container.NewBorder(container.NewVBox(where, container.NewHBox(save)), nil, nil, nil, container.NewScroll(body))
	d := dialog.NewCustom(filepath.Base(path), tr.T("dialog.close"), content, rv.host.window())
	d.Resize(dialogSize(rv.host.window()))
	rv.host.dialogOpened(d)
	d.Show()
}

// readHead reads at most n bytes from the start of path.
func readHead(path string, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, n))
}

// askCopy asks where to save a copy of path, and writes it there.
func (rv *resultViews) askCopy(path string) {
	d := dialog.NewFileSave(func(w fyne.URIWriteCloser, err error) {
		if err != nil {
			rv.host.showError(rv.host.tr().T("error.save_title"), err)
			return
		}
		if w == nil {
			return
		}
		defer w.Close()
		if err := copyFileTo(path, w); err != nil {
			rv.host.showError(rv.host.tr().T("error.save_title"), err)
			return
		}
		rv.host.setStatus(rv.host.tr().T("status.saved", w.URI().Name()))
	}, rv.host.window())
	d.SetFileName(filepath.Base(path))
	d.Resize(dialogSize(rv.host.window()))
	d.Show()
}

// copyFileTo copies the file at path to w.
func copyFileTo(path string, w io.Writer) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}
