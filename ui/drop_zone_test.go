package ui

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/test"

	"jobdesk/app"
	"jobdesk/engine/job"
)

// fakeSubmit is a submitService that records what it was asked and answers from a counter; a
// CSV file named in schemas runs with that saved schema, one in ask waits for the dialog.
type fakeSubmit struct {
	submitted  chan []string
	withSchema chan string
	schemas    map[string]app.SavedSchema
	ask        map[string]bool
	nextID     int64
}

func (f *fakeSubmit) Submit(_ context.Context, paths []string, o app.SubmitOptions) ([]job.Job, error) {
	f.submitted <- paths
	jobs := make([]job.Job, len(paths))
	for i := range paths {
		f.nextID++
		jobs[i] = job.Job{ID: f.nextID, CreatedAt: time.Now().Add(time.Second)}
	}
	return jobs, nil
}

func (f *fakeSubmit) PlanCSV(path string) (app.CSVPlan, error) {
	if s, ok := f.schemas[filepath.Base(path)]; ok {
		return app.CSVPlan{Schema: &s}, nil
	}
	if f.ask[filepath.Base(path)] {
		return app.CSVPlan{Proposal: &app.CSVSniffResult{}}, nil
	}
	return app.CSVPlan{}, nil
}

func (f *fakeSubmit) SubmitCSVWithSchema(_ context.Context, path string, s app.SavedSchema, _ app.SubmitOptions) (job.Job, error) {
	f.withSchema <- filepath.Base(path) + "/" + s.Name
	f.nextID++
	return job.Job{ID: f.nextID, CreatedAt: time.Now().Add(time.Second)}, nil
}

// TestDropZoneAloneDecidesWhatToSubmit: the drop zone, built against a fake service and no
// window or database, turns one drop into the jobs it stands for: a folder is skipped with a
// message, a plain file is submitted as it is, a CSV file a saved schema fits runs with that
// schema, one no schema fits opens the schema dialog; the first new job is revealed.
func TestDropZoneAloneDecidesWhatToSubmit(t *testing.T) {
	test.NewTempApp(t)
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	plain := write("a.bin", "xyz")
	known := write("社員.csv", "社員番号,氏名\n1,山田\n")
	unknown := write("other.csv", "x,y\n1,2\n")
	var employees app.SavedSchema
	employees.Name = "employees"
	svc := &fakeSubmit{
		submitted: make(chan []string, 4), withSchema: make(chan string, 4),
		schemas: map[string]app.SavedSchema{"社員.csv": employees},
		ask:     map[string]bool{"other.csv": true},
	}
	calls := make(chan func(), 16)
	var said []string
	var revealed []int64
	var asked []string
	z := &dropZone{
		tr: newTranslator(LangEn), ctx: context.Background(), svc: svc,
		do:          func(f func()) { calls <- f },
		options:     func() app.SubmitOptions { return app.SubmitOptions{} },
		report:      func(msg string) { said = append(said, msg) },
		reportError: func(err error) { t.Errorf("error reported: %v", err) },
		errorDialog: func(_ string, err error) { t.Errorf("error dialog: %v", err) },
		reveal:      func(id int64) { revealed = append(revealed, id) },
		selectJob:   func(int64) {},
		askSchema:   func(path string, _ *app.CSVSniffResult) { asked = append(asked, filepath.Base(path)) },
		parent:      func() fyne.Window { return nil },
		opened:      func(dialog.Dialog) {},
	}
	z.handleDrop(fyne.Position{}, fileURIs(dir, plain, known, unknown))
	if len(said) != 1 || said[0] != z.tr.T("drop.skipped", 1) {
		t.Fatalf("status %q, want the folder's skip message", said)
	}
	select {
	case f := <-calls:
		f()
	case <-time.After(30 * time.Second):
		t.Fatal("the drop's outcome never reached the UI goroutine")
	}
	if got := <-svc.submitted; len(got) != 1 || got[0] != plain {
		t.Fatalf("submitted %q, want the plain file alone", got)
	}
	if got := <-svc.withSchema; got != "社員.csv/employees" {
		t.Fatalf("submitted with schema %q", got)
	}
	sort.Strings(asked)
	if len(asked) != 1 || asked[0] != "other.csv" {
		t.Fatalf("schema dialog for %q, want other.csv", asked)
	}
	if len(said) != 2 || said[1] != z.tr.T("drop.added", 2) || len(revealed) != 1 || revealed[0] != 1 {
		t.Fatalf("status %q, revealed %v; want 2 added and job 1 revealed", said, revealed)
	}
}
