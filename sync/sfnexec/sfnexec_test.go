package sfnexec_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"jobdesk/engine/functions"
	"jobdesk/engine/job"
	"jobdesk/engine/orchestrator"
	"jobdesk/engine/orchestrator/orchestratortest"
	"jobdesk/sync/internal/sfntest"
	"jobdesk/sync/sfnexec"
)

// The orchestrator's contract (engine/orchestrator/orchestratortest), run with the Step Functions
// executor against the stand-in served over HTTP: what passes on the device executor passes here.
func TestExecutionsContract(t *testing.T) {
	orchestratortest.Run(t, func(t *testing.T, work job.Handler) orchestratortest.Env {
		v := newEnv(t, work)
		return orchestratortest.Env{
			Executions: v.ex,
			Kept: func() int {
				xs, _, _ := v.srv.Engine.ListExecutions(context.Background(), v.srv.StateMachineARN("wf"), "", 100, "")
				return len(xs)
			},
			Starts: func() int { return int(v.srv.Count("StartExecution")) },
		}
	})
}

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

// newEnv serves the workflows "wf" (orchestratortest.Workflow, whose "work" is work) and "each"
// (a distributed Map over $.items).
func newEnv(t *testing.T, work job.Handler) *env {
	t.Helper()
	item := func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
		time.Sleep(20 * time.Millisecond)
		return in, nil
	}
	srv := sfntest.Start(t, functions.New(functions.Function{Name: "work", Handler: work}, functions.Function{Name: "item", Handler: item}),
		map[string]string{"wf": orchestratortest.Workflow, "each": mapWorkflow})
	ex := sfnexec.New(srv.Client, sfnexec.Options{
		StateMachines: map[string]string{"wf": srv.StateMachineARN("wf"), "each": srv.StateMachineARN("each")},
		MinPoll:       20 * time.Millisecond, MaxPoll: 200 * time.Millisecond,
	})
	return &env{srv: srv, ex: ex}
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
	if _, err := orchestrator.Run(orchestratortest.JobCtx(30), v.ex, spec, rep); err != nil {
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
