package flow

import (
	"context"
	"encoding/json"
	"time"

	"jobdesk/engine/flow/asl"
)

// TestStateInput is a TestState request: one state run once with an input, as Step Functions'
// TestState API does it.
type TestStateInput struct {
	// Definition is the state's own definition, or a whole state machine's with StateName
	// naming the state to run.
	Definition string
	StateName  string
	Input      json.RawMessage
	// InspectionLevel is INFO (the default), DEBUG or TRACE: DEBUG and TRACE add the data after
	// each processing step (InspectionData).
	InspectionLevel string
	// Variables are the workflow variables the state sees, a JSON object (optional).
	Variables json.RawMessage
}

// TestStateOutput is TestState's answer, named as the API names it.
type TestStateOutput struct {
	Output    json.RawMessage `json:"output,omitempty"`
	Error     string          `json:"error,omitempty"`
	Cause     string          `json:"cause,omitempty"`
	NextState string          `json:"nextState,omitempty"`
	// Status is SUCCEEDED, FAILED, RETRIABLE (a retrier would run it again) or CAUGHT_ERROR
	// (a catcher took the error: Output is what goes to NextState).
	Status         string            `json:"status"`
	InspectionData map[string]string `json:"inspectionData,omitempty"`
}

// TestState runs one state once, as Step Functions' TestState: Task functions run in-process,
// Wait states do not wait, Retry is not applied (RETRIABLE says one would be), Catch is.
// Map and Parallel states are refused, as by Step Functions' TestState.
func (e *Engine) TestState(ctx context.Context, in TestStateInput) (TestStateOutput, error) {
	level := in.InspectionLevel
	switch level {
	case "":
		level = "INFO"
	case "INFO", "DEBUG", "TRACE":
	default:
		return TestStateOutput{}, apiErr("ValidationException", "1 validation error detected: Value '%s' at 'inspectionLevel' failed to satisfy constraint: Member must satisfy enum value set: [INFO, DEBUG, TRACE]", level)
	}
	s, def, err := testStateDefinition(in.Definition, in.StateName)
	if err != nil {
		return TestStateOutput{}, err
	}
	if s.Type == "Map" || s.Type == "Parallel" {
		return TestStateOutput{}, apiErr("InvalidDefinition", "TestState does not run %s states: test the states of its %s instead", s.Type, map[string]string{"Map": "ItemProcessor", "Parallel": "Branches"}[s.Type])
	}
	if s.Type == "Task" {
		if err := DefinitionError(Validate(def, e.CheckResourceStrict)); err != nil {
			return TestStateOutput{}, err
		}
	}
	raw := any(map[string]any{})
	if len(in.Input) > 0 {
		if raw, err = asl.Decode(in.Input); err != nil {
			return TestStateOutput{}, apiErr("InvalidExecutionInput", "Invalid State Machine Execution Input: '%v'", err)
		}
	}
	scope := asl.NewScope(nil)
	if len(in.Variables) > 0 {
		v, err := asl.Decode(in.Variables)
		vars, ok := v.(map[string]any)
		if err != nil || !ok {
			return TestStateOutput{}, apiErr("ValidationException", "variables must be a JSON object of variable names and values")
		}
		for k, x := range vars {
			scope.Set(k, x)
		}
	}
	now := time.Now()
	r := &run{e: e, arn: e.executionARN("TestState", "test-state"), name: "test-state", smARN: e.StateMachineARN("TestState"), smName: "TestState",
		start: now, input: raw, direct: true, visited: map[string]bool{}}
	fr := &frame{visits: map[string]int{}, vars: scope, quiet: true}
	out, next, ferr := r.state(ctx, fr, s, raw, "test", now)
	res := TestStateOutput{Status: "SUCCEEDED", NextState: next}
	switch {
	case ferr != nil && r.retriable:
		res.Status, res.Error, res.Cause, res.NextState = "RETRIABLE", ferr.Name, ferr.Cause, ""
	case ferr != nil:
		res.Status, res.Error, res.Cause, res.NextState = "FAILED", ferr.Name, ferr.Cause, ""
	case r.caught:
		res.Status = "CAUGHT_ERROR"
		res.Output = asl.Encode(out)
	default:
		res.Output = asl.Encode(out)
	}
	if level != "INFO" {
		res.InspectionData = inspect(s, raw, r, fr, now)
	}
	return res, nil
}

// inspect recomputes the data after each processing step of state s for DEBUG and TRACE.
func inspect(s *asl.State, raw any, r *run, fr *frame, entered time.Time) map[string]string {
	d := map[string]string{"input": str(raw)}
	cobj := r.contextObject(s, entered, 0, "")
	put := func(k string, v any, err error) bool {
		if err != nil {
			return false
		}
		d[k] = str(v)
		return true
	}
	if s.JSONata {
		if s.Type == "Task" && s.J.Arguments.Present() {
			v, err := s.EffectiveInput(raw, cobj, asl.NewScope(nil))
			put("afterArguments", v, err)
		}
		if r.taskResult != nil {
			d["result"] = str(r.taskResult)
		}
	} else {
		v, err := asl.SelectPath(s.InputPath, raw, cobj)
		if put("afterInputPath", v, err) && s.HasParameters {
			p, err := asl.Template(s.Parameters, asl.Env{Input: v, Context: cobj, Vars: fr.vars})
			put("afterParameters", p, err)
		}
		result := r.taskResult
		if s.Type == "Pass" {
			result = v
			if s.HasParameters {
				result, _ = asl.Template(s.Parameters, asl.Env{Input: v, Context: cobj, Vars: fr.vars})
			}
			if s.HasResult {
				result = s.Result
			}
		}
		if result != nil && (s.Type == "Pass" || s.Type == "Task") {
			d["result"] = str(result)
			if s.HasResultSelector {
				rs, err := asl.Template(s.ResultSelector, asl.Env{Input: result, Context: cobj, Vars: fr.vars})
				if put("afterResultSelector", rs, err) {
					result = rs
				}
			}
			rp, err := asl.PlaceResult(s.ResultPath, raw, result)
			put("afterResultPath", rp, err)
		}
	}
	if vars := fr.vars.All(); len(vars) > 0 {
		d["variables"] = str(vars)
	}
	return d
}

// testStateDefinition parses TestState's definition: a state (run under its own name, or
// "TestState"), or a state machine and the name of one of its states. The states a state goes on
// to need not exist.
func testStateDefinition(def, name string) (*asl.State, []byte, error) {
	var obj map[string]any
	if err := json.Unmarshal([]byte(def), &obj); err != nil {
		return nil, nil, apiErr("InvalidDefinition", "Invalid State Machine Definition: 'INVALID_JSON_DESCRIPTION: %v'", err)
	}
	var machine map[string]any
	if states, ok := obj["States"].(map[string]any); ok {
		so, ok := states[name].(map[string]any)
		if !ok {
			return nil, nil, apiErr("ValidationException", "stateName %q names no state of the definition", name)
		}
		ql, _ := obj["QueryLanguage"].(string)
		machine = stubbed(name, so, ql)
	} else {
		if name == "" {
			name = "TestState"
		}
		machine = stubbed(name, obj, "")
	}
	b, _ := json.Marshal(machine)
	m, ds := asl.Parse(b, nil)
	if m == nil {
		return nil, nil, invalidDefinition(ds)
	}
	return m.States[name], b, nil
}

// stubbed is a state machine of state so named name, with a Succeed state for each state it
// may go on to.
func stubbed(name string, so map[string]any, ql string) map[string]any {
	states := map[string]any{name: so}
	add := func(v any) {
		if n, ok := v.(string); ok && n != "" && n != name {
			states[n] = map[string]any{"Type": "Succeed"}
		}
	}
	add(so["Next"])
	add(so["Default"])
	for _, key := range []string{"Choices", "Catch"} {
		list, _ := so[key].([]any)
		for _, c := range list {
			if o, ok := c.(map[string]any); ok {
				add(o["Next"])
			}
		}
	}
	m := map[string]any{"StartAt": name, "States": states}
	if ql != "" {
		m["QueryLanguage"] = ql
	}
	return m
}
