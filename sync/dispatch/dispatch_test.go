package dispatch_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"jobdesk/engine/blob"
	"jobdesk/engine/functions"
	"jobdesk/engine/job"
	"jobdesk/engine/orchestrator"
	"jobdesk/engine/queue"
	"jobdesk/engine/store"
	"jobdesk/sync/awserr"
	"jobdesk/sync/cloudconfig"
	"jobdesk/sync/dispatch"
	"jobdesk/sync/internal/awstest"
	"jobdesk/sync/internal/faultproxy"
	"jobdesk/sync/internal/sfntest"
	"jobdesk/sync/s3blob"
	"jobdesk/sync/sfnexec"
)

// The dispatcher is tested with independent servers on loopback and the real SDK: versitygw for
// S3, the Step Functions stand-in (what `jobdesk serve` runs) over its own data folder, whose
// "work" function reads the uploaded input from the same bucket as a Lambda function would, and
// a fault-injecting proxy in front of Step Functions.

const workflow = `{
  "StartAt": "Work",
  "States": {
    "Work": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
      "Parameters": {"FunctionName": "work", "Payload.$": "$"}, "OutputPath": "$.Payload", "End": true}
  }
}`

const jobType = "cloud-test"

type env struct {
	q     *queue.Queue
	s3    *awstest.S3
	sfn   *sfntest.Server
	proxy *faultproxy.Proxy
	cloud *dispatch.Cloud
	dir   string
	block chan struct{} // when not nil, "work" waits for it to close
	delay time.Duration // how long "work" takes
}

func newEnv(t *testing.T, blockWork bool) *env { return newEnvTB(t, blockWork) }

func newEnvB(b *testing.B) *env { return newEnvTB(b, false) }

func newEnvTB(t testing.TB, blockWork bool) *env {
	t.Helper()
	v := &env{dir: t.TempDir()}
	if blockWork {
		v.block = make(chan struct{})
	}
	db, err := store.OpenDir(v.dir, queue.Migrations)
	if err != nil {
		t.Fatal(err)
	}
	v.q, err = queue.Open(db, queue.Options{DataDir: v.dir, WatchInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.q.Close(); db.Close() })
	v.s3 = awstest.StartS3(t)
	store := s3blob.New(v.s3.Client, s3blob.Options{})
	// The cloud side's function reads its input from S3 and answers with its SHA-256.
	work := func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
		var ev struct{ URI string }
		if err := json.Unmarshal(in, &ev); err != nil {
			return nil, err
		}
		time.Sleep(v.delay)
		if v.block != nil {
			select {
			case <-v.block:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		b, err := blob.ReadAll(ctx, store, ev.URI)
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(b)
		return json.Marshal(map[string]any{"sha256": hex.EncodeToString(sum[:]), "bytes": len(b)})
	}
	v.sfn = sfntest.Start(t, functions.New(functions.Function{Name: "work", Handler: work}), map[string]string{"wf": workflow,
		"pass": `{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`})
	v.proxy = faultproxy.Start(t, v.sfn.Endpoint)
	client := sfntest.NewClient(v.proxy.URL(), func(o *sfn.Options) {
		o.HTTPClient = dispatch.HTTPClient(2 * time.Second)
		o.RetryMaxAttempts = 2
	})
	cfg := cloudconfig.Config{Bucket: v.s3.Bucket, Prefix: "jd/", StateMachines: map[string]string{"wf": v.sfn.StateMachineARN("wf"), "pass": v.sfn.StateMachineARN("pass")}}
	v.cloud = &dispatch.Cloud{Config: cfg, Blobs: store,
		Exec: sfnexec.New(client, sfnexec.Options{StateMachines: cfg.StateMachines, MinPoll: 20 * time.Millisecond, MaxPoll: 200 * time.Millisecond})}
	return v
}

// handler is a family's cloud handler in miniature: upload, run the workflow, return its output.
func handler(ctx context.Context, c *dispatch.Cloud, raw json.RawMessage, r job.Reporter) (json.RawMessage, error) {
	var in struct{ Path string }
	json.Unmarshal(raw, &in)
	uri, err := c.UploadInput(ctx, in.Path, "", 10, r)
	if err != nil {
		return nil, err
	}
	info, _ := job.InfoFrom(ctx)
	input, _ := json.Marshal(map[string]string{"uri": uri})
	return orchestrator.Run(ctx, c.Exec, orchestrator.Spec{Workflow: "wf", Name: fmt.Sprintf("input-%d", info.ID), Input: input,
		What: "the test job", WhatJa: "テストジョブ"}, r)
}

func (v *env) start(t *testing.T, o dispatch.Options) {
	t.Helper()
	if o.Handlers == nil {
		o.Handlers = map[string]dispatch.Handler{jobType: handler}
	}
	if o.Backoff.Base == 0 {
		o.Backoff = queue.Backoff{Base: 50 * time.Millisecond, Factor: 2, Max: 300 * time.Millisecond, Jitter: 0.2}
	}
	ctx, cancel := context.WithCancel(context.Background())
	d := dispatch.New(v.q, v.cloud, o)
	done := make(chan struct{})
	go func() { defer close(done); d.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

func (v *env) submit(t *testing.T, n int) []int64 {
	t.Helper()
	var ids []int64
	for i := 0; i < n; i++ {
		p := filepath.Join(v.dir, fmt.Sprintf("input-%d.csv", i))
		os.WriteFile(p, []byte(strings.Repeat(fmt.Sprintf("row %d\n", i), 1000)), 0o644)
		in, _ := json.Marshal(map[string]string{"path": p})
		j, _, err := v.q.Enqueue(context.Background(), queue.Params{Type: jobType, Name: filepath.Base(p), Input: in, Target: job.TargetCloud})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, j.ID)
	}
	return ids
}

func (v *env) wait(t *testing.T, id int64, within time.Duration, ok func(job.Job) bool) job.Job {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		j, err := v.q.Get(context.Background(), id)
		if err == nil && ok(j) {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %d is %s %q after %v", id, j.Status, j.Message, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func final(j job.Job) bool { return j.Status.Final() }

func (v *env) executions(t *testing.T) int {
	xs, _, err := v.sfn.Engine.ListExecutions(context.Background(), v.sfn.StateMachineARN("wf"), "", 1000, "")
	if err != nil {
		t.Fatal(err)
	}
	return len(xs)
}

func TestDispatchRunsEachJobOnceInTheCloud(t *testing.T) {
	v := newEnv(t, false)
	ids := v.submit(t, 5)
	v.start(t, dispatch.Options{})
	for _, id := range ids {
		j := v.wait(t, id, 20*time.Second, final)
		if j.Status != job.Succeeded || !strings.Contains(string(j.Result), `"bytes"`) {
			t.Fatalf("job %d %s: %s %s", id, j.Status, j.Result, j.Error)
		}
	}
	if n := v.executions(t); n != 5 {
		t.Fatalf("%d executions, want 5", n)
	}
	// An independent client sees the content-addressed inputs.
	out := v.s3.RunAWS(t, "s3api", "list-objects-v2", "--bucket", v.s3.Bucket, "--prefix", "jd/inputs/", "--query", "Contents[].Key", "--output", "text")
	if got := len(strings.Fields(out)); got != 5 {
		t.Fatalf("aws s3api list-objects-v2 sees %d inputs: %s", got, out)
	}
}

// The network fails in each way; the job waits PENDING with the offline message, is never
// duplicated, and goes out by itself when the network returns.
func TestOfflineJobsWaitAndGoOutOnce(t *testing.T) {
	for _, c := range []struct {
		name string
		set  func(p *faultproxy.Proxy)
	}{
		{"refused", func(p *faultproxy.Proxy) { p.Set(faultproxy.Refuse) }},
		{"blackhole", func(p *faultproxy.Proxy) { p.Set(faultproxy.Blackhole) }},
		{"dropped mid-request", func(p *faultproxy.Proxy) { p.Set(faultproxy.DropHalf) }},
		{"answer lost", func(p *faultproxy.Proxy) { p.Set(faultproxy.DropReply) }},
		{"throttled", func(p *faultproxy.Proxy) { p.SetAnswer(faultproxy.Throttling) }},
		{"503", func(p *faultproxy.Proxy) { p.SetAnswer(faultproxy.Unavailable) }},
		{"500", func(p *faultproxy.Proxy) { p.SetAnswer(faultproxy.InternalError) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := newEnv(t, false)
			c.set(v.proxy)
			ids := v.submit(t, 3)
			v.start(t, dispatch.Options{})
			for _, id := range ids {
				v.wait(t, id, 20*time.Second, func(j job.Job) bool {
					return j.Status == job.Pending && j.Message == awserr.OfflineJa
				})
			}
			v.proxy.Set(faultproxy.Pass)
			for _, id := range ids {
				if j := v.wait(t, id, 30*time.Second, final); j.Status != job.Succeeded {
					t.Fatalf("job %d %s %s", id, j.Status, j.Error)
				}
			}
			if n, starts := v.executions(t), v.sfn.Count("StartExecution"); n != 3 {
				t.Fatalf("%d executions after %d StartExecution calls, want 3", n, starts)
			}
		})
	}
}

// A missing state machine fails the job at once, naming what to fix.
func TestPermissionErrorsFailAtOnce(t *testing.T) {
	v := newEnv(t, false)
	v.cloud.Exec = sfnexec.New(sfntest.NewClient(v.proxy.URL()), sfnexec.Options{StateMachines: map[string]string{
		"wf": strings.Replace(v.sfn.StateMachineARN("wf"), ":wf", ":missing", 1)}})
	ids := v.submit(t, 1)
	v.start(t, dispatch.Options{})
	j := v.wait(t, ids[0], 10*time.Second, final)
	if j.Status != job.Failed || j.Attempts != 1 || j.Error == nil || j.Error.Code != job.E010 || !strings.Contains(j.Error.Message, "does not exist") {
		t.Fatalf("job %s after %d attempts: %s", j.Status, j.Attempts, j.Error)
	}
}

// A person's cancel stops the cloud execution.
func TestCancelStopsTheExecution(t *testing.T) {
	v := newEnv(t, true)
	ids := v.submit(t, 1)
	v.start(t, dispatch.Options{})
	v.wait(t, ids[0], 10*time.Second, func(j job.Job) bool { return v.executions(t) == 1 })
	if err := v.q.Cancel(context.Background(), ids[0]); err != nil {
		t.Fatal(err)
	}
	if j := v.wait(t, ids[0], 10*time.Second, final); j.Status != job.Cancelled {
		t.Fatalf("job %s %s", j.Status, j.Error)
	}
	x, err := v.cloud.Exec.Describe(context.Background(), "wf", fmt.Sprintf("input-%d", ids[0]))
	if err != nil || x.Status != orchestrator.Aborted {
		t.Fatalf("execution %s, %v", x.Status, err)
	}
}

// Closing JobDesk gives a running cloud job back to the queue, saying its execution goes on; the
// next dispatcher finds that execution again by name, and the job ends with no message of its own.
func TestClosingGivesTheJobBackAndTheExecutionGoesOn(t *testing.T) {
	v := newEnv(t, true)
	ids := v.submit(t, 1)
	ctx, cancel := context.WithCancel(context.Background())
	d := dispatch.New(v.q, v.cloud, dispatch.Options{Handlers: map[string]dispatch.Handler{jobType: handler}})
	done := make(chan struct{})
	go func() { defer close(done); d.Run(ctx) }()
	v.wait(t, ids[0], 10*time.Second, func(j job.Job) bool { return v.executions(t) == 1 })
	cancel()
	<-done
	j, err := v.q.Get(context.Background(), ids[0])
	if err != nil || j.Status != job.Pending || j.Message != "JobDesk closed; the cloud execution goes on" || j.Attempts != 0 {
		t.Fatalf("job after closing: %s %q, %d attempts, %v", j.Status, j.Message, j.Attempts, err)
	}
	x, err := v.cloud.Exec.Describe(context.Background(), "wf", fmt.Sprintf("input-%d", ids[0]))
	if err != nil || x.Status != orchestrator.Running {
		t.Fatalf("execution after closing: %s, %v", x.Status, err)
	}
	close(v.block)
	v.start(t, dispatch.Options{})
	j = v.wait(t, ids[0], 20*time.Second, final)
	if j.Status != job.Succeeded || j.Message != "" || j.Attempts != 1 {
		t.Fatalf("job %s %q after %d attempts: %v", j.Status, j.Message, j.Attempts, j.Error)
	}
	if n := v.executions(t); n != 1 {
		t.Fatalf("%d executions, want 1", n)
	}
	if !d.LastSuccess().IsZero() {
		t.Fatalf("the closed dispatcher reached the cloud at %v", d.LastSuccess())
	}
}
