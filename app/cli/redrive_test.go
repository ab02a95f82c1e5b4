package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"jobdesk/app"
	"jobdesk/engine/docjob"
	"jobdesk/engine/functions"
	"jobdesk/engine/job"
)

// `jobdesk redrive JOB`, `flow redrive JOB` and `flow history JOB` take the job number a person
// sees (a conversion's), not only the execution's ARN; and the jobs a person started are
// numbered #1, #2 although the first one's workflow made task jobs in between.
func TestRedriveByTheJobNumber(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	txt := filepath.Join(t.TempDir(), "memo.txt")
	os.WriteFile(txt, []byte("予算は承認されました。\n"), 0o644)
	csvText, _ := userLog(40, 5, nil)
	csvFile := writeFile(t, t.TempDir(), "users.csv", []byte(csvText))

	// A CSV import that runs its workflow (an execution and its Task jobs), then a conversion
	// whose Convert step fails (the disk was full), run by an App of this folder.
	convertFails := functions.Function{Name: docjob.FunctionName, Handler: func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
		var p struct{ Mode string }
		json.Unmarshal(in, &p)
		if p.Mode == "ingest" {
			return json.RawMessage(`{"cached":false,"kind":"text","sha256":"0"}`), nil
		}
		return nil, job.Errorf(job.E009, "the disk is full").WithJa("ディスクがいっぱいです。").Permanent()
	}}
	a, err := app.Open(app.Config{DataDir: dir, Workers: 2, Functions: []functions.Function{convertFails}})
	if err != nil {
		t.Fatal(err)
	}
	a.StartEngine(ctx)
	imports, err := a.Submit(ctx, []string{csvFile}, app.SubmitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if j, _ := a.Wait(ctx, imports[0].ID); j.Status != job.Succeeded {
		t.Fatalf("the CSV import: %+v", j)
	}
	jobs, err := a.Submit(ctx, []string{txt}, app.SubmitOptions{Type: "convert"})
	if err != nil {
		t.Fatal(err)
	}
	if j, _ := a.Wait(ctx, jobs[0].ID); j.Status != job.Failed {
		t.Fatalf("the conversion: %+v", j)
	}
	steps, err := a.List(ctx, app.ListFilter{})
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	if imports[0].Number != 1 || jobs[0].Number != 2 || jobs[0].ID <= imports[0].ID+1 {
		t.Fatalf("the import is job id %d #%d, the conversion id %d #%d; want #1 and #2 with the workflow's jobs between their ids",
			imports[0].ID, imports[0].Number, jobs[0].ID, jobs[0].Number)
	}
	for _, j := range steps {
		if j.ParentID != 0 && j.Number != 0 {
			t.Fatalf("the workflow's job id %d (%s) has number %d", j.ID, j.Type, j.Number)
		}
	}
	code, out, errOut := runCLI(t, "--data-dir", dir, "show", "2")
	if code != ExitOK || !strings.Contains(out, "memo.txt") || !strings.Contains(out, "#2") {
		t.Fatalf("show 2: %d %s %s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "--data-dir", dir, "ls")
	if code != ExitOK || !regexp.MustCompile(`(?m)^2\s+convert\s+FAILED\s.*memo\.txt`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^1\s+csv\s+SUCCEEDED\s.*users\.csv`).MatchString(out) {
		t.Fatalf("ls: %d\n%s%s", code, out, errOut)
	}
	id := "2"
	code, out, errOut = runCLI(t, "--data-dir", dir, "flow", "history", id)
	if code != ExitOK || !strings.Contains(out, "ExecutionFailed") || !strings.Contains(out, "name=Convert") {
		t.Fatalf("flow history %s: %d %s %s", id, code, out, errOut)
	}
	code, out, errOut = runCLI(t, "--data-dir", dir, "redrive", id)
	if code != ExitOK || !strings.HasPrefix(out, "job 2\tRUNNING\t") || !strings.Contains(out, ":execution:document-conversion:") {
		t.Fatalf("redrive %s: %d %s %s", id, code, out, errOut)
	}
	// The device's converter, in an App that runs the engine, finishes the job.
	a, err = app.Open(app.Config{DataDir: dir, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	a.StartEngine(ctx)
	if j, _ := a.Wait(ctx, jobs[0].ID); j.Status != job.Succeeded {
		t.Fatalf("after the redrive: %+v", j)
	}
	a.Close()
	code, out, _ = runCLI(t, "--data-dir", dir, "flow", "history", id)
	if code != ExitOK || !strings.Contains(out, "ExecutionRedriven") || !strings.Contains(out, "ExecutionSucceeded") {
		t.Fatalf("flow history after the redrive: %d %s", code, out)
	}
	// Nothing left to redrive: E014, exit 2 as for a usage error.
	if code, _, errOut = runCLI(t, "--data-dir", dir, "flow", "redrive", id); code != ExitUsage || !strings.Contains(errOut, "E014") ||
		!strings.Contains(errOut, "job #2 is SUCCEEDED") {
		t.Fatalf("flow redrive of a succeeded job: %d %s", code, errOut)
	}
}
