package ui

import (
	"context"
	"errors"
	"path/filepath"

	"jobdesk/app"
	"jobdesk/engine/job"
)

// settings returns the device's settings (the data folder's settings.json).
func (u *UI) settings() app.Settings { return u.app.Settings() }

// submitOptions are the run options of a job started from the window: the settings' CSV
// tolerance and the documents' OCR, furigana and page limit, and where the drop zone says it
// runs. UI goroutine only.
func (u *UI) submitOptions() app.SubmitOptions {
	return app.SubmitOptions{Extra: u.settings().SubmitExtra(), Target: u.submitTarget()}
}

// csvPlan is a dropped CSV file that runs with a saved schema, or needs one first.
type csvPlan struct {
	path string
	plan app.CSVPlan
}

// planCSVs splits paths into those that run as they are and the CSV files that run with a saved
// schema or wait for the schema dialog. Off the UI goroutine: the sniffer reads each CSV's start.
func (z *dropZone) planCSVs(paths []string) (plain []string, planned []csvPlan) {
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil || app.DetectType(abs) != "csv" {
			plain = append(plain, p)
			continue
		}
		pl, err := z.svc.PlanCSV(abs)
		if err != nil || pl.Schema == nil && !pl.NeedsSchema() {
			plain = append(plain, p)
			continue
		}
		planned = append(planned, csvPlan{abs, pl})
	}
	return plain, planned
}

// submitPlanned submits the planned CSV files that have a schema and returns their jobs with
// their paths; the others are returned for the dialog.
func (z *dropZone) submitPlanned(ctx context.Context, planned []csvPlan, o app.SubmitOptions) (paths []string, jobs []job.Job, ask []csvPlan, err error) {
	for _, p := range planned {
		if p.plan.NeedsSchema() {
			ask = append(ask, p)
			continue
		}
		j, e := z.svc.SubmitCSVWithSchema(ctx, p.path, *p.plan.Schema, o)
		if e != nil {
			err = errors.Join(err, e)
			continue
		}
		paths = append(paths, p.path)
		jobs = append(jobs, j)
	}
	return paths, jobs, ask, err
}

// revealJob selects job id and scrolls the list to it once its row is there (a job just
// submitted arrives on the event stream a moment later).
func (u *UI) revealJob(id int64) {
	u.revealID = id
	u.showJob(id)
	if i, ok := u.model.index[id]; ok {
		u.list.ScrollTo(i)
		u.revealID = 0
	}
}

// baseName is a path's file name.
func baseName(p string) string { return filepath.Base(p) }

// errorf is a usage error (E014) whose sentence is already in the window's language.
func errorf(msg string) error { return job.Errorf(job.E014, "%s", msg).WithJa(msg) }
