package aitest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"jobdesk/assets"
	"jobdesk/engine/aijob"
	"jobdesk/engine/flow"
	"jobdesk/engine/job"
	"jobdesk/engine/orchestrator"
	"jobdesk/engine/queue"
	"jobdesk/engine/store"
)

// Device runs the AI jobs as the device runs them, for the tests of the family's service: a
// queue and the flow engine on a database, the shipped AI workflows loaded, the service's
// functions registered as their Tasks, and each AI job type run by aijob.RunJob (its workflow
// as the job's child). A job ends with the status, result and error a person sees.
type Device struct {
	Queue  *queue.Queue
	Engine *flow.Engine
}

// NewDevice starts a Device in dir on db (migrated with queue.Migrations, flow.Migrations and
// the service's own schema, when it has one) running svc; it stops when the test ends. A
// service without a JobLineage is given the queue's, so the rows a workflow's functions write
// link to the AI job, as on the device. edits change the text of a shipped workflow's
// definition before it is loaded: workflow name → old, new, old, new, … (a shorter
// TimeoutSeconds).
func NewDevice(t testing.TB, dir string, db *store.DB, svc *aijob.Service, edits map[string][]string) *Device {
	t.Helper()
	q, err := queue.Open(db, queue.Options{DataDir: dir, WatchInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := flow.New(db, q, flow.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if svc.Jobs == nil {
		svc.Jobs = lineage{q}
	}
	for _, fn := range svc.Functions() {
		eng.RegisterFunction(fn.Name, fn.Handler, fn.Options)
	}
	arn := strings.Split(eng.StateMachineARN("x"), ":")
	for _, name := range aijob.Workflows {
		def, err := assets.DeviceWorkflow(name, arn[3], arn[4])
		if err != nil {
			t.Fatal(err)
		}
		text := string(def)
		for i := 0; i+1 < len(edits[name]); i += 2 {
			if !strings.Contains(text, edits[name][i]) {
				t.Fatalf("the shipped %s has no %s", name, edits[name][i])
			}
			text = strings.Replace(text, edits[name][i], edits[name][i+1], 1)
		}
		if _, err := eng.PutStateMachine(context.Background(), name, text); err != nil {
			t.Fatal(err)
		}
	}
	w := queue.NewWorker(q, queue.WorkerOptions{Workers: 4, CancelGrace: 200 * time.Millisecond})
	rt := aijob.Runtime{
		Runtime: orchestrator.Runtime{Executions: eng.Executions(), Job: q.Get},
		Service: svc,
		Usage:   svc.JobUsage,
	}
	for _, typ := range aijob.Types {
		w.Handle(typ, func(ctx context.Context, raw json.RawMessage, r job.Reporter) (json.RawMessage, error) {
			return aijob.RunJob(ctx, rt, typ, raw, r)
		}, queue.TypeOptions{Orchestrator: true, Concurrency: 64})
	}
	eng.Attach(w)
	ctx, cancel := context.WithCancel(context.Background())
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); w.Stop(); eng.Close(); q.Close() })
	return &Device{Queue: q, Engine: eng}
}

// Submit enqueues a job of type typ with input in.
func (d *Device) Submit(t testing.TB, typ string, in any) job.Job {
	t.Helper()
	raw, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	j, _, err := d.Queue.Enqueue(context.Background(), queue.Params{Type: typ, Name: typ, Input: raw})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// Wait waits (at most a minute) for job id to end and returns it.
func (d *Device) Wait(t testing.TB, id int64) job.Job {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	j, err := d.Queue.Wait(ctx, id)
	if err != nil {
		t.Fatalf("job %d: %v", id, err)
	}
	return j
}

// Run runs a job of type typ with input in to its end.
func (d *Device) Run(t testing.TB, typ string, in any) job.Job {
	t.Helper()
	return d.Wait(t, d.Submit(t, typ, in).ID)
}

// lineage answers which job started a job from the queue's rows.
type lineage struct{ q *queue.Queue }

func (l lineage) JobParent(ctx context.Context, id int64) (string, int64, error) {
	j, err := l.q.Get(ctx, id)
	return j.Type, j.ParentID, err
}
