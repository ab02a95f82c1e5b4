package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"jobdesk/engine/job"
)

// TestServiceAPI walks one job through the service the window uses: submit, list, count,
// follow its events, cancel, read its history, retry, refuse an export it has no file for, run
// it, and describe its result.
func TestServiceAPI(t *testing.T) {
	a, err := Open(Config{DataDir: t.TempDir(), Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	path := filepath.Join(t.TempDir(), "memo.bin")
	if err := os.WriteFile(path, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	jobs, err := a.Submit(ctx, []string{path}, SubmitOptions{Type: "checksum"})
	if err != nil || len(jobs) != 1 {
		t.Fatal(jobs, err)
	}
	id := jobs[0].ID
	if got, err := a.List(ctx, ListFilter{TopLevel: true, Status: job.Pending}); err != nil || len(got) != 1 || got[0].ID != id {
		t.Fatalf("List: %v, %v", got, err)
	}
	if got, _ := a.List(ctx, ListFilter{Status: job.Running}); len(got) != 0 {
		t.Fatalf("List of RUNNING jobs: %v", got)
	}
	if c, err := a.Counts(ctx); err != nil || c[job.Pending] != 1 || len(c) != 1 {
		t.Fatalf("Counts: %v, %v", c, err)
	}

	events, stop := a.Subscribe(16)
	defer stop()
	if err := a.Cancel(ctx, id); err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-events:
		if e.JobID != id || e.Status != job.Cancelled {
			t.Fatalf("event %+v; want job %d CANCELLED", e, id)
		}
	case <-ctx.Done():
		t.Fatal("no event after Cancel")
	}
	if j, _ := a.Get(ctx, id); j.Status != job.Cancelled {
		t.Fatalf("Get: %s after Cancel", j.Status)
	}
	if hist, err := a.History(ctx, id); err != nil || len(hist) < 2 || hist[0].Kind != job.EventSubmitted {
		t.Fatalf("History: %+v, %v", hist, err)
	}
	if j, err := a.Retry(ctx, id); err != nil || j.ID != id || j.Status != job.Pending {
		t.Fatalf("Retry: %+v, %v", j, err)
	}
	var je *job.Error
	if err := a.Export(ctx, id, "", filepath.Join(t.TempDir(), "out.csv")); !errors.As(err, &je) || je.Code != job.E014 {
		t.Fatalf("Export of a checksum job: %v; want E014", err)
	}
	if _, err := a.Get(ctx, id+1000); !errors.As(err, &je) || je.Code != job.E014 {
		t.Fatalf("Get of a missing job: %v; want E014", err)
	}

	if a.EngineRunning(ctx) {
		t.Fatal("an engine runs before StartEngine")
	}
	if err := a.StartEngine(ctx); err != nil {
		t.Fatal(err)
	}
	if !a.EngineRunning(ctx) {
		t.Fatal("no engine after StartEngine")
	}
	j, err := a.Wait(ctx, id)
	if err != nil || j.Status != job.Succeeded {
		t.Fatalf("Wait: %+v, %v", j, err)
	}
	s := SummarizeResult(j)
	if len(s.Figures) != 2 || s.Figures[0] != (ResultFigure{WordsKey: "result.bytes", Value: "5"}) || s.Figures[1].WordsKey != "result.sha256" {
		t.Fatalf("summary %+v", s)
	}
	v := DescribeResult(j)
	if len(v.Rows) != 2 || v.Rows[0].LabelKey != "field.bytes" || v.Rows[1].LabelKey != "field.sha256" || v.More != 0 {
		t.Fatalf("view %+v", v)
	}
}
