package flow

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"jobdesk/engine/flow/asl"
	"jobdesk/engine/job"
	"jobdesk/engine/queue"
)

// maxPayload is Step Functions' limit on a state's input or output.
const maxPayload = 256 * 1024

var (
	errExecTimeout   = errors.New("the execution exceeded the state machine's TimeoutSeconds")
	errSiblingFailed = errors.New("another branch or iteration failed")
)

// run is one orchestrator pass over an execution.
type run struct {
	e                        *Engine
	execID, jobID            int64
	arn, name, smARN, smName string
	redrive                  int
	start                    time.Time
	input                    any
	// ctxVals are the context object's execution fields (contextObject), set once.
	ctxOnce           sync.Once
	ctxVals           [7]any
	inputJSON         string
	machine           *asl.Machine
	rep               job.Reporter
	last              int64 // the last history event id written
	top               *frame
	visited           map[string]bool
	mapDone, mapTotal atomic.Int64
	// direct runs Task functions in-process and skips waits: TestState's single state, which
	// is no durable execution.
	direct bool
	// TestState's findings: the Task's result, a retrier matched (RETRIABLE), a catcher taken.
	// Only a direct run sets them: a durable run's Map iterations and Parallel branches share
	// the run and would write them at once.
	taskResult        any
	retriable, caught bool
	// The execution's progress (progress): the top-level state it is in, the running Tasks'
	// own progress (by task key) and its sums, for Tasks at the top level and inside a Map's
	// items, the message of the top-level Task, and the last percent passed on.
	progressMu sync.Mutex
	inState    string
	tasks      map[string]taskShare
	topShare   float64
	itemShare  float64
	topMsg     string
	lastPct    float64
}

// taskShare is a running Task's own progress, as a fraction of its work.
type taskShare struct {
	frac float64
	top  bool
}

// frame is one thread of states: the top level, a Parallel branch or a Map iteration.
type frame struct {
	prefix string // dedup-key prefix of its states ("" at the top level)
	top    bool
	vars   *asl.Scope // its variables (inside those of the frame that started it)
	// assigned is what the state now running assigned, for its StateExited event.
	assigned map[string]any
	visits   map[string]int
	quiet    bool // a DISTRIBUTED map iteration: its events stay out of the parent's history

	mu     sync.Mutex
	events []event
}

func (f *frame) add(typ string, details map[string]any) { f.addAt(typ, time.Now(), details) }

// addAt records an event that happened at t.
func (f *frame) addAt(typ string, t time.Time, details map[string]any) {
	if f.quiet {
		return
	}
	f.mu.Lock()
	f.events = append(f.events, event{typ: typ, at: t.UnixMilli(), details: details})
	f.mu.Unlock()
}

// inTimeOrder sorts events of concurrent branches or iterations by time, keeping each one's own
// order for events of the same millisecond.
func inTimeOrder(evs []event) []event {
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].at < evs[j].at })
	return evs
}

func (f *frame) merge(evs []event) {
	if f.quiet || len(evs) == 0 {
		return
	}
	f.mu.Lock()
	f.events = append(f.events, evs...)
	f.mu.Unlock()
}

func (f *frame) take() []event {
	f.mu.Lock()
	defer f.mu.Unlock()
	evs := f.events
	f.events = nil
	return evs
}

type checkpoint struct {
	State  string         `json:"state"`
	Input  any            `json:"input"`
	Visits map[string]int `json:"visits"`
	Vars   map[string]any `json:"vars,omitempty"` // the top level's variables
}

func fail(name, format string, args ...any) *asl.Error { return asl.Errorf(name, format, args...) }

// runExecution is the handler of the orchestrator job: it runs (or resumes) the execution whose
// ARN is the job's input.
func (e *Engine) runExecution(ctx context.Context, input json.RawMessage, rep job.Reporter) (json.RawMessage, error) {
	var arn string
	if err := json.Unmarshal(input, &arn); err != nil {
		return nil, job.Errorf(job.E014, "the execution job's input is not an execution ARN").Permanent()
	}
	load := func() (r *run, def string, status string, cp sql.NullString, err error) {
		r = &run{e: e, arn: arn, rep: rep, visited: map[string]bool{}}
		var start int64
		err = e.db.R.QueryRowContext(ctx, `SELECT id, job_id, name, sm_arn, definition, status, input, checkpoint, last_event_id,
			redrive_count, start_date FROM flow_executions WHERE arn=?`, arn).Scan(&r.execID, &r.jobID, &r.name, &r.smARN, &def,
			&status, &r.inputJSON, &cp, &r.last, &r.redrive, &start)
		r.start = time.UnixMilli(start)
		return
	}
	r, def, status, cp, err := load()
	if err != nil {
		return nil, job.Wrap(job.E009, err, "the execution could not be read").WithName("States.Runtime")
	}
	if status != StatusRunning {
		// The job was retried from the queue (`jobdesk retry`): that is a redrive.
		if err := e.markRedriven(ctx, arn); err != nil {
			return nil, job.Wrap(job.E009, err, "the execution could not be redriven")
		}
		if r, def, _, cp, err = load(); err != nil {
			return nil, job.Wrap(job.E009, err, "the execution could not be read")
		}
	}
	r.smName, _ = e.nameFromARN(r.smARN, "stateMachine")
	r.input, _ = asl.Decode([]byte(r.inputJSON))
	m, ds := r.e.parsed(def)
	if m == nil {
		return r.close(ctx, StatusFailed, nil, "States.Runtime", invalidDefinition(ds).Error())
	}
	r.machine = m
	r.top = &frame{top: true, visits: map[string]int{}, vars: asl.NewScope(nil)}
	state, in := m.StartAt, r.input
	if cp.Valid && cp.String != "" {
		var c checkpoint
		if err := json.Unmarshal([]byte(cp.String), &c); err == nil && m.States[c.State] != nil {
			state, in, r.top.visits = c.State, c.Input, c.Visits
			for k, v := range c.Vars {
				r.top.vars.Set(k, v)
			}
			if r.top.visits == nil {
				r.top.visits = map[string]int{}
			}
		}
	}
	if r.last == 0 {
		r.top.add("ExecutionStarted", map[string]any{"executionStartedEventDetails": map[string]any{
			"input": r.inputJSON, "inputDetails": map[string]any{"truncated": false}, "roleArn": e.defaultRole()}})
	}
	rctx := ctx
	if m.TimeoutSeconds > 0 {
		var cancel context.CancelFunc
		// The execution's time counts from its start, or from its latest redrive: a timed-out
		// execution that is redriven gets its TimeoutSeconds again.
		since := r.start
		var redriven sql.NullInt64
		if r.redrive > 0 && e.db.R.QueryRowContext(ctx, `SELECT max(at) FROM flow_history WHERE exec_id=? AND type='ExecutionRedriven'`,
			r.execID).Scan(&redriven) == nil && redriven.Valid {
			since = time.UnixMilli(redriven.Int64)
		}
		rctx, cancel = context.WithDeadlineCause(ctx, since.Add(time.Duration(m.TimeoutSeconds*float64(time.Second))), errExecTimeout)
		defer cancel()
	}
	out, ferr := r.runMachine(rctx, r.top, m, state, in)
	switch {
	case ctx.Err() != nil && errors.Is(context.Cause(ctx), context.Canceled):
		// JobDesk is stopping: keep the checkpoint; the job returns to the queue and resumes.
		r.flush(context.WithoutCancel(ctx), nil)
		return nil, context.Cause(ctx)
	case ctx.Err() != nil:
		_, err := r.close(ctx, StatusAborted, nil, "States.Aborted", "the execution was cancelled")
		return nil, err
	case rctx.Err() != nil && errors.Is(context.Cause(rctx), errExecTimeout):
		return r.close(ctx, StatusTimedOut, nil, "States.Timeout", fmt.Sprintf("the execution took longer than its TimeoutSeconds (%.0f s)", m.TimeoutSeconds))
	case ferr != nil:
		return r.closeFailed(ctx, ferr)
	}
	return r.close(ctx, StatusSucceeded, asl.Encode(out), "", "")
}

// closeFailed ends the execution FAILED with ferr, whose cause names the state it happened in
// and that state's StateEntered event when ferr is a runtime error.
func (r *run) closeFailed(ctx context.Context, ferr *asl.Error) (json.RawMessage, error) {
	return r.closeWith(ctx, StatusFailed, nil, ferr.Name, ferr.Cause, ferr)
}

// close writes the buffered history and the execution's outcome, and returns what the job ends
// with: the output, or an error that names the Step Functions error.
func (r *run) close(ctx context.Context, status string, output json.RawMessage, errName, cause string) (json.RawMessage, error) {
	return r.closeWith(ctx, status, output, errName, cause, nil)
}

func (r *run) closeWith(ctx context.Context, status string, output json.RawMessage, errName, cause string, ferr *asl.Error) (json.RawMessage, error) {
	ctx = context.WithoutCancel(ctx)
	evs := r.top.take()
	now := time.Now().UnixMilli()
	rs := r.e.recordStatements()
	err := r.e.db.Tx(ctx, func(tx *sql.Tx) error {
		var st string
		if err := tx.QueryRow(`SELECT status, last_event_id FROM flow_executions WHERE id=?`, r.execID).Scan(&st, &r.last); err != nil {
			return err
		}
		if st != StatusRunning {
			return nil // stopped meanwhile: StopExecution recorded the end
		}
		if ferr != nil {
			for i, ev := range evs { // the ids these events are about to get
				if ev.id != nil {
					*ev.id = r.last + int64(i) + 1
				}
			}
			cause = ferr.FullCause()
		}
		typ, details := closingEvent(status, output, errName, cause)
		evs = append(evs, event{typ: typ, at: now, details: details})
		var out any
		if output != nil {
			out = string(output)
		}
		if _, err := tx.Exec(`UPDATE flow_executions SET status=?, output=?, error=?, cause=?, stop_date=? WHERE id=?`,
			status, out, errName, cause, now, r.execID); err != nil {
			return err
		}
		return insertEvents(tx, rs, r.execID, &r.last, evs)
	})
	if err != nil {
		return nil, job.Wrap(job.E009, err, "the execution's outcome could not be recorded").Transient()
	}
	switch status {
	case StatusSucceeded:
		return output, nil
	case StatusTimedOut:
		return nil, job.Errorf(job.E011, "the workflow took longer than its limit: %s", cause).
			WithJa("ワークフローが制限時間を超えたため停止しました。").WithName("States.Timeout").Permanent()
	case StatusAborted:
		return nil, job.Errorf(job.E013, "the workflow was stopped").WithJa("ワークフローは停止されました。").WithName("States.Aborted").Permanent()
	}
	msg := errName
	if cause != "" {
		msg += ": " + cause
	}
	return nil, job.Errorf(job.E015, "the workflow failed: %s", msg).
		WithJa(fmt.Sprintf("ワークフローが失敗しました（%s）。", errName)).WithName(errName).Permanent()
}

// flush writes the buffered history, and the checkpoint when cp is not nil, in one transaction.
func (r *run) flush(ctx context.Context, cp *checkpoint) error {
	evs := r.top.take()
	if len(evs) == 0 && cp == nil {
		return nil
	}
	var cpJSON any
	if cp != nil {
		cpJSON = string(asl.Encode(cp))
	}
	rs := r.e.recordStatements()
	return r.e.db.Tx(context.WithoutCancel(ctx), func(tx *sql.Tx) error {
		var st string
		if err := tx.QueryRow(`SELECT status, last_event_id FROM flow_executions WHERE id=?`, r.execID).Scan(&st, &r.last); err != nil {
			return err
		}
		if st != StatusRunning {
			return nil
		}
		if cp != nil {
			if _, err := tx.Exec(`UPDATE flow_executions SET checkpoint=? WHERE id=?`, cpJSON, r.execID); err != nil {
				return err
			}
		}
		return insertEvents(tx, rs, r.execID, &r.last, evs)
	})
}

func (r *run) contextObject(s *asl.State, entered time.Time, retryCount int, token string) map[string]any {
	// The execution's own fields are the same for every state: formatted and boxed once (the
	// maps stay new for each state, whatever a state does with them).
	r.ctxOnce.Do(func() {
		r.ctxVals = [...]any{r.arn, r.name, r.start.UTC().Format(time.RFC3339Nano), r.e.defaultRole(), float64(r.redrive), r.smARN, r.smName}
	})
	v := &r.ctxVals
	c := map[string]any{
		"Execution": map[string]any{"Id": v[0], "Name": v[1], "Input": r.input, "StartTime": v[2],
			"RoleArn": v[3], "RedriveCount": v[4]},
		"StateMachine": map[string]any{"Id": v[5], "Name": v[6]},
		"State":        map[string]any{"Name": s.Name, "EnteredTime": entered.UTC().Format(time.RFC3339Nano)},
	}
	if waits(s.Type) && s.Type != "Wait" { // only states with Retry count their retries
		c["State"].(map[string]any)["RetryCount"] = float64(retryCount)
	}
	if token != "" {
		c["Task"] = map[string]any{"Token": token}
	}
	return c
}

// progress passes the execution's progress on, as its top-level state (or the Map state whose
// item ended) moves: the share of the machine's states done, the state now running counting by
// its own progress — a Map's by its items done and the progress of its running items' Tasks,
// a Task's by what its handler reports (rows read, pages done). It never goes back, and stops
// at 99 until the execution ends.
func (r *run) progress(state string) {
	r.progressMu.Lock()
	defer r.progressMu.Unlock()
	r.inState = state
	r.report()
}

// report passes the progress on (progressMu held).
func (r *run) report() {
	n := float64(len(r.machine.States))
	done := float64(len(r.visited)) - 1
	msg := r.inState
	t, d := r.mapTotal.Load(), r.mapDone.Load()
	switch {
	case t > 0 && d < t: // a Map runs: its items' share
		done += math.Min(1, (float64(d)+r.itemShare)/float64(t))
		msg = fmt.Sprintf("%s: %d of %d items", r.inState, d, t)
	default: // the state now running, by its Task's own progress
		done += math.Min(1, r.topShare)
		if r.topMsg != "" {
			msg = r.inState + ": " + r.topMsg
		} else if t > 0 {
			msg = fmt.Sprintf("%s: %d of %d items", r.inState, d, t)
		}
	}
	pct := math.Max(r.lastPct, math.Max(0, math.Min(99, done/n*100)))
	r.lastPct = pct
	r.rep.Progress(pct, msg)
}

// taskProgress returns what passes a running Task's progress (its handler's reports, 0–100)
// into the execution's: a Task at the top level moves its state's share, one inside a Map's
// item its item's.
func (r *run) taskProgress(fr *frame, key string) func(pct float64, msg string) {
	return func(pct float64, msg string) {
		f := math.Max(0, math.Min(1, pct/100))
		r.progressMu.Lock()
		defer r.progressMu.Unlock()
		if r.tasks == nil {
			r.tasks = map[string]taskShare{}
		}
		old := r.tasks[key]
		r.tasks[key] = taskShare{frac: f, top: fr.top}
		if fr.top {
			r.topShare += f - old.frac
			if msg != "" {
				r.topMsg = msg
			}
		} else {
			r.itemShare += f - old.frac
		}
		r.report()
	}
}

// taskEnded takes a Task's progress out once its job has ended: its state or item counts as
// done from then on.
func (r *run) taskEnded(key string) {
	r.progressMu.Lock()
	defer r.progressMu.Unlock()
	t, ok := r.tasks[key]
	if !ok {
		return
	}
	delete(r.tasks, key)
	if t.top {
		r.topShare -= t.frac
	} else {
		r.itemShare -= t.frac
	}
}

func str(v any) string { return string(asl.Encode(v)) }

// located reports whether Step Functions names the state (and its StateEntered event) in the
// cause of an error of this name.
func located(name string) bool {
	return name == "States.Runtime" || name == "States.QueryEvaluationError"
}

func waits(typ string) bool {
	switch typ {
	case "Task", "Wait", "Map", "Parallel":
		return true
	}
	return false
}

// runMachine runs the states of m from cur until an end state or an uncaught error.
func (r *run) runMachine(ctx context.Context, fr *frame, m *asl.Machine, cur string, in any) (any, *asl.Error) {
	for {
		if ctx.Err() != nil {
			return nil, fail("States.Aborted", "%v", context.Cause(ctx))
		}
		s := m.States[cur]
		if s == nil {
			return nil, fail("States.Runtime", "there is no state %q", cur)
		}
		if fr.top {
			r.progressMu.Lock()
			r.visited[cur] = true
			r.topMsg = ""
			r.progressMu.Unlock()
			if waits(s.Type) {
				if err := r.flush(ctx, &checkpoint{State: cur, Input: in, Visits: fr.visits, Vars: fr.vars.Own()}); err != nil {
					return nil, fail("States.Runtime", "the checkpoint could not be written: %v", err)
				}
				// The job's own history (jobdesk show --history, the window) shows the steps too.
				r.e.q.AddEvent(ctx, r.jobID, s.Type+"StateEntered", cur, "")
			}
			r.progress(cur)
		}
		visit := fr.visits[cur]
		fr.visits[cur] = visit + 1
		key := fmt.Sprintf("%s%s#%d", fr.prefix, cur, visit)
		entered := time.Now()
		enteredID := new(int64)
		if !fr.quiet {
			fr.mu.Lock()
			fr.events = append(fr.events, event{typ: s.Type + "StateEntered", at: entered.UnixMilli(), id: enteredID,
				details: map[string]any{"stateEnteredEventDetails": map[string]any{"name": cur, "input": str(in)}}})
			fr.mu.Unlock()
		}
		if fr.top && waits(s.Type) {
			// The history shows the state while it runs, not only once it ends.
			if err := r.flush(ctx, nil); err != nil {
				return nil, fail("States.Runtime", "the history could not be written: %v", err)
			}
		}
		fr.assigned = nil
		out, next, err := r.state(ctx, fr, s, in, key, entered)
		if err != nil {
			if located(err.Name) && err.State == "" && !err.Foreign {
				err.State, err.Entered = cur, enteredID
			}
			return nil, err
		}
		if !fr.quiet {
			o := str(out)
			if len(o) > maxPayload {
				return nil, fail("States.DataLimitExceeded", "the output of state %q is %d bytes, more than the 256 KiB Step Functions allows", cur, len(o))
			}
			det := map[string]any{"name": cur, "output": o}
			if len(fr.assigned) > 0 {
				vs := make(map[string]any, len(fr.assigned))
				for k, v := range fr.assigned {
					vs[k] = str(v)
				}
				det["assignedVariables"] = vs
				det["assignedVariablesDetails"] = map[string]any{"truncated": false}
			}
			fr.add(s.Type+"StateExited", map[string]any{"stateExitedEventDetails": det})
		}
		if next == "" {
			return out, nil
		}
		if fr.top && waits(s.Type) {
			// A finished Task, Map or Parallel is never run again, also not by a redrive.
			if err := r.flush(ctx, &checkpoint{State: next, Input: out, Visits: fr.visits, Vars: fr.vars.Own()}); err != nil {
				return nil, fail("States.Runtime", "the checkpoint could not be written: %v", err)
			}
		}
		cur, in = next, out
	}
}

// state runs one state and returns its output and the next state ("" at an end).
func (r *run) state(ctx context.Context, fr *frame, s *asl.State, raw any, key string, entered time.Time) (any, string, *asl.Error) {
	if s.JSONata {
		switch s.Type {
		case "Pass", "Choice", "Succeed", "Fail", "Wait":
			return r.stateJ(ctx, fr, s, raw, key, entered)
		}
	}
	cobj := r.contextObject(s, entered, 0, "")
	asErr := func(err error) *asl.Error {
		var ae *asl.Error
		if errors.As(err, &ae) {
			return ae
		}
		return fail("States.Runtime", "%v", err)
	}
	switch s.Type {
	case "Pass":
		eff, err := s.EffectiveInput(raw, cobj, fr.vars)
		if err != nil {
			return nil, "", asErr(err)
		}
		result := eff
		if s.HasResult {
			result = s.Result
		}
		assigned, aerr := r.assignment(fr, s.Assign, result, cobj)
		if aerr != nil {
			return nil, "", aerr
		}
		out, err := s.Output(raw, result, cobj, fr.vars)
		if err != nil {
			return nil, "", asErr(err)
		}
		if aerr := r.assign(fr, assigned); aerr != nil {
			return nil, "", aerr
		}
		return out, s.Next, nil
	case "Choice":
		v, err := asl.SelectPathVars(s.InputPath, raw, cobj, fr.vars)
		if err != nil {
			return nil, "", asErr(err)
		}
		next, rule, err := s.ChooseRule(asl.Env{Input: v, Context: cobj, Vars: fr.vars})
		if err != nil {
			return nil, "", asErr(err)
		}
		assign := s.Assign
		if rule != nil {
			assign = rule.Assign
		}
		assigned, aerr := r.assignment(fr, assign, v, cobj)
		if aerr != nil {
			return nil, "", aerr
		}
		if aerr := r.assign(fr, assigned); aerr != nil {
			return nil, "", aerr
		}
		out, err := asl.SelectPathVars(s.OutputPath, v, cobj, fr.vars)
		if err != nil {
			return nil, "", asErr(err)
		}
		return out, next, nil
	case "Succeed":
		v, err := asl.SelectPathVars(s.InputPath, raw, cobj, fr.vars)
		if err != nil {
			return nil, "", asErr(err)
		}
		out, err := asl.SelectPathVars(s.OutputPath, v, cobj, fr.vars)
		if err != nil {
			return nil, "", asErr(err)
		}
		return out, "", nil
	case "Fail":
		name, cause := s.Error, s.Cause
		env := asl.Env{Input: raw, Context: cobj, Vars: fr.vars}
		if s.ErrorPath != "" {
			v, err := env.Field(s.ErrorPath, "ErrorPath")
			if err != nil {
				return nil, "", asErr(err)
			}
			name, _ = v.(string)
		}
		if s.CausePath != "" {
			v, err := env.Field(s.CausePath, "CausePath")
			if err != nil {
				return nil, "", asErr(err)
			}
			cause, _ = v.(string)
		}
		return nil, "", &asl.Error{Name: name, Cause: cause}
	case "Wait":
		v, err := asl.SelectPathVars(s.InputPath, raw, cobj, fr.vars)
		if err != nil {
			return nil, "", asErr(err)
		}
		until := entered
		switch {
		case s.HasSeconds:
			until = entered.Add(time.Duration(s.Seconds * float64(time.Second)))
		case s.Timestamp != "":
			until, _ = asl.ParseTimestamp(s.Timestamp)
		case s.SecondsPath != "":
			secs, ferr := waitSeconds(asl.Env{Input: v, Context: cobj, Vars: fr.vars}, s.SecondsPath)
			if ferr != nil {
				return nil, "", ferr
			}
			until = entered.Add(time.Duration(secs) * time.Second)
		case s.TimestampPath != "":
			t, ferr := waitTimestamp(asl.Env{Input: v, Context: cobj, Vars: fr.vars}, s.TimestampPath)
			if ferr != nil {
				return nil, "", ferr
			}
			until = t
		}
		assigned, aerr := r.assignment(fr, s.Assign, v, cobj)
		if aerr != nil {
			return nil, "", aerr
		}
		if err := r.sleep(ctx, key+"/wait", until); err != nil {
			return nil, "", err
		}
		if aerr := r.assign(fr, assigned); aerr != nil {
			return nil, "", aerr
		}
		out, err := asl.SelectPathVars(s.OutputPath, v, cobj, fr.vars)
		if err != nil {
			return nil, "", asErr(err)
		}
		return out, s.Next, nil
	}
	// Task, Parallel, Map: with Retry and Catch.
	counts := make([]int, len(s.Retry))
	for try := 0; ; try++ {
		retries := 0
		for _, c := range counts {
			retries += c
		}
		cobj = r.contextObject(s, entered, retries, "")
		var result any
		var ferr *asl.Error
		switch s.Type {
		case "Task":
			result, ferr = r.task(ctx, fr, s, raw, cobj, fmt.Sprintf("%s@%d", key, try))
		case "Parallel":
			result, ferr = r.parallel(ctx, fr, s, raw, cobj, fmt.Sprintf("%s@%d", key, try))
		case "Map":
			result, ferr = r.mapState(ctx, fr, s, raw, cobj, fmt.Sprintf("%s@%d", key, try))
		}
		if ferr == nil {
			var assigned map[string]any
			var aerr *asl.Error
			if s.JSONata {
				assigned, aerr = r.jassignment(s.J.Assign, asl.JVars(fr.vars, raw, cobj, result, nil, true, false))
			} else {
				assigned, aerr = r.assignment(fr, s.Assign, result, cobj)
			}
			out, err := s.Output(raw, result, cobj, fr.vars)
			if aerr == nil && err == nil {
				if aerr = r.assign(fr, assigned); aerr == nil {
					return out, s.Next, nil
				}
			}
			if ferr = aerr; ferr == nil {
				ferr = asErr(err)
			}
		}
		if ctx.Err() != nil {
			return nil, "", fail("States.Aborted", "%v", context.Cause(ctx))
		}
		if i := s.FindRetry(ferr.Name); i >= 0 && counts[i] < s.Retry[i].MaxAttempts && r.direct {
			r.retriable = true // TestState runs a state once and says whether it would be retried
			return nil, "", ferr
		} else if i >= 0 && counts[i] < s.Retry[i].MaxAttempts {
			delay := s.Retry[i].Delay(counts[i])
			counts[i]++
			if err := r.sleep(ctx, fmt.Sprintf("%s@%d/backoff", key, try), time.Now().Add(delay)); err != nil {
				return nil, "", err
			}
			continue
		}
		if c := s.FindCatch(ferr.Name); c != nil && s.JSONata {
			errOut := asl.ErrorOutput(ferr.Name, ferr.Cause)
			vs := asl.JVars(fr.vars, raw, cobj, nil, errOut, false, true)
			assigned, aerr := r.jassignment(c.JAssign, vs)
			if aerr != nil {
				return nil, "", aerr
			}
			var out any = errOut
			if c.JOutput.Present() {
				v, err := c.JOutput.Eval(vs)
				if err != nil {
					return nil, "", asErr(err)
				}
				out = v
			}
			if aerr := r.assign(fr, assigned); aerr != nil {
				return nil, "", aerr
			}
			if r.direct {
				r.caught = true // TestState says a catcher was taken
			}
			return out, c.Next, nil
		} else if c != nil {
			errOut := asl.ErrorOutput(ferr.Name, ferr.Cause)
			assigned, aerr := r.assignment(fr, c.Assign, errOut, cobj)
			if aerr != nil {
				return nil, "", aerr
			}
			out, err := asl.PlaceResult(c.ResultPath, raw, errOut)
			if err != nil {
				return nil, "", asErr(err)
			}
			if aerr := r.assign(fr, assigned); aerr != nil {
				return nil, "", aerr
			}
			if r.direct {
				r.caught = true // TestState says a catcher was taken
			}
			return out, c.Next, nil
		}
		return nil, "", ferr
	}
}

// maxVariable is Step Functions' limit on one variable's value, and on all the values one
// Assign sets; maxVariables is the limit on all the variables of an execution.
const (
	maxVariable  = 256 * 1024
	maxVariables = 10 * 1024 * 1024
)

// assignment evaluates an Assign field (nil: none) on the value it reads as $: the values it
// would set, checked against Step Functions' size limits. Nothing is set yet: Assign reads the
// variables as they were when the state was entered.
func (r *run) assignment(fr *frame, assign any, input any, cobj map[string]any) (map[string]any, *asl.Error) {
	if assign == nil {
		return nil, nil
	}
	v, err := asl.Template(assign, asl.Env{Input: input, Context: cobj, Vars: fr.vars})
	if err != nil {
		return nil, toASL(err)
	}
	vals, _ := v.(map[string]any)
	return vals, checkSizes(vals)
}

// jassignment is assignment for a JSONata Assign, evaluated with $states (vars).
func (r *run) jassignment(assign asl.JTemplate, vars map[string]any) (map[string]any, *asl.Error) {
	if !assign.Present() {
		return nil, nil
	}
	v, err := assign.Eval(vars)
	if err != nil {
		return nil, toASL(err)
	}
	vals, _ := v.(map[string]any)
	return vals, checkSizes(vals)
}

// checkSizes checks the values one Assign sets against Step Functions' limits.
func checkSizes(vals map[string]any) *asl.Error {
	total := 0
	for k, x := range vals {
		n := len(str(x))
		if n > maxVariable {
			return fail("States.DataLimitExceeded", "The variable '%s' is %d bytes, more than the 256 KiB a variable may hold", k, n)
		}
		total += n
	}
	if total > maxVariable {
		return fail("States.DataLimitExceeded", "The variables assigned by one state are %d bytes, more than the 256 KiB one Assign may set", total)
	}
	return nil
}

// assign sets the variables an assignment computed, in the frame's own scope: a Map iteration
// or a Parallel branch cannot set a variable of the state machine around it.
func (r *run) assign(fr *frame, vals map[string]any) *asl.Error {
	if len(vals) == 0 {
		return nil
	}
	for k, x := range vals {
		if fr.vars.Outer(k) {
			return fail("States.Runtime", "The variable '%s' belongs to an outer scope and cannot be assigned here", k)
		}
		_ = x
	}
	for k, x := range vals {
		fr.vars.Set(k, x)
	}
	if fr.top {
		total := 0
		for _, x := range fr.vars.Own() {
			total += len(str(x))
		}
		if total > maxVariables {
			return fail("States.DataLimitExceeded", "The execution's variables are %d bytes, more than the 10 MiB Step Functions allows", total)
		}
	}
	fr.assigned = vals
	return nil
}

// waitSeconds reads a Wait state's SecondsPath: a whole, non-negative number of seconds.
func waitSeconds(env asl.Env, path string) (int64, *asl.Error) {
	x, err := env.Lookup(path)
	if err != nil {
		return 0, fail("States.Runtime", "The SecondsPath parameter does not reference an input value: %s", path)
	}
	f, ok := x.(float64)
	if !ok || f != math.Trunc(f) || math.Abs(f) > 1<<63 {
		return 0, fail("States.Runtime", "The SecondsPath parameter cannot be parsed as a long value: %s == %s", path, plain(x))
	}
	if f < 0 {
		return 0, fail("States.Runtime", "The SecondsPath parameter references a negative value: %s == %s", path, plain(x))
	}
	return int64(f), nil
}

// waitTimestamp reads a Wait state's TimestampPath: an ISO-8601 timestamp with an offset.
func waitTimestamp(env asl.Env, path string) (time.Time, *asl.Error) {
	x, err := env.Lookup(path)
	if err != nil {
		return time.Time{}, fail("States.Runtime", "The TimestampPath parameter does not reference an input value: %s", path)
	}
	ts, _ := x.(string)
	t, ok := asl.ParseTimestamp(ts)
	if !ok {
		return time.Time{}, fail("States.Runtime", "The TimestampPath parameter does not reference a valid ISO-8601 extended offset date-time format string: %s == %s", path, plain(x))
	}
	return t, nil
}

// plain prints a value in a cause: a string as it is, anything else as JSON.
func plain(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return str(v)
}

// dedupKey makes a child job's dedup key: unique per execution, redrive, state path, visit
// and attempt.
func (r *run) dedupKey(key string) string {
	return fmt.Sprintf("flow:%d:%d:%s", r.execID, r.redrive, key)
}

// succeededBefore returns the job of this task that succeeded before a redrive (0 when none), so
// that a redriven execution does not run a finished task again, however deep in Parallel
// branches it is. It asks the queue by dedup key. A job of an earlier try that has not ended
// (its iteration or branch was stopped while it ran, and it was asked to cancel) is waited
// for: if it ends SUCCEEDED after all, its work is done and is not done again.
func (r *run) succeededBefore(ctx context.Context, key string) int64 {
	for n := r.redrive - 1; n >= 0; n-- {
		id, st, err := r.e.q.ByKey(ctx, fmt.Sprintf("flow:%d:%d:%s", r.execID, n, key))
		if err != nil || id == 0 {
			continue
		}
		if !st.Final() {
			j, err := r.e.waitJob(ctx, id)
			if err != nil {
				return 0
			}
			st = j.Status
		}
		if st == job.Succeeded || st == job.Partial {
			return id
		}
	}
	return 0
}

// sleep waits until t durably: a timer job scheduled for t, found again after a restart.
func (r *run) sleep(ctx context.Context, key string, t time.Time) *asl.Error {
	if r.direct || !t.After(time.Now()) {
		return nil
	}
	j, _, err := r.e.q.Enqueue(ctx, queue.Params{Type: TypeTimer, Name: "wait", NotBefore: t, MaxAttempts: 1,
		DedupKey: r.dedupKey(key), ParentID: r.jobID})
	if err != nil {
		return fail("States.Runtime", "the wait could not be scheduled: %v", err)
	}
	if _, err := r.e.waitJob(ctx, j.ID); err != nil {
		if c := context.Cause(ctx); errors.Is(c, errSiblingFailed) || errors.Is(c, errExecTimeout) {
			r.e.q.Cancel(context.WithoutCancel(ctx), j.ID)
		}
		return fail("States.Aborted", "%v", err)
	}
	return nil
}

// task runs a Task state's resource once.
func (r *run) task(ctx context.Context, fr *frame, s *asl.State, raw any, cobj map[string]any, key string) (any, *asl.Error) {
	cobj["Task"] = map[string]any{"Token": taskToken(r.dedupKey(key))}
	eff, err := s.EffectiveInput(raw, cobj, fr.vars)
	if err != nil {
		var ae *asl.Error
		if errors.As(err, &ae) {
			return nil, ae
		}
		return nil, fail("States.Runtime", "%v", err)
	}
	timeout, heartbeat := s.TimeoutSeconds, s.HeartbeatSeconds
	env := asl.Env{Input: raw, Context: cobj, Vars: fr.vars}
	if s.JSONata {
		vs := asl.JVars(fr.vars, raw, cobj, nil, nil, false, false)
		if s.J.TimeoutSeconds.Present() {
			f, err := asl.EvalJNumber(s.J.TimeoutSeconds, vs, true, 1)
			if err != nil {
				return nil, toASL(err)
			}
			timeout = f
		}
		if s.J.HeartbeatSeconds.Present() {
			f, err := asl.EvalJNumber(s.J.HeartbeatSeconds, vs, true, 1)
			if err != nil {
				return nil, toASL(err)
			}
			heartbeat = f
		}
	}
	if s.TimeoutSecondsPath != "" {
		v, err := env.Lookup(s.TimeoutSecondsPath)
		if err != nil {
			return nil, toASL(err)
		}
		f, ok := v.(float64)
		if !ok || f <= 0 || f != math.Trunc(f) {
			return nil, fail("States.Runtime", "The TimeoutSecondsPath field refers to value \"%s\" which is not a valid positive integer: %s", plain(v), s.TimeoutSecondsPath)
		}
		timeout = f
	}
	if s.HeartbeatSecondsPath != "" {
		v, err := env.Lookup(s.HeartbeatSecondsPath)
		if err != nil {
			return nil, toASL(err)
		}
		f, ok := v.(float64)
		if !ok || f <= 0 || f != math.Trunc(f) {
			return nil, fail("States.Runtime", "The HeartbeatSecondsPath field refers to value \"%s\" which is not a valid positive integer: %s", plain(v), s.HeartbeatSecondsPath)
		}
		heartbeat = f
	}
	res, perr := r.e.parseResource(s.Resource)
	if perr != nil {
		return nil, fail("States.Runtime", "%v", perr)
	}
	switch res.kind {
	case "sns":
		return r.publish(ctx, fr, s, eff, key)
	case "activity":
		return r.activity(ctx, fr, s, res.activity, eff, key, timeout, heartbeat)
	}
	name, payload := res.function, eff
	resType, resName := "lambda", res.function
	if res.kind == "invoke" {
		p, ok := eff.(map[string]any)
		if !ok {
			return nil, fail("States.Runtime", "state %q: lambda:invoke needs Parameters with FunctionName and Payload", s.Name)
		}
		fn, _ := p["FunctionName"].(string)
		if i := strings.Index(fn, ":function:"); i >= 0 {
			fn = fn[i+len(":function:"):]
		}
		if j := strings.IndexByte(fn, ':'); j >= 0 {
			fn = fn[:j]
		}
		name, payload, resName = fn, p["Payload"], "invoke"
		if payload == nil {
			payload = map[string]any{}
		}
	}
	pj := asl.Encode(payload)
	if len(pj) > maxPayload {
		return nil, fail("States.DataLimitExceeded", "the task input of state %q is larger than 256 KiB", s.Name)
	}
	scheduled := time.Now()
	fr.addAt("TaskScheduled", scheduled, map[string]any{"taskScheduledEventDetails": map[string]any{"resourceType": resType, "resource": resName,
		"region": r.e.opts.Region, "parameters": string(pj), "timeoutInSeconds": timeout, "heartbeatInSeconds": heartbeat}})
	if _, known := r.e.funcs.Get(name); !known {
		cause := fmt.Sprintf("Function not found: %s", name)
		fr.add("TaskFailed", map[string]any{"taskFailedEventDetails": map[string]any{"resourceType": resType, "resource": resName,
			"error": "Lambda.ResourceNotFoundException", "cause": cause}})
		return nil, fail("Lambda.ResourceNotFoundException", "%s", cause)
	}
	in := asl.Encode(taskInput{Payload: pj, Timeout: timeout, Heartbeat: heartbeat, State: s.Name, Execution: r.arn})
	var j job.Job
	if r.direct {
		f, _ := r.e.funcs.Get(name)
		out, err := wrap(f.Handler, f.Options.Timeout)(ctx, in, job.ReporterFunc(func(float64, string) {}))
		j = job.Job{Status: job.Succeeded, Result: out}
		if err != nil {
			j = job.Job{Status: job.Failed, Error: job.AsError(err)}
		}
		return r.taskOutcome(fr, s, j, name, resType, resName, scheduled, res.kind)
	}
	id := r.succeededBefore(ctx, key)
	var w *watched
	if id == 0 {
		// Committed whatever ctx does meanwhile, so that the task always knows the job it must
		// wait for or cancel; tasks started at the same moment (a Map's iterations) share a
		// transaction with each other and with the worker's writes (the queue's group commit).
		// Watched from its commit on: a new job's state need not be read before waiting.
		nid, existed, events, stop, err := r.e.q.EnqueueWatched(context.WithoutCancel(ctx), queue.Params{Type: FunctionTypePrefix + name, Name: s.Name,
			Input: in, MaxAttempts: 1, DedupKey: r.dedupKey(key), ParentID: r.jobID})
		if err != nil {
			return nil, fail("States.Runtime", "the task could not be scheduled: %v", err)
		}
		id, w = nid, &watched{events: events, stop: stop, fresh: !existed}
	}
	if fr.top {
		if err := r.flush(ctx, nil); err != nil { // TaskScheduled shows while the task runs
			if w != nil {
				w.stop()
			}
			return nil, fail("States.Runtime", "the history could not be written: %v", err)
		}
	}
	j, err = r.e.followWatched(ctx, id, w, r.taskProgress(fr, key))
	r.taskEnded(key)
	if err != nil {
		if c := context.Cause(ctx); errors.Is(c, errSiblingFailed) || errors.Is(c, errExecTimeout) {
			// Another branch or iteration failed, or the execution ran out of time: stop the task.
			r.e.q.Cancel(context.WithoutCancel(ctx), id)
		}
		return nil, fail("States.Aborted", "%v", err)
	}
	return r.taskOutcome(fr, s, j, name, resType, resName, scheduled, res.kind)
}

// taskOutcome turns the finished job of a function Task into the state's result or error,
// recording the Task events.
func (r *run) taskOutcome(fr *frame, s *asl.State, j job.Job, name, resType, resName string, scheduled time.Time, kind string) (any, *asl.Error) {
	started := time.Now()
	if j.StartedAt != nil && !j.StartedAt.After(started) && j.StartedAt.UnixMilli() >= scheduled.UnixMilli() {
		started = *j.StartedAt // when the function's job began, not when its end was seen
	}
	fr.addAt("TaskStarted", started, map[string]any{"taskStartedEventDetails": map[string]any{"resourceType": resType, "resource": resName}})
	switch j.Status {
	case job.Succeeded, job.Partial:
		var out any = map[string]any{}
		if len(j.Result) > 0 {
			v, err := decodeResult(j.Result)
			if err != nil {
				return nil, fail("States.Runtime", "the function %s returned invalid JSON: %v", name, err)
			}
			out = v
		}
		if len(j.Result) > maxPayload {
			return nil, fail("States.DataLimitExceeded", "the output of state %q is larger than 256 KiB", s.Name)
		}
		if kind == "invoke" {
			out = map[string]any{"ExecutedVersion": "$LATEST", "Payload": out, "StatusCode": float64(200)}
		}
		if r.direct {
			r.taskResult = out // TestState shows it; the iterations of a durable run share r
		}
		if !fr.quiet {
			fr.add("TaskSucceeded", map[string]any{"taskSucceededEventDetails": map[string]any{"resourceType": resType, "resource": resName,
				"output": str(out), "outputDetails": map[string]any{"truncated": false}}})
		}
		return out, nil
	}
	name2, cause := "States.TaskFailed", "the task ended "+string(j.Status)
	if j.Error != nil {
		name2, cause = j.Error.ErrorName(), taskCause(j.Error)
	}
	if j.Status == job.Cancelled {
		name2 = "States.Aborted"
	}
	typ, det := "TaskFailed", "taskFailedEventDetails"
	if name2 == "States.Timeout" || name2 == "States.HeartbeatTimeout" {
		typ, det = "TaskTimedOut", "taskTimedOutEventDetails"
	}
	fr.add(typ, map[string]any{det: map[string]any{"resourceType": resType, "resource": resName, "error": name2, "cause": cause}})
	return nil, &asl.Error{Name: name2, Cause: cause, Foreign: true}
}

// decodeResult decodes a task's result as asl.Decode does, with json.Unmarshal when the
// result is valid JSON (it allocates a fraction of what a decoder does for a small result),
// and with asl.Decode otherwise, so that an invalid result gets the same error.
func decodeResult(b []byte) (any, error) {
	var v any
	if json.Unmarshal(b, &v) == nil {
		return v, nil
	}
	return asl.Decode(b)
}

// taskCause is the Cause of a failed function task: the job's coded error as JSON
// (job.Error.CauseJSON), so Catch, a Fail state's CausePath and whoever reads the execution's
// outcome get the same code and sentences whichever executor ran the task. A crashed handler's
// stack trace stays in the job's own record and is left out here.
func taskCause(e *job.Error) string {
	if strings.Contains(e.Cause, "goroutine") {
		c := *e
		c.Cause = ""
		e = &c
	}
	return e.CauseJSON()
}

// publish records an sns:publish Task as a local notification.
func (r *run) publish(ctx context.Context, fr *frame, s *asl.State, eff any, key string) (any, *asl.Error) {
	p, _ := eff.(map[string]any)
	topic, _ := p["TopicArn"].(string)
	subject, _ := p["Subject"].(string)
	var msg string
	switch m := p["Message"].(type) {
	case string:
		msg = m
	case nil:
		return nil, fail("States.Runtime", "state %q: sns:publish needs Parameters.Message", s.Name)
	default:
		msg = str(m)
	}
	fr.add("TaskScheduled", map[string]any{"taskScheduledEventDetails": map[string]any{"resourceType": "sns", "resource": "publish",
		"region": r.e.opts.Region, "parameters": str(eff)}})
	sum := sha256.Sum256([]byte(r.dedupKey(key)))
	id := hex.EncodeToString(sum[:16])
	id = id[:8] + "-" + id[8:12] + "-" + id[12:16] + "-" + id[16:20] + "-" + id[20:32]
	err := r.e.db.Tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT OR IGNORE INTO flow_notifications(exec_id, task_key, topic_arn, subject, message, at) VALUES(?,?,?,?,?,?)`,
			r.execID, r.dedupKey(key), topic, subject, msg, time.Now().UnixMilli())
		return err
	})
	if err != nil {
		return nil, fail("States.TaskFailed", "the notification could not be recorded: %v", err)
	}
	r.e.q.AddEvent(ctx, r.jobID, "NotificationPublished", subject, msg)
	out := map[string]any{"MessageId": id, "SdkHttpMetadata": map[string]any{"HttpStatusCode": float64(200)}}
	fr.add("TaskStarted", map[string]any{"taskStartedEventDetails": map[string]any{"resourceType": "sns", "resource": "publish"}})
	fr.add("TaskSucceeded", map[string]any{"taskSucceededEventDetails": map[string]any{"resourceType": "sns", "resource": "publish", "output": str(out)}})
	return out, nil
}

// Notification is one message an sns:publish Task sent.
type Notification struct {
	ExecutionARN, TopicARN, Subject, Message string
	At                                       time.Time
}

// Notifications returns the latest notifications (newest first), at most max.
func (e *Engine) Notifications(ctx context.Context, max int) ([]Notification, error) {
	if max <= 0 {
		max = 100
	}
	rows, err := e.db.R.QueryContext(ctx, `SELECT x.arn, n.topic_arn, n.subject, n.message, n.at FROM flow_notifications n
		JOIN flow_executions x ON x.id=n.exec_id ORDER BY n.id DESC LIMIT ?`, max)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Notification
	for rows.Next() {
		var n Notification
		var at int64
		if err := rows.Scan(&n.ExecutionARN, &n.TopicARN, &n.Subject, &n.Message, &at); err != nil {
			return nil, err
		}
		n.At = time.UnixMilli(at)
		out = append(out, n)
	}
	return out, rows.Err()
}

// parallel runs a Parallel state's branches at once; the result is the array of their outputs.
func (r *run) parallel(ctx context.Context, fr *frame, s *asl.State, raw any, cobj map[string]any, key string) (any, *asl.Error) {
	eff, err := s.EffectiveInput(raw, cobj, fr.vars)
	if err != nil {
		var ae *asl.Error
		if errors.As(err, &ae) {
			return nil, ae
		}
		return nil, fail("States.Runtime", "%v", err)
	}
	fr.add("ParallelStateStarted", nil)
	bctx, cancelCause := context.WithCancelCause(ctx)
	cancel := func() { cancelCause(errSiblingFailed) }
	defer cancel()
	results := make([]any, len(s.Branches))
	frames := make([]*frame, len(s.Branches))
	var first *asl.Error
	var once sync.Once
	var wg sync.WaitGroup
	for i, b := range s.Branches {
		frames[i] = &frame{prefix: fmt.Sprintf("%s/b%d/", key, i), visits: map[string]int{}, quiet: fr.quiet, vars: asl.NewScope(fr.vars)}
		wg.Add(1)
		go func(i int, b *asl.Machine) {
			defer wg.Done()
			out, err := r.runMachine(bctx, frames[i], b, b.StartAt, eff)
			if err != nil {
				once.Do(func() { first = err; cancel() })
				return
			}
			results[i] = out
		}(i, b)
	}
	wg.Wait()
	var evs []event
	for _, f := range frames {
		evs = append(evs, f.take()...)
	}
	fr.merge(inTimeOrder(evs)) // the branches' events interleaved as they happened
	if first != nil {
		fr.add("ParallelStateFailed", nil)
		return nil, first
	}
	fr.add("ParallelStateSucceeded", nil)
	return results, nil
}

// taskToken is the token of a Task: derived from its dedup key, so a resumed execution hands
// out the same token.
func taskToken(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
