package dispatch_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"jobdesk/engine/job"
	"jobdesk/engine/orchestrator"
	"jobdesk/engine/queue"
	"jobdesk/sync/dispatch"
)

// BenchmarkDispatch measures the dispatcher's own cost per job: claimed → StartExecution accepted
// by the Step Functions stand-in on loopback (the handler starts the execution and returns). It
// reports ms/job and how long 1,000 jobs take (goals: ≤ 20 ms, ≤ 10 s).
func BenchmarkDispatch(b *testing.B) {
	v := newEnvB(b)
	start := func(ctx context.Context, c *dispatch.Cloud, raw json.RawMessage, r job.Reporter) (json.RawMessage, error) {
		info, _ := job.InfoFrom(ctx)
		name := fmt.Sprintf("bench-%d", info.ID)
		x, err := c.Exec.Start(ctx, "pass", name, raw, orchestrator.StartOptions{})
		if errors.Is(err, orchestrator.ErrExists) {
			// The SDK retried a start whose answer was late: the execution is this job's.
			x, err = c.Exec.Describe(ctx, "pass", name)
		}
		if err != nil {
			return nil, err
		}
		return json.Marshal(x.ARN)
	}
	const batch = 1000
	ps := make([]queue.Params, batch)
	for i := range ps {
		ps[i] = queue.Params{Type: jobType, Name: "bench", Input: json.RawMessage(`{}`), Target: job.TargetCloud}
	}
	b.ResetTimer()
	var total time.Duration
	jobs := 0
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		ids, err := v.q.EnqueueBatch(context.Background(), ps)
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		d := dispatch.New(v.q, v.cloud, dispatch.Options{Handlers: map[string]dispatch.Handler{jobType: start}, Concurrency: 64})
		b.StartTimer()
		began := time.Now()
		go d.Run(ctx)
		last := ids[len(ids)-1]
		for {
			done := true
			for _, id := range []int64{ids[0], last} {
				if j, _ := v.q.Get(context.Background(), id); !j.Status.Final() {
					done = false
				}
			}
			if done {
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
		for _, id := range ids {
			for {
				if j, _ := v.q.Get(context.Background(), id); j.Status.Final() {
					if j.Status != job.Succeeded {
						b.Fatalf("job %d %s %v", id, j.Status, j.Error)
					}
					break
				}
				time.Sleep(2 * time.Millisecond)
			}
		}
		total += time.Since(began)
		jobs += batch
		b.StopTimer()
		cancel()
		b.StartTimer()
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(jobs), "ms/job")
	b.ReportMetric(total.Seconds()*1000/float64(jobs), "s/1000jobs")
}
