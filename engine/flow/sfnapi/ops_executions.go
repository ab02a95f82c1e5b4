package sfnapi

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"jobdesk/engine/flow"
)

func (s *Server) startExecution(ctx context.Context, in *startRequest) (any, error) {
	input, o, err := in.check()
	if err != nil {
		return nil, err
	}
	e, err := s.b.StartExecution(ctx, in.StateMachineArn, input, o)
	if err != nil {
		return nil, err
	}
	return struct {
		ExecutionArn string `json:"executionArn"`
		StartDate    epoch  `json:"startDate"`
	}{e.ARN, at(e.StartDate)}, nil
}

// startRequest is the request of StartExecution and StartSyncExecution.
type startRequest struct {
	StateMachineArn string  `json:"stateMachineArn" arn:"stateMachine"`
	Name            string  `json:"name"`
	Input           *string `json:"input"`
	TraceHeader     string  `json:"traceHeader"`
}

// check checks the name and the input and returns the input and the start options.
func (in *startRequest) check() ([]byte, flow.StartOptions, error) {
	if in.Name != "" {
		if err := checkName("name", in.Name); err != nil {
			return nil, flow.StartOptions{}, err
		}
	}
	raw := ""
	if in.Input != nil {
		raw = *in.Input
	}
	input, err := checkPayload("InvalidExecutionInput", "execution input", raw)
	if err != nil {
		return nil, flow.StartOptions{}, err
	}
	return input, flow.StartOptions{Name: in.Name}, nil
}

// startSyncExecution starts the execution and waits for it, at most Options.SyncTimeout; one
// still running then is stopped and answered TIMED_OUT, as an express execution is on AWS. A
// client that goes away does not stop the execution: it runs on, durably.
func (s *Server) startSyncExecution(ctx context.Context, in *startRequest) (any, error) {
	arn := in.StateMachineArn
	input, o, err := in.check()
	if err != nil {
		return nil, err
	}
	if o.Name == "" {
		// Named here, so that the execution can be found again when the wait runs out.
		o.Name = requestID()
	}
	wctx, cancel := context.WithTimeout(ctx, s.o.SyncTimeout)
	defer cancel()
	e, err := s.b.StartSyncExecution(wctx, arn, input, o)
	if err != nil && (errors.Is(err, context.DeadlineExceeded) || wctx.Err() != nil) && ctx.Err() == nil {
		// Our own deadline ran out: find the execution (by its name) and stop it.
		if e.ARN == "" {
			if e, err = s.b.StartExecution(ctx, arn, input, o); err != nil { // idempotent by name: the same execution
				return nil, err
			}
		}
		cause := fmt.Sprintf("the execution did not finish within %s", s.o.SyncTimeout)
		stop, serr := s.b.StopExecution(ctx, e.ARN, "States.Timeout", cause)
		if serr != nil && !isType(serr, "ValidationException") {
			return nil, serr
		}
		e.Status, e.Error, e.Cause, e.StopDate = flow.StatusTimedOut, "States.Timeout", cause, &stop
		err = nil
	}
	if err != nil {
		return nil, err
	}
	status := e.Status
	switch status {
	case flow.StatusSucceeded, flow.StatusFailed, flow.StatusTimedOut:
	default: // ABORTED has no place in SyncExecutionStatus
		status = flow.StatusFailed
		if e.Error == "" {
			e.Error = "States.Aborted"
		}
	}
	stop := e.StopDate
	if stop == nil {
		now := time.Now()
		stop = &now
	}
	return struct {
		ExecutionArn    string   `json:"executionArn"`
		StateMachineArn string   `json:"stateMachineArn"`
		Name            string   `json:"name"`
		StartDate       epoch    `json:"startDate"`
		StopDate        epoch    `json:"stopDate"`
		Status          string   `json:"status"`
		Input           *string  `json:"input,omitempty"`
		InputDetails    included `json:"inputDetails"`
		Output          *string  `json:"output,omitempty"`
		OutputDetails   included `json:"outputDetails"`
		Error           *string  `json:"error,omitempty"`
		Cause           *string  `json:"cause,omitempty"`
	}{e.ARN, e.StateMachineARN, e.Name, at(e.StartDate), at(*stop), status, str(e.Input), included{true},
		str(e.Output), included{true}, strp(e.Error), strp(e.Cause)}, nil
}

// redriveStatus says whether RedriveExecution would take e, and why not.
func redriveStatus(e flow.Execution) (string, string) {
	switch {
	case e.MapRunARN != "":
		return "REDRIVABLE_BY_MAP_RUN", ""
	case e.Status == flow.StatusFailed || e.Status == flow.StatusTimedOut || e.Status == flow.StatusAborted:
		return "REDRIVABLE", ""
	}
	return "NOT_REDRIVABLE", fmt.Sprintf("Execution is %s and cannot be redriven", e.Status)
}

type describeExecutionRequest struct {
	ExecutionArn string `json:"executionArn" arn:"execution"`
	IncludedData string `json:"includedData"`
}

func (s *Server) describeExecution(ctx context.Context, in *describeExecutionRequest) (any, error) {
	if in.IncludedData != "" && in.IncludedData != "ALL_DATA" && in.IncludedData != "METADATA_ONLY" {
		return nil, validation("1 validation error detected: Value '%s' at 'includedData' failed to satisfy constraint: Member must satisfy enum value set: [ALL_DATA, METADATA_ONLY]", in.IncludedData)
	}
	e, err := s.b.DescribeExecution(ctx, in.ExecutionArn)
	if err != nil {
		return nil, err
	}
	rs, reason := redriveStatus(e)
	out := struct {
		ExecutionArn        string    `json:"executionArn"`
		StateMachineArn     string    `json:"stateMachineArn"`
		Name                string    `json:"name"`
		Status              string    `json:"status"`
		StartDate           epoch     `json:"startDate"`
		StopDate            *epoch    `json:"stopDate,omitempty"`
		Input               *string   `json:"input,omitempty"`
		InputDetails        *included `json:"inputDetails,omitempty"`
		Output              *string   `json:"output,omitempty"`
		OutputDetails       *included `json:"outputDetails,omitempty"`
		Error               *string   `json:"error,omitempty"`
		Cause               *string   `json:"cause,omitempty"`
		MapRunArn           *string   `json:"mapRunArn,omitempty"`
		RedriveCount        int       `json:"redriveCount"`
		RedriveStatus       string    `json:"redriveStatus"`
		RedriveStatusReason *string   `json:"redriveStatusReason,omitempty"`
	}{
		ExecutionArn: e.ARN, StateMachineArn: e.StateMachineARN, Name: e.Name, Status: e.Status,
		StartDate: at(e.StartDate), StopDate: atp(e.StopDate), Error: strp(e.Error), Cause: strp(e.Cause),
		MapRunArn: strp(e.MapRunARN), RedriveCount: e.RedriveCount, RedriveStatus: rs, RedriveStatusReason: strp(reason),
	}
	if in.IncludedData != "METADATA_ONLY" {
		out.Input, out.InputDetails = str(e.Input), &included{true}
		if len(e.Output) > 0 {
			out.Output, out.OutputDetails = str(e.Output), &included{true}
		}
	}
	return out, nil
}

type stopExecutionRequest struct {
	ExecutionArn string `json:"executionArn" arn:"execution"`
	Error        string `json:"error"`
	Cause        string `json:"cause"`
}

func (s *Server) stopExecution(ctx context.Context, in *stopExecutionRequest) (any, error) {
	if err := errorAndCause(in.Error, in.Cause); err != nil {
		return nil, err
	}
	stop, err := s.b.StopExecution(ctx, in.ExecutionArn, in.Error, in.Cause)
	if err != nil {
		return nil, err
	}
	return struct {
		StopDate epoch `json:"stopDate"`
	}{at(stop)}, nil
}

// errorAndCause checks the lengths the API allows an error name (256) and a cause (32768).
func errorAndCause(name, cause string) error {
	if n := utf8.RuneCountInString(name); n > 256 {
		return validation("1 validation error detected: Value at 'error' failed to satisfy constraint: Member must have length less than or equal to 256")
	}
	if n := utf8.RuneCountInString(cause); n > 32768 {
		return validation("1 validation error detected: Value at 'cause' failed to satisfy constraint: Member must have length less than or equal to 32768")
	}
	return nil
}

type redriveExecutionRequest struct {
	ExecutionArn string `json:"executionArn" arn:"execution"`
	ClientToken  string `json:"clientToken"`
}

func (s *Server) redriveExecution(ctx context.Context, in *redriveExecutionRequest) (any, error) {
	d, err := s.b.RedriveExecution(ctx, in.ExecutionArn)
	if err != nil {
		return nil, err
	}
	return struct {
		RedriveDate epoch `json:"redriveDate"`
	}{at(d)}, nil
}

type executionListItem struct {
	ExecutionArn    string  `json:"executionArn"`
	StateMachineArn string  `json:"stateMachineArn"`
	Name            string  `json:"name"`
	Status          string  `json:"status"`
	StartDate       epoch   `json:"startDate"`
	StopDate        *epoch  `json:"stopDate,omitempty"`
	MapRunArn       *string `json:"mapRunArn,omitempty"`
	RedriveCount    int     `json:"redriveCount"`
}

var executionStatuses = map[string]bool{"RUNNING": true, "SUCCEEDED": true, "FAILED": true, "TIMED_OUT": true, "ABORTED": true, "PENDING_REDRIVE": true}

type listExecutionsRequest struct {
	StateMachineArn string `json:"stateMachineArn"`
	MapRunArn       string `json:"mapRunArn"`
	StatusFilter    string `json:"statusFilter"`
	MaxResults      int    `json:"maxResults"`
	NextToken       string `json:"nextToken"`
	RedriveFilter   string `json:"redriveFilter"`
}

func (s *Server) listExecutions(ctx context.Context, in *listExecutionsRequest) (any, error) {
	switch {
	case in.StateMachineArn != "" && in.MapRunArn != "":
		return nil, validation("give either stateMachineArn or mapRunArn, not both")
	case in.MapRunArn != "":
		if err := checkARN("mapRunArn", in.MapRunArn, "mapRun"); err != nil {
			return nil, err
		}
	default:
		if err := checkARN("stateMachineArn", in.StateMachineArn, "stateMachine"); err != nil {
			return nil, err
		}
	}
	if in.StatusFilter != "" && !executionStatuses[in.StatusFilter] {
		return nil, validation("1 validation error detected: Value '%s' at 'statusFilter' failed to satisfy constraint: Member must satisfy enum value set: [RUNNING, SUCCEEDED, FAILED, TIMED_OUT, ABORTED, PENDING_REDRIVE]", in.StatusFilter)
	}
	if in.RedriveFilter != "" && in.RedriveFilter != "REDRIVEN" && in.RedriveFilter != "NOT_REDRIVEN" {
		return nil, validation("1 validation error detected: Value '%s' at 'redriveFilter' failed to satisfy constraint: Member must satisfy enum value set: [REDRIVEN, NOT_REDRIVEN]", in.RedriveFilter)
	}
	max, err := maxResults(in.MaxResults)
	if err != nil {
		return nil, err
	}
	list := s.b.ListExecutions
	if in.MapRunArn != "" {
		list = func(ctx context.Context, _, status string, max int, token string) ([]flow.Execution, string, error) {
			return s.b.ListMapRunExecutions(ctx, in.MapRunArn, status, max, token)
		}
	}
	es, next, err := list(ctx, in.StateMachineArn, in.StatusFilter, max, in.NextToken)
	if err != nil {
		return nil, err
	}
	out := struct {
		Executions []executionListItem `json:"executions"`
		NextToken  *string             `json:"nextToken,omitempty"`
	}{Executions: []executionListItem{}, NextToken: strp(next)}
	for _, e := range es {
		if (in.RedriveFilter == "REDRIVEN" && e.RedriveCount == 0) || (in.RedriveFilter == "NOT_REDRIVEN" && e.RedriveCount > 0) {
			continue
		}
		out.Executions = append(out.Executions, executionListItem{e.ARN, e.StateMachineARN, e.Name, e.Status,
			at(e.StartDate), atp(e.StopDate), strp(e.MapRunARN), e.RedriveCount})
	}
	return out, nil
}

type getExecutionHistoryRequest struct {
	ExecutionArn         string `json:"executionArn" arn:"execution"`
	MaxResults           int    `json:"maxResults"`
	ReverseOrder         bool   `json:"reverseOrder"`
	NextToken            string `json:"nextToken"`
	IncludeExecutionData *bool  `json:"includeExecutionData"`
}

func (s *Server) getExecutionHistory(ctx context.Context, in *getExecutionHistoryRequest) (any, error) {
	max, err := maxResults(in.MaxResults)
	if err != nil {
		return nil, err
	}
	evs, next, err := s.b.History(ctx, in.ExecutionArn, in.ReverseOrder, max, in.NextToken)
	if err != nil {
		return nil, err
	}
	withData := in.IncludeExecutionData == nil || *in.IncludeExecutionData
	out := struct {
		Events    []map[string]any `json:"events"`
		NextToken *string          `json:"nextToken,omitempty"`
	}{Events: make([]map[string]any, 0, len(evs)), NextToken: strp(next)}
	for _, ev := range evs {
		out.Events = append(out.Events, historyEvent(ev, withData))
	}
	return out, nil
}

// historyEvent renders one event: id, previousEventId, type, timestamp and the engine's detail
// object(s), keyed as the API names them. Without execution data, the input and output inside
// the details are left out.
func historyEvent(ev flow.HistoryEvent, withData bool) map[string]any {
	m := make(map[string]any, len(ev.Details)+4)
	for k, v := range ev.Details {
		if !withData {
			if d, ok := v.(map[string]any); ok {
				c := make(map[string]any, len(d))
				for dk, dv := range d {
					switch dk {
					case "input", "output", "inputDetails", "outputDetails":
						continue
					}
					c[dk] = dv
				}
				v = c
			}
		}
		m[k] = v
	}
	m["id"] = ev.ID
	m["previousEventId"] = ev.PreviousEventID
	m["type"] = ev.Type
	m["timestamp"] = at(ev.Timestamp)
	return m
}
