package jsonata

import (
	"strings"
	"testing"
	"time"
)

// Details where JSONata's own behaviour is now followed: null stays null, and/or stop at the
// left side when it decides, order comparisons with a missing side give nothing, $not and
// $lookup of nothing give nothing, a sort at the start of a path sorts the whole input.
func TestJSONataDetails(t *testing.T) {
	in := map[string]any{"blank": nil, "n": "", "people": []any{
		map[string]any{"who": "Ida", "age": 41.0}, map[string]any{"who": "Bo", "age": 19.0}, map[string]any{"who": "Al", "age": 30.0}}}
	for src, want := range map[string]string{
		`[null]`:                          `[null]`,
		`[null, 1, null]`:                 `[null,1,null]`,
		`{"a": null}`:                     `{"a":null}`,
		`blank`:                           `null`,
		`{"b": blank}`:                    `{"b":null}`,
		`n = "" or $number(n) = 0`:        `true`,
		`$type(n) = "number" and n > 1`:   `false`,
		`people^(age).who`:                `["Bo","Al","Ida"]`,
		`people.$^(age)`:                  `[{"age":19,"who":"Bo"},{"age":30,"who":"Al"},{"age":41,"who":"Ida"}]`,
		`$lookup({"x": 1}, "x")`:          `1`,
		`$exists(3 > $nothing)`:           `false`,
		`$exists($nothing = 3)`:           `true`,
		`$exists($not($nothing))`:         `false`,
		`$exists($lookup({"x": 1}, "y"))`: `false`,
	} {
		v, ok := eval(t, src, in, nil)
		if !ok || js(v) != want {
			t.Errorf("%s = %s (%v), want %s", src, js(v), ok, want)
		}
	}
	v, ok := eval(t, `$^(age)[0].who`, in["people"], nil)
	if !ok || js(v) != `"Bo"` {
		t.Errorf("$^(age)[0].who = %s", js(v))
	}
	for _, src := range []string{`$lowercase(blank)`, `$substring(blank, 1)`, `$uppercase(blank)`} {
		e, err := Compile(src)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := e.Eval(in, nil); err == nil || !strings.Contains(err.Error(), "does not match") {
			t.Errorf("%s: %v, want a type error", src, err)
		}
	}
}

func TestPathsLikeJSONata(t *testing.T) {
	rows := []any{
		map[string]any{"tags": []any{map[string]any{"t": "a"}}, "n": []any{1.0, 2.0}},
		map[string]any{"tags": []any{map[string]any{"t": "b"}, map[string]any{"t": "c"}}, "n": []any{3.0}},
	}
	for src, want := range map[string]string{
		`tags`:                            `[{"t":"a"},{"t":"b"},{"t":"c"}]`,
		`tags[0]`:                         `{"t":"a"}`,
		`tags[0].t`:                       `"a"`,
		`$.tags[0].t`:                     `["a","b"]`,
		`n`:                               `[1,2,3]`,
		`(n)[-1]`:                         `3`,
		`"tags"."t"`:                      `["a","b","c"]`,
		`/* the tags */ tags.t /* all */`: `["a","b","c"]`,
		`$count(/* rows */ $)`:            `2`,
		`$exists($sum.*)`:                 `false`,
	} {
		v, ok := eval(t, src, rows, nil)
		if !ok || js(v) != want {
			t.Errorf("%s = %s (%v), want %s", src, js(v), ok, want)
		}
	}
	if _, err := Compile(`tags /* never closed`); err == nil {
		t.Errorf("an unclosed comment compiled")
	}
}

func TestOperatorsLikeJSONata(t *testing.T) {
	in := map[string]any{"price": 0.1, "qty": 3.0, "rows": []any{map[string]any{"a": 1.0, "b": 2.0}}}
	for src, want := range map[string]string{
		`"total: " & (price * qty)`:          `"total: 0.3"`,
		`"big: " & 1e21`:                     `"big: 1e+21"`,
		`"list: " & [1, "x"]`:                `"list: [1,\"x\"]"`,
		`rows ~> $map(function($r){$r.a})[]`: `[1]`,
		`rows.[a, b][]`:                      `[[1,2]]`,
		`rows.[a, b]`:                        `[1,2]`,
	} {
		v, ok := eval(t, src, in, nil)
		if !ok || js(v) != want {
			t.Errorf("%s = %s (%v), want %s", src, js(v), ok, want)
		}
	}
	if v, ok := eval(t, `$`, nil, nil); !ok || v != nil {
		t.Errorf("$ of a null input = %v (%v), want null", v, ok)
	}
	e, _ := Compile(`$replace("banana", /x*/, "-")`)
	if _, _, err := e.Eval(nil, nil); err == nil || !strings.Contains(err.Error(), "D1004") {
		t.Errorf("an empty-matching pattern: %v, want D1004", err)
	}
}

// Objects keep no key order in Go: their keys are visited sorted, so that the same
// expression on the same input always gives the same result.
func TestObjectKeysInSortedOrder(t *testing.T) {
	in := map[string]any{"m": map[string]any{"zeta": 1.0, "alpha": 2.0, "mid": 3.0, "beta": 4.0}}
	for src, want := range map[string]string{
		`$keys(m)`:                            `["alpha","beta","mid","zeta"]`,
		`m.*`:                                 `[2,4,3,1]`,
		`$spread(m)`:                          `[{"alpha":2},{"beta":4},{"mid":3},{"zeta":1}]`,
		`$each(m, function($v, $k){$k & $v})`: `["alpha2","beta4","mid3","zeta1"]`,
		`$keys([m, {"gamma": 0}])`:            `["alpha","beta","mid","zeta","gamma"]`,
	} {
		for range 5 {
			v, ok := eval(t, src, in, nil)
			if !ok || js(v) != want {
				t.Errorf("%s = %s, want %s", src, js(v), want)
				break
			}
		}
	}
}

// A lone "!" (or "~") used to be read as an empty name, again and again: compiling such an
// expression never ended.
func TestLoneOperatorCharacter(t *testing.T) {
	for _, src := range []string{`a ! b`, `!a`, `function($x)<a!s>{$x}(1)`, `a ~ b`} {
		done := make(chan error, 1)
		go func() { _, err := Compile(src); done <- err }()
		select {
		case err := <-done:
			if err == nil {
				t.Errorf("%s compiled", src)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: compiling did not end", src)
		}
	}
}
