package queue

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"jobdesk/engine/cputime"
	"jobdesk/engine/job"
)

// The queue's throughput on a file database (WAL, synchronous=NORMAL). make bench reports these
// next to goqite and River's SQLite driver (bench/compare).

var benchInput = json.RawMessage(`{"path":"/data/report.csv"}`)

// BenchmarkEnqueue is one job per call, each in its own transaction.
func BenchmarkEnqueue(b *testing.B) {
	q := openQueue(b, b.TempDir())
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := q.Enqueue(ctx, Params{Type: "noop", Name: "report.csv", Input: benchInput}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
}

// BenchmarkEnqueueBatch enqueues b.N jobs, 1,000 per transaction.
func BenchmarkEnqueueBatch(b *testing.B) {
	q := openQueue(b, b.TempDir())
	ctx := context.Background()
	const batch = 1000
	ps := make([]Params, batch)
	for i := range ps {
		ps[i] = Params{Type: "noop", Name: "report.csv", Input: benchInput}
	}
	b.ResetTimer()
	for left := b.N; left > 0; left -= batch {
		if _, err := q.EnqueueBatch(ctx, ps[:min(batch, left)]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
}

// BenchmarkLeaseComplete runs b.N enqueued no-op jobs through 4 workers: lease (several per
// statement), run, complete (committed in small groups). Run it with -benchtime 20000x.
func BenchmarkLeaseComplete(b *testing.B) {
	n := b.N
	ctx := context.Background()
	q := openQueue(b, b.TempDir())
	ps := make([]Params, n)
	for k := range ps {
		ps[k] = Params{Type: "noop", Input: benchInput}
	}
	if _, err := q.EnqueueBatch(ctx, ps); err != nil {
		b.Fatal(err)
	}
	drainBench(b, q, n, "noop")
}

// drainBench runs the n jobs waiting in q through a 4-worker Worker whose handlers do nothing
// (the first type unlimited, the others capped at 2 at once) and reports jobs/s.
func drainBench(b *testing.B, q *Queue, n int, types ...string) {
	ctx := context.Background()
	var done atomic.Int64
	finished := make(chan struct{})
	events, unsub := q.Subscribe(2*n + 16) // each job's TaskStarted and TaskSucceeded: none dropped
	defer unsub()
	go func() {
		for e := range events {
			if e.Status == job.Succeeded && done.Add(1) == int64(n) {
				close(finished)
				return
			}
		}
	}()
	w := NewWorker(q, WorkerOptions{Workers: 4})
	noop := func(context.Context, json.RawMessage, job.Reporter) (json.RawMessage, error) { return nil, nil }
	for i, t := range types {
		o := TypeOptions{}
		if i > 0 {
			o.Concurrency = 2
		}
		w.Handle(t, noop, o)
	}
	b.ResetTimer()
	if err := w.Start(ctx); err != nil {
		b.Fatal(err)
	}
	<-finished
	b.StopTimer()
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "jobs/s")
	w.Stop()
}

// BenchmarkWakeLatency measures the time from Enqueue returning to the handler starting, with an
// idle worker waiting: workers are woken by a signal, not a poll.
func BenchmarkWakeLatency(b *testing.B) {
	q := openQueue(b, b.TempDir())
	ctx := context.Background()
	started := make(chan time.Time, 1)
	w := NewWorker(q, WorkerOptions{Workers: 4})
	w.Handle("ping", func(context.Context, json.RawMessage, job.Reporter) (json.RawMessage, error) {
		started <- time.Now()
		return nil, nil
	}, TypeOptions{})
	if err := w.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	var sum, worst time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		time.Sleep(2 * time.Millisecond) // let the worker go idle again
		t0 := time.Now()
		if _, _, err := q.Enqueue(ctx, Params{Type: "ping"}); err != nil {
			b.Fatal(err)
		}
		d := (<-started).Sub(t0)
		sum += d
		worst = max(worst, d)
	}
	b.ReportMetric(float64(sum.Microseconds())/float64(b.N)/1000, "ms/wake")
	b.ReportMetric(float64(worst.Microseconds())/1000, "ms-worst")
}

// BenchmarkEnqueueTasks enqueues b.N jobs with a parent, 8 per transaction, as the workflow
// engine's group commit writes a Map's task jobs.
func BenchmarkEnqueueTasks(b *testing.B) {
	q := openQueue(b, b.TempDir())
	ctx := context.Background()
	parent, _, err := q.Enqueue(ctx, Params{Type: "flow.execution", Name: "run"})
	if err != nil {
		b.Fatal(err)
	}
	const batch = 8
	ps := make([]Params, batch)
	for i := range ps {
		ps[i] = Params{Type: "fn:csv-processor", Name: "Process", Input: benchInput, ParentID: parent.ID}
	}
	b.ResetTimer()
	for left := b.N; left > 0; left -= batch {
		if _, err := q.EnqueueBatch(ctx, ps[:min(batch, left)]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
}

// BenchmarkHandOffTasks runs b.N jobs as a workflow's Map runs its tasks: 8 callers each
// enqueue one job at a time (EnqueueWatched, a dedup key, a parent), which is handed off to
// the worker, and wait for its end (Ended) before the next. It reports jobs per second and the
// CPU time per job.
func BenchmarkHandOffTasks(b *testing.B) {
	q := openQueue(b, b.TempDir())
	ctx := context.Background()
	noop := func(context.Context, json.RawMessage, job.Reporter) (json.RawMessage, error) {
		return json.RawMessage(`{}`), nil
	}
	startWorker(b, q, WorkerOptions{Workers: 8}, func(w *Worker) {
		w.Handle("noop", noop, TypeOptions{})
		w.Handle("parent", noop, TypeOptions{})
	})
	// The parent has ended: a job still waiting would be due, and no job is handed off while
	// another is due.
	parent, _, err := q.Enqueue(ctx, Params{Type: "parent", Name: "run"})
	if err != nil {
		b.Fatal(err)
	}
	wait(b, q, parent.ID)
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start, cpu0 := time.Now(), cputime.Process()
	for c := 0; c < 8; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				id, _, events, stop, err := q.EnqueueWatched(ctx, Params{Type: "noop", Name: "Process", Input: benchInput,
					MaxAttempts: 1, DedupKey: fmt.Sprintf("flow:1:0:M/%d/N", i), ParentID: parent.ID})
				if err != nil {
					b.Error(err)
					return
				}
				for e := range events {
					if e.JobID == id && e.Status.Final() {
						break
					}
					if e.JobID != 0 {
						continue
					}
					if j, err := q.Get(ctx, id); err == nil && j.Status.Final() {
						break // another connection's commit: the job's end may be among the lost events
					}
				}
				stop()
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "jobs/s")
	b.ReportMetric((cputime.Process()-cpu0).Seconds()*1e6/float64(b.N), "cpu-µs/job")
}
