// Package orchestrator runs "a job runs a workflow execution", once for every family and every
// executor. A CSV import, a document conversion and an AI generation are each a job that people
// see (with its own type, progress, cancel and retry) whose work is one execution of a shipped
// ASL workflow. Run starts that execution under a deterministic name (so a job resumed after a
// crash finds its execution again instead of starting a second), follows its progress, stops it
// when the job is cancelled or times out, and turns its end into the job's outcome — from the
// execution's own status, error and cause, never from the executor's private tables, so the same
// code maps an execution of the device's flow engine and one of AWS Step Functions.
//
// Failures read the same from any executor because a task's coded error travels as JSON in the
// failure's Cause (job.Error.CauseJSON; job.ErrorFromCause reads it back, from Lambda's error
// envelope too).
//
// The package imports only engine/job: executors implement Executions (engine/flow on the device;
// the cloud's Step Functions client under sync/).
package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"time"

	"jobdesk/engine/job"
)

// Execution statuses, in Step Functions' words.
const (
	Running   = "RUNNING"
	Succeeded = "SUCCEEDED"
	Failed    = "FAILED"
	TimedOut  = "TIMED_OUT"
	Aborted   = "ABORTED"
)

// Execution is what Run needs to know of an execution.
type Execution struct {
	ARN    string
	Name   string
	Status string // Running, Succeeded, Failed, TimedOut or Aborted
	Input  json.RawMessage
	Output json.RawMessage // when Succeeded
	Error  string          // when it did not succeed: the error name (States.Timeout, a task's error, …)
	Cause  string          // its cause: a coded job.Error as JSON when a task failed
}

// StartOptions describe the job an execution is started for.
type StartOptions struct {
	JobID    int64  // the job that runs the execution (the device shows the execution as its child)
	JobName  string // the job's display name
	Priority int
}

// ErrExists is returned (wrapped) by Executions.Start when an execution of that name exists and
// is not the same running execution (another input, or it has ended).
var ErrExists = errors.New("an execution of that name already exists")

// Executions is a workflow executor: the device's flow engine or AWS Step Functions.
type Executions interface {
	// Start starts an execution of workflow (a file name of assets/workflows without
	// ".asl.json") named name. It is idempotent: the same name and input while that execution
	// runs returns it; any other execution of that name gives ErrExists.
	Start(ctx context.Context, workflow, name string, input json.RawMessage, o StartOptions) (Execution, error)
	// Describe returns an execution of workflow by name.
	Describe(ctx context.Context, workflow, name string) (Execution, error)
	// Wait returns when the execution has ended, or ctx is done (then with ctx's error),
	// reporting its progress through progress as it moves.
	Wait(ctx context.Context, x Execution, progress job.Reporter) (Execution, error)
	// Stop ends a running execution with the given error and cause (ABORTED).
	Stop(ctx context.Context, x Execution, errName, cause string) error
}

// Spec is one job's execution.
type Spec struct {
	// Workflow names the workflow (assets/workflows file name without ".asl.json").
	Workflow string
	// Name is the execution's name: deterministic for the job (the seeds' rules), ≤ 80
	// characters of [A-Za-z0-9_-]. When that name is taken by another execution (another job's
	// in the same second, or this job's failed earlier run), "-j<job id>", then "-j<id>-2", … are
	// tried.
	Name string
	// Input is the execution's input.
	Input json.RawMessage
	// Priority is the execution's priority among the device's jobs.
	Priority int
	// What names the work in messages for people ("the CSV import", "the conversion").
	What, WhatJa string
	// Outcome turns a SUCCEEDED execution into the job's result; it may return
	// job.PartialSuccess. nil: the execution's output as it is.
	Outcome func(ctx context.Context, x Execution) (json.RawMessage, error)
	// Failure, when set, may rewrite the error of an execution that did not succeed (e is
	// what Run read from its error and cause); it returns the error the job ends with.
	Failure func(ctx context.Context, x Execution, e *job.Error) error
}

// stopTimeout bounds stopping an execution when its job ends by a cancel or its timeout.
const stopTimeout = 30 * time.Second

// maxNameTries bounds the names tried for one job.
const maxNameTries = 50

// Run runs spec's execution for the job in ctx (job.InfoFrom) and returns the job's outcome.
//
// When ctx ends because the job was cancelled by a person (context.Cause is job.ErrUserCancel)
// the execution is stopped (States.Aborted) and the job ends E013; when the job's own timeout
// passes it is stopped with States.Timeout and the job ends E011. When ctx ends for any other
// reason (JobDesk is closing) the execution is left running: the job resumes and finds it again.
func Run(ctx context.Context, ex Executions, spec Spec, r job.Reporter) (json.RawMessage, error) {
	if r == nil {
		r = job.Discard
	}
	info, _ := job.InfoFrom(ctx)
	x, name, err := start(ctx, ex, spec, info)
	if err != nil {
		if ctx.Err() != nil {
			// The Start under way may have made the execution all the same (the server made
			// it, its answer was cut off): stopped looks for it by the name it was given.
			return nil, stopped(ctx, ex, spec, Execution{Name: name})
		}
		return nil, job.Wrap(job.E015, err, spec.What+" could not be started: "+err.Error()).
			WithJa(spec.WhatJa + "を開始できませんでした。")
	}
	x, err = ex.Wait(ctx, x, job.ReporterFunc(func(p float64, m string) { r.Progress(min(p, 99), m) }))
	if err != nil || x.Status == Running {
		if ctx.Err() != nil {
			return nil, stopped(ctx, ex, spec, x)
		}
		if err == nil {
			err = errors.New("the execution is still running")
		}
		return nil, job.Wrap(job.E015, err, "waiting for "+spec.What+" failed").WithJa(spec.WhatJa + "の完了を待てませんでした。")
	}
	if x.Status == Succeeded {
		if spec.Outcome == nil {
			return x.Output, nil
		}
		return spec.Outcome(ctx, x)
	}
	e := Failure(x, spec.What, spec.WhatJa)
	if spec.Failure != nil {
		return nil, spec.Failure(ctx, x, e)
	}
	return nil, e
}

// Failure is the coded error of an execution that did not succeed: the task's coded error when
// its cause carries one; for a timed-out or stopped execution, E011 States.Timeout or E013
// States.Aborted worded with what (the work, "the conversion") and whatJa; else E015 with the
// execution's error and cause. It is permanent: the workflow's own Retry policies have run.
func Failure(x Execution, what, whatJa string) *job.Error {
	e, coded := job.ErrorFromCause(x.Error, x.Cause)
	switch {
	case coded:
	case x.Status == TimedOut:
		e = job.Errorf(job.E011, "%s took too long and was stopped", what).
			WithJa(whatJa + "に時間がかかりすぎたため停止しました。").WithName("States.Timeout")
	case x.Status == Aborted:
		e = job.Errorf(job.E013, "%s was stopped", what).WithJa(whatJa + "は停止されました。").WithName("States.Aborted")
	}
	return e.Permanent()
}

// start starts the job's execution, or finds it again: a name taken by an execution with the
// same input that is running or has succeeded is this job's own (resumed after a stop), and is
// reused; any other taken name moves on to the next. It also returns the name it tried last.
func start(ctx context.Context, ex Executions, spec Spec, info job.Info) (Execution, string, error) {
	base := spec.Name
	suffix := "-j" + strconv.FormatInt(info.ID, 10)
	if len(base)+len(suffix)+4 > 80 {
		base = strings.TrimRight(base[:80-len(suffix)-4], "-")
	}
	o := StartOptions{JobID: info.ID, JobName: info.Name, Priority: spec.Priority}
	var err error
	var name string
	for n := 0; n < maxNameTries; n++ {
		name = base
		switch {
		case n == 1:
			name += suffix
		case n > 1:
			name += suffix + "-" + strconv.Itoa(n)
		}
		var x Execution
		x, err = ex.Start(ctx, spec.Workflow, name, spec.Input, o)
		if !errors.Is(err, ErrExists) {
			return x, name, err
		}
		old, derr := ex.Describe(ctx, spec.Workflow, name)
		if derr != nil {
			continue
		}
		if (old.Status == Running || old.Status == Succeeded) && sameJSON(old.Input, spec.Input) {
			return old, name, nil
		}
	}
	return Execution{}, name, err
}

// stopped ends a job whose context ended: a person's cancel or the job's timeout stop the
// execution; JobDesk closing leaves it to resume. An x without ARN was being started when ctx
// ended: the execution of its name, if one runs with the job's input, is the one to stop.
func stopped(ctx context.Context, ex Executions, spec Spec, x Execution) error {
	bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopTimeout)
	defer cancel()
	if x.ARN == "" && x.Name != "" && (errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(context.Cause(ctx), job.ErrUserCancel)) {
		if old, err := ex.Describe(bg, spec.Workflow, x.Name); err == nil && old.Status == Running && sameJSON(old.Input, spec.Input) {
			x = old
		}
	}
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		if x.ARN != "" {
			_ = ex.Stop(bg, x, "States.Timeout", spec.What+" ran out of time")
		}
		return job.Wrap(job.E011, ctx.Err(), spec.What+" took too long and was stopped").
			WithJa(spec.WhatJa + "に時間がかかりすぎたため停止しました。").WithName("States.Timeout").Permanent()
	case errors.Is(context.Cause(ctx), job.ErrUserCancel):
		if x.ARN != "" {
			_ = ex.Stop(bg, x, "States.Aborted", spec.What+" was cancelled")
		}
		return job.Wrap(job.E013, context.Cause(ctx), spec.What+" was cancelled").
			WithJa(spec.WhatJa + "はキャンセルされました。").WithName("States.Aborted")
	}
	return ctx.Err()
}

// sameJSON compares two JSON documents by value.
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
