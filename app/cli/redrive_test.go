package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"jobdesk/app"
	"jobdesk/engine/docjob"
	"jobdesk/engine/functions"
	"jobdesk/engine/job"
)

// `jobdesk redrive ID`, `flow redrive ID` and `flow history ID` take the job number a person sees
// (a conversion's), not only the execution's ARN.
func TestRedriveByTheJobNumber(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	txt := filepath.Join(t.TempDir(), "memo.txt")
	os.WriteFile(txt, []byte("予算は承認されました。\n"), 0o644)

	// A conversion whose Convert step fails (the disk was full), run by an App of this folder.
	a, err := app.Open(app.Config{DataDir: dir, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	a.Flow().RegisterFunction(docjob.FunctionName, func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
		var p struct{ Mode string }
		json.Unmarshal(in, &p)
		if p.Mode == "ingest" {
			return json.RawMessage(`{"cached":false,"kind":"text","sha256":"0"}`), nil
		}
		return nil, job.Errorf(job.E009, "the disk is full").WithJa("ディスクがいっぱいです。").Permanent()
	}, functions.Options{})
	jobs, err := a.Submit(ctx, []string{txt}, app.SubmitOptions{Type: "convert"})
	if err != nil {
		t.Fatal(err)
	}
	a.StartEngine(ctx)
	if j, _ := a.Wait(ctx, jobs[0].ID); j.Status != job.Failed {
		t.Fatalf("the conversion: %+v", j)
	}
	a.Close()
	id := strconv.FormatInt(jobs[0].ID, 10)

	code, out, errOut := runCLI(t, "--data-dir", dir, "flow", "history", id)
	if code != ExitOK || !strings.Contains(out, "ExecutionFailed") || !strings.Contains(out, "name=Convert") {
		t.Fatalf("flow history %s: %d %s %s", id, code, out, errOut)
	}
	code, out, errOut = runCLI(t, "--data-dir", dir, "redrive", id)
	if code != ExitOK || !strings.HasPrefix(out, "job "+id+"\tRUNNING\t") || !strings.Contains(out, ":execution:document-conversion:") {
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
	if code, _, errOut = runCLI(t, "--data-dir", dir, "flow", "redrive", id); code != ExitUsage || !strings.Contains(errOut, "E014") {
		t.Fatalf("flow redrive of a succeeded job: %d %s", code, errOut)
	}
}
