package ui

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"jobdesk/app"
	"jobdesk/engine/job"
)

// This file shows a finished job's whole result inside the window, under the detail pane's
// labelled fields: a CSV job's rejected rows, a converted document, an AI goal's chart or an
// eligibility extraction's requirements, with buttons that save each result file where the
// person chooses. What it shows is read off the UI goroutine through the app's service API.

// resultFamily says which full view a finished job's result gets.
type resultFamily int

const (
	resultNone resultFamily = iota
	resultCSV
	resultDocument
	resultGoal
	resultEligibility
)

// familyOfResult picks the full view for j from what its result holds.
func familyOfResult(j job.Job) resultFamily {
	if !j.Status.Final() || len(j.Result) == 0 {
		return resultNone
	}
	v := app.DescribeResult(j)
	has := func(key string) bool {
		for _, r := range v.Rows {
			if r.LabelKey == "field."+key {
				return true
			}
		}
		return false
	}
	switch {
	case j.Type == app.TypeEligibility:
		return resultEligibility
	case has("errorsCsv") || has("reportXlsx"):
		return resultCSV
	case has("output_path"):
		return resultDocument
	case has("goal_id"):
		return resultGoal
	}
	return resultNone
}

// resultExtras is the full view of finished job j and its save buttons; it fills itself once
// the service answered. It returns nil when j has nothing more to show.
func (rv *resultViews) resultExtras(j job.Job) fyne.CanvasObject {
	fam := familyOfResult(j)
	formats := app.ExportFormats(j)
	if fam == resultNone && len(formats) == 0 {
		return nil
	}
	box := container.NewVBox()
	if bar := rv.exportBar(j, formats); bar != nil {
		box.Add(bar)
	}
	body := container.NewVBox(widget.NewProgressBarInfinite())
	box.Add(body)
	seq := rv.host.gen()
	// fill shows what build makes (on the window's thread), or err, unless another job was
	// selected meanwhile.
	fill := func(err error, build func() fyne.CanvasObject) {
		rv.host.do(func() {
			if seq != rv.host.gen() {
				return
			}
			var o fyne.CanvasObject
			if err != nil {
				o = rv.problemLine(err)
			} else {
				o = build()
			}
			body.Objects = []fyne.CanvasObject{o}
			body.Refresh()
		})
	}
	go func() {
		ctx, cancel := context.WithTimeout(rv.host.ctx, 30*time.Second)
		defer cancel()
		switch fam {
		case resultCSV:
			page, err := rv.host.svc.CSVErrors(ctx, j.ID, 0, csvPageSize)
			fill(err, func() fyne.CanvasObject { return newCSVErrorView(rv, j, page).root })
		case resultDocument:
			doc, err := rv.host.svc.Document(ctx, j.ID)
			fill(err, func() fyne.CanvasObject { return newDocView(rv, j, doc).root })
		case resultGoal:
			g, err := rv.host.svc.GoalOfJob(ctx, j.ID)
			fill(err, func() fyne.CanvasObject { return rv.goalView(g) })
		case resultEligibility:
			r, _ := app.EligibilityOf(j)
			fill(nil, func() fyne.CanvasObject { return rv.eligibilityView(r) })
		default:
			fill(nil, func() fyne.CanvasObject { return layout.NewSpacer() })
		}
	}()
	return box
}

// problemLine is an error in one wrapped line of the window's language.
func (rv *resultViews) problemLine(err error) fyne.CanvasObject {
	return problemLine(rv.host.tr(), err)
}

// problemLine is an error as a red line in tr's language.
func problemLine(tr *translator, err error) fyne.CanvasObject {
	l := widget.NewLabel(errorLine(tr, err))
	l.Importance = widget.DangerImportance
	l.Wrapping = wrapFor(l.Text)
	return l
}

// exportBar offers to save each of j's result files in the formats it has, and to open the
// folder that holds them; nil when there is nothing to save.
func (rv *resultViews) exportBar(j job.Job, formats []string) fyne.CanvasObject {
	if len(formats) == 0 {
		return nil
	}
	bar := container.NewHBox()
	for _, f := range formats {
		format := f
		b := widget.NewButtonWithIcon(rv.host.tr().T("export."+format), theme.DocumentSaveIcon(), func() { rv.askSave(j, format) })
		bar.Add(b)
	}
	if dir := resultFolder(j); dir != "" {
		b := widget.NewButtonWithIcon(rv.host.tr().T("export.folder"), theme.FolderOpenIcon(), func() { rv.openFolder(j, dir) })
		b.Importance = widget.LowImportance
		bar.Add(b)
	}
	return container.NewHScroll(bar)
}

// resultFolder is the folder of the first result file j names, or "".
func resultFolder(j job.Job) string {
	for _, r := range app.DescribeResult(j).Rows {
		if r.File != "" {
			return filepath.Dir(r.File)
		}
	}
	return ""
}

// suggestedName is the file name a save dialog proposes for j's result in format.
func suggestedName(j job.Job, format string) string {
	base := strings.TrimSuffix(filepath.Base(j.Name), filepath.Ext(j.Name))
	if base == "" || base == "." {
		base = fmt.Sprintf("job-%d", j.Number) // the number people know it by
		if j.Number == 0 {
			base = fmt.Sprintf("job-id%d", j.ID)
		}
	}
	switch format {
	case "csv":
		if j.Type == "csv" || familyOfResult(j) == resultCSV {
			return base + "-errors.csv"
		}
	case "xlsx":
		if familyOfResult(j) == resultCSV {
			return base + "-report.xlsx"
		}
	}
	return base + "." + format
}

// askSave asks where to save j's result in format (JobDesk's picker, opening in the folder
// used last); the chosen file is written by saveResult.
func (rv *resultViews) askSave(j job.Job, format string) {
	rv.host.openSaver(suggestedName(j, format), func(path string) { rv.saveResult(j.ID, format, path) })
}

// saveResult writes job id's result in format to path off the UI goroutine and says how it went.
func (rv *resultViews) saveResult(id int64, format, path string) {
	go func() {
		ctx, cancel := context.WithTimeout(rv.host.ctx, 2*time.Minute)
		defer cancel()
		err := rv.host.svc.ExportResult(ctx, id, format, path)
		rv.host.do(func() {
			if err != nil {
				rv.host.showError(rv.host.tr().T("error.save_title"), err)
				return
			}
			rv.host.setStatus(rv.host.tr().T("status.saved", filepath.Base(path)))
		})
	}()
}

// openFolder opens the folder holding j's result files with the desktop's file manager; where
// none answers, the window lists the files itself and offers to save them elsewhere.
func (rv *resultViews) openFolder(j job.Job, dir string) {
	var files []string
	for _, r := range app.DescribeResult(j).Rows {
		if r.File != "" {
			files = append(files, r.File)
		}
	}
	if opener := folderOpener(); opener != "" {
		// The desktop's opener says, by its exit status, when no file manager answered; the
		// toolkit's OpenURL starts it and reports nothing.
		rv.host.setStatus(rv.host.tr().T("open.opening", dir))
		cmd := exec.Command(opener, dir)
		if err := cmd.Start(); err == nil {
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			go func() {
				select {
				case err := <-done:
					if err != nil {
						rv.host.do(func() {
							rv.host.setStatus(rv.host.tr().T("result.open_failed", dir))
							rv.showFiles(dir, files)
						})
					}
				case <-time.After(openerPatience):
					// Still running: a file manager that stays in the foreground; it answered.
				}
			}()
			return
		}
	}
	if rv.openURI(dir) {
		rv.host.setStatus(rv.host.tr().T("open.opening", dir))
		return
	}
	rv.showFiles(dir, files)
}

// openerPatience is how long the desktop's opener may take to say it failed.
const openerPatience = 10 * time.Second

// folderOpener is the freedesktop opener (xdg-open) on Linux and the BSDs when it is installed,
// else "" (Windows and macOS open folders through the toolkit).
func folderOpener() string {
	if runtime.GOOS == "windows" || runtime.GOOS == "darwin" {
		return ""
	}
	p, err := exec.LookPath("xdg-open")
	if err != nil {
		return ""
	}
	return p
}

// showFiles lists files (in folder dir) with a button each that shows the file in the window.
func (rv *resultViews) showFiles(dir string, files []string) {
	rows := container.NewVBox()
	note := widget.NewLabel(rv.host.tr().T("open.no_opener"))
	note.Wrapping = wrapFor(note.Text)
	path := widget.NewLabel(dir)
	path.Selectable = true
	path.Wrapping = fyne.TextWrapBreak
	rows.Add(note)
	rows.Add(path)
	var d dialog.Dialog
	for _, f := range files {
		file := f
		b := widget.NewButtonWithIcon(filepath.Base(file), theme.FileIcon(), func() {
			d.Hide()
			rv.showFileInApp(file)
		})
		b.Alignment = widget.ButtonAlignLeading
		rows.Add(b)
	}
	d = dialog.NewCustom(rv.host.tr().T("export.folder"), rv.host.tr().T("dialog.close"), container.New(&fixedSize{width: 460}, rows), rv.host.window())
	rv.host.dialogOpened(d)
	d.Show()
}

// dialogSize is a large dialog's size in window w: most of it.
func dialogSize(w fyne.Window) fyne.Size {
	s := w.Canvas().Size()
	return fyne.NewSize(max(480, s.Width*0.85), max(360, s.Height*0.85))
}

// tallBox gives content a fixed height (its width follows the pane), so a table, tree or
// document scrolls inside the detail pane instead of stretching it.
func tallBox(content fyne.CanvasObject, height float32) fyne.CanvasObject {
	return container.New(&fixedHeight{height: height}, content)
}

// fixedHeight is a layout of fixed height and any width.
type fixedHeight struct{ height float32 }

// MinSize is the fixed height and the widest object's minimum width.
func (l *fixedHeight) MinSize(objects []fyne.CanvasObject) fyne.Size {
	w := float32(0)
	for _, o := range objects {
		w = max(w, o.MinSize().Width)
	}
	return fyne.NewSize(w, l.height)
}

// Layout stretches every object over the whole area.
func (l *fixedHeight) Layout(objects []fyne.CanvasObject, size fyne.Size) {
	for _, o := range objects {
		o.Move(fyne.NewPos(0, 0))
		o.Resize(size)
	}
}
