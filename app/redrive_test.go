package app

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"jobdesk/app/family"
	"jobdesk/engine/docjob"
	"jobdesk/engine/flow"
	"jobdesk/engine/functions"
	"jobdesk/engine/job"
)

// flakyConverter replaces the device's document-converter with one that counts its calls by mode
// and fails the first convert with an error the workflow does not retry (a full disk, say).
func flakyConverter(t *testing.T, a *App) (ingests, converts *atomic.Int64) {
	t.Helper()
	var real functions.Function
	for _, f := range a.families {
		if fs, ok := f.(family.FunctionSource); ok {
			for _, fn := range fs.Functions() {
				if fn.Name == docjob.FunctionName {
					real = fn
				}
			}
		}
	}
	if real.Handler == nil {
		t.Fatal("no document-converter function")
	}
	ingests, converts = new(atomic.Int64), new(atomic.Int64)
	a.flow.RegisterFunction(real.Name, func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
		var p struct{ Mode string }
		json.Unmarshal(in, &p)
		switch p.Mode {
		case "ingest":
			ingests.Add(1)
		case "convert":
			if converts.Add(1) == 1 {
				return nil, job.Errorf(job.E009, "the disk is full").WithJa("ディスクがいっぱいです。").Permanent()
			}
		}
		return real.Handler(ctx, in, r)
	}, real.Options)
	return ingests, converts
}

// A conversion whose Convert state failed is redriven by the job number a person sees: the same
// execution goes on from Convert (Ingest, which succeeded, is not run again), the job goes back to
// PENDING and ends with the redriven execution's outcome.
func TestRedriveDeviceFamilyJob(t *testing.T) {
	a, err := Open(Config{DataDir: t.TempDir(), Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	ingests, converts := flakyConverter(t, a)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	path := filepath.Join(t.TempDir(), "memo.txt")
	os.WriteFile(path, []byte("会議のメモ\n\n予算は承認されました。\n"), 0o644)
	jobs, err := a.Submit(ctx, []string{path}, SubmitOptions{Type: "convert"})
	if err != nil {
		t.Fatal(err)
	}
	id := jobs[0].ID
	if err := a.StartEngine(ctx); err != nil {
		t.Fatal(err)
	}
	j, err := a.Wait(ctx, id)
	if err != nil || j.Status != job.Failed || j.Error == nil || j.Error.Code != job.E009 {
		t.Fatalf("first run: %+v %v", j, err)
	}
	ref, err := a.ExecutionOf(ctx, id)
	if err != nil || ref.Cloud || ref.ARN == "" {
		t.Fatalf("ExecutionOf: %+v %v", ref, err)
	}
	j, err = a.Redrive(ctx, id)
	if err != nil || j.ID != id || (j.Status != job.Pending && j.Status != job.Running) {
		t.Fatalf("Redrive: %+v %v", j, err)
	}
	j, err = a.Wait(ctx, id)
	if err != nil || j.Status != job.Succeeded {
		t.Fatalf("after the redrive: %+v %v", j, err)
	}
	if ingests.Load() != 1 || converts.Load() != 2 {
		t.Fatalf("ingest ran %d times, convert %d; want 1 and 2", ingests.Load(), converts.Load())
	}
	x, err := a.flow.DescribeExecution(ctx, ref.ARN)
	if err != nil || x.Status != flow.StatusSucceeded || x.RedriveCount != 1 {
		t.Fatalf("the execution after the redrive: %+v %v", x, err)
	}
	if again, _ := a.ExecutionOf(ctx, id); again.ARN != ref.ARN {
		t.Fatalf("the redrive started another execution: %s, was %s", again.ARN, ref.ARN)
	}
	// A job that succeeded, or one that is no workflow's, is not redriven.
	var je *job.Error
	if _, err := a.Redrive(ctx, id); !errors.As(err, &je) || je.Code != job.E014 {
		t.Fatalf("Redrive of a succeeded job: %v", err)
	}
}

// The execution's own job number (a `flow start` execution, or the child of a family job) works
// too, and a failure a redrive cannot fix is refused with E014 saying why.
func TestRedriveExecutionJobAndRefusals(t *testing.T) {
	a, err := Open(Config{DataDir: t.TempDir(), Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var calls atomic.Int64
	a.flow.RegisterFunction("twice", func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
		if calls.Add(1) == 1 {
			return nil, job.Errorf(job.E015, "not yet").Permanent()
		}
		return json.RawMessage(`{"ok":true}`), nil
	}, functions.Options{})
	var firsts atomic.Int64
	a.flow.RegisterFunction("first", func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
		firsts.Add(1)
		return in, nil
	}, functions.Options{})
	sm, err := a.flow.PutStateMachine(ctx, "two-steps", `{"StartAt":"A","States":{
		"A":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"first","Payload.$":"$"},"OutputPath":"$.Payload","Next":"B"},
		"B":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"twice","Payload.$":"$"},"OutputPath":"$.Payload","End":true}}}`)
	if err != nil {
		t.Fatal(err)
	}
	x, err := a.flow.StartExecution(ctx, sm.ARN, json.RawMessage(`{}`), flow.StartOptions{Name: "steps"})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.StartEngine(ctx); err != nil {
		t.Fatal(err)
	}
	if j, _ := a.Wait(ctx, x.JobID); j.Status != job.Failed {
		t.Fatalf("first run: %+v", j)
	}
	if ref, err := a.ExecutionOf(ctx, x.JobID); err != nil || ref.ARN != x.ARN {
		t.Fatalf("ExecutionOf the execution's job: %+v %v", ref, err)
	}
	if _, err := a.Redrive(ctx, x.JobID); err != nil {
		t.Fatal(err)
	}
	if j, _ := a.Wait(ctx, x.JobID); j.Status != job.Succeeded || firsts.Load() != 1 || calls.Load() != 2 {
		t.Fatalf("after the redrive: %s, A ran %d times, B %d", j.Status, firsts.Load(), calls.Load())
	}

	// A damaged file: running the same file again cannot help.
	bad := filepath.Join(t.TempDir(), "broken.pdf")
	os.WriteFile(bad, []byte("%PDF-1.7 not really"), 0o644)
	jobs, err := a.Submit(ctx, []string{bad}, SubmitOptions{Type: "convert"})
	if err != nil {
		t.Fatal(err)
	}
	j, _ := a.Wait(ctx, jobs[0].ID)
	if j.Status != job.Failed || j.Error == nil {
		t.Fatalf("damaged file: %+v", j)
	}
	_, err = a.Redrive(ctx, j.ID)
	var je *job.Error
	if !errors.As(err, &je) || je.Code != job.E014 || je.MessageJa == "" {
		t.Fatalf("Redrive of a %s failure: %v", j.Error.Code, err)
	}
	t.Logf("refused: %s", je.Message)
	if _, err := a.Redrive(ctx, 9999); !errors.As(err, &je) || je.Code != job.E014 {
		t.Fatalf("Redrive of no job: %v", err)
	}
}
