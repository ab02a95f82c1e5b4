// Package jsonata evaluates the JSONata expressions of Step Functions' JSONata query language:
// the "{% … %}" strings of a JSONata state's Arguments, Output, Assign, Items, Condition and
// numeric fields. The evaluator is that of github.com/blues/jsonata-go (a JSONata 1.x port),
// kept in internal/xj and internal/jparse and extended there towards JSONata 2.x; it was chosen
// over github.com/xiatechs/jsonata-go, which rounds every sum, difference, product and quotient
// to 8 decimals (sums upwards) where JSONata computes in double precision as Step Functions
// does. This package gives each evaluation its own variables ($states and the workflow's variables), adds
// the functions Step Functions adds ($partition, $range, $hash, $random, $uuid, $parse), and
// turns results into plain JSON values (maps, slices, float64, string, bool, nil).
package jsonata

import (
	"crypto/md5"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"math"
	mrand "math/rand/v2"
	"reflect"
	"strings"
	"time"

	"github.com/blues/jsonata-go/jtypes"
	xj "jobdesk/engine/flow/jsonata/internal/xj"
)

// ErrUnsupportedResult is the error of an evaluation whose result JSON cannot hold (a function).
var ErrUnsupportedResult = errors.New("the expression returned a value that is not JSON")

// Expr is a compiled expression.
type Expr struct {
	src  string
	x    *xj.Expr
	exts map[string]xj.Extension // the added functions the expression names
	fast *fast                   // the expression's fast form when it is that simple (see fast.go)
}

// Source returns the expression's text.
func (e *Expr) Source() string { return e.src }

func init() {
	xj.Preprocess = func(src string) string { return rewrite2x(quotedSteps(src)) }
	xj.StringOf = func(v reflect.Value) (string, error) { return stringFn(v, jtypes.OptionalBool{}) }
}

// undefinedInput, given as the input, evaluates an expression without a context value
// (JSONata's undefined input); a nil input is JSON's null.
type undefinedInput struct{}

// Compile compiles an expression (the text between "{%" and "%}").
func Compile(src string) (e *Expr, err error) {
	defer func() {
		if r := recover(); r != nil {
			e, err = nil, fmt.Errorf("%v", r)
		}
	}()
	x, err := xj.Compile(rewrite2x(quotedSteps(src)))
	if err != nil {
		return nil, err
	}
	e = &Expr{src: src, x: x, fast: compileFast(src)}
	for name, ext := range added {
		if strings.Contains(src, "$"+name) {
			if e.exts == nil {
				e.exts = map[string]xj.Extension{}
			}
			e.exts[name] = ext
		}
	}
	return e, nil
}

// Eval evaluates the expression on input with the variables vars (names without "$").
// defined is false when the expression returns nothing (JSONata's undefined).
func (e *Expr) Eval(input any, vars map[string]any) (v any, defined bool, err error) {
	return e.eval(input, vars, xj.DefaultMaxDepth, xj.DefaultTimeLimit)
}

// eval is Eval with limits on the nesting and the duration of the evaluation (see
// xj.Expr.EvalLimited).
func (e *Expr) eval(input any, vars map[string]any, maxDepth int, timeLimit time.Duration) (v any, defined bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			v, defined, err = nil, false, fmt.Errorf("%v", r)
		}
	}()
	var in any = input
	if _, ok := input.(undefinedInput); ok {
		in = reflect.Value{} // no context value at all
	} else if e.fast != nil {
		if v, defined, ok := e.fast.eval(input, vars); ok {
			return v, defined, nil
		}
	}
	c := *e.x // each evaluation binds its own variables
	if len(e.exts) > 0 {
		if err := c.RegisterExts(e.exts); err != nil {
			return nil, false, err
		}
	}
	if len(vars) > 0 {
		if err := c.RegisterVars(vars); err != nil {
			return nil, false, err
		}
	}
	out, err := c.EvalLimited(in, maxDepth, timeLimit)
	if errors.Is(err, xj.ErrUndefined) || errors.Is(err, jtypes.ErrUndefined) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	out, ok := plain(out)
	if !ok {
		return nil, false, ErrUnsupportedResult
	}
	return out, true, nil
}

// plain turns a result into plain JSON values; ok is false for a function or another value
// JSON cannot hold.
func plain(v any) (any, bool) {
	switch x := v.(type) {
	case nil, string, bool:
		return x, true
	case *any: // the evaluator's null
		if x == nil {
			return nil, true
		}
		return plain(*x)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, false
		}
		if x == 0 {
			return float64(0), true
		}
		return x, true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			p, ok := plain(e)
			if !ok {
				return nil, false
			}
			out[k] = p
		}
		return out, true
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			p, ok := plain(e)
			if !ok {
				return nil, false
			}
			out[i] = p
		}
		return out, true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		out := make([]any, rv.Len())
		for i := range out {
			p, ok := plain(rv.Index(i).Interface())
			if !ok {
				return nil, false
			}
			out[i] = p
		}
		return out, true
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			return nil, false
		}
		out := make(map[string]any, rv.Len())
		for _, k := range rv.MapKeys() {
			p, ok := plain(rv.MapIndex(k).Interface())
			if !ok {
				return nil, false
			}
			out[k.String()] = p
		}
		return out, true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(rv.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return float64(rv.Uint()), true
	case reflect.Float32:
		return plain(rv.Float())
	case reflect.String:
		return rv.String(), true
	case reflect.Bool:
		return rv.Bool(), true
	}
	return nil, false // a function or another Go value, not JSON
}

// added are the functions Step Functions adds to JSONata, and JSONata functions the port lacks.
var added = map[string]xj.Extension{
	"formatInteger": {Func: formatInteger, UndefinedHandler: firstUndefined},
	"parseInteger":  {Func: parseInteger, UndefinedHandler: firstUndefined},
	"toMillis":      {Func: toMillis, UndefinedHandler: firstUndefined},
	"string":        {Func: stringFn, UndefinedHandler: firstUndefined, EvalContextHandler: jtypes.ArgCountEquals(0)},
	"assert": {Func: func(ok bool, msg jtypes.OptionalString) (any, error) {
		if ok {
			return nil, jtypes.ErrUndefined
		}
		if msg.IsSet() {
			return nil, fmt.Errorf("D3141: %s", msg.String)
		}
		return nil, fmt.Errorf("D3141: $assert() statement failed")
	}},
	"fromMillis": {Func: fromMillis, UndefinedHandler: firstUndefined, EvalContextHandler: jtypes.ArgCountEquals(0)},
	"partition":  {Func: func() string { return "aws" }},
	"uuid":       {Func: newUUID},
	"parse": {Func: func(s string) (any, error) {
		var v any
		dec := json.NewDecoder(strings.NewReader(s))
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("$parse: the string is not JSON: %v", err)
		}
		if dec.More() {
			return nil, fmt.Errorf("$parse: unexpected text after the JSON value")
		}
		return v, nil
	}},
	"hash": {Func: func(v any, algo string) (string, error) {
		data, ok := v.(string)
		if !ok {
			b, err := json.Marshal(v)
			if err != nil {
				return "", err
			}
			data = string(b)
		}
		var h hash.Hash
		switch algo {
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
			return "", fmt.Errorf("$hash: unknown algorithm %q (MD5, SHA-1, SHA-256, SHA-384, SHA-512)", algo)
		}
		h.Write([]byte(data))
		return hex.EncodeToString(h.Sum(nil)), nil
	}},
	"random": {Func: func(seed jtypes.OptionalFloat64) float64 {
		if seed.IsSet() {
			return mrand.New(mrand.NewPCG(uint64(int64(seed.Float64)), 0)).Float64()
		}
		return mrand.Float64()
	}},
	"range": {Func: func(start, end, step float64) ([]any, error) {
		if step == 0 || step != math.Trunc(step) || start != math.Trunc(start) || end != math.Trunc(end) {
			return nil, fmt.Errorf("$range: start, end and step must be integers and step must not be 0")
		}
		out := []any{}
		for v := start; (step > 0 && v <= end) || (step < 0 && v >= end); v += step {
			out = append(out, v)
			if len(out) > 1000 {
				return nil, fmt.Errorf("$range: more than 1000 items")
			}
		}
		return out, nil
	}},
}

func newUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
