package jsonata

import (
	"math"
	"strconv"
	"strings"
)

// The fast path: most expressions in a workflow are a path ($states.input.a.b, $var.x, a.b), a
// literal, or one comparison or arithmetic operation between two of those. Such an expression
// is evaluated directly on the JSON values, without the general evaluator's reflection. When
// its values are not plain (an array on the way, a missing operand, mixed types), the general
// evaluator answers instead, so both give the same result.

// fast is a compiled simple expression.
type fast struct {
	left, right *operand
	op          string // "" when there is only left
}

type operand struct {
	lit   any
	isLit bool
	vname string   // $name: the path starts at that variable ("" : at the input)
	steps []string // field names
}

// compileFast returns the fast form of src, or nil when src is not that simple.
func compileFast(src string) *fast {
	p := &fparser{s: src}
	left := p.operand()
	if left == nil {
		return nil
	}
	p.ws()
	if p.i == len(p.s) {
		return &fast{left: left}
	}
	op := p.op()
	if op == "" {
		return nil
	}
	right := p.operand()
	p.ws()
	if right == nil || p.i != len(p.s) {
		return nil
	}
	return &fast{left: left, right: right, op: op}
}

type fparser struct {
	s string
	i int
}

func (p *fparser) ws() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n' || p.s[p.i] == '\r') {
		p.i++
	}
}

func isIdentStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isIdent(c byte) bool      { return isIdentStart(c) || c >= '0' && c <= '9' }

func (p *fparser) ident() string {
	j := p.i
	if j >= len(p.s) || !isIdentStart(p.s[j]) {
		return ""
	}
	for j < len(p.s) && isIdent(p.s[j]) {
		j++
	}
	id := p.s[p.i:j]
	p.i = j
	return id
}

func (p *fparser) operand() *operand {
	p.ws()
	if p.i >= len(p.s) {
		return nil
	}
	c := p.s[p.i]
	switch {
	case c == '\'' || c == '"':
		j := strings.IndexByte(p.s[p.i+1:], c)
		if j < 0 {
			return nil
		}
		lit := p.s[p.i+1 : p.i+1+j]
		if strings.ContainsRune(lit, '\\') {
			return nil
		}
		p.i += j + 2
		return &operand{lit: lit, isLit: true}
	case c >= '0' && c <= '9':
		j := p.i
		for j < len(p.s) && (p.s[j] >= '0' && p.s[j] <= '9' || p.s[j] == '.') {
			j++
		}
		f, err := strconv.ParseFloat(p.s[p.i:j], 64)
		if err != nil {
			return nil
		}
		p.i = j
		return &operand{lit: f, isLit: true}
	case c == '$':
		p.i++
		name := p.ident()
		if name == "" {
			return nil
		}
		o := &operand{vname: name}
		if !p.steps(o) {
			return nil
		}
		return o
	case isIdentStart(c):
		start := p.i
		id := p.ident()
		switch id {
		case "true", "false":
			return &operand{lit: id == "true", isLit: true}
		case "null":
			return &operand{lit: nil, isLit: true}
		case "and", "or", "in", "function":
			return nil
		}
		p.i = start
		o := &operand{}
		o.steps = append(o.steps, p.ident())
		if !p.steps(o) {
			return nil
		}
		return o
	}
	return nil
}

// steps reads ".name" steps.
func (p *fparser) steps(o *operand) bool {
	for p.i < len(p.s) && p.s[p.i] == '.' {
		p.i++
		id := p.ident()
		if id == "" {
			return false
		}
		o.steps = append(o.steps, id)
	}
	// anything that continues the path (a predicate, a call, a wildcard) is not simple
	return p.i == len(p.s) || !strings.ContainsRune("[(*{@#^%~", rune(p.s[p.i]))
}

func (p *fparser) op() string {
	p.ws()
	for _, op := range []string{"<=", ">=", "!=", "=", "<", ">", "+", "-", "*", "/", "&"} {
		if strings.HasPrefix(p.s[p.i:], op) {
			p.i += len(op)
			return op
		}
	}
	return ""
}

// value evaluates an operand; ok is false when the general evaluator must answer.
func (o *operand) value(input any, vars map[string]any) (v any, defined, ok bool) {
	if o.isLit {
		return o.lit, true, true
	}
	cur := input
	if o.vname != "" {
		x, found := vars[o.vname]
		if !found {
			return nil, false, false
		}
		cur = x
	}
	for _, st := range o.steps {
		switch m := cur.(type) {
		case map[string]any:
			x, found := m[st]
			if !found {
				return nil, false, true
			}
			cur = x
		case nil:
			if o.vname == "" && input == nil {
				return nil, false, true
			}
			return nil, false, false
		default:
			return nil, false, false // an array (mapped over) or a scalar
		}
	}
	if _, isArr := cur.([]any); isArr {
		return nil, false, false
	}
	return cur, true, true
}

// eval evaluates the expression; ok is false when the general evaluator must answer.
func (f *fast) eval(input any, vars map[string]any) (v any, defined, ok bool) {
	a, da, ok := f.left.value(input, vars)
	if !ok || f.op == "" {
		return a, da, ok
	}
	b, db, ok := f.right.value(input, vars)
	if !ok || !da || !db {
		return nil, false, false
	}
	switch x := a.(type) {
	case float64:
		y, isNum := b.(float64)
		if !isNum {
			return nil, false, false
		}
		var r any
		switch f.op {
		case "+":
			r = x + y
		case "-":
			r = x - y
		case "*":
			r = x * y
		case "/":
			r = x / y
		case "=":
			r = x == y
		case "!=":
			r = x != y
		case "<":
			r = x < y
		case "<=":
			r = x <= y
		case ">":
			r = x > y
		case ">=":
			r = x >= y
		default:
			return nil, false, false
		}
		if n, isNum := r.(float64); isNum && (math.IsInf(n, 0) || math.IsNaN(n)) {
			return nil, false, false
		}
		return r, true, true
	case string:
		y, isStr := b.(string)
		if !isStr {
			return nil, false, false
		}
		switch f.op {
		case "&":
			return x + y, true, true
		case "=":
			return x == y, true, true
		case "!=":
			return x != y, true, true
		case "<":
			return x < y, true, true
		case "<=":
			return x <= y, true, true
		case ">":
			return x > y, true, true
		case ">=":
			return x >= y, true, true
		}
	case bool:
		y, isBool := b.(bool)
		if isBool && (f.op == "=" || f.op == "!=") {
			return (x == y) == (f.op == "="), true, true
		}
	}
	return nil, false, false
}
