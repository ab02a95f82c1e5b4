package asl

import (
	"fmt"
	"strings"
)

// jsonataState parses the fields of a state whose query language is JSONata.
func (p *parser) jsonataState(s *State, obj map[string]any, loc string) {
	j := &JFields{}
	s.J = j
	name := s.Name
	switch s.Type {
	case "Task", "Pass", "Wait", "Parallel", "Map":
		if s.End && s.Next != "" {
			p.errf(loc+"/Next", "SCHEMA_VALIDATION_FAILED", "state %q has both Next and End", name)
		}
		if !s.End && s.Next == "" {
			p.errf(loc+"/Next", "SCHEMA_VALIDATION_FAILED", "state %q needs Next or \"End\": true", name)
		}
	}
	j.Arguments = p.jfield(obj, "Arguments", loc)
	j.Output = p.jfield(obj, "Output", loc)
	if v, ok := obj["Assign"]; ok {
		j.Assign = p.jassign(v, loc+"/Assign")
	}
	s.Retry = p.retriers(obj["Retry"], loc+"/Retry")
	s.Catch = p.jcatchers(obj["Catch"], loc+"/Catch")
	switch s.Type {
	case "Task":
		s.Resource = p.resource(obj, loc, name)
		s.TimeoutSeconds, j.TimeoutSeconds = p.jnumber(obj, "TimeoutSeconds", loc, 1)
		s.HeartbeatSeconds, j.HeartbeatSeconds = p.jnumber(obj, "HeartbeatSeconds", loc, 1)
		if s.HeartbeatSeconds > 0 && s.TimeoutSeconds > 0 && s.HeartbeatSeconds >= s.TimeoutSeconds {
			p.errf(loc+"/HeartbeatSeconds", "SCHEMA_VALIDATION_FAILED", "HeartbeatSeconds must be smaller than TimeoutSeconds")
		}
	case "Choice":
		list, ok := obj["Choices"].([]any)
		if !ok || len(list) == 0 {
			p.errf(loc+"/Choices", "SCHEMA_VALIDATION_FAILED", "state %q: Choices must be a non-empty array", name)
		}
		for i, c := range list {
			s.Choices = append(s.Choices, p.jrule(c, fmt.Sprintf("%s/Choices/%d", loc, i)))
		}
		s.Default = p.str(obj, "Default", loc)
	case "Wait":
		n := 0
		if _, ok := obj["Seconds"]; ok {
			s.Seconds, j.Seconds = p.jnumber(obj, "Seconds", loc, 0)
			s.HasSeconds = !j.Seconds.Present()
			n++
		}
		if v, ok := obj["Timestamp"]; ok {
			n++
			str, _ := v.(string)
			if _, isExpr := Expression(str); isExpr {
				j.Timestamp = p.jfield(obj, "Timestamp", loc)
			} else if _, ok := ParseTimestamp(str); !ok {
				p.errf(loc+"/Timestamp", "SCHEMA_VALIDATION_FAILED", "String does not match RFC3339 timestamp")
			} else {
				s.Timestamp = str
			}
		}
		if n != 1 {
			p.errf(loc, "SCHEMA_VALIDATION_FAILED", "state %q: a Wait needs exactly one of Seconds, Timestamp", name)
		}
	case "Fail":
		for _, k := range []string{"Error", "Cause"} {
			if v, ok := obj[k]; ok {
				if _, isStr := v.(string); !isStr {
					p.errf(loc+"/"+k, "SCHEMA_VALIDATION_FAILED", "%s must be a string or a JSONata expression", k)
				}
			}
		}
		j.Error = p.jfield(obj, "Error", loc)
		j.Cause = p.jfield(obj, "Cause", loc)
	case "Parallel":
		s.Branches = p.branches(obj, loc, name)
	case "Map":
		rest := map[string]any{}
		for _, k := range []string{"ItemProcessor", "Iterator", "ItemReader", "ItemBatcher", "ResultWriter", "Label"} {
			if v, ok := obj[k]; ok {
				rest[k] = v
			}
		}
		var mc, tc, tp float64
		mc, j.MaxConcurrency = p.jnumber(obj, "MaxConcurrency", loc, 0)
		tc, j.ToleratedFailureCount = p.jnumber(obj, "ToleratedFailureCount", loc, 0)
		tp, j.ToleratedFailurePercentage = p.jnumberF(obj, "ToleratedFailurePercentage", loc)
		if tp > 100 {
			p.errf(loc+"/ToleratedFailurePercentage", "SCHEMA_VALIDATION_FAILED", "ToleratedFailurePercentage must be between 0 and 100")
		}
		p.mapState(s, rest, loc)
		s.ItemsPath = "$"
		s.MaxConcurrency, s.ToleratedFailureCount, s.ToleratedFailurePercentage = int(mc), int64(tc), tp
		_, hasTC := obj["ToleratedFailureCount"]
		_, hasTP := obj["ToleratedFailurePercentage"]
		s.HasTolerance = hasTC || hasTP
		if s.HasTolerance && s.ProcessorMode != "DISTRIBUTED" {
			p.errf(loc+"/ToleratedFailurePercentage", "SCHEMA_VALIDATION_FAILED", "tolerated failures are only allowed in a DISTRIBUTED Map")
		}
		if v, ok := obj["Items"]; ok {
			str, isStr := v.(string)
			_, isExpr := Expression(str)
			if _, isArr := v.([]any); !isArr && !(isStr && isExpr) {
				p.errf(loc+"/Items", "SCHEMA_VALIDATION_FAILED", "Items must be an array or a JSONata expression")
			}
			j.Items = p.jfield(obj, "Items", loc)
		}
		j.ItemSelector = p.jfield(obj, "ItemSelector", loc)
		s.HasItemSelector = j.ItemSelector.Present()
	}
}

// jfield compiles the JSONata field key of obj (absent: a zero JTemplate).
func (p *parser) jfield(obj map[string]any, key, loc string) JTemplate {
	v, ok := obj[key]
	if !ok {
		return JTemplate{}
	}
	t, err := CompileJTemplate(v, key)
	if err != nil {
		p.errf(loc+"/"+key, "INVALID_JSONATA", "state %q: %v", p.inState, err)
		return JTemplate{}
	}
	return t
}

// jnumber reads a numeric field that is a non-negative integer (at least min) or a JSONata
// expression.
func (p *parser) jnumber(obj map[string]any, key, loc string, min float64) (float64, JTemplate) {
	return p.jnum(obj, key, loc, true, min)
}

// jnumberF is jnumber for a number that may have a fraction.
func (p *parser) jnumberF(obj map[string]any, key, loc string) (float64, JTemplate) {
	return p.jnum(obj, key, loc, false, 0)
}

func (p *parser) jnum(obj map[string]any, key, loc string, integer bool, min float64) (float64, JTemplate) {
	v, ok := obj[key]
	if !ok {
		return 0, JTemplate{}
	}
	if str, isStr := v.(string); isStr {
		if _, isExpr := Expression(str); isExpr {
			return 0, p.jfield(obj, key, loc)
		}
	}
	f := p.posNumber(v, loc+"/"+key, integer)
	if f < min {
		p.errf(loc+"/"+key, "SCHEMA_VALIDATION_FAILED", "%s must be at least %v", key, min)
	}
	return f, JTemplate{}
}

// jassign compiles a JSONata Assign field: an object of variable names and values.
func (p *parser) jassign(v any, loc string) JTemplate {
	o, ok := v.(map[string]any)
	if !ok {
		p.errf(loc, "SCHEMA_VALIDATION_FAILED", "Assign must be an object of variable names and values")
		return JTemplate{}
	}
	for k := range o {
		if !ValidVariableName(k) {
			p.errf(loc+"/"+k, "INVALID_VARIABLE_NAME", "state %q: %q is not a valid variable name (a letter or _ first, then letters, digits or _, at most 80 characters; \"states\" is reserved)", p.inState, k)
		}
	}
	t, err := CompileJTemplate(o, "Assign")
	if err != nil {
		p.errf(loc, "INVALID_JSONATA", "state %q: %v", p.inState, err)
	}
	return t
}

func (p *parser) jcatchers(v any, loc string) []Catcher {
	var out []Catcher
	p.objects(v, loc, "Catch", "a catcher", func(o map[string]any, l string, last bool) {
		for k := range o {
			switch k {
			case "ErrorEquals", "Next", "Comment", "Output", "Assign":
			default:
				p.errf(l+"/"+k, "SCHEMA_VALIDATION_FAILED", "field %s is not allowed in a catcher of a JSONata state", k)
			}
		}
		c := p.catcher(o, l)
		c.ResultPath = "$"
		c.JOutput = p.jfield(o, "Output", l)
		if a, ok := o["Assign"]; ok {
			c.JAssign = p.jassign(a, l+"/Assign")
		}
		p.allLast(c.ErrorEquals, last, l, "a catcher")
		out = append(out, c)
	})
	return out
}

// jrule parses a Choice rule of a JSONata state: Condition, Next, and optional Output, Assign.
func (p *parser) jrule(v any, loc string) Rule {
	o, ok := v.(map[string]any)
	if !ok {
		p.errf(loc, "SCHEMA_VALIDATION_FAILED", "a choice rule must be an object")
		return Rule{}
	}
	r := Rule{}
	for k := range o {
		switch k {
		case "Condition", "Next", "Comment", "Output", "Assign":
		default:
			p.errf(loc+"/"+k, "SCHEMA_VALIDATION_FAILED", "field %s is not allowed in a choice rule of a JSONata state (use Condition)", k)
		}
	}
	r.Next, _ = o["Next"].(string)
	if r.Next == "" {
		p.errf(loc+"/Next", "SCHEMA_VALIDATION_FAILED", "a top-level choice rule needs Next")
	}
	cond, _ := o["Condition"].(string)
	if _, isExpr := Expression(cond); !isExpr && cond != "true" && cond != "false" {
		if _, isBool := o["Condition"].(bool); !isBool {
			p.errf(loc+"/Condition", "SCHEMA_VALIDATION_FAILED", "a choice rule of a JSONata state needs Condition: a {%% … %%} expression or true/false")
		}
	}
	r.Condition = p.jfield(o, "Condition", loc)
	r.JOutput = p.jfield(o, "Output", loc)
	if a, ok := o["Assign"]; ok {
		r.JAssign = p.jassign(a, loc+"/Assign")
	}
	r.Op = "Condition"
	return r
}

// ConditionTrue evaluates a JSONata rule's Condition.
func (r *Rule) ConditionTrue(vars map[string]any) (bool, error) {
	v, err := r.Condition.Eval(vars)
	if err != nil {
		return false, err
	}
	switch b := v.(type) {
	case bool:
		return b, nil
	case string:
		if b == "true" || b == "false" {
			return b == "true", nil
		}
	}
	src := strings.TrimSpace(fmt.Sprint(r.Condition.root))
	if x, ok := r.Condition.root.(jexpr); ok {
		src = x.e.Source()
	}
	return false, Errorf("States.QueryEvaluationError", "The JSONata expression '%s' specified for the field 'Condition' returned an unexpected result type. Expected 'boolean', but was '%s' for value: %s", src, JTypeName(v), jsonString(v))
}
