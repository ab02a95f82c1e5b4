package csvsqlite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"jobdesk/assets"
	"jobdesk/engine/blob"
	"jobdesk/engine/csvjob"
	"jobdesk/engine/csvjob/csvsqlite"
	"jobdesk/engine/flow"
	"jobdesk/engine/job"
	"jobdesk/engine/queue"
	"jobdesk/engine/store"
)

// env is a device in a test: a SQLite database in a temporary data folder, the queue and the
// workflow engine on it with the shipped csv-processing workflow loaded, and the csv-processor
// registered with its state in that database (Store). Tests read the tables through the
// embedded *store.DB.
type env struct {
	*store.DB
	Dir   string
	Store *csvsqlite.Store
	P     *csvjob.Processor
	Q     *queue.Queue
	eng   *flow.Engine
	smARN string
	// JobID, when set, is the CSV job the executions belong to (results and exports by its id).
	JobID int64
}

// openDB starts a device in t.TempDir().
func openDB(t testing.TB) *env {
	t.Helper()
	return openDBIn(t, t.TempDir())
}

// openDBIn starts a device whose data folder is dir.
func openDBIn(t testing.TB, dir string) *env {
	t.Helper()
	return openDevice(t, dir, nil, nil)
}

// openDevice is openDBIn whose processor reads files through blobs (nil: the data folder's
// store) and whose worker also runs the handlers attach registers (nil: none), before it starts.
func openDevice(t testing.TB, dir string, blobs blob.Store, attach func(*env, *queue.Worker)) *env {
	t.Helper()
	db, err := store.OpenDir(dir, csvsqlite.Migrations)
	if err != nil {
		t.Fatal(err)
	}
	q, err := queue.Open(db, queue.Options{DataDir: dir, WatchInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := flow.New(db, q, flow.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st := csvsqlite.New(db)
	if blobs == nil {
		blobs = blob.NewMux(blob.Local{Root: dir})
	}
	p := csvjob.NewProcessor(st, blobs, dir)
	for _, f := range p.Functions() {
		eng.RegisterFunction(f.Name, f.Handler, f.Options)
	}
	name := strings.TrimSuffix(csvjob.WorkflowFile, ".asl.json")
	arn := strings.Split(eng.StateMachineARN(name), ":")
	def, err := assets.DeviceWorkflow(name, arn[3], arn[4])
	if err != nil {
		t.Fatal(err)
	}
	sm, err := eng.PutStateMachine(context.Background(), name, string(def))
	if err != nil {
		t.Fatal(err)
	}
	e := &env{DB: db, Dir: dir, Store: st, P: p, Q: q, eng: eng, smARN: sm.ARN}
	w := queue.NewWorker(q, queue.WorkerOptions{Workers: 8, CancelGrace: 200 * time.Millisecond})
	eng.Attach(w)
	if attach != nil {
		attach(e, w)
	}
	if err := w.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Stop(); eng.Close(); q.Close(); db.Close() })
	return e
}

var runs atomic.Int64

// runWorkflow runs a whole CSV job on e: one execution of the shipped workflow for the file at
// path with options o, waited for as the app's CSV job waits. It returns the Summary and nil for
// SUCCESS and PARTIAL, and for a failed execution the coded error (Processor.ExecutionError)
// with what was recorded: the Summary of a file over the tolerance, else a FAILED Summary naming
// the execution and the file. A cancelled ctx stops the execution (E013).
func runWorkflow(ctx context.Context, e *env, path string, o csvjob.Options, _ job.Reporter) (csvjob.Summary, error) {
	input, err := e.P.EventInput(context.Background(), path, o, e.JobID)
	if err != nil {
		return csvjob.Summary{}, err
	}
	name := fmt.Sprintf("%s-r%d", csvjob.ExecutionName(path, time.Now()), runs.Add(1))
	x, err := e.eng.StartExecution(context.Background(), e.smARN, input, flow.StartOptions{Name: name})
	if err != nil {
		return csvjob.Summary{}, err
	}
	arn := x.ARN
	x, err = e.eng.Wait(ctx, arn)
	if ctx.Err() != nil {
		_, _ = e.eng.StopExecution(context.Background(), arn, "States.Aborted", "the CSV job was stopped")
		// Wait for the stop to settle, so the caller sees what the stopped execution left.
		if x, err = e.eng.Wait(context.Background(), arn); err != nil || x.Status == flow.StatusRunning {
			return csvjob.Summary{}, fmt.Errorf("the stopped execution did not end: %v", err)
		}
		return csvjob.Summary{Status: csvjob.StatusFailed, ExecutionID: name, Source: path},
			job.Wrap(job.E013, ctx.Err(), "the CSV job was cancelled")
	}
	if err != nil {
		return csvjob.Summary{}, err
	}
	if x.Status == flow.StatusSucceeded {
		s, err := csvjob.ExecutionSummary(x.Output)
		if err != nil {
			return csvjob.Summary{}, fmt.Errorf("the execution ended without a summary: %s", x.Output)
		}
		return s, nil
	}
	je := e.P.ExecutionError(context.Background(), x.Name, x.Error, x.Cause)
	s := csvjob.Summary{Status: csvjob.StatusFailed, ExecutionID: name, Source: path}
	raw, _ := e.Store.Outcome(context.Background(), csvjob.Run{Execution: name})
	var rec map[string]json.RawMessage
	if json.Unmarshal(raw, &rec) == nil && rec["errorType"] == nil && rec["totalRecords"] != nil {
		json.Unmarshal(raw, &s)
	}
	return s, je
}
