package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"jobdesk/engine/job"
	"jobdesk/engine/store"
)

// smallDisk mounts a tmpfs of size bytes on a temporary folder and returns it; the test is
// skipped when mounting is not allowed here.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0700", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small tmpfs to fill (needs root): %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir
}

// TestDiskFullFailsJobAndPauses fills a small real disk from inside a job: the job fails at
// once with E009 "the disk is full" naming the folder, the worker stops claiming (Health says
// why, Wait returns instead of hanging), and when space is freed the worker resumes by itself
// and runs the job that waited; the job that succeeded before is untouched.
func TestDiskFullFailsJobAndPauses(t *testing.T) {
	dir := smallDisk(t, "16m")
	ctx := context.Background()
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
	if _, err := db.W.Exec(`CREATE TABLE rows(id INTEGER PRIMARY KEY, job INTEGER, body BLOB)`); err != nil {
		t.Fatal(err)
	}
	filler := filepath.Join(dir, "filler.bin")
	w := NewWorker(q, WorkerOptions{Workers: 1})
	w.Handle("fill", func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
		f, err := os.Create(filler)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		chunk := make([]byte, 64<<10)
		for {
			if _, err := f.Write(chunk); err != nil {
				return nil, fmt.Errorf("fill the disk: %w", err) // ENOSPC
			}
		}
	}, TypeOptions{})
	w.Handle("row", func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
		info, _ := job.InfoFrom(ctx)
		if _, err := db.W.ExecContext(ctx, `INSERT INTO rows(job, body) VALUES(?, zeroblob(20000))`, info.ID); err != nil {
			return nil, err
		}
		return json.RawMessage(`"ok"`), nil
	}, TypeOptions{})
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	before, _, err := q.Enqueue(ctx, Params{Type: "row"})
	if err != nil {
		t.Fatal(err)
	}
	if j, err := waitFor(ctx, q, before.ID, 10*time.Second); err != nil || j.Status != job.Succeeded {
		t.Fatalf("first job: %s %v", j.Status, err)
	}

	fill, _, err := q.Enqueue(ctx, Params{Type: "fill", Priority: 1})
	if err != nil {
		t.Fatal(err)
	}
	after, _, err := q.Enqueue(ctx, Params{Type: "row"})
	if err != nil {
		t.Fatal(err)
	}
	// Wait returns, with the disk-full error or the job failed, instead of hanging.
	j, err := waitFor(ctx, q, fill.ID, 10*time.Second)
	var je *job.Error
	switch {
	case errors.As(err, &je):
	case err == nil && j.Status == job.Failed:
		je = j.Error
	default:
		t.Fatalf("fill job: %s %v", j.Status, err)
	}
	if je == nil || je.Code != job.E009 || !strings.Contains(je.Message, "disk is full") || !strings.Contains(je.Message, dir) ||
		!strings.Contains(je.MessageJa, "ディスクがいっぱい") {
		t.Fatalf("error = %+v; want E009 the disk is full, naming %s", je, dir)
	}
	h := q.Health()
	if !h.DiskFull || h.Folder != dir || h.Error == nil {
		t.Fatalf("health = %+v; want disk full in %s", h, dir)
	}
	// Paused: the waiting job is not claimed while the disk stays full.
	time.Sleep(1500 * time.Millisecond)
	if j, _ := q.Get(ctx, after.ID); j.Status != job.Pending {
		t.Fatalf("a job was claimed on a full disk: %s %+v", j.Status, j.Error)
	}

	// The job that hit the full disk is recorded FAILED while the disk is still full (the room
	// kept aside is given back for it), not left RUNNING until space returns.
	if j, _ := q.Get(ctx, fill.ID); j.Status != job.Failed {
		t.Errorf("on the full disk the fill job is %s; want FAILED", j.Status)
	}

	// Space returns: the worker resumes by itself.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); q.Health().DiskFull; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("still paused 10 s after space returned: %+v", q.Health())
		}
	}
	if j, err := waitFor(ctx, q, after.ID, 15*time.Second); err != nil || j.Status != job.Succeeded {
		t.Fatalf("job after space returned: %s %+v %v", j.Status, j.Error, err)
	}
	j, err = q.Get(ctx, fill.ID)
	if err != nil || j.Status != job.Failed || j.Error == nil || j.Error.Code != job.E009 {
		t.Fatalf("fill job recorded as %s %+v %v; want FAILED E009", j.Status, j.Error, err)
	}
	if j.Attempts != 1 {
		t.Errorf("fill job ran %d times; a full disk is not retried", j.Attempts)
	}
	if j, _ := q.Get(ctx, before.ID); j.Status != job.Succeeded {
		t.Errorf("the job committed before is now %s", j.Status)
	}
	var rows int
	db.R.QueryRow(`SELECT count(*) FROM rows`).Scan(&rows)
	if rows != 2 {
		t.Errorf("%d rows; want 2", rows)
	}
	if r, err := store.Doctor(dir); err != nil || !r.OK {
		t.Errorf("integrity after the full disk: %+v %v", r, err)
	}
}

// waitFor is Queue.Wait bounded by d.
func waitFor(ctx context.Context, q *Queue, id int64, d time.Duration) (job.Job, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return q.Wait(ctx, id)
}
