package flow

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"jobdesk/engine/flow/asl"
	"jobdesk/engine/job"
	"jobdesk/engine/queue"
)

const execCols = `id, arn, name, sm_arn, job_id, status, input, output, error, cause, start_date, stop_date,
	redrive_count, retry_of, map_run_arn`

func scanExec(s interface{ Scan(...any) error }) (int64, Execution, error) {
	var x Execution
	var id, start int64
	var stop sql.NullInt64
	var in string
	var out sql.NullString
	err := s.Scan(&id, &x.ARN, &x.Name, &x.StateMachineARN, &x.JobID, &x.Status, &in, &out, &x.Error, &x.Cause,
		&start, &stop, &x.RedriveCount, &x.RetryOf, &x.MapRunARN)
	x.Input = json.RawMessage(in)
	if out.Valid {
		x.Output = json.RawMessage(out.String)
	}
	x.StartDate = time.UnixMilli(start)
	if stop.Valid {
		t := time.UnixMilli(stop.Int64)
		x.StopDate = &t
	}
	return id, x, err
}

func canonical(b json.RawMessage) (string, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return "{}", nil
	}
	v, err := asl.Decode(b)
	if err != nil {
		return "", err
	}
	return string(asl.Encode(v)), nil
}

// StartExecution starts an execution of the state machine smARN with input. It is idempotent by
// name: the same name and input returns the running execution; the same name with other input
// (or a closed execution) fails with ExecutionAlreadyExists.
func (e *Engine) StartExecution(ctx context.Context, smARN string, input json.RawMessage, o StartOptions) (Execution, error) {
	return e.start(ctx, smARN, input, o, "", 0)
}

func (e *Engine) start(ctx context.Context, smARN string, input json.RawMessage, o StartOptions, retryOf string, retryJob int64) (Execution, error) {
	sm, err := e.DescribeStateMachine(ctx, smARN)
	if err != nil {
		return Execution{}, err
	}
	in, err := canonical(input)
	if err != nil {
		return Execution{}, apiErr("InvalidExecutionInput", "Invalid State Machine Execution Input: '%v'", err)
	}
	if len(in) > 256*1024 {
		return Execution{}, apiErr("InvalidExecutionInput", "the input is larger than 256 KiB")
	}
	if o.Name == "" {
		o.Name = asl.NewUUID()
	}
	if !validName(o.Name) {
		return Execution{}, apiErr("InvalidName", "Invalid Name: '%s'", o.Name)
	}
	if o.JobName == "" {
		o.JobName = o.Name
	}
	arn := e.executionARN(sm.Name, o.Name)
	if _, x, err := scanExec(e.db.R.QueryRowContext(ctx, `SELECT `+execCols+` FROM flow_executions WHERE arn=?`, arn)); err == nil {
		if x.Status == StatusRunning && string(x.Input) == in {
			return x, nil
		}
		return Execution{}, apiErr("ExecutionAlreadyExists", "Execution Already Exists: '%s'", arn)
	}
	now := time.Now().UnixMilli()
	var jobID int64
	err = e.db.Tx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM flow_executions WHERE arn=?`, arn).Scan(&n); err != nil || n > 0 {
			if err == nil {
				err = apiErr("ExecutionAlreadyExists", "Execution Already Exists: '%s'", arn)
			}
			return err
		}
		id, _, err := e.q.EnqueueTx(ctx, tx, queue.Params{Type: TypeExecution, Name: o.JobName, Priority: o.Priority,
			Input: json.RawMessage(strconv.Quote(arn)), MaxAttempts: 1, DedupKey: "flow:" + arn, ParentID: o.ParentJobID, RetryOf: retryJob})
		if err != nil {
			return err
		}
		jobID = id
		_, err = tx.ExecContext(ctx, `INSERT INTO flow_executions(arn, name, sm_arn, definition, job_id, status, input, start_date, retry_of)
			VALUES(?,?,?,?,?,?,?,?,?)`, arn, o.Name, smARN, sm.Definition, id, StatusRunning, in, now, retryOf)
		return err
	})
	if err != nil {
		var ae *APIError
		if errors.As(err, &ae) && ae.Type == "ExecutionAlreadyExists" {
			if _, x, err2 := scanExec(e.db.R.QueryRowContext(ctx, `SELECT `+execCols+` FROM flow_executions WHERE arn=?`, arn)); err2 == nil &&
				x.Status == StatusRunning && string(x.Input) == in {
				return x, nil
			}
		}
		return Execution{}, err
	}
	e.q.Notify(jobID)
	return e.DescribeExecution(ctx, arn)
}

// StartSyncExecution starts an execution and waits until it is final.
func (e *Engine) StartSyncExecution(ctx context.Context, smARN string, input json.RawMessage, o StartOptions) (Execution, error) {
	x, err := e.StartExecution(ctx, smARN, input, o)
	if err != nil {
		return x, err
	}
	return e.Wait(ctx, x.ARN)
}

// DescribeExecution returns the execution with arn.
func (e *Engine) DescribeExecution(ctx context.Context, arn string) (Execution, error) {
	if _, err := e.nameFromARN(arn, "execution"); err != nil {
		return Execution{}, err
	}
	_, x, err := scanExec(e.db.R.QueryRowContext(ctx, `SELECT `+execCols+` FROM flow_executions WHERE arn=?`, arn))
	if errors.Is(err, sql.ErrNoRows) {
		return Execution{}, apiErr("ExecutionDoesNotExist", "Execution Does Not Exist: '%s'", arn)
	}
	if err != nil {
		return x, err
	}
	return e.reconcile(ctx, x)
}

// reconcile closes an execution whose job was cancelled or failed outside the engine (for
// example `jobdesk cancel` of a job that had not started).
func (e *Engine) reconcile(ctx context.Context, x Execution) (Execution, error) {
	if x.Status != StatusRunning {
		return x, nil
	}
	j, err := e.q.Get(ctx, x.JobID)
	if err != nil || !j.Status.Final() {
		return x, nil
	}
	status, name, cause := StatusAborted, "States.Aborted", "the job was cancelled"
	if j.Status != job.Cancelled {
		status, name, cause = StatusFailed, "States.Runtime", "the execution's job ended "+string(j.Status)
		if j.Error != nil {
			name, cause = j.Error.ErrorName(), j.Error.Message
		}
	}
	if _, err := e.finish(ctx, x.ARN, status, nil, name, cause); err != nil {
		return x, err
	}
	_, x2, err := scanExec(e.db.R.QueryRowContext(ctx, `SELECT `+execCols+` FROM flow_executions WHERE arn=?`, x.ARN))
	return x2, err
}

// finish closes a RUNNING execution with status and records the closing event; it reports
// whether it did (false when it was closed already).
func (e *Engine) finish(ctx context.Context, arn, status string, output json.RawMessage, errName, cause string) (bool, error) {
	now := time.Now().UnixMilli()
	done := false
	err := e.db.Tx(context.WithoutCancel(ctx), func(tx *sql.Tx) error {
		var id int64
		var last int64
		if err := tx.QueryRow(`SELECT id, last_event_id FROM flow_executions WHERE arn=? AND status='RUNNING'`, arn).Scan(&id, &last); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return nil
			}
			return err
		}
		var out any
		if output != nil {
			out = string(output)
		}
		if _, err := tx.Exec(`UPDATE flow_executions SET status=?, output=?, error=?, cause=?, stop_date=? WHERE id=?`,
			status, out, errName, cause, now, id); err != nil {
			return err
		}
		done = true
		typ, details := closingEvent(status, output, errName, cause)
		return insertEvents(tx, nil, id, &last, []event{{typ: typ, at: now, details: details}})
	})
	return done, err
}

func closingEvent(status string, output json.RawMessage, errName, cause string) (string, map[string]any) {
	switch status {
	case StatusSucceeded:
		return "ExecutionSucceeded", map[string]any{"executionSucceededEventDetails": map[string]any{"output": string(output),
			"outputDetails": map[string]any{"truncated": false}}}
	case StatusTimedOut:
		return "ExecutionTimedOut", map[string]any{"executionTimedOutEventDetails": map[string]any{"error": errName, "cause": cause}}
	case StatusAborted:
		return "ExecutionAborted", map[string]any{"executionAbortedEventDetails": map[string]any{"error": errName, "cause": cause}}
	}
	return "ExecutionFailed", map[string]any{"executionFailedEventDetails": map[string]any{"error": errName, "cause": cause}}
}

// event is one history event before it has an id.
type event struct {
	typ     string
	at      int64
	details map[string]any
	// encoded is details as JSON when it was encoded ahead (see encode), "" otherwise.
	encoded string
	// id, when not nil, receives the event's id once it is known (a StateEntered event that a
	// runtime error's cause will name).
	id *int64
}

// detailsJSON returns the event's details as JSON.
func (ev *event) detailsJSON() string {
	if ev.encoded != "" {
		return ev.encoded
	}
	if ev.details == nil {
		return "{}"
	}
	return string(asl.Encode(ev.details))
}

// encode encodes the details of evs ahead, off the writer's transaction: a DISTRIBUTED Map's
// iterations do it as they end, so that recording thousands of child histories at once only
// binds strings.
func encode(evs []event) {
	for i := range evs {
		evs[i].encoded = evs[i].detailsJSON()
	}
}

// insertEvents appends events to an execution's history, numbering them after *last, several
// rows a statement with the prepared statements of rs (nil: parsed).
func insertEvents(tx *sql.Tx, rs *recordStmts, execID int64, last *int64, evs []event) error {
	if len(evs) == 0 {
		return nil
	}
	h := &historyWriter{tx: tx, args: make([]any, 0, 6*min(len(evs), historyPerStatement))}
	if rs != nil {
		h.stmts = rs.history
	}
	for _, ev := range evs {
		*last++
		if ev.id != nil {
			*ev.id = *last
		}
		if err := h.add(execID, *last, ev); err != nil {
			return err
		}
	}
	if err := h.flush(); err != nil {
		return err
	}
	_, err := tx.Exec(`UPDATE flow_executions SET last_event_id=? WHERE id=?`, *last, execID)
	return err
}

// ExecutionByJob returns the execution a queue job represents.
func (e *Engine) ExecutionByJob(ctx context.Context, jobID int64) (Execution, error) {
	var arn string
	err := e.db.R.QueryRowContext(ctx, `SELECT arn FROM flow_executions WHERE job_id=?`, jobID).Scan(&arn)
	if errors.Is(err, sql.ErrNoRows) {
		return Execution{}, apiErr("ExecutionDoesNotExist", "no execution belongs to job %d", jobID)
	}
	if err != nil {
		return Execution{}, err
	}
	return e.DescribeExecution(ctx, arn)
}

// ListExecutions lists the executions of smARN (all when empty), newest first, optionally only
// those in status. nextToken continues a previous page.
func (e *Engine) ListExecutions(ctx context.Context, smARN, status string, max int, nextToken string) ([]Execution, string, error) {
	if smARN != "" {
		if _, err := e.DescribeStateMachine(ctx, smARN); err != nil {
			return nil, "", err
		}
	}
	return e.listExecutions(ctx, smARN, "", status, max, nextToken)
}

// ListMapRunExecutions lists the child executions of a DISTRIBUTED map run (one per finished
// iteration), newest first, like ListExecutions.
func (e *Engine) ListMapRunExecutions(ctx context.Context, mapRunARN, status string, max int, nextToken string) ([]Execution, string, error) {
	if _, err := e.DescribeMapRun(ctx, mapRunARN); err != nil {
		return nil, "", err
	}
	return e.listExecutions(ctx, "", mapRunARN, status, max, nextToken)
}

// listExecutions pages through executions of a state machine (top-level ones) or of a map run.
func (e *Engine) listExecutions(ctx context.Context, smARN, mapRunARN, status string, max int, nextToken string) ([]Execution, string, error) {
	if max <= 0 || max > 1000 {
		max = 100
	}
	before := int64(1 << 62)
	if nextToken != "" {
		n, err := strconv.ParseInt(nextToken, 10, 64)
		if err != nil {
			return nil, "", apiErr("InvalidToken", "Invalid Token: '%s'", nextToken)
		}
		before = n
	}
	rows, err := e.db.R.QueryContext(ctx, `SELECT `+execCols+` FROM flow_executions WHERE id<? AND (?='' OR sm_arn=?)
		AND (?='' OR status=?) AND map_run_arn=? ORDER BY id DESC LIMIT ?`, before, smARN, smARN, status, status, mapRunARN, max+1)
	if err != nil {
		return nil, "", err
	}
	defer rows.Close()
	var out []Execution
	var ids []int64
	for rows.Next() {
		id, x, err := scanExec(rows)
		if err != nil {
			return nil, "", err
		}
		out = append(out, x)
		ids = append(ids, id)
	}
	next := ""
	if len(out) > max {
		out = out[:max]
		next = strconv.FormatInt(ids[max-1], 10)
	}
	return out, next, rows.Err()
}

// StopExecution aborts a running execution: it is ABORTED at once, its job is cancelled and so
// are its running tasks and map iterations.
func (e *Engine) StopExecution(ctx context.Context, arn, errName, cause string) (time.Time, error) {
	x, err := e.DescribeExecution(ctx, arn)
	if err != nil {
		return time.Time{}, err
	}
	if x.Status == StatusRunning {
		if _, err := e.finish(ctx, arn, StatusAborted, nil, errName, cause); err != nil {
			return time.Time{}, err
		}
		if err := e.q.Cancel(ctx, x.JobID); err != nil {
			var je *job.Error
			if !errors.As(err, &je) {
				return time.Time{}, err
			}
		}
		e.activityChanged()
	}
	x, err = e.DescribeExecution(ctx, arn)
	if err != nil {
		return time.Time{}, err
	}
	if x.StopDate != nil {
		return *x.StopDate, nil
	}
	return time.Now(), nil
}

// RedriveExecution restarts a FAILED, TIMED_OUT or ABORTED execution from the state that did not
// finish: states that succeeded are not run again, Map iterations that succeeded are kept.
func (e *Engine) RedriveExecution(ctx context.Context, arn string) (time.Time, error) {
	x, err := e.DescribeExecution(ctx, arn)
	if err != nil {
		return time.Time{}, err
	}
	if x.MapRunARN != "" {
		return time.Time{}, apiErr("ExecutionNotRedrivable", "'%s' is an iteration of map run '%s': redrive its parent execution", arn, x.MapRunARN)
	}
	switch x.Status {
	case StatusFailed, StatusTimedOut, StatusAborted:
	default:
		return time.Time{}, apiErr("ExecutionNotRedrivable", "Execution is %s; only FAILED, TIMED_OUT or ABORTED executions can be redriven: '%s'", x.Status, arn)
	}
	if j, err := e.q.Get(ctx, x.JobID); err == nil && !j.Status.Final() {
		return time.Time{}, apiErr("ExecutionNotRedrivable", "the execution is still stopping: '%s'", arn)
	}
	now := time.Now()
	if err := e.markRedriven(ctx, arn); err != nil {
		return time.Time{}, err
	}
	if _, err := e.q.Retry(ctx, x.JobID); err != nil {
		return time.Time{}, err
	}
	return now, nil
}

// markRedriven returns a closed execution to RUNNING with its redrive count raised.
func (e *Engine) markRedriven(ctx context.Context, arn string) error {
	return e.db.Tx(ctx, func(tx *sql.Tx) error {
		var id, last int64
		var count int
		if err := tx.QueryRow(`SELECT id, last_event_id, redrive_count FROM flow_executions WHERE arn=? AND status<>'RUNNING'`, arn).Scan(&id, &last, &count); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return nil
			}
			return err
		}
		if _, err := tx.Exec(`UPDATE flow_executions SET status='RUNNING', stop_date=NULL, output=NULL, error='', cause='',
			redrive_count=redrive_count+1 WHERE id=?`, id); err != nil {
			return err
		}
		return insertEvents(tx, nil, id, &last, []event{{typ: "ExecutionRedriven", at: time.Now().UnixMilli(),
			details: map[string]any{"executionRedrivenEventDetails": map[string]any{"redriveCount": count + 1}}}})
	})
}

// RetryExecution starts a new execution with the same input, linked to the original (RetryOf,
// and the job's retry_of).
func (e *Engine) RetryExecution(ctx context.Context, arn string) (Execution, error) {
	x, err := e.DescribeExecution(ctx, arn)
	if err != nil {
		return Execution{}, err
	}
	if x.Status == StatusRunning {
		return Execution{}, apiErr("ValidationException", "the execution is still running: '%s'", arn)
	}
	name := x.Name
	if len(name) > 71 {
		name = name[:71]
	}
	name += "-r" + asl.NewUUID()[:7]
	var jobName string
	if j, err := e.q.Get(ctx, x.JobID); err == nil {
		jobName = j.Name
	}
	return e.start(ctx, x.StateMachineARN, x.Input, StartOptions{Name: name, JobName: jobName}, arn, x.JobID)
}

// Wait blocks until the execution is final (or ctx ends) and returns it.
func (e *Engine) Wait(ctx context.Context, arn string) (Execution, error) {
	return e.follow(ctx, arn, nil)
}

// stillRunning reports whether an execution's job with status s is known not to have ended:
// its execution is then still running and need not be read again (an execution's row is closed
// before its job ends: closeWith commits it before the handler returns, StopExecution before it
// cancels the job).
func stillRunning(s job.Status) bool {
	return s == job.Pending || s == job.Running || s == job.Retrying
}

// follow is Wait that also passes the execution's progress to progress (when not nil): what its
// job stands at when follow begins, then each progress its job reports, as the job's events
// arrive (queue.Watch). The execution is read again when its job ends (or an event of
// its job does not say that it has not: see stillRunning), and the job when the queue says another process
// changed the database (an execution run by another process's worker).
func (e *Engine) follow(ctx context.Context, arn string, progress func(pct float64, msg string)) (Execution, error) {
	x, err := e.DescribeExecution(ctx, arn)
	if err != nil || x.Status != StatusRunning {
		return x, err
	}
	events, stop := e.q.Watch(x.JobID)
	defer stop()
	last, lastMsg := -1.0, ""
	pass := func(pct float64, msg string) {
		// The bar does not go back (a cancel's "Cancelling…" event carries no percent).
		pct = max(pct, last)
		if progress != nil && (pct != last || msg != lastMsg) {
			last, lastMsg = pct, msg
			progress(pct, msg)
		}
	}
	// reread passes the job's progress on and reports whether it has ended.
	reread := func() bool {
		j, err := e.q.Get(ctx, x.JobID)
		if err != nil {
			return false
		}
		pass(j.Progress, j.Message)
		return j.Status.Final()
	}
	reread()
	for {
		// Read after the watch began, so that no end goes unseen.
		x, err = e.DescribeExecution(ctx, arn)
		if err != nil || x.Status != StatusRunning {
			return x, err
		}
	wait:
		for {
			select {
			case <-ctx.Done():
				return x, ctx.Err()
			case ev := <-events:
				switch {
				case ev.Kind == job.EventProgress:
					pass(ev.Progress, ev.Message)
				case ev.Kind == job.EventExternalChange:
					if reread() {
						break wait
					}
				case ev.JobID == x.JobID && !stillRunning(ev.Status):
					break wait // the job ended, or an event that does not say (read the execution)
				}
			}
		}
	}
}

// History returns the execution's history events in order (reverse: newest first), at most max
// (default 1000) per page.
func (e *Engine) History(ctx context.Context, execARN string, reverse bool, max int, nextToken string) ([]HistoryEvent, string, error) {
	var id int64
	if _, err := e.nameFromARN(execARN, "execution"); err != nil {
		return nil, "", err
	}
	if err := e.db.R.QueryRowContext(ctx, `SELECT id FROM flow_executions WHERE arn=?`, execARN).Scan(&id); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, "", apiErr("ExecutionDoesNotExist", "Execution Does Not Exist: '%s'", execARN)
		}
		return nil, "", err
	}
	if max <= 0 || max > 1000 {
		max = 1000
	}
	var from int64
	if nextToken != "" {
		n, err := strconv.ParseInt(nextToken, 10, 64)
		if err != nil {
			return nil, "", apiErr("InvalidToken", "Invalid Token: '%s'", nextToken)
		}
		from = n
	}
	q := `SELECT event_id, prev_id, type, at, details FROM flow_history WHERE exec_id=? AND event_id>? ORDER BY event_id LIMIT ?`
	args := []any{id, from, max + 1}
	if reverse {
		if from == 0 {
			from = 1 << 62
		}
		q = `SELECT event_id, prev_id, type, at, details FROM flow_history WHERE exec_id=? AND event_id<? ORDER BY event_id DESC LIMIT ?`
		args = []any{id, from, max + 1}
	}
	rows, err := e.db.R.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, "", err
	}
	defer rows.Close()
	var out []HistoryEvent
	for rows.Next() {
		var ev HistoryEvent
		var at int64
		var d string
		if err := rows.Scan(&ev.ID, &ev.PreviousEventID, &ev.Type, &at, &d); err != nil {
			return nil, "", err
		}
		ev.Timestamp = time.UnixMilli(at)
		json.Unmarshal([]byte(d), &ev.Details)
		out = append(out, ev)
	}
	next := ""
	if len(out) > max {
		out = out[:max]
		next = strconv.FormatInt(out[max-1].ID, 10)
	}
	return out, next, rows.Err()
}

const mapRunCols = `m.arn, x.arn, m.status, m.max_concurrency, m.tolerated_pct, m.tolerated_count, m.start_date, m.stop_date,
	m.pending, m.running, m.succeeded, m.failed, m.timed_out, m.aborted, m.total, m.results_written`

func scanMapRun(s interface{ Scan(...any) error }) (MapRun, error) {
	var m MapRun
	var start int64
	var stop sql.NullInt64
	err := s.Scan(&m.ARN, &m.ExecutionARN, &m.Status, &m.MaxConcurrency, &m.ToleratedFailurePercentage, &m.ToleratedFailureCount,
		&start, &stop, &m.Items.Pending, &m.Items.Running, &m.Items.Succeeded, &m.Items.Failed, &m.Items.TimedOut,
		&m.Items.Aborted, &m.Items.Total, &m.Items.ResultsWritten)
	m.StartDate = time.UnixMilli(start)
	if stop.Valid {
		t := time.UnixMilli(stop.Int64)
		m.StopDate = &t
	}
	return m, err
}

// DescribeMapRun returns a map run (of a DISTRIBUTED Map state) with its item counts.
func (e *Engine) DescribeMapRun(ctx context.Context, arn string) (MapRun, error) {
	m, err := scanMapRun(e.db.R.QueryRowContext(ctx, `SELECT `+mapRunCols+` FROM flow_map_runs m JOIN flow_executions x ON x.id=m.exec_id WHERE m.arn=?`, arn))
	if errors.Is(err, sql.ErrNoRows) {
		return MapRun{}, apiErr("MapRunDoesNotExist", "Map Run Does Not Exist: '%s'", arn)
	}
	return m, err
}

// ListMapRuns lists the map runs of an execution, oldest first.
func (e *Engine) ListMapRuns(ctx context.Context, execARN string) ([]MapRun, error) {
	if _, err := e.DescribeExecution(ctx, execARN); err != nil {
		return nil, err
	}
	rows, err := e.db.R.QueryContext(ctx, `SELECT `+mapRunCols+` FROM flow_map_runs m JOIN flow_executions x ON x.id=m.exec_id
		WHERE x.arn=? ORDER BY m.start_date, m.arn`, execARN)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []MapRun
	for rows.Next() {
		m, err := scanMapRun(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// ---- functions ----

// taskInput is the input of a function's job: the payload and the Task's limits.
type taskInput struct {
	Payload   json.RawMessage `json:"payload"`
	Timeout   float64         `json:"timeout_seconds,omitempty"`
	Heartbeat float64         `json:"heartbeat_seconds,omitempty"`
	State     string          `json:"state,omitempty"`
	Execution string          `json:"execution,omitempty"`
}

var (
	errTaskTimeout = errors.New("the task exceeded its TimeoutSeconds")
	errHeartbeat   = errors.New("the task sent no heartbeat within HeartbeatSeconds")
)

// wrap adapts a function's handler to the task job: it unwraps the payload and enforces the
// Task's TimeoutSeconds (States.Timeout) and HeartbeatSeconds (States.HeartbeatTimeout: the
// handler's progress reports are its heartbeats). typeTimeout, when set, applies when the Task
// has no TimeoutSeconds of its own. A job whose input is not a task envelope (a plain job of the
// same type) runs the handler on the input as it is.
func wrap(h job.Handler, typeTimeout time.Duration) job.Handler {
	return func(ctx context.Context, input json.RawMessage, r job.Reporter) (json.RawMessage, error) {
		var ti taskInput
		if err := json.Unmarshal(input, &ti); err != nil || ti.Payload == nil {
			ti = taskInput{Payload: input}
		}
		timeout := time.Duration(ti.Timeout * float64(time.Second))
		if timeout <= 0 {
			timeout = typeTimeout
		}
		ctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		if timeout > 0 {
			t := time.AfterFunc(timeout, func() { cancel(errTaskTimeout) })
			defer t.Stop()
		}
		rep := r
		if ti.Heartbeat > 0 {
			hb := time.Duration(ti.Heartbeat * float64(time.Second))
			t := time.AfterFunc(hb, func() { cancel(errHeartbeat) })
			defer t.Stop()
			rep = job.ReporterFunc(func(p float64, m string) {
				t.Reset(hb)
				r.Progress(p, m)
			})
		}
		type res struct {
			out json.RawMessage
			err error
		}
		done := make(chan res, 1)
		go func() {
			defer func() {
				if p := recover(); p != nil {
					done <- res{err: job.Errorf(job.E016, "the function crashed: %v", p).WithJa("処理中に内部エラーが発生しました。").WithName("States.Runtime").Permanent()}
				}
			}()
			out, err := h(ctx, ti.Payload, rep)
			done <- res{out, err}
		}()
		var out res
		select {
		case out = <-done:
		case <-ctx.Done():
			select {
			case out = <-done:
			case <-time.After(time.Second):
				out = res{err: context.Cause(ctx)}
			}
		}
		switch context.Cause(ctx) {
		case errTaskTimeout:
			return nil, job.Errorf(job.E011, "the task took longer than its limit of %s", timeout).
				WithJa(fmt.Sprintf("タスクが制限時間（%s）を超えたため停止しました。", timeout)).WithName("States.Timeout").Permanent()
		case errHeartbeat:
			return nil, job.Errorf(job.E011, "the task sent no heartbeat for %.0f s", ti.Heartbeat).
				WithJa("タスクから一定時間応答（ハートビート）がありませんでした。").WithName("States.HeartbeatTimeout").Permanent()
		}
		return out.out, out.err
	}
}
