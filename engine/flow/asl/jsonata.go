package asl

import (
	"errors"
	"fmt"
	"strings"

	"jobdesk/engine/flow/jsonata"
)

// The JSONata query language: a state whose QueryLanguage is JSONata (its own, or the state
// machine's) writes "{% expression %}" strings where a JSONPath state writes paths, in the
// fields Arguments, Output, Assign, Items, ItemSelector, Condition, the numeric fields and a
// Fail state's Error and Cause. Expressions read $states (input, result, errorOutput,
// context) and the workflow's variables.

// Query languages.
const (
	JSONPath = "JSONPath"
	JSONata  = "JSONata"
)

// Expression returns the expression of a "{% … %}" string, and whether s is one.
func Expression(s string) (string, bool) {
	if len(s) >= 4 && strings.HasPrefix(s, "{%") && strings.HasSuffix(s, "%}") {
		return strings.TrimSpace(s[2 : len(s)-2]), true
	}
	return "", false
}

// JTemplate is a compiled JSONata field: a JSON value whose "{% … %}" strings (at any depth)
// are expressions evaluated in place. The zero JTemplate is an absent field.
type JTemplate struct {
	root  jnode
	field string
}

// Source is the field's expression when it is one "{% … %}" string ("" otherwise).
func (t JTemplate) Source() string {
	if x, ok := t.root.(jexpr); ok {
		return x.e.Source()
	}
	return ""
}

// Present reports whether the field was given.
func (t JTemplate) Present() bool { return t.root != nil }

type jnode interface {
	eval(vars map[string]any, field string) (any, error)
}

type jlit struct{ v any }

type jexpr struct {
	e *jsonata.Expr
}

type jobj struct {
	keys []string
	vals []jnode
}

type jarr []jnode

// CompileJTemplate compiles the value of the field named field; err names the first
// expression that does not compile.
func CompileJTemplate(v any, field string) (JTemplate, error) {
	n, err := compileJ(v)
	if err != nil {
		return JTemplate{}, err
	}
	return JTemplate{root: n, field: field}, nil
}

func compileJ(v any) (jnode, error) {
	switch x := v.(type) {
	case string:
		src, ok := Expression(x)
		if !ok {
			return jlit{x}, nil
		}
		e, err := jsonata.Compile(src)
		if err != nil {
			return nil, fmt.Errorf("the JSONata expression '%s' is not valid: %v", src, err)
		}
		return jexpr{e}, nil
	case map[string]any:
		o := jobj{}
		for _, k := range sortedKeys(x) {
			n, err := compileJ(x[k])
			if err != nil {
				return nil, err
			}
			o.keys = append(o.keys, k)
			o.vals = append(o.vals, n)
		}
		if o.constant() {
			return jlit{x}, nil
		}
		return o, nil
	case []any:
		a := make(jarr, len(x))
		constant := true
		for i, e := range x {
			n, err := compileJ(e)
			if err != nil {
				return nil, err
			}
			a[i] = n
			if _, ok := n.(jlit); !ok {
				constant = false
			}
		}
		if constant {
			return jlit{x}, nil
		}
		return a, nil
	}
	return jlit{v}, nil
}

func (o jobj) constant() bool {
	for _, n := range o.vals {
		if _, ok := n.(jlit); !ok {
			return false
		}
	}
	return true
}

func (l jlit) eval(map[string]any, string) (any, error) { return l.v, nil }

func (x jexpr) eval(vars map[string]any, field string) (any, error) {
	input, _ := vars["states"].(map[string]any)
	v, ok, err := x.e.Eval(input["input"], vars)
	if errors.Is(err, jsonata.ErrUnsupportedResult) {
		return nil, Errorf("States.QueryEvaluationError", "The JSONata expression '%s' specified for the field '%s' returned an unsupported result type.", x.e.Source(), field)
	}
	if err != nil {
		return nil, Errorf("States.QueryEvaluationError", "The JSONata expression '%s' specified for the field '%s' threw an error during evaluation. %v", x.e.Source(), field, err)
	}
	if !ok {
		return nil, Errorf("States.QueryEvaluationError", "The JSONata expression '%s' specified for the field '%s' returned nothing (undefined).", x.e.Source(), field)
	}
	return v, nil
}

func (o jobj) eval(vars map[string]any, field string) (any, error) {
	out := make(map[string]any, len(o.keys))
	for i, k := range o.keys {
		v, err := o.vals[i].eval(vars, field+"/"+k)
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, nil
}

func (a jarr) eval(vars map[string]any, field string) (any, error) {
	out := make([]any, len(a))
	for i, n := range a {
		v, err := n.eval(vars, fmt.Sprintf("%s/%d", field, i))
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// Eval evaluates the field with the variables vars (JVars).
func (t JTemplate) Eval(vars map[string]any) (any, error) {
	return t.root.eval(vars, t.field)
}

// JVars are the variables a JSONata expression sees: $states (input, context, and result or
// errorOutput when given) and the workflow variables in scope.
func JVars(scope *Scope, input, context any, result, errorOutput any, hasResult, hasError bool) map[string]any {
	st := map[string]any{"input": input, "context": context}
	if hasResult {
		st["result"] = result
	}
	if hasError {
		st["errorOutput"] = errorOutput
	}
	vars := scope.All()
	vars["states"] = st
	return vars
}

// JTypeName is the JSON type of v as Step Functions names it in a cause.
func JTypeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	case []any:
		return "array"
	}
	return "object"
}

// EvalJNumber evaluates a numeric field written as an expression (MaxConcurrency,
// TimeoutSeconds, …) and checks that it is an integer (when integer) of at least min.
func EvalJNumber(t JTemplate, vars map[string]any, integer bool, min float64) (float64, error) {
	v, err := t.Eval(vars)
	if err != nil {
		return 0, err
	}
	f, ok := v.(float64)
	if !ok || (integer && f != float64(int64(f))) || f < min {
		want := "number"
		if integer {
			want = "integer"
		}
		src := ""
		if x, isExpr := t.root.(jexpr); isExpr {
			src = x.e.Source()
		}
		return 0, Errorf("States.QueryEvaluationError", "The JSONata expression '%s' specified for the field '%s' returned an unexpected result type. Expected '%s' of at least %v, but was '%s' for value: %s",
			src, t.field, want, min, JTypeName(v), jsonString(v))
	}
	return f, nil
}

// All returns every variable in scope (inner ones hide outer ones of the same name).
func (s *Scope) All() map[string]any {
	var chain []*Scope
	for c := s; c != nil; c = c.Parent {
		chain = append(chain, c)
	}
	out := map[string]any{}
	for i := len(chain) - 1; i >= 0; i-- {
		for k, v := range chain[i].vars {
			out[k] = v
		}
	}
	return out
}
