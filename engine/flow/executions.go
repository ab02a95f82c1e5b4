package flow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

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

// Wait follows the execution's job: its percent and message, as its job reports them (by the
// queue's events, not by reading it on a timer), go to progress, so the window and `--wait`
// show a workflow job moving with its tasks' handlers, not its "starting" message until it ends.
func (ex executions) Wait(ctx context.Context, x orchestrator.Execution, progress job.Reporter) (orchestrator.Execution, error) {
	var pass func(float64, string)
	if progress != nil {
		pass = progress.Progress
	}
	fx, err := ex.e.follow(ctx, x.ARN, pass)
	if err != nil && fx.ARN == "" {
		return x, err
	}
	return toOrchestrator(fx), err
}

func (ex executions) Stop(ctx context.Context, x orchestrator.Execution, errName, cause string) error {
	_, err := ex.e.StopExecution(ctx, x.ARN, errName, cause)
	return err
}
