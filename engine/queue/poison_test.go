package queue

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"jobdesk/engine/job"
	"jobdesk/engine/store"
	"jobdesk/internal/crashtest"
)

// poisonLimit is the default Options.PoisonLimit the test expects.
const poisonLimit = 3

// TestPoisonChild is the process TestPoisonJobFails starts again and again: a worker of two
// slots whose "poison" handler kills its own process with SIGKILL, and whose "ok" handler
// succeeds after a while. It exits when every job is finished.
func TestPoisonChild(t *testing.T) {
	dir := crashtest.Child(t, "TestPoisonJobFails")
	db, err := store.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	q, err := Open(db, Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	w := NewWorker(q, WorkerOptions{Workers: 2})
	w.Handle("poison", func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
		p, _ := os.FindProcess(os.Getpid())
		p.Kill() // SIGKILL: no deferred function, no outcome
		select {}
	}, TypeOptions{})
	w.Handle("ok", func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
		// Running beside the poison job, it is still running when that job kills the process.
		ps, err := q.List(ctx, Filter{Type: "poison"})
		if err != nil || len(ps) != 1 {
			return nil, fmt.Errorf("the poison job: %v, %v", ps, err)
		}
		events, stop := q.Watch(ps[0].ID)
		defer stop()
		for {
			if p, err := q.Get(ctx, ps[0].ID); err != nil || p.Status != job.Running {
				return json.RawMessage(`"done"`), nil
			}
			select {
			case <-events:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	}, TypeOptions{})
	// A workflow-like job that waits for the poison job to end, as an execution waits on its task.
	w.Handle("waiter", func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
		var id int64
		json.Unmarshal(in, &id)
		if _, err := q.Wait(ctx, id); err != nil {
			return nil, err
		}
		return json.RawMessage(`"waited"`), nil
	}, TypeOptions{Orchestrator: true})
	if err := w.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitAllFinished(q)
	w.Stop()
}

// TestPoisonJobFails runs a job that kills the process running it (SIGKILL) ahead of five
// ordinary ones, restarting the worker process after each death, as a person restarting JobDesk
// would: after poisonLimit deaths the job fails with E016 naming how often it stopped
// JobDesk, and the other jobs run; a job of an orchestrator type that was waiting for it the
// whole time (and so died with it) is not blamed. Without the limit every restart received it
// again and died.
func TestPoisonJobFails(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test skipped in -short mode")
	}
	dir := t.TempDir()
	db, err := store.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	q, err := Open(db, Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	ctx := context.Background()
	poison, _, err := q.Enqueue(ctx, Params{Type: "poison", Priority: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		if _, _, err := q.Enqueue(ctx, Params{Type: "ok"}); err != nil {
			t.Fatal(err)
		}
	}
	waiter, _, err := q.Enqueue(ctx, Params{Type: "waiter", Priority: 2, Input: json.RawMessage(fmt.Sprint(poison.ID))})
	if err != nil {
		t.Fatal(err)
	}
	deaths := 0
	for run := 0; ; run++ {
		if run == poisonLimit+3 {
			j, _ := q.Get(ctx, poison.ID)
			t.Fatalf("still not done after %d runs (%d died): the poison job is %s, message %q", run, deaths, j.Status, j.Message)
		}
		rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		cmd := crashtest.Command(rctx, "TestPoisonChild", dir)
		began := time.Now()
		out, err := cmd.CombinedOutput()
		t.Logf("run %d: %v after %v", run, err, time.Since(began))
		timedOut := rctx.Err() != nil
		cancel()
		if timedOut {
			t.Fatalf("run %d did not end in 30 s\n%s", run, out)
		}
		if err == nil {
			break
		}
		if ee, ok := err.(*exec.ExitError); !ok || ee.Exited() {
			t.Fatalf("run %d: %v\n%s", run, err, out) // a failure, not a death
		}
		deaths++
	}
	if deaths != poisonLimit {
		t.Errorf("the worker died %d times; want %d", deaths, poisonLimit)
	}
	j, err := q.Get(ctx, poison.ID)
	if err != nil {
		t.Fatal(err)
	}
	if j.Status != job.Failed || j.Error == nil || j.Error.Code != job.E016 ||
		!strings.Contains(j.Error.Message, "stopped JobDesk 3 times") || j.Error.MessageJa == "" {
		t.Fatalf("poison job: %s %+v", j.Status, j.Error)
	}
	if j, _ := q.Get(ctx, waiter.ID); j.Status != job.Succeeded {
		t.Errorf("the orchestrator job waiting for it is %s %+v; want SUCCEEDED", j.Status, j.Error)
	}
	var ok, suspects int
	db.R.QueryRow(`SELECT count(*), count(*) FILTER (WHERE crashes > 0) FROM jobs WHERE type='ok' AND status='SUCCEEDED'`).Scan(&ok, &suspects)
	if ok != 5 {
		rows, _ := db.R.Query(`SELECT id, status, crashes, message FROM jobs WHERE type='ok'`)
		for rows.Next() {
			var id, crashes int
			var st, msg string
			rows.Scan(&id, &st, &crashes, &msg)
			t.Logf("job %d: %s, %d crashes, %q", id, st, crashes, msg)
		}
		rows.Close()
		t.Fatalf("%d of 5 other jobs succeeded", ok)
	}
	if suspects != 1 {
		t.Errorf("%d ordinary jobs were running at a death; want 1 (the first)", suspects)
	}
}
