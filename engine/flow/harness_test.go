package flow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"jobdesk/engine/flow/asl"
	"jobdesk/engine/functions"
	"jobdesk/engine/job"
	"jobdesk/engine/queue"
	"jobdesk/engine/store"
)

// env is a real engine on a real SQLite file in a temporary folder, with the test functions
// registered and a worker running.
type env struct {
	t   testing.TB
	dir string
	db  *store.DB
	q   *queue.Queue
	e   *Engine
	w   *queue.Worker

	mu    sync.Mutex
	calls map[string]int // function calls by key
}

const lambdaARN = "arn:aws:lambda:local:000000000000:function:"

func newEnv(t testing.TB) *env {
	t.Helper()
	return newEnvWith(t, nil)
}

// newEnvWith is newEnv with engine options changed by opts (given the data folder) first.
func newEnvWith(t testing.TB, opts func(dir string, o *Options)) *env {
	t.Helper()
	dir := t.TempDir()
	db, err := store.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	q, err := queue.Open(db, queue.Options{DataDir: dir, WatchInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var o Options
	if opts != nil {
		opts(dir, &o)
	}
	e, err := New(db, q, o)
	if err != nil {
		t.Fatal(err)
	}
	v := &env{t: t, dir: dir, db: db, q: q, e: e, calls: map[string]int{}}
	v.register()
	v.w = queue.NewWorker(q, queue.WorkerOptions{Workers: 8, CancelGrace: 200 * time.Millisecond})
	e.Attach(v.w)
	if err := v.w.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.w.Stop(); e.Close(); q.Close(); db.Close() })
	return v
}

func obj(in json.RawMessage) map[string]any {
	v, _ := asl.Decode(in)
	m, _ := v.(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	return m
}

// register adds the functions the conformance cases call.
func (v *env) register() {
	h := func(f func(ctx context.Context, in map[string]any, r job.Reporter) (any, error)) job.Handler {
		return func(ctx context.Context, input json.RawMessage, r job.Reporter) (json.RawMessage, error) {
			out, err := f(ctx, obj(input), r)
			if err != nil {
				return nil, err
			}
			return asl.Encode(out), nil
		}
	}
	o := functions.Options{}
	v.e.RegisterFunction("echo", func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
		return in, nil
	}, o)
	v.e.RegisterFunction("noop", func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
		return in, nil
	}, o)
	v.e.RegisterFunction("add", h(func(ctx context.Context, in map[string]any, r job.Reporter) (any, error) {
		a, _ := in["a"].(float64)
		b, _ := in["b"].(float64)
		return a + b, nil
	}), o)
	v.e.RegisterFunction("double", func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
		x, _ := asl.Decode(in)
		switch n := x.(type) {
		case float64:
			if n < 0 {
				return nil, job.Errorf(job.E006, "negative number %v", n).WithName("NegativeNumber")
			}
			return asl.Encode(n * 2), nil
		case map[string]any:
			if items, ok := n["Items"].([]any); ok {
				return asl.Encode(map[string]any{"count": float64(len(items))}), nil
			}
		}
		return nil, job.Errorf(job.E006, "not a number: %s", in).WithName("NotANumber")
	}, o)
	v.e.RegisterFunction("fail", h(func(ctx context.Context, in map[string]any, r job.Reporter) (any, error) {
		name, _ := in["error"].(string)
		cause, _ := in["cause"].(string)
		if name == "" {
			return nil, errors.New(cause)
		}
		return nil, job.Errorf(job.E006, "%s", cause).WithName(name)
	}), o)
	v.e.RegisterFunction("crash", func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
		panic("crash test")
	}, o)
	v.e.RegisterFunction("flaky", h(func(ctx context.Context, in map[string]any, r job.Reporter) (any, error) {
		key, _ := in["key"].(string)
		times, _ := in["times"].(float64)
		v.mu.Lock()
		v.calls[key]++
		n := v.calls[key]
		v.mu.Unlock()
		if float64(n) <= times {
			name, _ := in["error"].(string)
			if name == "" {
				name = "DatabaseConnectionError"
			}
			return nil, job.Errorf(job.E009, "attempt %d failed", n).WithName(name)
		}
		return map[string]any{"attempts": float64(n), "retryCount": in["retryCount"]}, nil
	}), o)
	v.e.RegisterFunction("sleep", h(func(ctx context.Context, in map[string]any, r job.Reporter) (any, error) {
		ms, _ := in["ms"].(float64)
		beat, _ := in["beat_ms"].(float64)
		end := time.Now().Add(time.Duration(ms) * time.Millisecond)
		for time.Now().Before(end) {
			step := time.Until(end)
			if beat > 0 {
				step = min(step, time.Duration(beat)*time.Millisecond)
			}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(step):
			}
			if beat > 0 {
				r.Progress(50, "working")
			}
		}
		return map[string]any{"slept": ms}, nil
	}), o)
	// stubborn sleeps ms, cancelled or not, then counts its key as count does.
	v.e.RegisterFunction("stubborn", h(func(ctx context.Context, in map[string]any, r job.Reporter) (any, error) {
		ms, _ := in["ms"].(float64)
		time.Sleep(time.Duration(ms) * time.Millisecond)
		v.mu.Lock()
		v.calls[fmt.Sprint(in["key"])]++
		v.mu.Unlock()
		return in, nil
	}), o)
	v.e.RegisterFunction("count", h(func(ctx context.Context, in map[string]any, r job.Reporter) (any, error) {
		key := fmt.Sprint(in["key"])
		v.mu.Lock()
		v.calls[key]++
		v.mu.Unlock()
		return in, nil
	}), o)
}

func (v *env) count(key string) int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.calls[key]
}

// machine stores def (with "λ" standing for the Lambda ARN prefix) under name.
func (v *env) machine(t testing.TB, name, def string) string {
	t.Helper()
	def = strings.ReplaceAll(def, "λ", lambdaARN)
	sm, err := v.e.CreateStateMachine(context.Background(), name, def, "")
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	return sm.ARN
}

// run starts an execution and waits for it (at most 60 s).
func (v *env) run(t testing.TB, smARN, name, input string) Execution {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	x, err := v.e.StartExecution(ctx, smARN, json.RawMessage(input), StartOptions{Name: name})
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	x, err = v.e.Wait(ctx, x.ARN)
	if err != nil {
		t.Fatalf("wait: %v (status %s)", err, x.Status)
	}
	return x
}

func sameJSON(a, b string) bool {
	x, err1 := asl.Decode([]byte(a))
	y, err2 := asl.Decode([]byte(b))
	return err1 == nil && err2 == nil && asl.Equal(x, y)
}

func queueFilterChildren(parent int64) queue.Filter { return queue.Filter{ParentID: parent} }
