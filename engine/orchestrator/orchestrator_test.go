package orchestrator_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"jobdesk/engine/flow"
	"jobdesk/engine/functions"
	"jobdesk/engine/job"
	"jobdesk/engine/orchestrator"
	"jobdesk/engine/queue"
	"jobdesk/engine/store"
)

// The orchestrator is tested on the device's real executor: the flow engine on a SQLite file,
// with a worker running the executions and their tasks.

const workflow = `{
  "StartAt": "Work",
  "States": {
    "Work": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
      "Parameters": {"FunctionName": "work", "Payload.$": "$"}, "OutputPath": "$.Payload", "End": true}
  }
}`

type env struct {
	eng *flow.Engine
	q   *queue.Queue
	ex  orchestrator.Executions
}

func newEnv(t *testing.T, work job.Handler) *env {
	t.Helper()
	dir := t.TempDir()
	db, err := store.OpenDir(dir, queue.Migrations, flow.Migrations)
	if err != nil {
		t.Fatal(err)
	}
	q, err := queue.Open(db, queue.Options{DataDir: dir, WatchInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := flow.New(db, q, flow.Options{Functions: functions.New(functions.Function{Name: "work", Handler: work})})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.PutStateMachine(context.Background(), "wf", workflow); err != nil {
		t.Fatal(err)
	}
	w := queue.NewWorker(q, queue.WorkerOptions{Workers: 4, CancelGrace: 200 * time.Millisecond})
	eng.Attach(w)
	if err := w.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Stop(); eng.Close(); q.Close(); db.Close() })
	return &env{eng: eng, q: q, ex: eng.Executions()}
}

func jobCtx(id int64) context.Context {
	return job.WithInfo(context.Background(), job.Info{ID: id, Name: "report.csv", Attempt: 1})
}

func spec(name string, in string) orchestrator.Spec {
	return orchestrator.Spec{Workflow: "wf", Name: name, Input: json.RawMessage(in), What: "the test job", WhatJa: "テストジョブ"}
}

func TestRunSucceedsAndResumes(t *testing.T) {
	calls := 0
	v := newEnv(t, func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
		calls++
		r.Progress(50, "half way")
		return in, nil
	})
	var seen []string
	rep := job.ReporterFunc(func(p float64, m string) { seen = append(seen, m) })
	out, err := orchestrator.Run(jobCtx(7), v.ex, spec("report-123456", `{"n":1}`), rep)
	if err != nil || string(out) != `{"n":1}` {
		t.Fatalf("Run = %s, %v", out, err)
	}
	// The job runs again (after a crash, say): it finds its succeeded execution, runs nothing.
	out, err = orchestrator.Run(jobCtx(7), v.ex, spec("report-123456", `{"n":1}`), rep)
	if err != nil || string(out) != `{"n":1}` || calls != 1 {
		t.Fatalf("second Run = %s, %v after %d calls", out, err, calls)
	}
	xs, _, _ := v.eng.ListExecutions(context.Background(), v.eng.StateMachineARN("wf"), "", 100, "")
	if len(xs) != 1 {
		t.Fatalf("%d executions, want 1", len(xs))
	}
}

func TestRunTakesTheNextNameWhenTaken(t *testing.T) {
	v := newEnv(t, func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) { return in, nil })
	if _, err := orchestrator.Run(jobCtx(1), v.ex, spec("same-second", `{"job":1}`), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := orchestrator.Run(jobCtx(2), v.ex, spec("same-second", `{"job":2}`), nil); err != nil {
		t.Fatal(err)
	}
	x, err := v.ex.Describe(context.Background(), "wf", "same-second-j2")
	if err != nil || x.Status != orchestrator.Succeeded || string(x.Input) != `{"job":2}` {
		t.Fatalf("second job's execution = %+v, %v", x, err)
	}
}

func TestRunCarriesTheCodedError(t *testing.T) {
	want := job.Errorf(job.E005, "report.pdf is password-protected").WithJa("パスワードが設定されています。").WithName("PasswordProtected")
	v := newEnv(t, func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
		return nil, want
	})
	_, err := orchestrator.Run(jobCtx(3), v.ex, spec("pw", `{}`), nil)
	var got *job.Error
	if !errors.As(err, &got) || got.Code != job.E005 || got.Message != want.Message || got.MessageJa != want.MessageJa ||
		got.Name != "PasswordProtected" || got.Retryable {
		t.Fatalf("Run error = %#v", err)
	}
}

func TestRunStopsTheExecutionOnCancelAndTimeout(t *testing.T) {
	v := newEnv(t, func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	for _, c := range []struct {
		name string
		code job.Code
		stop func(context.Context) (context.Context, func())
	}{
		{"cancel", job.E013, func(ctx context.Context) (context.Context, func()) {
			ctx, cancel := context.WithCancelCause(ctx)
			time.AfterFunc(300*time.Millisecond, func() { cancel(job.ErrUserCancel) })
			return ctx, func() { cancel(nil) }
		}},
		{"timeout", job.E011, func(ctx context.Context) (context.Context, func()) {
			return context.WithTimeout(ctx, 300*time.Millisecond)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, done := c.stop(jobCtx(10))
			defer done()
			_, err := orchestrator.Run(ctx, v.ex, spec("long-"+c.name, `{}`), nil)
			if je := job.AsError(err); je == nil || je.Code != c.code {
				t.Fatalf("Run error = %v, want %s", err, c.code)
			}
			x, _ := v.ex.Describe(context.Background(), "wf", "long-"+c.name)
			if x.Status != orchestrator.Aborted {
				t.Fatalf("execution %s, want ABORTED", x.Status)
			}
		})
	}
}

func TestRunLeavesTheExecutionWhenJobDeskCloses(t *testing.T) {
	release := make(chan struct{})
	v := newEnv(t, func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
		select {
		case <-release:
			return json.RawMessage(`{"done":true}`), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	ctx, cancel := context.WithCancel(jobCtx(20))
	time.AfterFunc(300*time.Millisecond, cancel)
	_, err := orchestrator.Run(ctx, v.ex, spec("closing", `{}`), nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run error = %v, want the context's", err)
	}
	x, _ := v.ex.Describe(context.Background(), "wf", "closing")
	if x.Status != orchestrator.Running {
		t.Fatalf("execution %s after JobDesk closed, want RUNNING", x.Status)
	}
	close(release)
	out, err := orchestrator.Run(jobCtx(20), v.ex, spec("closing", `{}`), nil)
	if err != nil || !strings.Contains(string(out), "done") {
		t.Fatalf("resumed Run = %s, %v", out, err)
	}
}

func TestFailureOfTheWorkflowItself(t *testing.T) {
	for _, c := range []struct {
		x    orchestrator.Execution
		code job.Code
	}{
		{orchestrator.Execution{Status: orchestrator.TimedOut, Error: "States.Timeout"}, job.E011},
		{orchestrator.Execution{Status: orchestrator.Aborted}, job.E013},
		{orchestrator.Execution{Status: orchestrator.Failed, Error: "TaskGenerationFailed", Cause: "すべて失敗"}, job.E015},
	} {
		e := orchestrator.Failure(c.x, "the conversion", "変換")
		if e.Code != c.code || e.Retryable {
			t.Errorf("Failure(%+v) = %+v, want %s", c.x, e, c.code)
		}
		if c.code == job.E011 && (e.Message != "the conversion took too long and was stopped" || e.MessageJa != "変換に時間がかかりすぎたため停止しました。") {
			t.Errorf("timeout worded %q / %q", e.Message, e.MessageJa)
		}
	}
}
