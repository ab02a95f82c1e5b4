package flow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"jobdesk/engine/job"
	"jobdesk/engine/orchestrator"
)

// Executions returns the engine as an orchestrator.Executions: the device's executor of the
// jobs that run a workflow. Workflows are the state machines loaded under their file names
// (PutStateMachine with the name of an assets/workflows file).
func (e *Engine) Executions() orchestrator.Executions { return executions{e} }

type executions struct{ e *Engine }

func toOrchestrator(x Execution) orchestrator.Execution {
	return orchestrator.Execution{ARN: x.ARN, Name: x.Name, Status: x.Status, Input: x.Input, Output: x.Output,
		Error: x.Error, Cause: x.Cause}
}

func (ex executions) Start(ctx context.Context, workflow, name string, input json.RawMessage, o orchestrator.StartOptions) (orchestrator.Execution, error) {
	x, err := ex.e.StartExecution(ctx, ex.e.StateMachineARN(workflow), input,
		StartOptions{Name: name, JobName: o.JobName, ParentJobID: o.JobID, Priority: o.Priority})
	var ae *APIError
	if errors.As(err, &ae) && ae.Type == "ExecutionAlreadyExists" {
		return orchestrator.Execution{}, fmt.Errorf("%w: %s", orchestrator.ErrExists, ae.Message)
	}
	if err != nil {
		return orchestrator.Execution{}, err
	}
	return toOrchestrator(x), nil
}

func (ex executions) Describe(ctx context.Context, workflow, name string) (orchestrator.Execution, error) {
	arn := strings.Replace(ex.e.StateMachineARN(workflow), ":stateMachine:", ":execution:", 1) + ":" + name
	x, err := ex.e.DescribeExecution(ctx, arn)
	if err != nil {
		return orchestrator.Execution{}, err
	}
	return toOrchestrator(x), nil
}

// progressEvery is how often Wait passes the execution's progress on.
const progressEvery = 200 * time.Millisecond

// Wait follows the execution's job: its percent and message, when they change, go to progress
// (the window and `--wait` show a workflow job moving, not its "starting" message until it ends).
func (ex executions) Wait(ctx context.Context, x orchestrator.Execution, progress job.Reporter) (orchestrator.Execution, error) {
	fx, err := ex.e.DescribeExecution(ctx, x.ARN)
	if err != nil {
		return x, err
	}
	done := make(chan struct{})
	followed := make(chan struct{})
	go func() {
		defer close(followed)
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		last, lastMsg := -1.0, ""
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				if j, err := ex.e.q.Get(ctx, fx.JobID); err == nil && (j.Progress != last || j.Message != lastMsg) {
					last, lastMsg = j.Progress, j.Message
					progress.Progress(j.Progress, j.Message)
				}
			}
		}
	}()
	fx, err = ex.e.Wait(ctx, x.ARN)
	close(done)
	<-followed
	return toOrchestrator(fx), err
}

func (ex executions) Stop(ctx context.Context, x orchestrator.Execution, errName, cause string) error {
	_, err := ex.e.StopExecution(ctx, x.ARN, errName, cause)
	return err
}
