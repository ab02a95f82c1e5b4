// Package orchestratortest is the contract every orchestrator.Executions keeps, as one suite of
// tests that each executor's own tests run against a live executor: the device's flow engine
// (engine/orchestrator) and the Step Functions client against the stand-in (sync/sfnexec). What
// passes on one executor passes on the other.
package orchestratortest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"jobdesk/engine/job"
	"jobdesk/engine/orchestrator"
)

// Workflow is the workflow the suite runs, under the name "wf": one Task that invokes the
// function "work" with the execution's input and ends with its output.
const Workflow = `{
  "StartAt": "Work",
  "States": {
    "Work": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
      "Parameters": {"FunctionName": "work", "Payload.$": "$"}, "OutputPath": "$.Payload", "End": true}
  }
}`

// Env is one live executor, set up for one test.
type Env struct {
	// Executions is the executor under test. Its workflow "wf" is Workflow, whose "work" is the
	// test's function.
	Executions orchestrator.Executions
	// Kept returns how many executions of "wf" the executor keeps.
	Kept func() int
	// Starts, when set, returns how many start requests the executor's service answered.
	Starts func() int
}

// NewEnv sets up a live executor whose function "work" is work; it is torn down when t ends.
type NewEnv func(t *testing.T, work job.Handler) Env

// Run runs the contract's tests, each as a subtest, on the executors newEnv sets up.
func Run(t *testing.T, newEnv NewEnv) {
	t.Run("RunSucceedsAndResumes", func(t *testing.T) { testRunSucceedsAndResumes(t, newEnv) })
	t.Run("RunTakesTheNextNameWhenTaken", func(t *testing.T) { testRunTakesTheNextNameWhenTaken(t, newEnv) })
	t.Run("RunCarriesTheCodedError", func(t *testing.T) { testRunCarriesTheCodedError(t, newEnv) })
	t.Run("RunStopsTheExecutionOnCancelAndTimeout", func(t *testing.T) { testRunStopsTheExecutionOnCancelAndTimeout(t, newEnv) })
	t.Run("RunLeavesTheExecutionWhenJobDeskCloses", func(t *testing.T) { testRunLeavesTheExecutionWhenJobDeskCloses(t, newEnv) })
	t.Run("RunStopsAnExecutionWhoseStartWasCutOff", func(t *testing.T) { testRunStopsAnExecutionWhoseStartWasCutOff(t, newEnv) })
}

// JobCtx is the context of job id as the queue gives it to a handler.
func JobCtx(id int64) context.Context {
	return job.WithInfo(context.Background(), job.Info{ID: id, Name: "report.csv", Attempt: 1})
}

func spec(name string, in string) orchestrator.Spec {
	return orchestrator.Spec{Workflow: "wf", Name: name, Input: json.RawMessage(in), What: "the test job", WhatJa: "テストジョブ"}
}

func testRunSucceedsAndResumes(t *testing.T, newEnv NewEnv) {
	var mu sync.Mutex
	calls := 0
	v := newEnv(t, func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
		mu.Lock()
		calls++
		mu.Unlock()
		r.Progress(50, "half way")
		return in, nil
	})
	rep := job.ReporterFunc(func(p float64, m string) {})
	out, err := orchestrator.Run(JobCtx(7), v.Executions, spec("report-123456", `{"n":1}`), rep)
	if err != nil || string(out) != `{"n":1}` {
		t.Fatalf("Run = %s, %v", out, err)
	}
	// The job runs again (after a crash, say): it finds its succeeded execution, runs nothing.
	out, err = orchestrator.Run(JobCtx(7), v.Executions, spec("report-123456", `{"n":1}`), rep)
	mu.Lock()
	defer mu.Unlock()
	if err != nil || string(out) != `{"n":1}` || calls != 1 {
		t.Fatalf("second Run = %s, %v after %d calls", out, err, calls)
	}
	if n := v.Kept(); n != 1 {
		t.Fatalf("%d executions, want 1", n)
	}
	if v.Starts != nil && v.Starts() != 2 {
		t.Fatalf("%d starts, want 2", v.Starts())
	}
}

func testRunTakesTheNextNameWhenTaken(t *testing.T, newEnv NewEnv) {
	v := newEnv(t, func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) { return in, nil })
	if _, err := orchestrator.Run(JobCtx(1), v.Executions, spec("same-second", `{"job":1}`), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := orchestrator.Run(JobCtx(2), v.Executions, spec("same-second", `{"job":2}`), nil); err != nil {
		t.Fatal(err)
	}
	x, err := v.Executions.Describe(context.Background(), "wf", "same-second-j2")
	if err != nil || x.Status != orchestrator.Succeeded || string(x.Input) != `{"job":2}` {
		t.Fatalf("second job's execution = %+v, %v", x, err)
	}
}

func testRunCarriesTheCodedError(t *testing.T, newEnv NewEnv) {
	want := job.Errorf(job.E005, "report.pdf is password-protected").WithJa("パスワードが設定されています。").WithName("PasswordProtected")
	v := newEnv(t, func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
		return nil, want
	})
	_, err := orchestrator.Run(JobCtx(3), v.Executions, spec("pw", `{}`), nil)
	var got *job.Error
	if !errors.As(err, &got) || got.Code != job.E005 || got.Message != want.Message || got.MessageJa != want.MessageJa ||
		got.Name != "PasswordProtected" || got.Retryable {
		t.Fatalf("Run error = %#v", err)
	}
}

// untilDone is a step's function that runs until its job is cancelled or out of time.
func untilDone(ctx context.Context, _ json.RawMessage, _ job.Reporter) (json.RawMessage, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func testRunStopsTheExecutionOnCancelAndTimeout(t *testing.T, newEnv NewEnv) {
	v := newEnv(t, untilDone)
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
			ctx, done := c.stop(JobCtx(10))
			defer done()
			_, err := orchestrator.Run(ctx, v.Executions, spec("long-"+c.name, `{}`), nil)
			if je := job.AsError(err); je == nil || je.Code != c.code {
				t.Fatalf("Run error = %v, want %s", err, c.code)
			}
			x, _ := v.Executions.Describe(context.Background(), "wf", "long-"+c.name)
			if x.Status != orchestrator.Aborted {
				t.Fatalf("execution %s, want ABORTED", x.Status)
			}
		})
	}
}

func testRunLeavesTheExecutionWhenJobDeskCloses(t *testing.T, newEnv NewEnv) {
	release := make(chan struct{})
	v := newEnv(t, func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
		select {
		case <-release:
			return json.RawMessage(`{"done":true}`), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	ctx, cancel := context.WithCancel(JobCtx(20))
	time.AfterFunc(300*time.Millisecond, cancel)
	_, err := orchestrator.Run(ctx, v.Executions, spec("closing", `{}`), nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run error = %v, want the context's", err)
	}
	x, _ := v.Executions.Describe(context.Background(), "wf", "closing")
	if x.Status != orchestrator.Running {
		t.Fatalf("execution %s after JobDesk closed, want RUNNING", x.Status)
	}
	close(release)
	out, err := orchestrator.Run(JobCtx(20), v.Executions, spec("closing", `{}`), nil)
	if err != nil || !strings.Contains(string(out), "done") {
		t.Fatalf("resumed Run = %s, %v", out, err)
	}
}

// cutOff is an executor whose Start makes the execution but loses the answer: end ends the
// job's context (a person's cancel, or nothing while the job's timeout runs out) and Start
// returns the context's error, as a call cut off in flight does.
type cutOff struct {
	orchestrator.Executions
	end func()
}

func (c cutOff) Start(ctx context.Context, workflow, name string, in json.RawMessage, o orchestrator.StartOptions) (orchestrator.Execution, error) {
	if _, err := c.Executions.Start(context.WithoutCancel(ctx), workflow, name, in, o); err != nil {
		return orchestrator.Execution{}, err
	}
	c.end()
	<-ctx.Done()
	return orchestrator.Execution{}, ctx.Err()
}

// A job cancelled, or out of time, while its execution's Start was under way (the execution
// made, the answer cut off) still stops that execution: nothing runs on for a job that ended.
func testRunStopsAnExecutionWhoseStartWasCutOff(t *testing.T, newEnv NewEnv) {
	v := newEnv(t, untilDone)
	for _, c := range []struct {
		name string
		code job.Code
		ctx  func(context.Context) (context.Context, func(), func())
	}{
		{"cancel", job.E013, func(ctx context.Context) (context.Context, func(), func()) {
			ctx, cancel := context.WithCancelCause(ctx)
			return ctx, func() { cancel(job.ErrUserCancel) }, func() { cancel(nil) }
		}},
		{"timeout", job.E011, func(ctx context.Context) (context.Context, func(), func()) {
			ctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			return ctx, func() {}, cancel
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, end, done := c.ctx(JobCtx(11))
			defer done()
			_, err := orchestrator.Run(ctx, cutOff{v.Executions, end}, spec("cut-"+c.name, `{}`), nil)
			if je := job.AsError(err); je == nil || je.Code != c.code {
				t.Fatalf("Run error = %v, want %s", err, c.code)
			}
			x, _ := v.Executions.Describe(context.Background(), "wf", "cut-"+c.name)
			if x.Status != orchestrator.Aborted {
				t.Fatalf("execution %s, want ABORTED", x.Status)
			}
		})
	}
}
