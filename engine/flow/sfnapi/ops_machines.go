package sfnapi

import (
	"context"
	"errors"
	"strings"

	"jobdesk/engine/flow"
)

// operations maps each X-Amz-Target operation name to its handler.
var operations = map[string]func(*Server, context.Context, []byte) (any, error){
	"CreateStateMachine":             (*Server).createStateMachine,
	"UpdateStateMachine":             (*Server).updateStateMachine,
	"DescribeStateMachine":           (*Server).describeStateMachine,
	"ListStateMachines":              (*Server).listStateMachines,
	"DeleteStateMachine":             (*Server).deleteStateMachine,
	"ValidateStateMachineDefinition": (*Server).validateDefinition,
	"StartExecution":                 (*Server).startExecution,
	"StartSyncExecution":             (*Server).startSyncExecution,
	"DescribeExecution":              (*Server).describeExecution,
	"StopExecution":                  (*Server).stopExecution,
	"RedriveExecution":               (*Server).redriveExecution,
	"ListExecutions":                 (*Server).listExecutions,
	"GetExecutionHistory":            (*Server).getExecutionHistory,
	"DescribeMapRun":                 (*Server).describeMapRun,
	"ListMapRuns":                    (*Server).listMapRuns,
	"CreateActivity":                 (*Server).createActivity,
	"DeleteActivity":                 (*Server).deleteActivity,
	"GetActivityTask":                (*Server).getActivityTask,
	"SendTaskSuccess":                (*Server).sendTaskSuccess,
	"SendTaskFailure":                (*Server).sendTaskFailure,
	"SendTaskHeartbeat":              (*Server).sendTaskHeartbeat,
}

// checkType accepts the state machine types the engine runs: STANDARD (the default).
func checkType(t string) error {
	switch t {
	case "", "STANDARD":
		return nil
	case "EXPRESS":
		return typed("StateMachineTypeNotSupported", "JobDesk runs every state machine as STANDARD (durably, on this device); create it with type STANDARD — StartSyncExecution works on STANDARD machines here")
	}
	return validation("1 validation error detected: Value '%s' at 'type' failed to satisfy constraint: Member must satisfy enum value set: [STANDARD, EXPRESS]", t)
}

type loggingConfiguration struct {
	Level                string `json:"level"`
	IncludeExecutionData bool   `json:"includeExecutionData"`
}

type tracingConfiguration struct {
	Enabled bool `json:"enabled"`
}

func (s *Server) createStateMachine(ctx context.Context, body []byte) (any, error) {
	var in struct {
		Name       string `json:"name"`
		Definition string `json:"definition"`
		RoleArn    string `json:"roleArn"`
		Type       string `json:"type"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	if err := required("name", in.Name, "definition", in.Definition, "roleArn", in.RoleArn); err != nil {
		return nil, err
	}
	if err := checkName("name", in.Name); err != nil {
		return nil, err
	}
	if err := checkType(in.Type); err != nil {
		return nil, err
	}
	if err := s.checkDefinition(in.Definition); err != nil {
		return nil, err
	}
	sm, err := s.b.CreateStateMachine(ctx, in.Name, in.Definition, in.RoleArn)
	if err != nil {
		return nil, err
	}
	return struct {
		StateMachineArn string `json:"stateMachineArn"`
		CreationDate    epoch  `json:"creationDate"`
	}{sm.ARN, at(sm.CreatedAt)}, nil
}

func (s *Server) updateStateMachine(ctx context.Context, body []byte) (any, error) {
	var in struct {
		StateMachineArn string `json:"stateMachineArn"`
		Definition      string `json:"definition"`
		RoleArn         string `json:"roleArn"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	if err := checkARN("stateMachineArn", in.StateMachineArn, "stateMachine"); err != nil {
		return nil, err
	}
	if in.Definition == "" && in.RoleArn == "" {
		return nil, typed("MissingRequiredParameter", "give a definition or a roleArn to update")
	}
	def := in.Definition
	if def == "" {
		// Only the role changes: the engine keeps the role it was created with, so the
		// definition is written again as it is (which also checks that the machine exists).
		sm, err := s.b.DescribeStateMachine(ctx, in.StateMachineArn)
		if err != nil {
			return nil, err
		}
		def = sm.Definition
	}
	if err := s.checkDefinition(def); err != nil {
		return nil, err
	}
	sm, err := s.b.UpdateStateMachine(ctx, in.StateMachineArn, def)
	if err != nil {
		return nil, err
	}
	return struct {
		UpdateDate epoch `json:"updateDate"`
	}{at(sm.UpdatedAt)}, nil
}

func (s *Server) describeStateMachine(ctx context.Context, body []byte) (any, error) {
	var in struct {
		StateMachineArn string `json:"stateMachineArn"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	if err := checkARN("stateMachineArn", in.StateMachineArn, "stateMachine"); err != nil {
		return nil, err
	}
	sm, err := s.b.DescribeStateMachine(ctx, in.StateMachineArn)
	if err != nil {
		return nil, err
	}
	return struct {
		StateMachineArn      string               `json:"stateMachineArn"`
		Name                 string               `json:"name"`
		Status               string               `json:"status,omitempty"`
		Definition           string               `json:"definition"`
		RoleArn              string               `json:"roleArn"`
		Type                 string               `json:"type"`
		CreationDate         epoch                `json:"creationDate"`
		LoggingConfiguration loggingConfiguration `json:"loggingConfiguration"`
		TracingConfiguration tracingConfiguration `json:"tracingConfiguration"`
	}{sm.ARN, sm.Name, orDefault(sm.Status, "ACTIVE"), sm.Definition, sm.RoleARN, orDefault(sm.Type, "STANDARD"),
		at(sm.CreatedAt), loggingConfiguration{Level: "OFF"}, tracingConfiguration{}}, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

type stateMachineListItem struct {
	StateMachineArn string `json:"stateMachineArn"`
	Name            string `json:"name"`
	Type            string `json:"type"`
	CreationDate    epoch  `json:"creationDate"`
}

func (s *Server) listStateMachines(ctx context.Context, body []byte) (any, error) {
	var in struct {
		MaxResults int    `json:"maxResults"`
		NextToken  string `json:"nextToken"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	max, err := maxResults(in.MaxResults)
	if err != nil {
		return nil, err
	}
	all, err := s.b.ListStateMachines(ctx)
	if err != nil {
		return nil, err
	}
	items, next, err := page(all, func(sm flow.StateMachine) string { return sm.Name }, "stateMachines", "", in.NextToken, max)
	if err != nil {
		return nil, err
	}
	out := struct {
		StateMachines []stateMachineListItem `json:"stateMachines"`
		NextToken     *string                `json:"nextToken,omitempty"`
	}{StateMachines: []stateMachineListItem{}, NextToken: strp(next)}
	for _, sm := range items {
		out.StateMachines = append(out.StateMachines, stateMachineListItem{sm.ARN, sm.Name, orDefault(sm.Type, "STANDARD"), at(sm.CreatedAt)})
	}
	return out, nil
}

func (s *Server) deleteStateMachine(ctx context.Context, body []byte) (any, error) {
	var in struct {
		StateMachineArn string `json:"stateMachineArn"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	if err := checkARN("stateMachineArn", in.StateMachineArn, "stateMachine"); err != nil {
		return nil, err
	}
	if err := s.b.DeleteStateMachine(ctx, in.StateMachineArn); err != nil && !isType(err, "StateMachineDoesNotExist") {
		// Deleting what is already gone succeeds, as on AWS.
		return nil, err
	}
	return struct{}{}, nil
}

// isType reports whether err is an engine error of type typ.
func isType(err error, typ string) bool {
	var ae *flow.APIError
	return errors.As(err, &ae) && ae.Type == typ
}

type diagnostic struct {
	Severity string `json:"severity"`
	Code     string `json:"code"`
	Message  string `json:"message"`
	Location string `json:"location,omitempty"`
}

func (s *Server) validateDefinition(ctx context.Context, body []byte) (any, error) {
	var in struct {
		Definition string `json:"definition"`
		Type       string `json:"type"`
		Severity   string `json:"severity"`
		MaxResults int    `json:"maxResults"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	if err := required("definition", in.Definition); err != nil {
		return nil, err
	}
	if in.Type != "" && in.Type != "STANDARD" && in.Type != "EXPRESS" {
		return nil, checkType(in.Type)
	}
	switch in.Severity {
	case "":
		in.Severity = "ERROR"
	case "ERROR", "WARNING":
	default:
		return nil, validation("1 validation error detected: Value '%s' at 'severity' failed to satisfy constraint: Member must satisfy enum value set: [ERROR, WARNING]", in.Severity)
	}
	if in.MaxResults < 0 || in.MaxResults > 100 {
		return nil, validation("1 validation error detected: Value '%d' at 'maxResults' failed to satisfy constraint: Member must have value between 0 and 100", in.MaxResults)
	}
	if in.MaxResults == 0 {
		in.MaxResults = 100
	}
	validate := s.o.Validate
	if validate == nil {
		validate = defaultValidate
	}
	if validate == nil {
		return nil, &Error{Status: 500, Type: "InternalServerError", Message: "no definition validator is configured"}
	}
	diags := validate([]byte(in.Definition))
	out := struct {
		Result      string       `json:"result"`
		Diagnostics []diagnostic `json:"diagnostics"`
		Truncated   bool         `json:"truncated"`
	}{Result: "OK", Diagnostics: []diagnostic{}}
	for _, d := range diags {
		sev := strings.ToUpper(orDefault(d.Severity, "ERROR"))
		if sev == "ERROR" {
			out.Result = "FAIL"
		}
		if sev != "ERROR" && in.Severity == "ERROR" {
			continue
		}
		if len(out.Diagnostics) == in.MaxResults {
			out.Truncated = true
			continue
		}
		out.Diagnostics = append(out.Diagnostics, diagnostic{sev, d.Code, d.Message, d.Location})
	}
	return out, nil
}

// checkDefinition refuses, with InvalidDefinition, a definition that Options.Validate (when set)
// reports an ERROR for; without it the engine's own check at load time applies.
func (s *Server) checkDefinition(def string) error {
	if s.o.Validate == nil {
		return nil
	}
	return flow.DefinitionError(s.o.Validate([]byte(def)))
}
