package jsonata

import (
	"encoding/json"
	"testing"
)

// FuzzEval: any expression over any input compiles or fails, and evaluates or fails, without
// panicking or hanging; the fast path and the general evaluator never disagree.
func FuzzEval(f *testing.F) {
	for _, s := range []string{`$states.input.a.b`, `a + 1`, `$x = 'y'`, `$sum(a)`, `$formatInteger(a, '#,##0')`, `$parseInteger('twelve', 'w')`,
		`$hash(a, 'MD5')`, `$range(1, a, 1)`, `a[`, `$parse(a)`, `a.b & "c"`, `$formatInteger(a, 'W;o')`,
		`a@$x.b#$i[$i = 0].%.b`, `a.b.%.%`, `($f := function($n){$n > 0 ? $f($n - 1) : 0}; $f(a.b))`, `$eval("a.b")`,
		`function($x, $y)<n+s-:a>{[$x, $y]}(1, 2)`, `a.b ~> $map(function($v, $i){$v})[]`} {
		f.Add(s, `{"a":{"b":2},"s":"x"}`)
	}
	f.Fuzz(func(t *testing.T, src, doc string) {
		e, err := Compile(src)
		if err != nil {
			return
		}
		var in any
		if json.Unmarshal([]byte(doc), &in) != nil {
			return
		}
		vars := map[string]any{"states": map[string]any{"input": in}, "x": "y"}
		v, defined, err := e.Eval(in, vars)
		if err != nil || e.fast == nil {
			return
		}
		slow := *e
		slow.fast = nil
		sv, sdef, serr := slow.Eval(in, vars)
		if serr == nil && sdef && defined && !sameValue(v, sv) {
			t.Fatalf("%s on %s: fast %v, evaluator %v", src, doc, v, sv)
		}
	})
}
