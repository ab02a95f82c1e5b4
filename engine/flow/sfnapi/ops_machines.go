package sfnapi

import (
	"context"
	"errors"
	"strings"

	"jobdesk/engine/flow"
)

// operations maps each X-Amz-Target operation name to its handler, each made by operation from
// the function that answers the decoded request.
var operations = map[string]handler{
	"CreateStateMachine":             operation((*Server).createStateMachine),
	"UpdateStateMachine":             operation((*Server).updateStateMachine),
	"DescribeStateMachine":           operation((*Server).describeStateMachine),
	"ListStateMachines":              operation((*Server).listStateMachines),
	"DeleteStateMachine":             operation((*Server).deleteStateMachine),
	"ValidateStateMachineDefinition": operation((*Server).validateDefinition),
	"TestState":                      operation((*Server).testState),
	"StartExecution":                 operation((*Server).startExecution),
	"StartSyncExecution":             operation((*Server).startSyncExecution),
	"DescribeExecution":              operation((*Server).describeExecution),
	"StopExecution":                  operation((*Server).stopExecution),
	"RedriveExecution":               operation((*Server).redriveExecution),
	"ListExecutions":                 operation((*Server).listExecutions),
	"GetExecutionHistory":            operation((*Server).getExecutionHistory),
	"DescribeMapRun":                 operation((*Server).describeMapRun),
	"ListMapRuns":                    operation((*Server).listMapRuns),
	"CreateActivity":                 operation((*Server).createActivity),
	"DeleteActivity":                 operation((*Server).deleteActivity),
	"GetActivityTask":                operation((*Server).getActivityTask),
	"SendTaskSuccess":                operation((*Server).sendTaskSuccess),
	"SendTaskFailure":                operation((*Server).sendTaskFailure),
	"SendTaskHeartbeat":              operation((*Server).sendTaskHeartbeat),
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

type createStateMachineRequest struct {
	Name       string `json:"name"`
	Definition string `json:"definition"`
	RoleArn    string `json:"roleArn"`
	Type       string `json:"type"`
}

func (s *Server) createStateMachine(ctx context.Context, in *createStateMachineRequest) (any, error) {
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

type updateStateMachineRequest struct {
	StateMachineArn string `json:"stateMachineArn" arn:"stateMachine"`
	Definition      string `json:"definition"`
	RoleArn         string `json:"roleArn"`
}

func (s *Server) updateStateMachine(ctx context.Context, in *updateStateMachineRequest) (any, error) {
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

type describeStateMachineRequest struct {
	StateMachineArn string `json:"stateMachineArn" arn:"stateMachine"`
}

func (s *Server) describeStateMachine(ctx context.Context, in *describeStateMachineRequest) (any, error) {
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

type listStateMachinesRequest struct {
	MaxResults int    `json:"maxResults"`
	NextToken  string `json:"nextToken"`
}

func (s *Server) listStateMachines(ctx context.Context, in *listStateMachinesRequest) (any, error) {
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

type deleteStateMachineRequest struct {
	StateMachineArn string `json:"stateMachineArn" arn:"stateMachine"`
}

func (s *Server) deleteStateMachine(ctx context.Context, in *deleteStateMachineRequest) (any, error) {
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

type validateDefinitionRequest struct {
	Definition string `json:"definition"`
	Type       string `json:"type"`
	Severity   string `json:"severity"`
	MaxResults int    `json:"maxResults"`
}

func (s *Server) validateDefinition(ctx context.Context, in *validateDefinitionRequest) (any, error) {
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
