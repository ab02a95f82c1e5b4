package jsonata

import (
	"encoding/json"
	"testing"
)

// TestFastPathAgreesWithEvaluator: every expression the fast path answers gives what the
// general evaluator gives (or the fast path leaves it to the evaluator).
func TestFastPathAgreesWithEvaluator(t *testing.T) {
	inputs := []string{`{"a":{"b":2,"s":"x"},"n":3,"t":true,"xs":[1,2],"o":{"xs":[{"b":1}]},"z":null}`, `[1,2]`, `5`, `null`, `{}`}
	exprs := []string{`$states.input.a.b`, `$states.input.n + 1`, `$states.input.n >= 3`, `$states.input.n / 2`, `a.b * n`, `a.s & "y"`,
		`a.s = 'x'`, `t = true`, `t != false`, `n - a.b`, `n < 2`, `n <= 3`, `n > 3`, `$k`, `$k.v`, `$k + n`, `xs`, `o.xs.b`, `z`, `missing`,
		`missing + 1`, `$states.input`, `$states.input.xs`, `"lit"`, `42`, `true`, `null`, `a.s < "z"`, `n = "3"`, `n / 0`, `$nope`, `$states.context.x`}
	vars := func(in any) map[string]any {
		return map[string]any{"states": map[string]any{"input": in, "context": map[string]any{"x": 1.0}}, "k": map[string]any{"v": 7.0}}
	}
	answered := 0
	for _, src := range exprs {
		e, err := Compile(src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if e.fast == nil {
			t.Errorf("%s: not taken by the fast path", src)
			continue
		}
		for _, js := range inputs {
			var in any
			json.Unmarshal([]byte(js), &in)
			vs := vars(in)
			if src == `$k + n` {
				vs["k"] = 1.0
			}
			fv, fdef, ok := e.fast.eval(in, vs)
			if !ok {
				continue
			}
			answered++
			slow := *e
			slow.fast = nil
			sv, sdef, err := slow.Eval(in, vs)
			if fdef && fv == nil && !sdef && err == nil {
				continue // a JSON null: JSONata (and Step Functions) give null; the port gives nothing
			}
			if err != nil || fdef != sdef || (fdef && !sameValue(fv, sv)) {
				t.Errorf("%s on %s: fast %v (%v), evaluator %v (%v, %v)", src, js, fv, fdef, sv, sdef, err)
			}
		}
	}
	if answered < 60 {
		t.Errorf("the fast path answered only %d evaluations", answered)
	}
	for _, src := range []string{`a[0]`, `$sum(xs)`, `a.b + 1 + 2`, `-1`, `a and b`, `$x.y[0]`, `a.*`, `"a\"b"`} {
		if e, err := Compile(src); err == nil && e.fast != nil {
			t.Errorf("%s: taken by the fast path", src)
		}
	}
}
