package queue

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os/exec"
	"testing"
	"time"

	"jobdesk/engine/job"
	"jobdesk/engine/store"
	"jobdesk/internal/crashtest"
)

// TestCrashChild is the process the crash test kills: it runs the queue's jobs, each of which
// writes a side-effect row keyed by job id, and exits when none is left.
func TestCrashChild(t *testing.T) {
	dir := crashtest.Child(t, "TestCrashRecovery")
	db, err := store.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	// The kills here are the test's, not the job's: a job the random kills happen to catch
	// running three times is no poison (poison_test.go covers that rule), so the limit is
	// above the number of kills.
	q, err := Open(db, Options{DataDir: dir, PoisonLimit: 100})
	if err != nil {
		t.Fatal(err)
	}
	w := NewWorker(q, WorkerOptions{Workers: 4})
	w.Handle("effect", func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
		info, _ := job.InfoFrom(ctx)
		time.Sleep(2 * time.Millisecond)
		if _, err := db.W.ExecContext(ctx, `INSERT INTO side_effects(job_id) VALUES(?)`, info.ID); err != nil {
			return nil, job.Wrap(job.E009, err, "side effect")
		}
		return nil, nil
	}, TypeOptions{})
	if err := w.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitAllFinished(q)
	w.Stop()
}

// waitAllFinished returns when no job of q is left unfinished, looking again after each of the
// queue's events (this process's changes, and other processes' as ExternalChange).
func waitAllFinished(q *Queue) {
	events, stop := q.Subscribe(1024)
	defer stop()
	for {
		var left int
		q.db.R.QueryRow(`SELECT count(*) FROM jobs WHERE status NOT IN ('SUCCEEDED','FAILED','CANCELLED','TIMED_OUT','PARTIAL')`).Scan(&left)
		if left == 0 {
			return
		}
		<-events
	}
}

// TestCrashRecovery kills a worker process with SIGKILL at random moments, at least 20 times,
// restarting it each time: at the end every job has SUCCEEDED, and the jobs whose side effect
// ran more than once are no more than the jobs that were in flight at the kills.
func TestCrashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test skipped in -short mode")
	}
	dir := t.TempDir()
	db, err := store.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	q, err := Open(db, Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	db.W.Exec(`CREATE TABLE side_effects(id INTEGER PRIMARY KEY, job_id INTEGER NOT NULL)`)
	ps := make([]Params, 1000)
	for i := range ps {
		ps[i] = Params{Type: "effect"}
	}
	if _, err := q.EnqueueBatch(context.Background(), ps); err != nil {
		t.Fatal(err)
	}
	q.Close()
	db.Close()

	child := func() *exec.Cmd { return crashtest.Command(context.Background(), "TestCrashChild", dir) }
	inFlight, kills := 0, 0
	check, err := store.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer check.Close()
	for kills < 20 {
		cmd := child()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(30+rand.IntN(120)) * time.Millisecond)
		cmd.Process.Kill() // SIGKILL
		cmd.Wait()
		kills++
		var running int
		check.R.QueryRow(`SELECT count(*) FROM jobs WHERE status='RUNNING'`).Scan(&running)
		inFlight += running
	}
	out, err := child().CombinedOutput()
	if err != nil {
		t.Fatalf("final run: %v\n%s", err, out)
	}
	var succeeded, reruns, distinct int
	check.R.QueryRow(`SELECT count(*) FROM jobs WHERE status='SUCCEEDED'`).Scan(&succeeded)
	check.R.QueryRow(`SELECT count(*) - count(DISTINCT job_id), count(DISTINCT job_id) FROM side_effects`).Scan(&reruns, &distinct)
	t.Logf("%d kills, %d jobs in flight at the kills, %d re-runs", kills, inFlight, reruns)
	if succeeded != 1000 || distinct != 1000 {
		rows, _ := check.R.Query(`SELECT id, status, message FROM jobs WHERE status!='SUCCEEDED' LIMIT 5`)
		for rows != nil && rows.Next() {
			var id int64
			var status, message string
			rows.Scan(&id, &status, &message)
			t.Logf("job %d %s: %s", id, status, message)
		}
		t.Fatalf("succeeded %d, jobs with a side effect %d; want 1000 each", succeeded, distinct)
	}
	if reruns > inFlight {
		t.Fatalf("%d re-runs but only %d jobs were in flight at the kills", reruns, inFlight)
	}
}
