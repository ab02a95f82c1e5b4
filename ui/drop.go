package ui

import (
	"context"
	"encoding/json"
	"errors"
	"image/color"
	"os"
	"path/filepath"
	"strings"
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

// dropZone is the band that tells people what to drop, with the file picker, the goal form and
// the choice of where jobs run beside it; it lights up while files are dragged over the window
// (setDropHover). The whole window accepts drops; the window hands them to the zone
// (handleDrop), which decides what each dropped file becomes (a job as it is, a CSV job with the
// saved schema that fits it, or a question: the schema dialog, run an already processed file
// again) and submits it through submitService. The window builds its widgets (buildDropZone),
// places it and wires it to the other screens by callbacks.
type dropZone struct {
	tr       *translator       // the window's, set again by buildDropZone
	dropBg   *canvas.Rectangle // the band, lit while files are dragged over (setDropHover)
	dropHead *widget.Label

	// target is where new jobs run (app.TargetDevice, …), chosen in targetSel, which shows only
	// while cloudConfigured says the cloud is set up.
	target          string
	targetSel       *widget.Select
	cloudConfigured func() bool

	ctx context.Context // ends when the window closes
	svc submitService
	// do runs a function on the UI goroutine.
	do func(func())
	// options are the run options of a job started now (settings, where it runs). UI goroutine.
	options func() app.SubmitOptions
	// report and reportError write the status bar; errorDialog opens an error's dialog.
	report      func(msg string)
	reportError func(err error)
	errorDialog func(title string, err error)
	// reveal selects a job just submitted once its row arrives; selectJob selects an existing
	// one and shows its detail.
	reveal    func(id int64)
	selectJob func(id int64)
	// askSchema opens the schema dialog for a CSV file no saved schema fits.
	askSchema func(path string, proposal *app.CSVSniffResult)
	// parent is the window dialogs open over; opened registers a dialog with the window (Esc).
	parent func() fyne.Window
	opened func(d dialog.Dialog)
}

// submitService is what the drop zone asks of the app: submitting files, and planning and
// submitting a CSV file with a saved schema.
type submitService interface {
	Submit(ctx context.Context, paths []string, o app.SubmitOptions) ([]job.Job, error)
	PlanCSV(path string) (app.CSVPlan, error)
	SubmitCSVWithSchema(ctx context.Context, path string, s app.SavedSchema, o app.SubmitOptions) (job.Job, error)
}

// buildDropZone makes the band in tr's language with the target choice; pick opens the file
// picker and goal the goal form.
func (z *dropZone) buildDropZone(tr *translator, pick, goal func()) fyne.CanvasObject {
	z.tr = tr
	target := z.buildTargetChoice()
	bg := canvas.NewRectangle(dropFill)
	bg.StrokeColor = dropStroke
	bg.StrokeWidth = 2
	bg.CornerRadius = 12
	z.dropBg = bg

	head := widget.NewLabel(tr.T("drop.title"))
	head.SizeName = theme.SizeNameSubHeadingText
	z.dropHead = head
	kinds := hintText(tr.T("drop.kinds"), theme.SizeNameText, wrapFor(tr.T("drop.kinds")), fyne.TextAlignLeading)
	icon := widget.NewIcon(theme.UploadIcon())
	iconBox := container.New(&fixedSize{width: 56, height: 56}, icon)

	pickBtn := widget.NewButtonWithIcon(tr.T("drop.pick"), theme.FolderOpenIcon(), pick)
	pickBtn.Importance = widget.HighImportance
	goalBtn := widget.NewButtonWithIcon(tr.T("goal.button"), theme.DocumentCreateIcon(), goal)

	text := container.NewVBox(head, kinds)
	buttons := container.NewHBox(container.NewCenter(target), container.NewCenter(pickBtn), container.NewCenter(goalBtn))
	row := container.NewBorder(nil, nil, container.NewCenter(iconBox), buttons, text)
	return container.NewPadded(container.NewStack(bg, container.NewPadded(row)))
}

// targetChoices are the run places the drop zone offers, in the order shown.
var targetChoices = []string{app.TargetDevice, app.TargetCloud, app.TargetAuto}

// buildTargetChoice is the zone's "where it runs" choice. It stays hidden until the cloud
// state says cloud.json configures the cloud, so a device-only installation looks as before.
func (z *dropZone) buildTargetChoice() *widget.Select {
	labels := make([]string, len(targetChoices))
	for i, t := range targetChoices {
		labels[i] = z.tr.T("target." + t)
	}
	sel := newSelect(z.tr, labels, nil)
	sel.SetSelectedIndex(0)
	for i, t := range targetChoices {
		if t == z.target {
			sel.SetSelectedIndex(i)
		}
	}
	sel.OnChanged = func(string) {
		if i := sel.SelectedIndex(); i >= 0 {
			z.target = targetChoices[i]
		}
	}
	setVisible(sel, z.cloudConfigured())
	z.targetSel = sel
	return sel
}

// submitTarget is where a job started from the window runs: the zone's choice when the cloud
// is configured, else this PC (""). UI goroutine only.
func (z *dropZone) submitTarget() string {
	if !z.cloudConfigured() {
		return ""
	}
	return z.target
}

// The drop zone's colours, at rest and while files are dragged over the window.
var (
	dropFill        = color.NRGBA{0x2E, 0x6B, 0xE6, 0x14}
	dropStroke      = color.NRGBA{0x2E, 0x6B, 0xE6, 0x90}
	dropFillHover   = color.NRGBA{0x2E, 0x6B, 0xE6, 0x40}
	dropStrokeHover = color.NRGBA{0x2E, 0x6B, 0xE6, 0xFF}
)

// setDropHover lights the drop zone up while files are dragged over the window (over) and puts
// it back when they leave or are dropped. Only Windows tells the window about a drag before
// the drop (drop_windows.go); elsewhere the toolkit reports the drop alone.
func (z *dropZone) setDropHover(over bool) {
	if z.dropBg == nil {
		return
	}
	fill, stroke, width, title := dropFill, dropStroke, float32(2), z.tr.T("drop.title")
	if over {
		fill, stroke, width, title = dropFillHover, dropStrokeHover, 4, z.tr.T("drop.release")
	}
	z.dropBg.FillColor, z.dropBg.StrokeColor, z.dropBg.StrokeWidth = fill, stroke, width
	z.dropBg.Refresh()
	z.dropHead.SetText(title)
}

// handleDrop is the window's drop callback: every dropped file becomes a job. Folders are
// skipped with a message; the rest is submitted off the UI goroutine.
func (z *dropZone) handleDrop(_ fyne.Position, uris []fyne.URI) {
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
		z.report(z.tr.T("drop.skipped", skipped))
	}
	if len(paths) > 0 {
		z.submit(paths)
	}
}

// submit enqueues one job per path and reports the outcome in the status bar (or a dialog for
// an error). A file whose bytes were already processed comes back as the existing job instead
// of a new one (the CSV family recognises it by its SHA-256); for those, one dialog asks whether
// to run them again or to show the existing job.
func (z *dropZone) submit(paths []string) {
	opts := z.options()
	go func() {
		ctx, cancel := context.WithTimeout(z.ctx, 30*time.Second)
		defer cancel()
		// The store keeps milliseconds: a job created during this call is not before start.
		start := time.Now().Truncate(time.Millisecond)
		// A CSV file no saved schema fits waits for the schema dialog; one a saved schema fits
		// runs with it.
		plain, planned := z.planCSVs(paths)
		var jobs []job.Job
		var err error
		if len(plain) > 0 {
			jobs, err = z.svc.Submit(ctx, plain, opts)
		}
		if len(jobs) != len(plain) {
			plain = nil // Submit stopped part way: duplicates reads the paths from the jobs
		}
		schemaPaths, schemaJobs, ask, serr := z.submitPlanned(ctx, planned, opts)
		err = errors.Join(err, serr)
		if plain != nil {
			plain = append(plain, schemaPaths...)
		}
		jobs = append(jobs, schemaJobs...)
		dups := duplicates(start, plain, jobs)
		added := newJobs(jobs, dups)
		z.do(func() {
			if added > 0 {
				z.report(z.tr.T("drop.added", added))
				if first := firstNew(jobs, dups); first != 0 {
					z.reveal(first)
				}
			}
			if err != nil {
				z.reportError(err)
				z.errorDialog(z.tr.T("error.submit_title"), err)
			}
			if len(dups) > 0 {
				z.askRerun(dups)
			}
			for _, p := range ask {
				z.askSchema(p.path, p.plan.Proposal)
			}
		})
	}()
}

// firstNew is the id of the first job of jobs that is not a duplicate, or 0.
func firstNew(jobs []job.Job, dups []duplicate) int64 {
	old := map[int64]bool{}
	for _, d := range dups {
		old[d.job.ID] = true
	}
	for _, j := range jobs {
		if !old[j.ID] {
			return j.ID
		}
	}
	return 0
}

// newJobs counts the distinct jobs of jobs that are not dups: the same bytes dropped twice in
// one drop come back twice as the one job the first made.
func newJobs(jobs []job.Job, dups []duplicate) int {
	seen := map[int64]bool{}
	for _, d := range dups {
		seen[d.job.ID] = true
	}
	n := 0
	for _, j := range jobs {
		if !seen[j.ID] {
			seen[j.ID] = true
			n++
		}
	}
	return n
}

// submitForce enqueues paths again even though their files were processed before.
func (z *dropZone) submitForce(paths []string) {
	go func() {
		ctx, cancel := context.WithTimeout(z.ctx, 30*time.Second)
		defer cancel()
		jobs, err := z.svc.Submit(ctx, paths, app.SubmitOptions{Force: true})
		z.do(func() {
			if len(jobs) > 0 {
				z.report(z.tr.T("drop.added", len(jobs)))
			}
			if err != nil {
				z.reportError(err)
				z.errorDialog(z.tr.T("error.submit_title"), err)
			}
		})
	}()
}

// duplicate is a dropped file that was already processed, and the job that processed it.
type duplicate struct {
	path string
	job  job.Job
}

// duplicates picks, among the jobs Submit returned for paths (one per path, in order), those
// that existed before the call started (the command line's `run` tells them the same way), each
// with the dropped path it stands for.
func duplicates(start time.Time, paths []string, jobs []job.Job) []duplicate {
	var out []duplicate
	for i, j := range jobs {
		if !j.CreatedAt.Before(start) {
			continue
		}
		p := ""
		if len(jobs) == len(paths) {
			p = paths[i]
		}
		if p == "" {
			p = inputPath(j) // Submit stopped part way: the jobs no longer line up with paths
		}
		if p == "" {
			continue // nothing to run again
		}
		out = append(out, duplicate{path: p, job: j})
	}
	return out
}

// inputPath is the file a job read (its input's "path"), or "".
func inputPath(j job.Job) string {
	var in struct {
		Path string `json:"path"`
	}
	if json.Unmarshal(j.Input, &in) != nil {
		return ""
	}
	return in.Path
}

// maxDupNames is how many already-processed files the question names before "and N more".
const maxDupNames = 5

// rerunQuestion is the dialog's sentence for dups, in the window's language.
func (z *dropZone) rerunQuestion(dups []duplicate) string {
	tr := z.tr
	if len(dups) == 1 {
		d := dups[0]
		key := "dup.one"
		if !d.job.Status.Final() {
			key = "dup.one_queued" // waiting or running: not processed yet
		}
		return tr.T(key, filepath.Base(d.path), jobNumber(d.job), statusLabel(tr, d.job.Status))
	}
	lines := []string{tr.T("dup.many", len(dups))}
	for i, d := range dups {
		if i == maxDupNames {
			lines = append(lines, tr.T("dup.more", len(dups)-maxDupNames))
			break
		}
		lines = append(lines, tr.T("dup.item", filepath.Base(d.path), jobNumber(d.job), statusLabel(tr, d.job.Status)))
	}
	lines = append(lines, "", tr.T("dup.many_question"))
	return strings.Join(lines, "\n")
}

// askRerun asks once, for every file of one drop that was already processed, whether to run
// them again (a new job each, Force) or to show the existing job (the first one's, selected in
// the list with its detail). "Show existing" is also the safe answer: it runs nothing.
func (z *dropZone) askRerun(dups []duplicate) {
	body := widget.NewLabel(wrapText(z.rerunQuestion(dups), 60))
	body.Wrapping = fyne.TextWrapOff
	var d *dialog.CustomDialog
	again := widget.NewButtonWithIcon(z.tr.T("dup.run_again"), theme.ViewRefreshIcon(), func() {
		d.Hide()
		paths := make([]string, len(dups))
		for i, dup := range dups {
			paths[i] = dup.path
		}
		z.submitForce(paths)
	})
	again.Importance = widget.HighImportance
	show := widget.NewButtonWithIcon(z.tr.T("dup.show_existing"), theme.SearchIcon(), func() {
		d.Hide()
		z.selectJob(dups[0].job.ID)
	})
	closeBtn := widget.NewButtonWithIcon(z.tr.T("dialog.close"), theme.CancelIcon(), func() { d.Hide() })
	d = dialog.NewCustomWithoutButtons(z.tr.T("dup.title"), body, z.parent())
	d.SetButtons([]fyne.CanvasObject{closeBtn, show, again})
	z.opened(d)
	d.Show()
}

// showJob selects job id in the list (showing every status first when the filter hides it)
// and shows its detail.
func (u *UI) showJob(id int64) {
	u.selected = id
	if i, ok := u.model.index[id]; ok {
		u.selIdx = i
		u.list.Select(i)
		u.list.ScrollTo(i)
	} else {
		u.selIdx = -1
		u.list.UnselectAll()
		if u.model.query.active() {
			u.search.SetText("") // the search hides it (a new job, or one found again)
			u.typeSel.SetSelectedIndex(0)
			u.dateSel.SetSelectedIndex(0)
		}
		if u.model.filter != "" {
			u.setFilter("") // the reread selects it once it is loaded
		}
	}
	u.detail.load(id)
}
