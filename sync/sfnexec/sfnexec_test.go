package sfnexec_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"jobdesk/engine/functions"
	"jobdesk/engine/job"
	"jobdesk/engine/orchestrator"
	"jobdesk/sync/internal/sfntest"
	"jobdesk/sync/sfnexec"
)

// The orchestrator's own tests (engine/orchestrator), run again with the Step Functions executor
// against the stand-in served over HTTP: what passes on the device executor passes here.

const workflow = `{
  "StartAt": "Work",
  "States": {
    "Work": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
      "Parameters": {"FunctionName": "work", "Payload.$": "$"}, "OutputPath": "$.Payload", "End": true}
  }
}`

const mapWorkflow = `{
  "StartAt": "Each",
  "States": {
    "Each": {"Type": "Map", "ItemsPath": "$.items", "MaxConcurrency": 2,
      "ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"},
        "StartAt": "Item", "States": {"Item": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
          "Parameters": {"FunctionName": "item", "Payload.$": "$"}, "OutputPath": "$.Payload", "End": true}}},
      "End": true}
  }
}`

type env struct {
	srv *sfntest.Server
	ex  *sfnexec.Executor
}

func newEnv(t *testing.T, work job.Handler) *env {
	t.Helper()
	item := func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
		time.Sleep(20 * time.Millisecond)
		return in, nil
	}
	srv := sfntest.Start(t, functions.New(functions.Function{Name: "work", Handler: work}, functions.Function{Name: "item", Handler: item}),
		map[string]string{"wf": workflow, "each": mapWorkflow})
	ex := sfnexec.New(srv.Client, sfnexec.Options{
		StateMachines: map[string]string{"wf": srv.StateMachineARN("wf"), "each": srv.StateMachineARN("each")},
		MinPoll:       20 * time.Millisecond, MaxPoll: 200 * time.Millisecond,
	})
	return &env{srv: srv, ex: ex}
}

func jobCtx(id int64) context.Context {
	return job.WithInfo(context.Background(), job.Info{ID: id, Name: "report.csv", Attempt: 1})
}

func spec(name string, in string) orchestrator.Spec {
	return orchestrator.Spec{Workflow: "wf", Name: name, Input: json.RawMessage(in), What: "the test job", WhatJa: "テストジョブ"}
}

func TestRunSucceedsAndResumes(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	v := newEnv(t, func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
		mu.Lock()
		calls++
		mu.Unlock()
		return in, nil
	})
	out, err := orchestrator.Run(jobCtx(7), v.ex, spec("report-123456", `{"n":1}`), nil)
	if err != nil || string(out) != `{"n":1}` {
		t.Fatalf("Run = %s, %v", out, err)
	}
	out, err = orchestrator.Run(jobCtx(7), v.ex, spec("report-123456", `{"n":1}`), nil)
	if err != nil || string(out) != `{"n":1}` || calls != 1 {
		t.Fatalf("second Run = %s, %v after %d calls", out, err, calls)
	}
	xs, _, _ := v.srv.Engine.ListExecutions(context.Background(), v.srv.StateMachineARN("wf"), "", 100, "")
	if len(xs) != 1 || v.srv.Count("StartExecution") != 2 {
		t.Fatalf("%d executions after %d starts, want 1", len(xs), v.srv.Count("StartExecution"))
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

// A Map run's items give the progress; the history reads incrementally under Step Functions'
// event names.
func TestWaitReportsMapItemsAndHistoryReadsOnce(t *testing.T) {
	v := newEnv(t, func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) { return in, nil })
	items := make([]int, 30)
	in, _ := json.Marshal(map[string]any{"items": items})
	var mu sync.Mutex
	var seen []string
	rep := job.ReporterFunc(func(p float64, m string) { mu.Lock(); seen = append(seen, m); mu.Unlock() })
	spec := orchestrator.Spec{Workflow: "each", Name: "many", Input: in, What: "the map", WhatJa: "マップ"}
	if _, err := orchestrator.Run(jobCtx(30), v.ex, spec, rep); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) == 0 || !strings.HasSuffix(seen[len(seen)-1], " items") {
		t.Fatalf("progress messages %q", seen)
	}
	x, _ := v.ex.Describe(context.Background(), "each", "many")
	evs, cur, err := v.ex.History(context.Background(), x.ARN, sfnexec.HistoryCursor{})
	if err != nil || len(evs) == 0 || evs[0].Type != "ExecutionStarted" || evs[len(evs)-1].Type != "ExecutionSucceeded" {
		t.Fatalf("history %+v, %v", evs, err)
	}
	more, cur2, err := v.ex.History(context.Background(), x.ARN, cur)
	if err != nil || len(more) != 0 || cur2.LastID != cur.LastID {
		t.Fatalf("history read again gave %d events, %v", len(more), err)
	}
}

// A workflow without a state machine in cloud.json fails at once, naming the key.
func TestMissingStateMachineIsPermanent(t *testing.T) {
	v := newEnv(t, func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) { return in, nil })
	_, err := v.ex.Start(context.Background(), "nope", "x", json.RawMessage(`{}`), orchestrator.StartOptions{})
	if e := job.AsError(err); e == nil || e.Code != job.E010 || e.Retryable || !strings.Contains(e.Message, "state_machines") {
		t.Fatalf("Start = %v", err)
	}
	ex := sfnexec.New(v.srv.Client, sfnexec.Options{StateMachines: map[string]string{"gone": strings.Replace(v.srv.StateMachineARN("wf"), ":wf", ":gone", 1)}})
	_, err = ex.Start(context.Background(), "gone", "x", json.RawMessage(`{}`), orchestrator.StartOptions{})
	if e := job.AsError(err); e == nil || e.Code != job.E010 || e.Retryable || !strings.Contains(e.Message, "does not exist") {
		t.Fatalf("Start on a missing state machine = %v", err)
	}
}
