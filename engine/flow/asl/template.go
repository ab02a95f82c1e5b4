package asl

import (
	"bytes"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"math"
	mrand "math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Error is a failure with a Step Functions error name (States.Runtime,
// States.IntrinsicFailure, …) and a cause, as it appears in a failed execution.
type Error struct {
	Name  string
	Cause string
	// State is the state a States.Runtime or States.QueryEvaluationError happened in, and
	// Entered the id of its StateEntered history event once that is known (0 before); Step
	// Functions names both at the start of the execution's cause (FullCause).
	State   string
	Entered *int64
	// Foreign marks an error a task's own code raised (whatever its name): its cause is the
	// task's and names no state.
	Foreign bool
}

// FullCause is the cause as the failed execution shows it: for an error located in a state,
// "An error occurred while executing the state 'X' (entered at the event id #N). " first.
func (e *Error) FullCause() string {
	if e.State == "" || e.Entered == nil || *e.Entered == 0 {
		return e.Cause
	}
	return fmt.Sprintf("An error occurred while executing the state '%s' (entered at the event id #%d). %s", e.State, *e.Entered, e.Cause)
}

// Error prints "Name: Cause".
func (e *Error) Error() string { return e.Name + ": " + e.Cause }

// Errorf returns an *Error named name.
func Errorf(name, format string, args ...any) *Error {
	return &Error{Name: name, Cause: fmt.Sprintf(format, args...)}
}

// Env is what templates and paths read: the effective input ($), the context object ($$) and
// the variables in scope ($name).
type Env struct {
	Input   any
	Context any
	Vars    *Scope
}

// doc is the document p reads: the input, the context object or a variable's value.
func (env Env) doc(p *Path) (any, error) {
	switch {
	case p.variable != "":
		v, ok := env.Vars.Get(p.variable)
		if !ok {
			return nil, Errorf("States.Runtime", "The variable '$%s' could not be found", p.variable)
		}
		return v, nil
	case p.context:
		return env.Context, nil
	}
	return env.Input, nil
}

// Lookup evaluates a path (on $ or $$). A missing reference path is States.Runtime, as in Step
// Functions.
func (env Env) Lookup(src string) (any, error) {
	p, err := ParsePath(src)
	if err != nil {
		return nil, Errorf("States.Runtime", "%v", err)
	}
	return env.Eval(p)
}

// Eval evaluates a compiled path.
func (env Env) Eval(p *Path) (any, error) {
	doc, err := env.doc(p)
	if err != nil {
		return nil, err
	}
	v, ok := p.Get(doc)
	if !ok {
		if i := p.missingAt(doc); i >= 0 && i < len(p.steps)-1 {
			return nil, Errorf("States.Runtime", "Invalid path '%s' : Missing property in path %s", p.src, p.notation(i+1))
		}
		return nil, Errorf("States.Runtime", "Invalid path '%s' : No results for path: %s", p.src, p.Notation())
	}
	return v, nil
}

// field evaluates a path given in the template field named field, with Step Functions' cause
// when it names nothing.
func (env Env) field(p *Path, field string) (any, error) {
	doc, err := env.doc(p)
	if err != nil {
		return nil, err
	}
	v, ok := p.Get(doc)
	if !ok {
		return nil, Errorf("States.Runtime", "The JSONPath '%s' specified for the field '%s' could not be found in the input '%s'", p.src, field, jsonString(env.Input))
	}
	return v, nil
}

// Field evaluates the value of a ".$" field (or of ErrorPath, CausePath) named field: a path
// or an intrinsic function call, with Step Functions' cause when a path names nothing.
func (env Env) Field(s, field string) (any, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "$") {
		p, err := ParsePath(s)
		if err != nil {
			return nil, Errorf("States.Runtime", "%v", err)
		}
		return env.field(p, field)
	}
	return Expr(s, env)
}

func compact(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 256 {
		return string(b[:256]) + "…"
	}
	return string(b)
}

// Template evaluates a Parameters / ItemSelector / ResultSelector template: keys ending in ".$"
// take the value of a path or intrinsic function, other values are copied (recursively).
func Template(tmpl any, env Env) (any, error) {
	switch t := tmpl.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, v := range t {
			if name, ok := strings.CutSuffix(k, ".$"); ok {
				s, isStr := v.(string)
				if !isStr {
					return nil, Errorf("States.Runtime", "the value of field %q must be a path or intrinsic function", k)
				}
				val, err := env.Field(s, k)
				if err != nil {
					return nil, err
				}
				out[name] = val
				continue
			}
			val, err := Template(v, env)
			if err != nil {
				return nil, err
			}
			out[k] = val
		}
		return out, nil
	case []any:
		out := make([]any, len(t))
		for i, v := range t {
			val, err := Template(v, env)
			if err != nil {
				return nil, err
			}
			out[i] = val
		}
		return out, nil
	}
	return tmpl, nil
}

// Expr evaluates the value of a ".$" field: a path ($…, $$…) or an intrinsic function call.
func Expr(s string, env Env) (any, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "$") {
		return env.Lookup(s)
	}
	if strings.HasPrefix(s, "States.") {
		c, err := ParseIntrinsic(s)
		if err != nil {
			return nil, Errorf("States.IntrinsicFailure", "%v", err)
		}
		return c.Eval(env)
	}
	return nil, Errorf("States.Runtime", "%q is neither a JSONPath nor an intrinsic function", s)
}

// Call is a parsed intrinsic function call.
type Call struct {
	Name string
	Args []arg
}

type arg struct {
	lit     any
	path    *Path
	call    *Call
	escaped map[int]bool // byte offsets of a string literal's characters written with a backslash
}

// ParseIntrinsic parses "States.Name(arg, …)".
func ParseIntrinsic(s string) (c *Call, err error) {
	defer func() {
		if r := recover(); r != nil {
			c, err = nil, fmt.Errorf("invalid intrinsic function %q", s)
		}
	}()
	p := &iparser{s: s}
	c, err = p.call()
	if err != nil {
		return nil, err
	}
	p.ws()
	if p.i != len(p.s) {
		return nil, fmt.Errorf("unexpected text after the call in %q", s)
	}
	return c, nil
}

type iparser struct {
	s string
	i int
}

func (p *iparser) ws() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n') {
		p.i++
	}
}

func (p *iparser) call() (*Call, error) {
	p.ws()
	j := strings.IndexByte(p.s[p.i:], '(')
	if j < 0 {
		return nil, fmt.Errorf("missing ( in %q", p.s)
	}
	name := strings.TrimSpace(p.s[p.i : p.i+j])
	if _, known := intrinsics[name]; !known {
		return nil, fmt.Errorf("unknown intrinsic function %q", name)
	}
	p.i += j + 1
	c := &Call{Name: name}
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == ')' {
		p.i++
		return c, nil
	}
	for {
		a, err := p.arg()
		if err != nil {
			return nil, err
		}
		c.Args = append(c.Args, a)
		p.ws()
		if p.i >= len(p.s) {
			return nil, fmt.Errorf("missing ) in %q", p.s)
		}
		if p.s[p.i] == ')' {
			p.i++
			return c, nil
		}
		if p.s[p.i] != ',' {
			return nil, fmt.Errorf("expected , or ) at offset %d in %q", p.i, p.s)
		}
		p.i++
	}
}

func (p *iparser) arg() (arg, error) {
	p.ws()
	if p.i >= len(p.s) {
		return arg{}, fmt.Errorf("missing argument in %q", p.s)
	}
	c := p.s[p.i]
	switch {
	case c == '\'':
		var b strings.Builder
		var escaped map[int]bool
		p.i++
		for p.i < len(p.s) {
			ch := p.s[p.i]
			if ch == '\\' && p.i+1 < len(p.s) {
				if escaped == nil {
					escaped = map[int]bool{}
				}
				escaped[b.Len()] = true // \{ \} are literal braces in States.Format, not a placeholder
				b.WriteByte(p.s[p.i+1])
				p.i += 2
				continue
			}
			if ch == '\'' {
				p.i++
				return arg{lit: b.String(), escaped: escaped}, nil
			}
			b.WriteByte(ch)
			p.i++
		}
		return arg{}, fmt.Errorf("unterminated string in %q", p.s)
	case c == '$':
		j := p.i
		depth := 0
		for j < len(p.s) {
			ch := p.s[j]
			if ch == '[' {
				depth++
			} else if ch == ']' {
				depth--
			} else if depth == 0 && (ch == ',' || ch == ')' || ch == ' ') {
				break
			}
			j++
		}
		path, err := ParsePath(p.s[p.i:j])
		if err != nil {
			return arg{}, err
		}
		p.i = j
		return arg{path: path}, nil
	case strings.HasPrefix(p.s[p.i:], "States."):
		sub, err := p.call()
		if err != nil {
			return arg{}, err
		}
		return arg{call: sub}, nil
	default:
		j := p.i
		for j < len(p.s) && p.s[j] != ',' && p.s[j] != ')' && p.s[j] != ' ' {
			j++
		}
		tok := p.s[p.i:j]
		p.i = j
		switch tok {
		case "true":
			return arg{lit: true}, nil
		case "false":
			return arg{lit: false}, nil
		case "null":
			return arg{lit: nil}, nil
		}
		f, err := strconv.ParseFloat(tok, 64)
		if err != nil {
			return arg{}, fmt.Errorf("bad argument %q in %q", tok, p.s)
		}
		return arg{lit: f}, nil
	}
}

func fail(format string, args ...any) error {
	return Errorf("States.IntrinsicFailure", format, args...)
}

// Eval evaluates the call: its arguments first, then the function, once the arguments match
// its signature.
func (c *Call) Eval(env Env) (any, error) {
	args := make([]any, len(c.Args))
	for i, a := range c.Args {
		switch {
		case a.path != nil:
			v, err := env.Eval(a.path)
			if err != nil {
				return nil, err
			}
			args[i] = v
		case a.call != nil:
			v, err := a.call.Eval(env)
			if err != nil {
				return nil, err
			}
			args[i] = v
		default:
			args[i] = a.lit
		}
	}
	f, ok := intrinsics[c.Name]
	if !ok {
		return nil, fail("unknown intrinsic function %s", c.Name)
	}
	if err := f.check(c.Name, args); err != nil {
		return nil, err
	}
	return f.eval(c, args)
}

// kind is what an intrinsic function's argument must be.
type kind int

const (
	anyKind     kind = iota
	stringKind       // a string
	integerKind      // a number without a fraction, at most 2^53 either way
	arrayKind        // an array
	roundKind        // a number, rounded to the nearest integer as Java's Math.round does
)

// param is one parameter of an intrinsic function.
type param struct {
	name string // what the argument is, for the message when it is missing
	kind kind
}

// intrinsic is an intrinsic function: its signature, checked before eval runs, and eval, which
// may then take its arguments' types for granted (an integer is a float64 with no fraction).
type intrinsic struct {
	params   []param
	required int  // how many of params must be given (the rest are optional)
	rest     bool // any number of further arguments of any kind may follow
	eval     func(c *Call, args []any) (any, error)
}

// takes is the signature of a function of exactly these arguments; do gives its body.
func takes(kinds ...kind) intrinsic {
	ps := make([]param, len(kinds))
	for i, k := range kinds {
		ps[i] = param{kind: k}
	}
	return intrinsic{params: ps, required: len(ps)}
}

// do returns f evaluated by eval.
func (f intrinsic) do(eval func(c *Call, args []any) (any, error)) intrinsic {
	f.eval = eval
	return f
}

// check fails with States.IntrinsicFailure when args do not match f's signature.
func (f intrinsic) check(name string, args []any) error {
	switch {
	case f.rest && len(args) < f.required:
		return fail("%s needs a %s", name, f.params[len(args)].name)
	case f.rest:
	case f.required < len(f.params) && (len(args) < f.required || len(args) > len(f.params)):
		return fail("%s takes %d or %d arguments", name, f.required, len(f.params))
	case f.required == len(f.params) && len(args) != len(f.params):
		return fail("%s takes %d arguments, got %d", name, len(f.params), len(args))
	}
	for i, p := range f.params[:min(len(f.params), len(args))] {
		if err := checkArg(name, i, p.kind, args[i]); err != nil {
			return err
		}
	}
	return nil
}

// checkArg fails with States.IntrinsicFailure when argument i (from 0) of function name is not
// of kind k.
func checkArg(name string, i int, k kind, v any) error {
	switch k {
	case stringKind:
		if _, ok := v.(string); !ok {
			return fail("%s: argument %d must be a string", name, i+1)
		}
	case integerKind:
		x, ok := v.(float64)
		if !ok {
			return fail("%s: argument %d must be a number", name, i+1)
		}
		if x != math.Trunc(x) || math.Abs(x) > 1<<53 {
			return fail("%s: argument %d must be an integer (at most 2^53)", name, i+1)
		}
	case arrayKind:
		if _, ok := v.([]any); !ok {
			return fail("%s: argument %d must be an array", name, i+1)
		}
	case roundKind:
		x, ok := v.(float64)
		if !ok {
			return fail("%s: argument %d must be a number", name, i+1)
		}
		if math.Abs(x) > 1<<53 {
			return fail("%s: argument %d must be at most 2^53", name, i+1)
		}
	}
	return nil
}

// rounded is an argument checked as roundKind: the nearest integer, halves rounded up (towards
// positive infinity), so 1.5 is 2 and -1.5 is -1, as Step Functions rounds MathAdd's and
// MathRandom's arguments.
func rounded(v any) int { return int(math.Floor(v.(float64) + 0.5)) }

// integer is an argument checked as integerKind.
func integer(v any) int { return int(v.(float64)) }

// intrinsics are the intrinsic functions by name.
var intrinsics = map[string]intrinsic{
	"States.Format": {params: []param{{"template", stringKind}}, required: 1, rest: true, eval: format},
	"States.StringToJson": takes(stringKind).do(func(c *Call, args []any) (any, error) {
		text := args[0].(string)
		if strings.TrimSpace(text) == "" {
			return nil, nil // Step Functions gives null for an empty or blank string
		}
		v, err := Decode([]byte(text))
		if err != nil {
			return nil, fail("States.StringToJson: %v", err)
		}
		return noNegativeZero(v), nil
	}),
	"States.JsonToString": takes(anyKind).do(func(c *Call, args []any) (any, error) { return jsonString(args[0]), nil }),
	"States.Array": {rest: true, eval: func(c *Call, args []any) (any, error) {
		if args == nil {
			args = []any{}
		}
		return args, nil
	}},
	"States.ArrayPartition": takes(arrayKind, integerKind).do(func(c *Call, args []any) (any, error) {
		a, size := args[0].([]any), integer(args[1])
		if size <= 0 {
			return nil, fail("States.ArrayPartition: chunk size must be positive")
		}
		out := []any{}
		for i := 0; i < len(a); i += size {
			out = append(out, append([]any{}, a[i:min(i+size, len(a))]...))
		}
		return out, nil
	}),
	"States.ArrayContains": takes(arrayKind, anyKind).do(func(c *Call, args []any) (any, error) {
		for _, v := range args[0].([]any) {
			if Equal(v, args[1]) {
				return true, nil
			}
		}
		return false, nil
	}),
	"States.ArrayRange": takes(integerKind, integerKind, integerKind).do(func(c *Call, args []any) (any, error) {
		lo, hi, st := integer(args[0]), integer(args[1]), integer(args[2])
		if st == 0 {
			return nil, fail("States.ArrayRange: step must not be 0")
		}
		out := []any{}
		for v := lo; (st > 0 && v <= hi) || (st < 0 && v >= hi); v += st {
			out = append(out, float64(v))
			if len(out) > 1000 {
				return nil, fail("States.ArrayRange: more than 1000 items")
			}
		}
		return out, nil
	}),
	"States.ArrayGetItem": takes(arrayKind, integerKind).do(func(c *Call, args []any) (any, error) {
		a, i := args[0].([]any), integer(args[1])
		if i < 0 || i >= len(a) {
			return nil, fail("States.ArrayGetItem: index %d out of range", i)
		}
		return a[i], nil
	}),
	"States.ArrayLength": takes(arrayKind).do(func(c *Call, args []any) (any, error) { return float64(len(args[0].([]any))), nil }),
	"States.ArrayUnique": takes(arrayKind).do(func(c *Call, args []any) (any, error) {
		out := []any{}
		for _, v := range args[0].([]any) {
			dup := false
			for _, u := range out {
				if Equal(u, v) {
					dup = true
					break
				}
			}
			if !dup {
				out = append(out, v)
			}
		}
		return out, nil
	}),
	"States.Base64Encode": takes(stringKind).do(func(c *Call, args []any) (any, error) {
		return base64.StdEncoding.EncodeToString([]byte(args[0].(string))), nil
	}),
	"States.Base64Decode": takes(stringKind).do(func(c *Call, args []any) (any, error) {
		b, err := base64.StdEncoding.DecodeString(args[0].(string))
		if err != nil {
			return nil, fail("States.Base64Decode: %v", err)
		}
		if !utf8.Valid(b) {
			return nil, fail("States.Base64Decode: the decoded bytes are not UTF-8 text")
		}
		return string(b), nil
	}),
	"States.Hash": takes(anyKind, stringKind).do(func(c *Call, args []any) (any, error) {
		data, ok := args[0].(string)
		if !ok {
			data = jsonString(args[0])
		}
		var h hash.Hash
		switch algo := args[1].(string); algo {
		case "MD5":
			h = md5.New()
		case "SHA-1":
			h = sha1.New()
		case "SHA-256":
			h = sha256.New()
		case "SHA-384":
			h = sha512.New384()
		case "SHA-512":
			h = sha512.New()
		default:
			return nil, fail("States.Hash: unknown algorithm %q (MD5, SHA-1, SHA-256, SHA-384, SHA-512)", algo)
		}
		h.Write([]byte(data))
		return hex.EncodeToString(h.Sum(nil)), nil
	}),
	"States.JsonMerge": takes(anyKind, anyKind, anyKind).do(func(c *Call, args []any) (any, error) {
		a, ok1 := args[0].(map[string]any)
		b, ok2 := args[1].(map[string]any)
		if !ok1 || !ok2 {
			return nil, fail("States.JsonMerge: the first two arguments must be objects")
		}
		if deep, _ := args[2].(bool); deep {
			return nil, fail("States.JsonMerge: deep merge (true) is not supported by Step Functions; pass false")
		}
		out := make(map[string]any, len(a)+len(b))
		for k, v := range a {
			out[k] = v
		}
		for k, v := range b {
			out[k] = v
		}
		return out, nil
	}),
	// The seed is checked after the range, so a call with both wrong names the range, as it
	// always has.
	"States.MathRandom": {params: []param{{"start", roundKind}, {"end", roundKind}, {"seed", anyKind}}, required: 2,
		eval: func(c *Call, args []any) (any, error) {
			lo, hi := rounded(args[0]), rounded(args[1])
			if hi < lo {
				return nil, fail("States.MathRandom: end is below start")
			}
			if hi-lo+1 <= 0 {
				return nil, fail("States.MathRandom: the range is too large")
			}
			var r *mrand.Rand
			if len(args) == 3 {
				if err := checkArg(c.Name, 2, roundKind, args[2]); err != nil {
					return nil, err
				}
				r = mrand.New(mrand.NewPCG(uint64(rounded(args[2])), 0))
			} else {
				r = mrand.New(mrand.NewPCG(mrand.Uint64(), mrand.Uint64()))
			}
			return float64(lo + r.IntN(hi-lo+1)), nil
		}},
	"States.MathAdd": takes(roundKind, roundKind).do(func(c *Call, args []any) (any, error) {
		return float64(rounded(args[0]) + rounded(args[1])), nil
	}),
	"States.StringSplit": takes(stringKind, stringKind).do(func(c *Call, args []any) (any, error) {
		d := args[1].(string)
		out := []any{}
		for _, part := range strings.FieldsFunc(args[0].(string), func(r rune) bool { return strings.ContainsRune(d, r) }) {
			out = append(out, part)
		}
		return out, nil
	}),
	"States.UUID": takes().do(func(c *Call, args []any) (any, error) { return NewUUID(), nil }),
}

// format is States.Format: each {} in the template (not written \{ or \}) takes the next
// argument.
func format(c *Call, args []any) (any, error) {
	tmpl := args[0].(string)
	esc := c.Args[0].escaped
	var b strings.Builder
	k := 1
	for i := 0; i < len(tmpl); i++ {
		if tmpl[i] == '{' && i+1 < len(tmpl) && tmpl[i+1] == '}' && !esc[i] && !esc[i+1] {
			if k >= len(args) {
				return nil, fail("States.Format: more {} than arguments")
			}
			switch v := args[k].(type) {
			case string:
				b.WriteString(v)
			case nil:
				b.WriteString("null")
			case map[string]any, []any:
				b.WriteString(javaString(v))
			default:
				b.WriteString(jsonString(v))
			}
			k++
			i++
			continue
		}
		b.WriteByte(tmpl[i])
	}
	if k != len(args) {
		return nil, fail("States.Format: %d arguments for %d {}", len(args)-1, k-1)
	}
	return b.String(), nil
}

// javaString prints a value as Step Functions' States.Format does for objects and arrays, in
// Java's notation: {Arg1=1, Arg2=[a, b]} (strings unquoted, keys in order).
func javaString(v any) string {
	switch x := v.(type) {
	case map[string]any:
		parts := make([]string, 0, len(x))
		for _, k := range sortedKeys(x) {
			parts = append(parts, k+"="+javaString(x[k]))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = javaString(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case string:
		return x
	case nil:
		return "null"
	}
	return jsonString(v)
}

// noNegativeZero replaces -0 (which JSON may spell "-0") by 0, as Step Functions' parser does.
func noNegativeZero(v any) any {
	switch x := v.(type) {
	case float64:
		if x == 0 {
			return float64(0)
		}
	case map[string]any:
		for k, e := range x {
			x[k] = noNegativeZero(e)
		}
	case []any:
		for i, e := range x {
			x[i] = noNegativeZero(e)
		}
	}
	return v
}

// NewUUID returns a random (version 4) UUID.
func NewUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func jsonString(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	return strings.TrimSuffix(buf.String(), "\n")
}

// Decode parses JSON into maps, slices, float64, string, bool and nil.
func Decode(b []byte) (any, error) {
	var v any
	if len(bytes.TrimSpace(b)) == 0 {
		return map[string]any{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("unexpected data after the JSON value")
	}
	return v, nil
}

// Equal compares two JSON values deeply (numbers by value).
func Equal(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !Equal(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return a == b
}

func sortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
