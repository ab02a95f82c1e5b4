package sfnapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"jobdesk/engine/flow"
)

// protocolDouble is a TEST DOUBLE of *flow.Engine, used only by the protocol tests (routing,
// error shapes, panics, pagination of whole lists, argument checks before the engine is
// asked). It keeps state machines in memory and records the calls that reach it; everything
// about running workflows is tested end to end against the real engine (e2e_test.go).
type protocolDouble struct {
	mu    sync.Mutex
	sms   map[string]flow.StateMachine
	calls []string
	// panicOn makes the named method panic, to check that no panic escapes the server.
	panicOn string
	// fail makes every method return this error.
	fail error
}

func newDouble() *protocolDouble { return &protocolDouble{sms: map[string]flow.StateMachine{}} }

func (d *protocolDouble) call(name string) error {
	d.mu.Lock()
	d.calls = append(d.calls, name)
	p, f := d.panicOn, d.fail
	d.mu.Unlock()
	if p == name {
		panic("protocolDouble: " + name)
	}
	return f
}

func (d *protocolDouble) Calls() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.calls...)
}

const doubleSMPrefix = "arn:aws:states:local:000000000000:stateMachine:"

func (d *protocolDouble) CreateStateMachine(_ context.Context, name, def, role string) (flow.StateMachine, error) {
	if err := d.call("CreateStateMachine"); err != nil {
		return flow.StateMachine{}, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	arn := doubleSMPrefix + name
	if _, ok := d.sms[arn]; ok {
		return flow.StateMachine{}, &flow.APIError{Type: "StateMachineAlreadyExists", Message: "State Machine Already Exists: '" + arn + "'"}
	}
	now := time.Now()
	sm := flow.StateMachine{ARN: arn, Name: name, Definition: def, RoleARN: role, Type: "STANDARD", Status: "ACTIVE", CreatedAt: now, UpdatedAt: now}
	d.sms[arn] = sm
	return sm, nil
}

func (d *protocolDouble) UpdateStateMachine(_ context.Context, arn, def string) (flow.StateMachine, error) {
	if err := d.call("UpdateStateMachine"); err != nil {
		return flow.StateMachine{}, err
	}
	return flow.StateMachine{}, &flow.APIError{Type: "StateMachineDoesNotExist", Message: arn}
}

func (d *protocolDouble) DescribeStateMachine(_ context.Context, arn string) (flow.StateMachine, error) {
	if err := d.call("DescribeStateMachine"); err != nil {
		return flow.StateMachine{}, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	sm, ok := d.sms[arn]
	if !ok {
		return sm, &flow.APIError{Type: "StateMachineDoesNotExist", Message: "State Machine Does Not Exist: '" + arn + "'"}
	}
	return sm, nil
}

func (d *protocolDouble) ListStateMachines(context.Context) ([]flow.StateMachine, error) {
	if err := d.call("ListStateMachines"); err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []flow.StateMachine
	for _, sm := range d.sms {
		out = append(out, sm)
	}
	return out, nil
}

func (d *protocolDouble) DeleteStateMachine(_ context.Context, arn string) error {
	if err := d.call("DeleteStateMachine"); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.sms[arn]; !ok {
		return &flow.APIError{Type: "StateMachineDoesNotExist", Message: arn}
	}
	delete(d.sms, arn)
	return nil
}

func (d *protocolDouble) StartExecution(context.Context, string, json.RawMessage, flow.StartOptions) (flow.Execution, error) {
	return flow.Execution{}, d.notHere("StartExecution")
}
func (d *protocolDouble) StartSyncExecution(context.Context, string, json.RawMessage, flow.StartOptions) (flow.Execution, error) {
	return flow.Execution{}, d.notHere("StartSyncExecution")
}
func (d *protocolDouble) DescribeExecution(context.Context, string) (flow.Execution, error) {
	return flow.Execution{}, d.notHere("DescribeExecution")
}
func (d *protocolDouble) ListExecutions(context.Context, string, string, int, string) ([]flow.Execution, string, error) {
	return nil, "", d.notHere("ListExecutions")
}
func (d *protocolDouble) ListMapRunExecutions(context.Context, string, string, int, string) ([]flow.Execution, string, error) {
	return nil, "", d.notHere("ListMapRunExecutions")
}
func (d *protocolDouble) StopExecution(context.Context, string, string, string) (time.Time, error) {
	return time.Time{}, d.notHere("StopExecution")
}
func (d *protocolDouble) RedriveExecution(context.Context, string) (time.Time, error) {
	return time.Time{}, d.notHere("RedriveExecution")
}
func (d *protocolDouble) History(context.Context, string, bool, int, string) ([]flow.HistoryEvent, string, error) {
	return nil, "", d.notHere("History")
}
func (d *protocolDouble) DescribeMapRun(context.Context, string) (flow.MapRun, error) {
	return flow.MapRun{}, d.notHere("DescribeMapRun")
}
func (d *protocolDouble) ListMapRuns(context.Context, string) ([]flow.MapRun, error) {
	return nil, d.notHere("ListMapRuns")
}
func (d *protocolDouble) CreateActivity(context.Context, string) (flow.Activity, error) {
	return flow.Activity{}, d.notHere("CreateActivity")
}
func (d *protocolDouble) DeleteActivity(context.Context, string) error {
	return d.notHere("DeleteActivity")
}
func (d *protocolDouble) GetActivityTask(ctx context.Context, _, _ string) (string, json.RawMessage, error) {
	if err := d.call("GetActivityTask"); err != nil {
		return "", nil, err
	}
	<-ctx.Done() // never a task: the poll runs until the server's deadline
	return "", nil, ctx.Err()
}
func (d *protocolDouble) SendTaskSuccess(context.Context, string, json.RawMessage) error {
	return d.notHere("SendTaskSuccess")
}
func (d *protocolDouble) SendTaskFailure(context.Context, string, string, string) error {
	return d.notHere("SendTaskFailure")
}
func (d *protocolDouble) SendTaskHeartbeat(context.Context, string) error {
	return d.notHere("SendTaskHeartbeat")
}

// notHere records the call and answers a typed error: the double does not run workflows.
func (d *protocolDouble) notHere(name string) error {
	if err := d.call(name); err != nil {
		return err
	}
	return &flow.APIError{Type: "ValidationException", Message: fmt.Sprintf("protocolDouble does not implement %s", name)}
}
