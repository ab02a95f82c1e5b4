package orchestrator_test

import (
	"context"
	"testing"
	"time"

	"jobdesk/engine/flow"
	"jobdesk/engine/functions"
	"jobdesk/engine/job"
	"jobdesk/engine/orchestrator"
	"jobdesk/engine/orchestrator/orchestratortest"
	"jobdesk/engine/queue"
	"jobdesk/engine/store"
)

// The orchestrator is tested on the device's real executor: the flow engine on a SQLite file,
// with a worker running the executions and their tasks. The contract (orchestratortest) runs
// again on the Step Functions executor in sync/sfnexec.
func TestExecutionsContract(t *testing.T) {
	orchestratortest.Run(t, newEnv)
}

func newEnv(t *testing.T, work job.Handler) orchestratortest.Env {
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
	if _, err := eng.PutStateMachine(context.Background(), "wf", orchestratortest.Workflow); err != nil {
		t.Fatal(err)
	}
	w := queue.NewWorker(q, queue.WorkerOptions{Workers: 4, CancelGrace: 200 * time.Millisecond})
	eng.Attach(w)
	if err := w.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Stop(); eng.Close(); q.Close(); db.Close() })
	return orchestratortest.Env{
		Executions: eng.Executions(),
		Kept: func() int {
			xs, _, _ := eng.ListExecutions(context.Background(), eng.StateMachineARN("wf"), "", 100, "")
			return len(xs)
		},
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
