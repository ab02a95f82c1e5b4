package asl

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"
)

// Machine is a parsed state machine (or a Parallel branch, or a Map's ItemProcessor).
type Machine struct {
	Comment        string
	StartAt        string
	TimeoutSeconds float64
	States         map[string]*State
	Order          []string // state names in definition order
}

// State is one parsed state. Fields not used by its Type are zero.
type State struct {
	Name, Type, Comment string
	Next                string
	End                 bool

	InputPath, OutputPath string // "" means null (discard); absent means "$"
	ResultPath            string // "" means null (keep the input)
	Parameters            any
	HasParameters         bool
	ResultSelector        any
	HasResultSelector     bool
	Result                any
	HasResult             bool
	Assign                any // the Assign field (nil when absent): variables the state sets

	// QueryLanguage is the state's query language (its own or the state machine's); JSONata
	// says it is JSONata, and then the J fields below hold its compiled fields.
	QueryLanguage string
	JSONata       bool
	J             *JFields

	// Task
	Resource             string
	TimeoutSeconds       float64
	TimeoutSecondsPath   string
	HeartbeatSeconds     float64
	HeartbeatSecondsPath string
	Retry                []Retrier
	Catch                []Catcher

	// Choice
	Choices []Rule
	Default string

	// Wait
	Seconds       float64
	HasSeconds    bool
	Timestamp     string
	SecondsPath   string
	TimestampPath string

	// Fail
	Error, Cause, ErrorPath, CausePath string

	// Parallel
	Branches []*Machine

	// Map
	Processor                      *Machine
	ProcessorMode                  string // INLINE or DISTRIBUTED
	ItemsPath                      string
	ItemSelector                   any
	HasItemSelector                bool
	MaxConcurrency                 int
	MaxConcurrencyPath             string
	ToleratedFailurePercentage     float64
	ToleratedFailureCount          int64
	HasTolerance                   bool
	ToleratedFailureCountPath      string
	ToleratedFailurePercentagePath string
	ItemReader                     *ItemReader
	ItemBatcher                    *ItemBatcher
	ResultWriter                   *ResultWriter
	Label                          string
}

// JFields are a JSONata state's compiled fields; an absent field is a zero JTemplate.
type JFields struct {
	Arguments, Output, Assign, Items, ItemSelector                    JTemplate
	TimeoutSeconds, HeartbeatSeconds                                  JTemplate
	MaxConcurrency, ToleratedFailureCount, ToleratedFailurePercentage JTemplate
	Seconds, Timestamp, Error, Cause                                  JTemplate
}

// Retrier is one entry of a Retry field.
type Retrier struct {
	ErrorEquals     []string
	IntervalSeconds float64
	MaxAttempts     int
	BackoffRate     float64
	MaxDelaySeconds float64
	JitterStrategy  string // FULL or NONE
}

// Catcher is one entry of a Catch field.
type Catcher struct {
	ErrorEquals []string
	Next        string
	ResultPath  string // "" means null
	Assign      any    // variables set when the catcher is taken (nil when absent)
	// In a JSONata state: the catcher's Output and Assign.
	JOutput, JAssign JTemplate
}

// ItemReader reads a Map's items from a file (a local path in Parameters.Key, with
// Parameters.Bucket as an optional folder) instead of from the state input.
type ItemReader struct {
	Resource          string
	InputType         string // CSV or JSON
	CSVHeaderLocation string // FIRST_ROW or GIVEN
	CSVHeaders        []string
	MaxItems          int
	Parameters        any
}

// ItemBatcher groups a Map's items into batches {"Items": [...], "BatchInput": ...}.
type ItemBatcher struct {
	MaxItemsPerBatch int
	MaxInputBytes    int
	BatchInput       any
}

// ResultWriter writes a Map's results to files instead of returning them.
type ResultWriter struct {
	Resource   string
	Parameters any
}

// Rule is one Choice rule (or a nested rule of And/Or/Not).
type Rule struct {
	Variable string
	Op       string // StringEquals, NumericLessThanPath, IsPresent, …
	Value    any
	And, Or  []Rule
	Not      *Rule
	Next     string
	Assign   any // a top-level rule's variables, set when it matches (nil when absent)
	// In a JSONata state: the rule's Condition, Output and Assign.
	Condition, JOutput, JAssign JTemplate
	valuePath                   *Path
	variable                    *Path
}

// Diagnostic is one problem found while parsing a definition.
type Diagnostic struct {
	Code, Message, Location, Severity string
}

var stateTypes = map[string]bool{"Task": true, "Pass": true, "Choice": true, "Wait": true, "Succeed": true,
	"Fail": true, "Parallel": true, "Map": true}

var allowedFields = map[string][]string{
	"common":   {"Type", "Comment", "QueryLanguage"},
	"Task":     {"Assign", "Next", "End", "InputPath", "OutputPath", "ResultPath", "Parameters", "ResultSelector", "Resource", "TimeoutSeconds", "TimeoutSecondsPath", "HeartbeatSeconds", "HeartbeatSecondsPath", "Retry", "Catch", "Credentials"},
	"Pass":     {"Assign", "Next", "End", "InputPath", "OutputPath", "ResultPath", "Parameters", "Result"},
	"Choice":   {"Assign", "InputPath", "OutputPath", "Choices", "Default"},
	"Wait":     {"Assign", "Next", "End", "InputPath", "OutputPath", "Seconds", "Timestamp", "SecondsPath", "TimestampPath"},
	"Succeed":  {"InputPath", "OutputPath"},
	"Fail":     {"Error", "Cause", "ErrorPath", "CausePath"},
	"Parallel": {"Assign", "Next", "End", "InputPath", "OutputPath", "ResultPath", "Parameters", "ResultSelector", "Retry", "Catch", "Branches"},
	"Map": {"Assign", "Next", "End", "InputPath", "OutputPath", "ResultPath", "Parameters", "ResultSelector", "Retry", "Catch", "Iterator", "ItemProcessor",
		"ItemsPath", "ItemSelector", "MaxConcurrency", "MaxConcurrencyPath", "ToleratedFailurePercentage", "ToleratedFailurePercentagePath",
		"ToleratedFailureCount", "ToleratedFailureCountPath", "ItemReader", "ItemBatcher", "ResultWriter", "Label"},
}

// jsonataFields are the fields of each state type when its query language is JSONata.
var jsonataFields = map[string][]string{
	"common":   {"Type", "Comment", "QueryLanguage"},
	"Task":     {"Next", "End", "Arguments", "Output", "Assign", "Resource", "TimeoutSeconds", "HeartbeatSeconds", "Retry", "Catch", "Credentials"},
	"Pass":     {"Next", "End", "Output", "Assign"},
	"Choice":   {"Choices", "Default", "Output", "Assign"},
	"Wait":     {"Next", "End", "Seconds", "Timestamp", "Output", "Assign"},
	"Succeed":  {"Output"},
	"Fail":     {"Error", "Cause"},
	"Parallel": {"Next", "End", "Arguments", "Output", "Assign", "Retry", "Catch", "Branches"},
	"Map": {"Next", "End", "Output", "Assign", "Retry", "Catch", "Iterator", "ItemProcessor", "Items", "ItemSelector", "MaxConcurrency",
		"ToleratedFailurePercentage", "ToleratedFailureCount", "ItemReader", "ItemBatcher", "ResultWriter", "Label"},
}

var operators = map[string]string{ // operator → value kind
	"StringEquals": "string", "StringLessThan": "string", "StringGreaterThan": "string", "StringLessThanEquals": "string",
	"StringGreaterThanEquals": "string", "StringMatches": "string",
	"NumericEquals": "number", "NumericLessThan": "number", "NumericGreaterThan": "number", "NumericLessThanEquals": "number",
	"NumericGreaterThanEquals": "number",
	"BooleanEquals":            "bool",
	"TimestampEquals":          "timestamp", "TimestampLessThan": "timestamp", "TimestampGreaterThan": "timestamp",
	"TimestampLessThanEquals": "timestamp", "TimestampGreaterThanEquals": "timestamp",
	"IsNull": "bool", "IsPresent": "bool", "IsNumeric": "bool", "IsString": "bool", "IsBoolean": "bool", "IsTimestamp": "bool",
}

// parser collects diagnostics while building a Machine.
type parser struct {
	diags    []Diagnostic
	resolver func(string) error
	lang     string // the state machine's query language: JSONPath (the default) or JSONata
	inState  string // the state being parsed, named in its diagnostics
}

func (p *parser) errf(loc, code, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if p.inState != "" && !strings.HasPrefix(msg, "state ") {
		msg = fmt.Sprintf("state %q: %s", p.inState, msg) // every diagnostic names its state
	}
	p.diags = append(p.diags, Diagnostic{Code: code, Message: msg, Location: loc, Severity: "ERROR"})
}

func (p *parser) warnf(loc, code, format string, args ...any) {
	p.diags = append(p.diags, Diagnostic{Code: code, Message: fmt.Sprintf(format, args...), Location: loc, Severity: "WARNING"})
}

// Parse parses and validates a definition. resolver, when not nil, is asked about every Task
// Resource and returns an error for one that cannot run. The Machine is nil when any diagnostic
// is an ERROR.
func Parse(definition []byte, resolver func(resource string) error) (m *Machine, diags []Diagnostic) {
	defer func() {
		if r := recover(); r != nil {
			m = nil
			diags = append(diags, Diagnostic{Code: "SCHEMA_VALIDATION_FAILED", Message: fmt.Sprintf("the definition could not be read: %v", r), Location: "/", Severity: "ERROR"})
		}
	}()
	var raw any
	dec := json.NewDecoder(strings.NewReader(string(definition)))
	if err := dec.Decode(&raw); err != nil {
		return nil, []Diagnostic{{Code: "INVALID_JSON_DESCRIPTION", Message: "the definition is not valid JSON: " + err.Error(), Location: "/", Severity: "ERROR"}}
	}
	obj, ok := raw.(map[string]any)
	if !ok {
		return nil, []Diagnostic{{Code: "SCHEMA_VALIDATION_FAILED", Message: "the definition must be a JSON object", Location: "/", Severity: "ERROR"}}
	}
	p := &parser{resolver: resolver, lang: JSONPath}
	if v, ok := obj["QueryLanguage"]; ok {
		if ql, _ := v.(string); ql == JSONPath || ql == JSONata {
			p.lang = ql
		} else {
			return nil, []Diagnostic{{Code: "SCHEMA_VALIDATION_FAILED", Message: "The field 'QueryLanguage' should have one of these values: [JSONPath, JSONata]", Location: "/QueryLanguage", Severity: "ERROR"}}
		}
	}
	m = p.machine(obj, "")
	for _, d := range p.diags {
		if d.Severity == "ERROR" {
			return nil, p.diags
		}
	}
	return m, p.diags
}

func (p *parser) machine(obj map[string]any, loc string) *Machine {
	m := &Machine{States: map[string]*State{}}
	for k := range obj {
		switch k {
		case "Comment", "StartAt", "States", "TimeoutSeconds", "Version", "QueryLanguage", "ProcessorConfig":
		default:
			p.errf(loc+"/"+k, "SCHEMA_VALIDATION_FAILED", "field %q is not allowed here", k)
		}
	}
	m.Comment, _ = obj["Comment"].(string)
	start, ok := obj["StartAt"].(string)
	if !ok || start == "" {
		p.errf(loc+"/StartAt", "SCHEMA_VALIDATION_FAILED", "StartAt is required and must be a state name")
	}
	m.StartAt = start
	if v, ok := obj["TimeoutSeconds"]; ok {
		m.TimeoutSeconds = p.posNumber(v, loc+"/TimeoutSeconds", true)
	}
	states, ok := obj["States"].(map[string]any)
	if !ok || len(states) == 0 {
		p.errf(loc+"/States", "SCHEMA_VALIDATION_FAILED", "States is required and must name at least one state")
		return m
	}
	for name := range states {
		m.Order = append(m.Order, name)
	}
	sort.Strings(m.Order)
	for _, name := range m.Order {
		sloc := loc + "/States/" + name
		if len(name) > 80 {
			p.errf(sloc, "SCHEMA_VALIDATION_FAILED", "state name %q is longer than 80 characters", name)
		}
		so, ok := states[name].(map[string]any)
		if !ok {
			p.errf(sloc, "SCHEMA_VALIDATION_FAILED", "state %q must be an object", name)
			continue
		}
		m.States[name] = p.state(name, so, sloc)
	}
	if start != "" && m.States[start] == nil && states[start] == nil {
		p.errf(loc+"/StartAt", "MISSING_TRANSITION_TARGET", "StartAt names %q, which is not a state", start)
	}
	// transitions and reachability
	for _, name := range m.Order {
		s := m.States[name]
		if s == nil {
			continue
		}
		sloc := loc + "/States/" + name
		check := func(target, field string) {
			if target != "" && states[target] == nil {
				p.errf(sloc+"/"+field, "MISSING_TRANSITION_TARGET", "state %q: %s names %q, which is not a state", name, field, target)
			}
		}
		check(s.Next, "Next")
		check(s.Default, "Default")
		for i, c := range s.Choices {
			check(c.Next, fmt.Sprintf("Choices/%d/Next", i))
		}
		for i, c := range s.Catch {
			check(c.Next, fmt.Sprintf("Catch/%d/Next", i))
		}
	}
	if m.States[start] != nil {
		seen := map[string]bool{}
		var walk func(string)
		walk = func(n string) {
			s := m.States[n]
			if s == nil || seen[n] {
				return
			}
			seen[n] = true
			walk(s.Next)
			walk(s.Default)
			for _, c := range s.Choices {
				walk(c.Next)
			}
			for _, c := range s.Catch {
				walk(c.Next)
			}
		}
		walk(start)
		for _, n := range m.Order {
			if !seen[n] && m.States[n] != nil {
				p.errf(loc+"/States/"+n, "UNREACHABLE_STATE", "state %q can never be reached", n)
			}
		}
	}
	return m
}

func (p *parser) posNumber(v any, loc string, integer bool) float64 {
	f, ok := v.(float64)
	if !ok || f < 0 || (integer && f != math.Trunc(f)) {
		kind := "a non-negative number"
		if integer {
			kind = "a non-negative integer"
		}
		p.errf(loc, "SCHEMA_VALIDATION_FAILED", "%s must be %s", lastPart(loc), kind)
		return 0
	}
	return f
}

func lastPart(loc string) string { return loc[strings.LastIndex(loc, "/")+1:] }

// resource reads a Task state's Resource, which must be given and, with a resolver, known.
func (p *parser) resource(obj map[string]any, loc, name string) string {
	r := p.str(obj, "Resource", loc)
	if r == "" {
		p.errf(loc+"/Resource", "SCHEMA_VALIDATION_FAILED", "state %q: a Task needs a Resource", name)
	} else if p.resolver != nil {
		if err := p.resolver(r); err != nil {
			p.errf(loc+"/Resource", "INVALID_RESOURCE", "state %q: %v", name, err)
		}
	}
	return r
}

// branches reads a Parallel state's Branches: a non-empty array of state machines.
func (p *parser) branches(obj map[string]any, loc, name string) []*Machine {
	list, ok := obj["Branches"].([]any)
	if !ok || len(list) == 0 {
		p.errf(loc+"/Branches", "SCHEMA_VALIDATION_FAILED", "state %q: Branches must be a non-empty array", name)
	}
	var out []*Machine
	for i, b := range list {
		bo, ok := b.(map[string]any)
		if !ok {
			p.errf(fmt.Sprintf("%s/Branches/%d", loc, i), "SCHEMA_VALIDATION_FAILED", "a branch must be an object")
			continue
		}
		out = append(out, p.machine(bo, fmt.Sprintf("%s/Branches/%d", loc, i)))
	}
	return out
}

func (p *parser) str(obj map[string]any, key, loc string) string {
	v, ok := obj[key]
	if !ok {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		p.errf(loc+"/"+key, "SCHEMA_VALIDATION_FAILED", "%s must be a string", key)
	}
	return s
}

func (p *parser) path(obj map[string]any, key, loc string, reference, allowNull bool) string {
	v, present := obj[key]
	if !present {
		return "$"
	}
	if v == nil {
		if !allowNull {
			p.errf(loc+"/"+key, "SCHEMA_VALIDATION_FAILED", "%s must not be null", key)
		}
		return ""
	}
	s, ok := v.(string)
	if !ok {
		p.errf(loc+"/"+key, "SCHEMA_VALIDATION_FAILED", "%s must be a JSONPath string or null", key)
		return "$"
	}
	if pp := p.checkPath(s, loc+"/"+key, reference); pp != nil && pp.variable != "" && key == "ResultPath" {
		p.errf(loc+"/"+key, "INVALID_REFERENCE_PATH", "ResultPath: %q names a variable; a result can only be placed in the input", s)
	}
	return s
}

func (p *parser) checkPath(s, loc string, reference bool) *Path {
	pp, err := ParsePath(s)
	if err != nil {
		p.errf(loc, "INVALID_JSON_PATH", "%s: %v", lastPart(loc), err)
		return nil
	}
	if reference && !pp.Reference() {
		p.errf(loc, "INVALID_REFERENCE_PATH", "%s: %q must be a reference path (no wildcards, slices or ..)", lastPart(loc), s)
	}
	return pp
}

// exprField reads a field that holds a path or an intrinsic function (ErrorPath, CausePath).
func (p *parser) exprField(obj map[string]any, key, loc string) string {
	v, ok := obj[key]
	if !ok {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		p.errf(loc+"/"+key, "SCHEMA_VALIDATION_FAILED", "%s must be a path or an intrinsic function", key)
		return ""
	}
	p.checkTemplate(map[string]any{key + ".$": s}, loc)
	return s
}

// checkTemplate validates the ".$" fields of a Parameters-like template.
func (p *parser) checkTemplate(t any, loc string) {
	switch v := t.(type) {
	case map[string]any:
		for k, x := range v {
			if strings.HasSuffix(k, ".$") {
				s, ok := x.(string)
				if !ok {
					p.errf(loc+"/"+k, "SCHEMA_VALIDATION_FAILED", "field %q ends in .$ so its value must be a path or intrinsic function", k)
					continue
				}
				s = strings.TrimSpace(s)
				switch {
				case strings.HasPrefix(s, "$"):
					p.checkPath(s, loc+"/"+k, false)
				case strings.HasPrefix(s, "States."):
					if _, err := ParseIntrinsic(s); err != nil {
						p.errf(loc+"/"+k, "INVALID_INTRINSIC_FUNCTION", "%v", err)
					}
				default:
					p.errf(loc+"/"+k, "INVALID_JSON_PATH", "field %q: %q is neither a JSONPath nor an intrinsic function", k, s)
				}
				continue
			}
			p.checkTemplate(x, loc+"/"+k)
		}
	case []any:
		for i, x := range v {
			p.checkTemplate(x, fmt.Sprintf("%s/%d", loc, i))
		}
	}
}

func (p *parser) state(name string, obj map[string]any, loc string) *State {
	s := &State{Name: name}
	p.inState = name
	defer func() { p.inState = "" }()
	typ, _ := obj["Type"].(string)
	if !stateTypes[typ] {
		p.errf(loc+"/Type", "SCHEMA_VALIDATION_FAILED", "state %q: Type %q is not a state type (Task, Pass, Choice, Wait, Succeed, Fail, Parallel, Map)", name, obj["Type"])
		return nil
	}
	s.Type = typ
	s.QueryLanguage = p.lang
	if v, ok := obj["QueryLanguage"]; ok {
		switch ql, _ := v.(string); {
		case ql == JSONPath && p.lang == JSONata:
			p.errf(loc+"/QueryLanguage", "SCHEMA_VALIDATION_FAILED", "'QueryLanguage' can not be 'JSONPath' if set to 'JSONata' for whole state machine")
		case ql == JSONPath || ql == JSONata:
			s.QueryLanguage = ql
		default:
			p.errf(loc+"/QueryLanguage", "SCHEMA_VALIDATION_FAILED", "The field 'QueryLanguage' should have one of these values: [JSONPath, JSONata]")
		}
	}
	s.JSONata = s.QueryLanguage == JSONata
	fields := allowedFields
	if s.JSONata {
		fields = jsonataFields
	}
	allowed := map[string]bool{}
	for _, f := range fields["common"] {
		allowed[f] = true
	}
	for _, f := range fields[typ] {
		allowed[f] = true
	}
	for k := range obj {
		if !allowed[k] {
			if s.JSONata && slices.Contains(allowedFields[typ], k) {
				p.errf(loc+"/"+k, "SCHEMA_VALIDATION_FAILED", "state %q: the field '%s' is not supported when the query language is JSONata (use Arguments, Output and Assign)", name, k)
				continue
			}
			if !s.JSONata && slices.Contains(jsonataFields[typ], k) {
				p.errf(loc+"/"+k, "SCHEMA_VALIDATION_FAILED", "state %q: the field '%s' is only supported when the query language is JSONata", name, k)
				continue
			}
			p.errf(loc+"/"+k, "SCHEMA_VALIDATION_FAILED", "state %q: field %s is not allowed in a %s state", name, k, typ)
		}
	}
	s.Comment = p.str(obj, "Comment", loc)
	s.Next = p.str(obj, "Next", loc)
	if e, ok := obj["End"]; ok {
		b, ok := e.(bool)
		if !ok {
			p.errf(loc+"/End", "SCHEMA_VALIDATION_FAILED", "End must be true or false")
		}
		s.End = b
	}
	if s.JSONata {
		s.InputPath, s.OutputPath, s.ResultPath = "$", "$", "$"
		p.jsonataState(s, obj, loc)
		return s
	}
	switch typ {
	case "Task", "Pass", "Wait", "Parallel", "Map":
		if s.End && s.Next != "" {
			p.errf(loc+"/Next", "SCHEMA_VALIDATION_FAILED", "state %q has both Next and End", name)
		}
		if !s.End && s.Next == "" {
			p.errf(loc+"/Next", "SCHEMA_VALIDATION_FAILED", "state %q needs Next or \"End\": true", name)
		}
	}
	if typ != "Fail" {
		s.InputPath = p.path(obj, "InputPath", loc, false, true)
		s.OutputPath = p.path(obj, "OutputPath", loc, false, true)
	}
	s.ResultPath = p.path(obj, "ResultPath", loc, true, true)
	if v, ok := obj["Parameters"]; ok {
		s.Parameters, s.HasParameters = v, true
		p.checkTemplate(v, loc+"/Parameters")
	}
	if v, ok := obj["ResultSelector"]; ok {
		if _, isObj := v.(map[string]any); !isObj {
			p.errf(loc+"/ResultSelector", "SCHEMA_VALIDATION_FAILED", "ResultSelector must be an object")
		}
		s.ResultSelector, s.HasResultSelector = v, true
		p.checkTemplate(v, loc+"/ResultSelector")
	}
	if v, ok := obj["Result"]; ok {
		s.Result, s.HasResult = v, true
	}
	if v, ok := obj["Assign"]; ok {
		s.Assign = p.assign(v, loc+"/Assign")
	}
	s.Retry = p.retriers(obj["Retry"], loc+"/Retry")
	s.Catch = p.catchers(obj["Catch"], loc+"/Catch")
	switch typ {
	case "Task":
		s.Resource = p.resource(obj, loc, name)
		if v, ok := obj["TimeoutSeconds"]; ok {
			s.TimeoutSeconds = p.posNumber(v, loc+"/TimeoutSeconds", true)
			if s.TimeoutSeconds == 0 {
				p.errf(loc+"/TimeoutSeconds", "SCHEMA_VALIDATION_FAILED", "TimeoutSeconds must be a positive integer")
			}
		}
		if v, ok := obj["HeartbeatSeconds"]; ok {
			s.HeartbeatSeconds = p.posNumber(v, loc+"/HeartbeatSeconds", true)
			if s.HeartbeatSeconds == 0 {
				p.errf(loc+"/HeartbeatSeconds", "SCHEMA_VALIDATION_FAILED", "HeartbeatSeconds must be a positive integer")
			}
		}
		if s.HeartbeatSeconds > 0 && s.TimeoutSeconds > 0 && s.HeartbeatSeconds >= s.TimeoutSeconds {
			p.errf(loc+"/HeartbeatSeconds", "SCHEMA_VALIDATION_FAILED", "HeartbeatSeconds must be smaller than TimeoutSeconds")
		}
		if _, ok := obj["TimeoutSecondsPath"]; ok {
			s.TimeoutSecondsPath = p.path(obj, "TimeoutSecondsPath", loc, true, false)
		}
		if _, ok := obj["HeartbeatSecondsPath"]; ok {
			s.HeartbeatSecondsPath = p.path(obj, "HeartbeatSecondsPath", loc, true, false)
		}
	case "Choice":
		list, ok := obj["Choices"].([]any)
		if !ok || len(list) == 0 {
			p.errf(loc+"/Choices", "SCHEMA_VALIDATION_FAILED", "state %q: Choices must be a non-empty array", name)
		}
		for i, c := range list {
			r := p.rule(c, fmt.Sprintf("%s/Choices/%d", loc, i), true)
			s.Choices = append(s.Choices, r)
		}
		s.Default = p.str(obj, "Default", loc)
	case "Wait":
		n := 0
		if v, ok := obj["Seconds"]; ok {
			s.Seconds, s.HasSeconds = p.posNumber(v, loc+"/Seconds", true), true
			n++
		}
		if _, ok := obj["Timestamp"]; ok {
			s.Timestamp = p.str(obj, "Timestamp", loc)
			if _, ok := ParseTimestamp(s.Timestamp); !ok {
				p.errf(loc+"/Timestamp", "SCHEMA_VALIDATION_FAILED", "Timestamp %q is not an RFC 3339 timestamp", s.Timestamp)
			}
			n++
		}
		if _, ok := obj["SecondsPath"]; ok {
			s.SecondsPath = p.path(obj, "SecondsPath", loc, true, false)
			n++
		}
		if _, ok := obj["TimestampPath"]; ok {
			s.TimestampPath = p.path(obj, "TimestampPath", loc, true, false)
			n++
		}
		if n != 1 {
			p.errf(loc, "SCHEMA_VALIDATION_FAILED", "state %q: a Wait needs exactly one of Seconds, Timestamp, SecondsPath, TimestampPath", name)
		}
	case "Fail":
		s.Error = p.str(obj, "Error", loc)
		s.Cause = p.str(obj, "Cause", loc)
		s.ErrorPath = p.exprField(obj, "ErrorPath", loc)
		s.CausePath = p.exprField(obj, "CausePath", loc)
	case "Parallel":
		s.Branches = p.branches(obj, loc, name)
	case "Map":
		p.mapState(s, obj, loc)
	}
	return s
}

func (p *parser) mapState(s *State, obj map[string]any, loc string) {
	procKey := "ItemProcessor"
	proc, ok := obj["ItemProcessor"].(map[string]any)
	if !ok {
		procKey = "Iterator"
		proc, ok = obj["Iterator"].(map[string]any)
	}
	if !ok {
		p.errf(loc+"/ItemProcessor", "SCHEMA_VALIDATION_FAILED", "state %q: a Map needs an ItemProcessor", s.Name)
		return
	}
	s.ProcessorMode = "INLINE"
	if cfg, ok := proc["ProcessorConfig"].(map[string]any); ok {
		if mode, ok := cfg["Mode"].(string); ok {
			if mode != "INLINE" && mode != "DISTRIBUTED" {
				p.errf(loc+"/"+procKey+"/ProcessorConfig/Mode", "SCHEMA_VALIDATION_FAILED", "Mode must be INLINE or DISTRIBUTED")
			}
			s.ProcessorMode = mode
		}
	}
	s.Processor = p.machine(proc, loc+"/"+procKey)
	if _, ok := obj["ItemsPath"]; ok {
		s.ItemsPath = p.path(obj, "ItemsPath", loc, true, false)
	} else {
		s.ItemsPath = "$"
	}
	if v, ok := obj["ItemSelector"]; ok {
		s.ItemSelector, s.HasItemSelector = v, true
		p.checkTemplate(v, loc+"/ItemSelector")
	} else if s.HasParameters { // the older name of ItemSelector
		s.ItemSelector, s.HasItemSelector = s.Parameters, true
		s.Parameters, s.HasParameters = nil, false
	}
	if v, ok := obj["MaxConcurrency"]; ok {
		s.MaxConcurrency = int(p.posNumber(v, loc+"/MaxConcurrency", true))
	}
	if _, ok := obj["MaxConcurrencyPath"]; ok {
		s.MaxConcurrencyPath = p.path(obj, "MaxConcurrencyPath", loc, true, false)
	}
	if _, ok := obj["ToleratedFailureCountPath"]; ok {
		s.ToleratedFailureCountPath = p.path(obj, "ToleratedFailureCountPath", loc, true, false)
		s.HasTolerance = true
	}
	if _, ok := obj["ToleratedFailurePercentagePath"]; ok {
		s.ToleratedFailurePercentagePath = p.path(obj, "ToleratedFailurePercentagePath", loc, true, false)
		s.HasTolerance = true
	}
	if v, ok := obj["ToleratedFailurePercentage"]; ok {
		s.ToleratedFailurePercentage = p.posNumber(v, loc+"/ToleratedFailurePercentage", false)
		if s.ToleratedFailurePercentage > 100 {
			p.errf(loc+"/ToleratedFailurePercentage", "SCHEMA_VALIDATION_FAILED", "ToleratedFailurePercentage must be between 0 and 100")
		}
		s.HasTolerance = true
	}
	if v, ok := obj["ToleratedFailureCount"]; ok {
		s.ToleratedFailureCount = int64(p.posNumber(v, loc+"/ToleratedFailureCount", true))
		s.HasTolerance = true
	}
	if s.HasTolerance && s.ProcessorMode != "DISTRIBUTED" {
		p.errf(loc+"/ToleratedFailurePercentage", "SCHEMA_VALIDATION_FAILED", "tolerated failures are only allowed in a DISTRIBUTED Map")
	}
	s.Label = p.str(obj, "Label", loc)
	if v, ok := obj["ItemReader"].(map[string]any); ok {
		r := &ItemReader{InputType: "JSON", CSVHeaderLocation: "FIRST_ROW"}
		r.Resource, _ = v["Resource"].(string)
		r.Parameters = v["Parameters"]
		if cfg, ok := v["ReaderConfig"].(map[string]any); ok {
			if t, ok := cfg["InputType"].(string); ok {
				r.InputType = t
			}
			if t, ok := cfg["CSVHeaderLocation"].(string); ok {
				r.CSVHeaderLocation = t
			}
			if hs, ok := cfg["CSVHeaders"].([]any); ok {
				for _, h := range hs {
					hstr, _ := h.(string)
					r.CSVHeaders = append(r.CSVHeaders, hstr)
				}
			}
			if n, ok := cfg["MaxItems"].(float64); ok {
				r.MaxItems = int(n)
			}
		}
		switch r.InputType {
		case "CSV", "JSON":
		default:
			p.errf(loc+"/ItemReader/ReaderConfig/InputType", "SCHEMA_VALIDATION_FAILED", "InputType %q: JobDesk reads CSV and JSON files", r.InputType)
		}
		if r.InputType == "CSV" && r.CSVHeaderLocation == "GIVEN" && len(r.CSVHeaders) == 0 {
			p.errf(loc+"/ItemReader/ReaderConfig/CSVHeaders", "SCHEMA_VALIDATION_FAILED", "CSVHeaderLocation GIVEN needs CSVHeaders")
		}
		if r.Parameters == nil {
			p.errf(loc+"/ItemReader/Parameters", "SCHEMA_VALIDATION_FAILED", "ItemReader needs Parameters with the file's Key (and optional Bucket)")
		}
		p.checkTemplate(r.Parameters, loc+"/ItemReader/Parameters")
		s.ItemReader = r
	}
	if v, ok := obj["ItemBatcher"].(map[string]any); ok {
		b := &ItemBatcher{}
		if n, ok := v["MaxItemsPerBatch"].(float64); ok {
			b.MaxItemsPerBatch = int(n)
		}
		if n, ok := v["MaxInputBytesPerBatch"].(float64); ok {
			b.MaxInputBytes = int(n)
		}
		b.BatchInput = v["BatchInput"]
		if b.MaxItemsPerBatch <= 0 && b.MaxInputBytes <= 0 {
			p.errf(loc+"/ItemBatcher/MaxItemsPerBatch", "SCHEMA_VALIDATION_FAILED", "ItemBatcher needs MaxItemsPerBatch (a positive integer)")
		}
		s.ItemBatcher = b
	}
	if v, ok := obj["ResultWriter"].(map[string]any); ok {
		w := &ResultWriter{}
		w.Resource, _ = v["Resource"].(string)
		w.Parameters = v["Parameters"]
		p.checkTemplate(w.Parameters, loc+"/ResultWriter/Parameters")
		s.ResultWriter = w
	}
	if (s.ItemReader != nil || s.ItemBatcher != nil || s.ResultWriter != nil) && s.ProcessorMode != "DISTRIBUTED" {
		p.errf(loc+"/ItemReader", "SCHEMA_VALIDATION_FAILED", "ItemReader, ItemBatcher and ResultWriter are only allowed in a DISTRIBUTED Map")
	}
}

func (p *parser) errorEquals(v any, loc string) []string {
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		p.errf(loc, "SCHEMA_VALIDATION_FAILED", "ErrorEquals must be a non-empty array of error names")
		return nil
	}
	var out []string
	for i, e := range list {
		s, ok := e.(string)
		if !ok || s == "" {
			p.errf(fmt.Sprintf("%s/%d", loc, i), "SCHEMA_VALIDATION_FAILED", "an error name must be a non-empty string")
			continue
		}
		if s == "States.ALL" && len(list) > 1 {
			p.errf(fmt.Sprintf("%s/%d", loc, i), "SCHEMA_VALIDATION_FAILED", "States.ALL must appear alone in ErrorEquals")
		}
		out = append(out, s)
	}
	return out
}

// objects calls f with each element of v, the value of field (Retry, Catch): an array of
// objects, each given with its location and whether it is the array's last element. An
// absent field (nil) has none; what names an element in errors ("a retrier").
func (p *parser) objects(v any, loc, field, what string, f func(o map[string]any, l string, last bool)) {
	if v == nil {
		return
	}
	list, ok := v.([]any)
	if !ok {
		p.errf(loc, "SCHEMA_VALIDATION_FAILED", "%s must be an array", field)
		return
	}
	for i, x := range list {
		l := fmt.Sprintf("%s/%d", loc, i)
		o, ok := x.(map[string]any)
		if !ok {
			p.errf(l, "SCHEMA_VALIDATION_FAILED", "%s must be an object", what)
			continue
		}
		f(o, l, i == len(list)-1)
	}
}

// allLast reports a retrier or catcher (what) matching States.ALL that is not the last: the
// ones after it could never match.
func (p *parser) allLast(errorEquals []string, last bool, l, what string) {
	if !last && len(errorEquals) == 1 && errorEquals[0] == "States.ALL" {
		p.errf(l+"/ErrorEquals", "SCHEMA_VALIDATION_FAILED", "%s with States.ALL must be the last one", what)
	}
}

func (p *parser) retriers(v any, loc string) []Retrier {
	var out []Retrier
	p.objects(v, loc, "Retry", "a retrier", func(o map[string]any, l string, last bool) {
		r := Retrier{IntervalSeconds: 1, MaxAttempts: 3, BackoffRate: 2, JitterStrategy: "NONE"}
		r.ErrorEquals = p.errorEquals(o["ErrorEquals"], l+"/ErrorEquals")
		for k, f := range o {
			switch k {
			case "ErrorEquals", "Comment":
			case "IntervalSeconds":
				r.IntervalSeconds = p.posNumber(f, l+"/IntervalSeconds", true)
				if r.IntervalSeconds < 1 {
					p.errf(l+"/IntervalSeconds", "SCHEMA_VALIDATION_FAILED", "IntervalSeconds must be a positive integer")
				}
			case "MaxAttempts":
				r.MaxAttempts = int(p.posNumber(f, l+"/MaxAttempts", true))
			case "BackoffRate":
				r.BackoffRate = p.posNumber(f, l+"/BackoffRate", false)
				if r.BackoffRate < 1 {
					p.errf(l+"/BackoffRate", "SCHEMA_VALIDATION_FAILED", "BackoffRate must be 1.0 or more")
				}
			case "MaxDelaySeconds":
				r.MaxDelaySeconds = p.posNumber(f, l+"/MaxDelaySeconds", true)
			case "JitterStrategy":
				r.JitterStrategy, _ = f.(string)
				if r.JitterStrategy != "FULL" && r.JitterStrategy != "NONE" {
					p.errf(l+"/JitterStrategy", "SCHEMA_VALIDATION_FAILED", "JitterStrategy must be FULL or NONE")
				}
			default:
				p.errf(l+"/"+k, "SCHEMA_VALIDATION_FAILED", "field %s is not allowed in a retrier", k)
			}
		}
		p.allLast(r.ErrorEquals, last, l, "a retrier")
		out = append(out, r)
	})
	return out
}

// catcher reads what a catcher has in either query language: ErrorEquals and Next.
func (p *parser) catcher(o map[string]any, l string) Catcher {
	c := Catcher{ErrorEquals: p.errorEquals(o["ErrorEquals"], l+"/ErrorEquals")}
	c.Next, _ = o["Next"].(string)
	if c.Next == "" {
		p.errf(l+"/Next", "SCHEMA_VALIDATION_FAILED", "a catcher needs Next")
	}
	return c
}

func (p *parser) catchers(v any, loc string) []Catcher {
	var out []Catcher
	p.objects(v, loc, "Catch", "a catcher", func(o map[string]any, l string, last bool) {
		c := p.catcher(o, l)
		c.ResultPath = p.path(o, "ResultPath", l, true, true)
		if v, ok := o["Assign"]; ok {
			c.Assign = p.assign(v, l+"/Assign")
		}
		p.allLast(c.ErrorEquals, last, l, "a catcher")
		out = append(out, c)
	})
	return out
}

func (p *parser) rule(v any, loc string, top bool) Rule {
	o, ok := v.(map[string]any)
	if !ok {
		p.errf(loc, "SCHEMA_VALIDATION_FAILED", "a choice rule must be an object")
		return Rule{}
	}
	r := Rule{}
	if top {
		r.Next, _ = o["Next"].(string)
		if r.Next == "" {
			p.errf(loc+"/Next", "SCHEMA_VALIDATION_FAILED", "a top-level choice rule needs Next")
		}
	} else if _, ok := o["Next"]; ok {
		p.errf(loc+"/Next", "SCHEMA_VALIDATION_FAILED", "a nested choice rule must not have Next")
	}
	n := 0
	for k, x := range o {
		switch k {
		case "Next", "Comment", "Variable":
		case "Assign":
			if !top {
				p.errf(loc+"/Assign", "SCHEMA_VALIDATION_FAILED", "a nested choice rule must not have Assign")
			}
			r.Assign = p.assign(x, loc+"/Assign")
		case "And", "Or":
			n++
			list, ok := x.([]any)
			if !ok || len(list) == 0 {
				p.errf(loc+"/"+k, "SCHEMA_VALIDATION_FAILED", "%s must be a non-empty array of rules", k)
				continue
			}
			for i, y := range list {
				sub := p.rule(y, fmt.Sprintf("%s/%s/%d", loc, k, i), false)
				if k == "And" {
					r.And = append(r.And, sub)
				} else {
					r.Or = append(r.Or, sub)
				}
			}
		case "Not":
			n++
			sub := p.rule(x, loc+"/Not", false)
			r.Not = &sub
		default:
			op, isPath := strings.CutSuffix(k, "Path")
			kind, known := operators[op]
			if !known || (isPath && strings.HasPrefix(op, "Is")) {
				p.errf(loc+"/"+k, "SCHEMA_VALIDATION_FAILED", "%s is not a choice rule operator", k)
				continue
			}
			n++
			r.Op, r.Value = k, x
			switch {
			case isPath:
				s, ok := x.(string)
				if !ok {
					p.errf(loc+"/"+k, "SCHEMA_VALIDATION_FAILED", "%s needs a path", k)
					continue
				}
				r.valuePath = p.checkPath(s, loc+"/"+k, true)
			case kind == "string":
				if _, ok := x.(string); !ok {
					p.errf(loc+"/"+k, "SCHEMA_VALIDATION_FAILED", "%s needs a string", k)
				}
			case kind == "number":
				if _, ok := x.(float64); !ok {
					p.errf(loc+"/"+k, "SCHEMA_VALIDATION_FAILED", "%s needs a number", k)
				}
			case kind == "bool":
				if _, ok := x.(bool); !ok {
					p.errf(loc+"/"+k, "SCHEMA_VALIDATION_FAILED", "%s needs true or false", k)
				}
			case kind == "timestamp":
				s, _ := x.(string)
				if _, ok := ParseTimestamp(s); !ok {
					p.errf(loc+"/"+k, "SCHEMA_VALIDATION_FAILED", "%s needs an RFC 3339 timestamp", k)
				}
			}
		}
	}
	if n != 1 {
		p.errf(loc, "SCHEMA_VALIDATION_FAILED", "a choice rule needs exactly one comparison (or And, Or, Not)")
	}
	if r.Op != "" {
		vs, ok := o["Variable"].(string)
		if !ok {
			p.errf(loc+"/Variable", "SCHEMA_VALIDATION_FAILED", "a comparison needs Variable")
		} else {
			r.Variable = vs
			r.variable = p.checkPath(vs, loc+"/Variable", false)
		}
	}
	return r
}

// assign checks an Assign field: an object whose keys are variable names (ending in ".$" when
// the value is a path or an intrinsic function).
func (p *parser) assign(v any, loc string) any {
	o, ok := v.(map[string]any)
	if !ok {
		p.errf(loc, "SCHEMA_VALIDATION_FAILED", "Assign must be an object of variable names and values")
		return nil
	}
	for k := range o {
		name := strings.TrimSuffix(k, ".$")
		if !ValidVariableName(name) {
			p.errf(loc+"/"+k, "INVALID_VARIABLE_NAME", "state %q: %q is not a valid variable name (a letter or _ first, then letters, digits or _, at most 80 characters; \"states\" is reserved)", p.inState, name)
		}
	}
	p.checkTemplate(o, loc)
	return o
}

// ValidVariableName reports whether name may name a workflow variable.
func ValidVariableName(name string) bool {
	if name == "" || len(name) > 80 || name == "states" || !isNameStart(name[0]) {
		return false
	}
	for i := 1; i < len(name); i++ {
		c := name[i]
		if !isNameStart(c) && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// ParseTimestamp parses an RFC 3339 timestamp as Step Functions accepts it.
func ParseTimestamp(s string) (time.Time, bool) {
	if !strings.Contains(s, "T") {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, false
	}
	return t, true
}
