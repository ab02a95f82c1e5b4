package flow

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"jobdesk/engine/blob"
	"jobdesk/engine/flow/asl"
	"jobdesk/engine/functions"
	"jobdesk/engine/job"
	"jobdesk/engine/queue"
	"jobdesk/engine/store"
)

// Job types the engine registers.
const (
	// TypeExecution is the orchestrator job type of an execution.
	TypeExecution = "flow.execution"
	// TypeTimer is the job type of Wait states and Retry backoffs: a job that does nothing,
	// scheduled for a time, so that waiting survives a restart.
	TypeTimer = "flow.timer"
	// FunctionTypePrefix prefixes a Lambda function's job type ("lambda:csv-processor").
	FunctionTypePrefix = "lambda:"
)

// Engine runs state machines durably on a queue. It is safe for concurrent use.
type Engine struct {
	q    *queue.Queue
	db   *store.DB
	opts Options

	mu      sync.Mutex
	funcs   *functions.Registry
	waiters map[int64][]chan struct{}
	actCh   chan struct{} // closed and replaced whenever activity tasks change
	// historyFull inserts historyPerStatement history events, prepared once on the writer
	// connection: a Map of 10,000 items writes some 200 of them, each parsed otherwise.
	historyFull *sql.Stmt
	// record are a Map's record statements (recordStatements), prepared on first use.
	recordMu  sync.Mutex
	record    *recordStmts
	stop      func()
	done      chan struct{}
	closeOnce sync.Once

	// machines are parsed definitions by their text (a parsed Machine is never changed), so
	// that an execution does not parse and compile its definition again.
	machinesMu sync.Mutex
	machines   map[string]*asl.Machine
}

// parsed returns the parsed definition, from the cache when it was parsed before.
func (e *Engine) parsed(def string) (*asl.Machine, []asl.Diagnostic) {
	e.machinesMu.Lock()
	m := e.machines[def]
	e.machinesMu.Unlock()
	if m != nil {
		return m, nil
	}
	m, ds := asl.Parse([]byte(def), nil)
	if m != nil {
		e.machinesMu.Lock()
		if e.machines == nil || len(e.machines) >= 64 {
			e.machines = map[string]*asl.Machine{}
		}
		e.machines[def] = m
		e.machinesMu.Unlock()
	}
	return m, ds
}

// New returns an engine that runs executions as jobs of q and keeps its state machines,
// executions and history in db (q's own database on the device), applying Migrations to it.
func New(db *store.DB, q *queue.Queue, opts Options) (*Engine, error) {
	if err := db.Migrate(Migrations); err != nil {
		return nil, err
	}
	if opts.DataDir == "" {
		opts.DataDir = q.DataDir()
	}
	if opts.Blobs == nil {
		opts.Blobs = blob.NewMux(blob.Local{Root: opts.DataDir})
	}
	if opts.Region == "" {
		opts.Region = "local"
	}
	if opts.Account == "" {
		opts.Account = "000000000000"
	}
	if opts.Functions == nil {
		opts.Functions = functions.New()
	}
	e := &Engine{q: q, db: db, opts: opts, funcs: opts.Functions, actCh: make(chan struct{})}
	if st, err := db.W.Prepare(historyInsert(historyPerStatement)); err == nil {
		e.historyFull = st
	}
	events, stop := q.Watch(0)
	e.done = make(chan struct{})
	e.stop = stop
	go e.wake(events)
	return e, nil
}

// Close stops the engine's event listener. Executions in progress are not affected: they run
// in the queue's workers and resume wherever an engine runs next.
func (e *Engine) Close() {
	e.closeOnce.Do(func() {
		e.stop()
		close(e.done)
	})
}

// wake wakes the goroutines waiting on activity tasks when another process changed the database
// (the events that concern every job: a watch of job 0).
func (e *Engine) wake(events <-chan job.Event) {
	for {
		var ev job.Event
		select {
		case ev = <-events:
		case <-e.done:
			return
		}
		if ev.Kind == job.EventExternalChange {
			e.activityChanged()
		}
	}
}

// waitJob blocks until job id is final (or ctx ends) and returns its outcome: its status,
// result, error and start time (the other fields of the job are not read).
func (e *Engine) waitJob(ctx context.Context, id int64) (job.Job, error) {
	return e.followJob(ctx, id, nil)
}

// followJob is waitJob that also passes each progress the job reports to progress (when not
// nil): a Task's handler moves its execution's progress so. It waits on the job's events
// (queue.Watch), as every wait for a job does.
func (e *Engine) followJob(ctx context.Context, id int64, progress func(pct float64, msg string)) (job.Job, error) {
	return e.followWatched(ctx, id, nil, progress)
}

// watched is a job watched since it was enqueued (queue.EnqueueWatched); fresh: it is new, so
// the events hold its every change.
type watched struct {
	events <-chan job.Event
	stop   func()
	fresh  bool
}

// followWatched is followJob of a job already watched by w (nil: watched from now on). A fresh
// job is not read before its first event: it has not ended, or its events say so.
func (e *Engine) followWatched(ctx context.Context, id int64, w *watched, progress func(pct float64, msg string)) (job.Job, error) {
	var events <-chan job.Event
	skip := false
	if w != nil {
		events, skip = w.events, w.fresh
		defer w.stop()
	} else {
		var stop func()
		events, stop = e.q.Watch(id)
		defer stop()
	}
	for {
		if !skip {
			j, err := e.q.Outcome(ctx, id)
			if err != nil || j.Status.Final() {
				return j, err
			}
		}
		skip = false
	wait:
		for {
			select {
			case ev := <-events:
				switch {
				case ev.Status.Final() && ev.JobID == id:
					if j, ok := e.q.Ended(ev); ok {
						return j, nil // as this process's worker committed it: no need to read it
					}
					break wait
				case ev.Status.Final() || ev.Kind == job.EventExternalChange:
					break wait // it ended, or another process changed it: read it again
				case ev.Kind == job.EventProgress && progress != nil && ev.JobID == id:
					progress(ev.Progress, ev.Message)
				}
			case <-ctx.Done():
				j, _ := e.q.Outcome(context.WithoutCancel(ctx), id)
				return j, ctx.Err()
			}
		}
	}
}

// RegisterFunction makes a Lambda function name runnable: a Task whose Resource is
// arn:aws:lambda:REGION:ACCOUNT:function:NAME (or arn:aws:states:::lambda:invoke with
// Parameters.FunctionName = NAME or its ARN, Payload = the input, result wrapped as the real
// integration does in {"Payload": …, "StatusCode": 200}) runs h, as a job of type
// "lambda:NAME". It adds to the engine's function registry (Options.Functions); call it before
// Attach.
func (e *Engine) RegisterFunction(name string, h job.Handler, o functions.Options) {
	e.funcs.Add(functions.Function{Name: name, Handler: h, Options: o})
}

// Functions returns the names of the registered functions, sorted.
func (e *Engine) Functions() []string { return e.funcs.Names() }

// Attach registers the execution orchestrator, the timer and every function with a worker (call
// before w.Start).
func (e *Engine) Attach(w *queue.Worker) {
	w.Handle(TypeExecution, e.runExecution, queue.TypeOptions{Orchestrator: true, Concurrency: 256})
	w.Handle(TypeTimer, func(context.Context, json.RawMessage, job.Reporter) (json.RawMessage, error) {
		return json.RawMessage(`{}`), nil
	}, queue.TypeOptions{Orchestrator: true, Concurrency: 256})
	for _, f := range e.funcs.All() {
		// The Task's own TimeoutSeconds applies too (see wrap).
		o := queue.TypeOptions{Concurrency: f.Options.Concurrency, Visibility: f.Options.Visibility, Orchestrator: f.Options.Waits}
		w.Handle(FunctionTypePrefix+f.Name, wrap(f.Handler, f.Options.Timeout), o)
	}
}

// ---- ARNs ----

func (e *Engine) arn(kind, rest string) string {
	return "arn:aws:states:" + e.opts.Region + ":" + e.opts.Account + ":" + kind + ":" + rest
}

// StateMachineARN returns the ARN of the state machine named name.
func (e *Engine) StateMachineARN(name string) string { return e.arn("stateMachine", name) }

func (e *Engine) executionARN(sm, name string) string { return e.arn("execution", sm+":"+name) }

func (e *Engine) nameFromARN(arn, kind string) (string, error) {
	prefix := "arn:aws:states:"
	if !strings.HasPrefix(arn, prefix) {
		return "", apiErr("InvalidArn", "Invalid Arn: '%s'", arn)
	}
	parts := strings.SplitN(arn[len(prefix):], ":", 4)
	if len(parts) < 4 || parts[2] != kind || parts[3] == "" {
		return "", apiErr("InvalidArn", "Invalid Arn: '%s'", arn)
	}
	return parts[3], nil
}

// ---- resources ----

type resource struct {
	kind     string // lambda, invoke, sns, activity
	function string // lambda
	activity string // activity ARN
}

func (e *Engine) parseResource(r string) (resource, error) {
	switch {
	case strings.HasPrefix(r, "arn:aws:lambda:"):
		parts := strings.Split(r, ":")
		if len(parts) < 7 || parts[5] != "function" || parts[6] == "" {
			return resource{}, fmt.Errorf("resource %q is not a Lambda function ARN (arn:aws:lambda:REGION:ACCOUNT:function:NAME)", r)
		}
		return resource{kind: "lambda", function: parts[6]}, nil
	case r == "arn:aws:states:::lambda:invoke":
		return resource{kind: "invoke"}, nil
	case r == "arn:aws:states:::sns:publish":
		return resource{kind: "sns"}, nil
	case strings.HasPrefix(r, "arn:aws:states:") && strings.Contains(r, ":activity:"):
		if _, err := e.nameFromARN(r, "activity"); err != nil {
			return resource{}, fmt.Errorf("resource %q is not an activity ARN", r)
		}
		return resource{kind: "activity", activity: r}, nil
	}
	return resource{}, fmt.Errorf("resource %q is not supported on this device (Lambda functions, lambda:invoke, sns:publish and activities are)", r)
}

// checkResource is the resolver used when definitions are stored: the resource's form must be
// one the engine runs. Function names are checked when the Task runs, since families register
// their functions in any order.
func (e *Engine) checkResource(r string) error {
	_, err := e.parseResource(r)
	return err
}

// CheckResourceStrict also requires a Lambda function to be registered; `jobdesk flow validate`
// uses it.
func (e *Engine) CheckResourceStrict(r string) error {
	res, err := e.parseResource(r)
	if err != nil {
		return err
	}
	if res.kind == "lambda" {
		if _, ok := e.funcs.Get(res.function); !ok {
			return fmt.Errorf("no function named %q is registered (known: %s)", res.function, strings.Join(e.Functions(), ", "))
		}
	}
	return nil
}

// Validate checks a definition; each Diagnostic names the state and field. resolver, when not
// nil, is asked about every Task Resource.
func Validate(definition []byte, resolver func(resource string) error) []Diagnostic {
	_, ds := asl.Parse(definition, resolver)
	out := make([]Diagnostic, len(ds))
	for i, d := range ds {
		out[i] = Diagnostic(d)
	}
	return out
}

func invalidDefinition(ds []asl.Diagnostic) error {
	out := make([]Diagnostic, len(ds))
	for i, d := range ds {
		out[i] = Diagnostic(d)
	}
	if err := DefinitionError(out); err != nil {
		return err
	}
	return apiErr("InvalidDefinition", "Invalid State Machine Definition")
}

// DefinitionError is the InvalidDefinition APIError naming every ERROR among ds (state, field,
// code), or nil when there is none.
func DefinitionError(ds []Diagnostic) error {
	var msgs []string
	for _, d := range ds {
		if d.Severity == "ERROR" {
			msgs = append(msgs, fmt.Sprintf("%s: %s at %s", d.Code, d.Message, d.Location))
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return apiErr("InvalidDefinition", "Invalid State Machine Definition: '%s'", strings.Join(msgs, "; "))
}

// ---- state machines ----

const smCols = `arn, name, definition, role_arn, type, status, created_at, updated_at`

func scanSM(s interface{ Scan(...any) error }) (StateMachine, error) {
	var sm StateMachine
	var c, u int64
	err := s.Scan(&sm.ARN, &sm.Name, &sm.Definition, &sm.RoleARN, &sm.Type, &sm.Status, &c, &u)
	sm.CreatedAt, sm.UpdatedAt = time.UnixMilli(c), time.UnixMilli(u)
	return sm, err
}

func (e *Engine) parseDefinition(def string) error {
	if _, ds := asl.Parse([]byte(def), e.checkResource); hasError(ds) {
		return invalidDefinition(ds)
	}
	return nil
}

func hasError(ds []asl.Diagnostic) bool {
	for _, d := range ds {
		if d.Severity == "ERROR" {
			return true
		}
	}
	return false
}

// PutStateMachine creates the state machine or updates its definition when it exists (used to
// load the shipped workflows at start-up).
func (e *Engine) PutStateMachine(ctx context.Context, name, definition string) (StateMachine, error) {
	if !validName(name) {
		return StateMachine{}, apiErr("InvalidName", "Invalid Name: '%s'", name)
	}
	if err := e.parseDefinition(definition); err != nil {
		return StateMachine{}, err
	}
	arn := e.StateMachineARN(name)
	now := time.Now().UnixMilli()
	err := e.db.Tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO flow_state_machines(arn, name, definition, role_arn, created_at, updated_at)
			VALUES(?,?,?,?,?,?) ON CONFLICT(arn) DO UPDATE SET definition=excluded.definition,
			updated_at=CASE WHEN definition=excluded.definition THEN updated_at ELSE excluded.updated_at END`,
			arn, name, definition, e.defaultRole(), now, now)
		return err
	})
	if err != nil {
		return StateMachine{}, err
	}
	return e.DescribeStateMachine(ctx, arn)
}

func (e *Engine) defaultRole() string {
	return "arn:aws:iam::" + e.opts.Account + ":role/jobdesk-local"
}

// CreateStateMachine creates a state machine. It fails with StateMachineAlreadyExists when the
// name exists with another definition (the same definition returns the existing one).
func (e *Engine) CreateStateMachine(ctx context.Context, name, definition, roleARN string) (StateMachine, error) {
	if !validName(name) {
		return StateMachine{}, apiErr("InvalidName", "Invalid Name: '%s'", name)
	}
	if err := e.parseDefinition(definition); err != nil {
		return StateMachine{}, err
	}
	if roleARN == "" {
		roleARN = e.defaultRole()
	}
	arn := e.StateMachineARN(name)
	if sm, err := e.DescribeStateMachine(ctx, arn); err == nil {
		if sm.Definition == definition && sm.RoleARN == roleARN {
			return sm, nil
		}
		return StateMachine{}, apiErr("StateMachineAlreadyExists", "State Machine Already Exists: '%s'", arn)
	}
	now := time.Now().UnixMilli()
	err := e.db.Tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO flow_state_machines(arn, name, definition, role_arn, created_at, updated_at)
			VALUES(?,?,?,?,?,?)`, arn, name, definition, roleARN, now, now)
		return err
	})
	if err != nil {
		return StateMachine{}, err
	}
	return e.DescribeStateMachine(ctx, arn)
}

// UpdateStateMachine replaces the definition of an existing state machine. Running executions
// keep the definition they started with.
func (e *Engine) UpdateStateMachine(ctx context.Context, arn, definition string) (StateMachine, error) {
	if _, err := e.DescribeStateMachine(ctx, arn); err != nil {
		return StateMachine{}, err
	}
	if err := e.parseDefinition(definition); err != nil {
		return StateMachine{}, err
	}
	err := e.db.Tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE flow_state_machines SET definition=?, updated_at=? WHERE arn=?`,
			definition, time.Now().UnixMilli(), arn)
		return err
	})
	if err != nil {
		return StateMachine{}, err
	}
	return e.DescribeStateMachine(ctx, arn)
}

// DescribeStateMachine returns the state machine with arn.
func (e *Engine) DescribeStateMachine(ctx context.Context, arn string) (StateMachine, error) {
	if _, err := e.nameFromARN(arn, "stateMachine"); err != nil {
		return StateMachine{}, err
	}
	sm, err := scanSM(e.db.R.QueryRowContext(ctx, `SELECT `+smCols+` FROM flow_state_machines WHERE arn=?`, arn))
	if errors.Is(err, sql.ErrNoRows) {
		return StateMachine{}, apiErr("StateMachineDoesNotExist", "State Machine Does Not Exist: '%s'", arn)
	}
	return sm, err
}

// ListStateMachines lists every state machine by name.
func (e *Engine) ListStateMachines(ctx context.Context) ([]StateMachine, error) {
	rows, err := e.db.R.QueryContext(ctx, `SELECT `+smCols+` FROM flow_state_machines ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []StateMachine
	for rows.Next() {
		sm, err := scanSM(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, sm)
	}
	return out, rows.Err()
}

// DeleteStateMachine deletes a state machine; its executions and their history stay.
func (e *Engine) DeleteStateMachine(ctx context.Context, arn string) error {
	if _, err := e.nameFromARN(arn, "stateMachine"); err != nil {
		return err
	}
	return e.db.Tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM flow_state_machines WHERE arn=?`, arn)
		return err
	})
}
