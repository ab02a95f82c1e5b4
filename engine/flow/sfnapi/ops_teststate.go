package sfnapi

import (
	"context"
	"encoding/json"

	"jobdesk/engine/flow"
)

// stateTester is the engine's TestState; a Backend without it answers TestState as an
// operation it does not serve.
type stateTester interface {
	TestState(ctx context.Context, in flow.TestStateInput) (flow.TestStateOutput, error)
}

type testStateRequest struct {
	Definition      string `json:"definition"`
	RoleArn         string `json:"roleArn"`
	Input           string `json:"input"`
	InspectionLevel string `json:"inspectionLevel"`
	RevealSecrets   bool   `json:"revealSecrets"`
	Variables       string `json:"variables"`
	StateName       string `json:"stateName"`
}

// testState is TestState: one state run once with the given input (and variables), answered
// with its output or error, the next state, a status (SUCCEEDED, FAILED, RETRIABLE,
// CAUGHT_ERROR) and, at inspection level DEBUG or TRACE, the data after each processing step.
func (s *Server) testState(ctx context.Context, in *testStateRequest) (any, error) {
	if err := required("definition", in.Definition); err != nil {
		return nil, err
	}
	t, ok := s.b.(stateTester)
	if !ok {
		return nil, typed("UnknownOperationException", "TestState is not served by this backend")
	}
	if len(in.Input) > maxPayloadBytes {
		return nil, validation("1 validation error detected: Value at 'input' failed to satisfy constraint: Member must have length less than or equal to %d", maxPayloadBytes)
	}
	req := flow.TestStateInput{Definition: in.Definition, StateName: in.StateName, InspectionLevel: in.InspectionLevel}
	if in.Input != "" {
		req.Input = json.RawMessage(in.Input)
	}
	if in.Variables != "" {
		req.Variables = json.RawMessage(in.Variables)
	}
	out, err := t.TestState(ctx, req)
	if err != nil {
		return nil, err
	}
	resp := map[string]any{"status": out.Status}
	if out.Output != nil {
		resp["output"] = string(out.Output)
	}
	for k, v := range map[string]string{"error": out.Error, "cause": out.Cause, "nextState": out.NextState} {
		if v != "" {
			resp[k] = v
		}
	}
	if out.InspectionData != nil {
		resp["inspectionData"] = out.InspectionData
	}
	return resp, nil
}
