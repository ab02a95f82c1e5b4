package flow

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"
	"time"

	"jobdesk/engine/functions"
	"jobdesk/engine/job"
	"jobdesk/engine/queue"
	"jobdesk/engine/store"
	"jobdesk/internal/crashtest"
)

// crashMachine runs the "effect" function on 1,000 items through a Map whose ItemProcessor has
// the given ProcessorConfig.
func crashMachine(processorConfig string) string {
	return `{"StartAt":"Prepare","States":{
	"Prepare":{"Type":"Pass","Parameters":{"items.$":"States.ArrayRange(0, 999, 1)"},"Next":"Each"},
	"Each":{"Type":"Map","ItemsPath":"$.items","MaxConcurrency":8,
		"ItemProcessor":{` + processorConfig + `"StartAt":"Effect","States":{"Effect":{"Type":"Task","Resource":"arn:aws:lambda:local:000000000000:function:effect","End":true}}},
		"ResultSelector":{"n.$":"States.ArrayLength($)"},"Next":"Done"},
	"Done":{"Type":"Succeed"}}}`
}

// TestFlowCrashChild is the process the crash test kills: an engine whose "effect" function
// records one row per call, running until the execution is final.
func TestFlowCrashChild(t *testing.T) {
	dir := crashtest.Child(t, "TestFlowCrashRecovery")
	db, err := store.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	q, err := queue.Open(db, queue.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(db, q, Options{})
	if err != nil {
		t.Fatal(err)
	}
	e.RegisterFunction("effect", func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
		time.Sleep(time.Millisecond)
		if _, err := db.W.ExecContext(ctx, `INSERT INTO side_effects(item) VALUES(?)`, string(in)); err != nil {
			return nil, job.Wrap(job.E009, err, "side effect")
		}
		return in, nil
	}, functions.Options{})
	w := queue.NewWorker(q, queue.WorkerOptions{Workers: 4})
	e.Attach(w)
	if err := w.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	x, err := e.Wait(context.Background(), e.executionARN("crash", "crash-1"))
	if err != nil {
		t.Fatal(err)
	}
	w.Stop()
	fmt.Println("FINAL", x.Status, string(x.Output))
}

// TestFlowCrashRecovery kills the engine's process with SIGKILL at random moments during a Map
// of 1,000 items, restarting it each time: the execution finishes, every item was processed,
// and the items processed more than once are no more than the task jobs in flight at the kills
// (a finished task is never run again).
func TestFlowCrashRecovery(t *testing.T) {
	crashRecovery(t, crashMachine(""))
}

// TestFlowCrashRecoveryDistributed is TestFlowCrashRecovery with a DISTRIBUTED Map, whose
// children end recorded once each, all SUCCEEDED, with the map run's counts.
func TestFlowCrashRecoveryDistributed(t *testing.T) {
	check := crashRecovery(t, crashMachine(`"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},`))
	var kids, succeeded int
	check.R.QueryRow(`SELECT count(*), count(*) FILTER (WHERE status='SUCCEEDED') FROM flow_executions WHERE map_run_arn<>''`).Scan(&kids, &succeeded)
	var total, ok, running int
	check.R.QueryRow(`SELECT total, succeeded, running FROM flow_map_runs`).Scan(&total, &ok, &running)
	if kids != 1000 || succeeded != 1000 || total != 1000 || ok != 1000 || running != 0 {
		t.Fatalf("children %d (%d SUCCEEDED); map run total %d succeeded %d running %d", kids, succeeded, total, ok, running)
	}
	var badHistory int
	check.R.QueryRow(`SELECT count(*) FROM flow_executions x WHERE x.map_run_arn<>'' AND
		(SELECT count(*) FROM flow_history h WHERE h.exec_id=x.id) <> x.last_event_id`).Scan(&badHistory)
	if badHistory != 0 {
		t.Fatalf("%d children whose history does not match their last event id", badHistory)
	}
}

// crashRecovery runs the crash test on definition and returns the database to check further.
func crashRecovery(t *testing.T, definition string) *store.DB {
	if testing.Short() {
		t.Skip("crash test skipped in -short mode")
	}
	dir := t.TempDir()
	db, err := store.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	q, err := queue.Open(db, queue.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(db, q, Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.W.Exec(`CREATE TABLE side_effects(id INTEGER PRIMARY KEY, item TEXT NOT NULL)`)
	sm, err := e.CreateStateMachine(context.Background(), "crash", definition, "")
	if err != nil {
		t.Fatal(err)
	}
	x, err := e.StartExecution(context.Background(), sm.ARN, json.RawMessage(`{}`), StartOptions{Name: "crash-1"})
	if err != nil {
		t.Fatal(err)
	}
	q.Close()
	db.Close()

	child := func() *exec.Cmd {
		return crashtest.Command(context.Background(), "TestFlowCrashChild", dir, "-test.v")
	}
	check, err := store.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { check.Close() })
	inFlight, kills := 0, 0
	for kills < 8 {
		cmd := child()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(150+rand.IntN(250)) * time.Millisecond)
		cmd.Process.Kill() // SIGKILL
		cmd.Wait()
		kills++
		var running int
		check.R.QueryRow(`SELECT count(*) FROM jobs WHERE status='RUNNING' AND type='lambda:effect'`).Scan(&running)
		inFlight += running
	}
	out, err := child().CombinedOutput()
	if err != nil {
		t.Fatalf("final run: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), `FINAL SUCCEEDED {"n":1000}`) {
		t.Fatalf("the execution did not finish with 1000 results:\n%s", out)
	}
	var calls, distinct, tasks int
	check.R.QueryRow(`SELECT count(*), count(DISTINCT item) FROM side_effects`).Scan(&calls, &distinct)
	check.R.QueryRow(`SELECT count(*) FROM jobs WHERE type='lambda:effect'`).Scan(&tasks)
	reruns := calls - distinct
	t.Logf("%d kills, %d task jobs in flight at the kills, %d items processed again, %d task jobs", kills, inFlight, reruns, tasks)
	if distinct != 1000 || tasks != 1000 {
		t.Fatalf("items processed %d, task jobs %d; want 1000 each", distinct, tasks)
	}
	if reruns > inFlight {
		t.Fatalf("%d items processed again but only %d tasks were in flight at the kills", reruns, inFlight)
	}
	_ = x
	return check
}
