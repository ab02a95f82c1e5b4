package app

import (
	"context"
	"encoding/json"

	"jobdesk/engine/flow"
	"jobdesk/engine/flow/sfnapi"
)

// This file is the workflow part of the service API: the device's state machines and their
// executions, as `jobdesk flow`, `jobdesk show --history` and `jobdesk serve` use them. The
// workflow engine itself stays inside the App; what these calls return are the engine's plain
// values (flow.StateMachine, flow.Execution, flow.HistoryEvent, flow.Diagnostic).

// ValidateWorkflow checks definition def against the Amazon States Language rules and, for each
// Task, that this device has the function it names (a workflow a person gives: fill the device's
// placeholders first with DeviceDefinition). It returns the problems found, none when it is valid.
func (a *App) ValidateWorkflow(def []byte) []flow.Diagnostic {
	return flow.Validate(def, a.flow.CheckResourceStrict)
}

// TestWorkflowState runs one state of a definition once with an input, as Step Functions'
// TestState does (Task functions run, Wait states do not wait, Retry is reported as RETRIABLE).
func (a *App) TestWorkflowState(ctx context.Context, in flow.TestStateInput) (flow.TestStateOutput, error) {
	return a.flow.TestState(ctx, in)
}

// PutWorkflow stores definition def as the state machine name, creating it or updating its
// definition, and returns it.
func (a *App) PutWorkflow(ctx context.Context, name string, def []byte) (flow.StateMachine, error) {
	return a.flow.PutStateMachine(ctx, name, string(def))
}

// Workflow returns the stored state machine name (a shipped workflow, or one `flow start` or the
// served API stored); one that does not exist is refused with the engine's
// StateMachineDoesNotExist error.
func (a *App) Workflow(ctx context.Context, name string) (flow.StateMachine, error) {
	return a.flow.DescribeStateMachine(ctx, a.flow.StateMachineARN(name))
}

// Workflows returns every stored state machine.
func (a *App) Workflows(ctx context.Context) ([]flow.StateMachine, error) {
	return a.flow.ListStateMachines(ctx)
}

// StartWorkflow starts an execution of the state machine smARN with input and returns it; its
// job (Execution.JobID) runs when an engine takes it.
func (a *App) StartWorkflow(ctx context.Context, smARN string, input json.RawMessage, o flow.StartOptions) (flow.Execution, error) {
	return a.flow.StartExecution(ctx, smARN, input, o)
}

// Execution returns the device's execution arn as it stands.
func (a *App) Execution(ctx context.Context, arn string) (flow.Execution, error) {
	return a.flow.DescribeExecution(ctx, arn)
}

// ExecutionByJob returns the device's execution whose own job is id (a job of type
// flow.TypeExecution); ExecutionOf finds the execution of the job a person sees.
func (a *App) ExecutionByJob(ctx context.Context, id int64) (flow.Execution, error) {
	return a.flow.ExecutionByJob(ctx, id)
}

// Executions returns a page of at most max executions of the stored state machine workflow, in
// the order Step Functions' ListExecutions gives them, and the token of the next page ("" when
// there is none).
func (a *App) Executions(ctx context.Context, workflow string, max int, nextToken string) ([]flow.Execution, string, error) {
	return a.flow.ListExecutions(ctx, a.flow.StateMachineARN(workflow), "", max, nextToken)
}

// WaitExecution blocks until the device's execution arn has ended (or ctx ends) and returns it.
func (a *App) WaitExecution(ctx context.Context, arn string) (flow.Execution, error) {
	return a.flow.Wait(ctx, arn)
}

// RetryExecution starts a new execution with the input of the device's execution arn, linked to
// it, and returns the new one.
func (a *App) RetryExecution(ctx context.Context, arn string) (flow.Execution, error) {
	return a.flow.RetryExecution(ctx, arn)
}

// ExecutionHistory returns a page of at most max (0: 1000) history events of the device's
// execution arn, in order, and the token of the next page ("" when there is none).
func (a *App) ExecutionHistory(ctx context.Context, arn string, max int, nextToken string) ([]flow.HistoryEvent, string, error) {
	return a.flow.History(ctx, arn, false, max, nextToken)
}

// StepFunctionsAPI returns the Step Functions API over the device's workflow engine, as
// `jobdesk serve` serves it. Definitions are checked as ValidateWorkflow does (a Task naming a
// function this device does not have is refused when the state machine is created, not when it
// runs) unless o says otherwise.
func (a *App) StepFunctionsAPI(o sfnapi.Options) *sfnapi.Server {
	if o.Validate == nil {
		o.Validate = a.ValidateWorkflow
	}
	return sfnapi.New(a.flow, o)
}
