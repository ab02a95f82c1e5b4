package jsonata

import (
	"strings"
	"testing"
)

func TestEvalFunction(t *testing.T) {
	in := map[string]any{"rules": map[string]any{"total": "qty * price"}, "qty": 3.0, "price": 2.5,
		"box": map[string]any{"qty": 2.0, "price": 4.0}}
	vars := map[string]any{"k": 10.0}
	for src, want := range map[string]string{
		`$eval(rules.total)`:          `7.5`,
		`$eval(rules.total, box)`:     `8`,
		`$eval("$k * 2")`:             `20`,
		`($x := 4; $eval("$x + $k"))`: `14`,
		`$eval("[1, $string(2)]")`:    `[1,"2"]`,
		`$eval("missing ?? 'none'")`:  `"none"`,
		`box.$eval("qty + price")`:    `6`,
		`$map(["1+1", "2*3"], $eval)`: `[2,6]`,
		`$eval("$eval('1 + 1') * 3")`: `6`,
	} {
		v, ok := eval(t, src, in, vars)
		if !ok || js(v) != want {
			t.Errorf("%s = %s, want %s", src, js(v), want)
		}
	}
	if _, ok := eval(t, `$eval(nothing)`, in, nil); ok {
		t.Errorf("$eval of nothing gave a value")
	}
	for src, code := range map[string]string{`$eval("[1, #x]")`: "D3120", `$eval("$nofn(1)")`: "D3121", `$eval(5)`: "T0410"} {
		e, err := Compile(src)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := e.Eval(in, nil); err == nil || !strings.Contains(err.Error(), code) {
			t.Errorf("%s: %v, want %s", src, err, code)
		}
	}
}
