package jsonata

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"testing"
)

func eval(t *testing.T, src string, input any, vars map[string]any) (any, bool) {
	t.Helper()
	e, err := Compile(src)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	v, ok, err := e.Eval(input, vars)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	return v, ok
}

func js(v any) string { b, _ := json.Marshal(v); return string(b) }

func TestExpressions(t *testing.T) {
	in := map[string]any{"a": []any{1.0, 2.0, 3.0}, "s": "x"}
	vars := map[string]any{"states": map[string]any{"input": in}, "k": 10.0}
	for src, want := range map[string]string{
		`$sum($states.input.a) + $k`:                   `16`,
		`$states.input.a[$ > 1]`:                       `[2,3]`,
		`{"n": $count(a), "s": s & "y"}`:               `{"n":3,"s":"xy"}`,
		`$partition()`:                                 `"aws"`,
		`$range(0, 10, 5)`:                             `[0,5,10]`,
		`$range(3, 1, -1)`:                             `[3,2,1]`,
		`$hash("abc", "SHA-256")`:                      `"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"`,
		`$hash("abc", "MD5")`:                          `"900150983cd24fb0d6963f7d28e17f72"`,
		`$parse('{"x":[1,{"y":null}]}')`:               `{"x":[1,{"y":null}]}`,
		`$random(7) = $random(7)`:                      `true`,
		`$random() >= 0 and $random() < 1`:             `true`,
		`$map([1,2], function($v){ $v * $k })`:         `[10,20]`,
		`$states.input.s in ["x", "y"] ? "in" : "out"`: `"in"`,
	} {
		v, ok := eval(t, src, in, vars)
		if !ok || js(v) != want {
			t.Errorf("%s = %s (%v), want %s", src, js(v), ok, want)
		}
	}
	v, _ := eval(t, `$uuid()`, nil, nil)
	if s, _ := v.(string); !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(s) {
		t.Errorf("$uuid() = %v", v)
	}
	if _, ok := eval(t, `$states.input.nope`, nil, vars); ok {
		t.Errorf("a missing field is defined")
	}
	if _, ok := eval(t, `$assert(1 < 2, 'no')`, nil, nil); ok {
		t.Errorf("a passing $assert gave a value")
	}
	for _, src := range []string{`$assert(1 > 2, 'no')`, `$assert(1 > 2)`, `$assert("x")`, `$hash("a", "CRC")`, `$parse("{")`, `$range(0, 1, 0)`, `$undefinedFn(1)`} {
		e, err := Compile(src)
		if err != nil {
			continue
		}
		if _, _, err := e.Eval(nil, nil); err == nil {
			t.Errorf("%s: no error", src)
		}
	}
	if _, err := Compile(`{"a": `); err == nil {
		t.Errorf("bad syntax compiled")
	}
	e, _ := Compile(`function($x){$x}`)
	if _, _, err := e.Eval(nil, nil); err == nil {
		t.Errorf("a function result is not JSON")
	}
}

func TestVariablesAreOwnPerEvaluation(t *testing.T) {
	e, err := Compile(`$x`)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok, _ := e.Eval(nil, map[string]any{"x": 1.0}); !ok || v != 1.0 {
		t.Fatalf("$x = %v", v)
	}
	if _, ok, _ := e.Eval(nil, nil); ok {
		t.Errorf("a variable of an earlier evaluation is still bound")
	}
}

func TestFormatAndParseInteger(t *testing.T) {
	for _, c := range []struct {
		n      float64
		pic, s string
	}{
		{7, "000", "007"}, {-42, "0000", "-0042"}, {9876543, "#,##0", "9,876,543"}, {9876543, "#;###,##0", ""},
		{21, "0;o", "21st"}, {112, "0;o", "112th"}, {2024, "I", "MMXXIV"}, {14, "i", "xiv"}, {28, "A", "AB"}, {52, "a", "az"},
		{42, "w", "forty-two"}, {1001, "w", "one thousand and one"}, {215, "Ww", "Two Hundred and Fifteen"}, {3, "W;o", "THIRD"},
		{40, "w;o", "fortieth"}, {2000000, "w", "two million"}, {305, "###٠", "٣٠٥"},
	} {
		if c.s == "" {
			continue
		}
		got, err := formatInteger(c.n, c.pic)
		if err != nil || got != c.s {
			t.Errorf("$formatInteger(%v, %q) = %q, %v; want %q", c.n, c.pic, got, err, c.s)
		}
		back, err := parseInteger(c.s, c.pic)
		if err != nil || back != math.Abs(c.n)*sign(c.n) {
			t.Errorf("$parseInteger(%q, %q) = %v, %v; want %v", c.s, c.pic, back, err, c.n)
		}
	}
	for _, pic := range []string{"#", "β", "0٠", "0;x"} {
		if _, err := formatInteger(1, pic); err == nil {
			t.Errorf("picture %q accepted", pic)
		}
	}
	v, ok := eval(t, `$formatInteger($states.input.n, '#,##0')`, nil, map[string]any{"states": map[string]any{"input": map[string]any{"n": 1234.0}}})
	if !ok || v != "1,234" {
		t.Errorf("through an expression: %v", v)
	}
	if _, ok := eval(t, `$formatInteger(undefined, '0')`, nil, nil); ok {
		t.Errorf("undefined gave a value")
	}
}

func sign(f float64) float64 {
	if f < 0 {
		return -1
	}
	return 1
}

func TestFromMillisPictures(t *testing.T) {
	const ms = 1709289000123 // 2024-03-01T10:30:00.123Z, a Friday
	for _, c := range []struct{ src, want string }{
		{`$fromMillis(` + fmt.Sprint(ms) + `)`, "2024-03-01T10:30:00.123Z"},
		{`$fromMillis(` + fmt.Sprint(ms) + `, '[D01]/[M01]/[Y0001] [H01]:[m01]')`, "01/03/2024 10:30"},
		{`$fromMillis(` + fmt.Sprint(ms) + `, '[FNn], [D1o] [MNn] [Y]')`, "Friday, 1st March 2024"},
		{`$fromMillis(` + fmt.Sprint(ms) + `, '[FNn,3-3] [MN,3-3] [Y,2]')`, "Fri MAR 24"},
		{`$fromMillis(` + fmt.Sprint(ms) + `, '[h]:[m01] [P]', '-0500')`, "5:30 am"},
		{`$fromMillis(` + fmt.Sprint(ms) + `, '[H01]:[m01][Z01:01]', '+0530')`, "16:00+05:30"},
		{`$fromMillis(` + fmt.Sprint(ms) + `, '[X0001]-W[W01]-[F1] [d]')`, "2024-W09-5 61"},
		{`$fromMillis(` + fmt.Sprint(ms) + `, '[[[Y]]] [YI] [Dw]')`, "[2024] MMXXIV one"},
	} {
		v, ok := eval(t, c.src, nil, nil)
		if !ok || v != c.want {
			t.Errorf("%s = %v, want %q", c.src, v, c.want)
		}
	}
	for _, src := range []string{`$fromMillis(0, '[Q]')`, `$fromMillis(0, '[Y')`, `$fromMillis(0, '[YN]')`, `$fromMillis(0, '[Z010101]')`} {
		e, err := Compile(src)
		if err != nil {
			continue
		}
		if _, _, err := e.Eval(nil, nil); err == nil {
			t.Errorf("%s: no error", src)
		}
	}
}

func TestToMillisPictures(t *testing.T) {
	for _, c := range []struct {
		src  string
		want float64
	}{
		{`$toMillis('2024-03-01T10:30:00.123Z')`, 1709289000123},
		{`$toMillis('2024-03-01T16:00:00+05:30')`, 1709289000000},
		{`$toMillis('2024-03-01')`, 1709251200000},
		{`$toMillis('01/03/2024 10:30', '[D01]/[M01]/[Y0001] [H01]:[m01]')`, 1709289000000},
		{`$toMillis('1st March 2024', '[D1o] [MNn] [Y0001]')`, 1709251200000},
		{`$toMillis('10:30 am, 1 Mar 2024', '[h]:[m01] [P], [D] [MNn,3-3] [Y]')`, 1709289000000},
		{`$toMillis('5:30 pm 2024-061 -0500', '[h]:[m] [P] [Y]-[d001] [Z]')`, 1709332200000},
		{`$toMillis('first of March, two thousand and twenty-four', '[Dwo] of [MNn], [Yw]')`, 1709251200000},
	} {
		v, ok := eval(t, c.src, nil, nil)
		if !ok || v != c.want {
			t.Errorf("%s = %v, want %v", c.src, v, c.want)
		}
	}
	if _, ok := eval(t, `$toMillis('not a date', '[Y]-[M]-[D]')`, nil, nil); ok {
		t.Errorf("a text that does not match the picture gave a value")
	}
	for _, src := range []string{`$toMillis('March')`, `$toMillis('2024-05', '[Y]-[D]')`, `$toMillis('2024', '[Q]')`} {
		e, err := Compile(src)
		if err != nil {
			continue
		}
		if _, _, err := e.Eval(nil, nil); err == nil {
			t.Errorf("%s: no error", src)
		}
	}
}

func TestCoalescingAndDefaultOperators(t *testing.T) {
	in := map[string]any{"a": map[string]any{"b": 0.0, "n": nil}, "s": "", "xs": []any{1.0, 2.0}}
	for src, want := range map[string]string{
		`a.b ?? 5`:                    `0`,
		`a.missing ?? 5`:              `5`,
		`a.b ?: 5`:                    `5`,
		`s ?: "default"`:              `"default"`,
		`xs[0] ?: 9`:                  `1`,
		`a.missing ?? a.other ?? "z"`: `"z"`,
		`{"v": a.missing ?? 1 + 2}`:   `{"v":3}`,
		`a.b ?? 5 = 0`:                `true`,
		`(a.missing ?: 4) * 2`:        `8`,
		`$count(xs) > 1 ? (a.missing ?? "x") : "y"`: `"x"`,
		`"a ?? b" & (s ?: "c")`:                     `"a ?? bc"`,
	} {
		v, ok := eval(t, src, in, nil)
		if !ok || js(v) != want {
			t.Errorf("%s = %s (%v), want %s", src, js(v), ok, want)
		}
	}
}

func TestStringFunction(t *testing.T) {
	in := map[string]any{"n": 1e-7, "big": 1e21, "o": map[string]any{"a": []any{1.0, "x", nil, true}}, "s": "str"}
	for src, want := range map[string]string{
		`$string(n)`:               `1e-7`,
		`$string(big)`:             `1e+21`,
		`$string(0.1 + 0.2)`:       `0.3`,
		`$string(o)`:               `{"a":[1,"x",null,true]}`,
		`$string(o, true)`:         "{\n  \"a\": [\n    1,\n    \"x\",\n    null,\n    true\n  ]\n}",
		`$string(s)`:               `str`,
		`$string(function($x){1})`: ``,
		`s.$string()`:              `str`,
	} {
		v, ok := eval(t, src, in, nil)
		if !ok || v != want {
			t.Errorf("%s = %q (%v), want %q", src, v, ok, want)
		}
	}
	if _, ok := eval(t, `$string(nothing)`, in, nil); ok {
		t.Errorf("$string of nothing gave a value")
	}
}

// TestArithmeticAsJavaScript: numbers are doubles, as in JSONata on Step Functions, also where
// the fast path does not answer.
func TestArithmeticAsJavaScript(t *testing.T) {
	in := map[string]any{"a": 1.0, "b": 3.0, "xs": []any{0.1, 0.2}, "Order": map[string]any{"Product Name": "Hat"}}
	for src, want := range map[string]string{
		`a / b`:                      `0.3333333333333333`,
		`$sum(xs)`:                   `0.30000000000000004`,
		`(a / b) * 3 + 0.000000001`:  `1.000000001`,
		`$round(a / b * 100, 2)`:     `33.33`,
		`123456789.123456789 * 1`:    `123456789.12345679`,
		`Order."Product Name"`:       `"Hat"`,
		"Order.`Product Name` & '!'": `"Hat!"`,
	} {
		v, ok := eval(t, src, in, nil)
		if !ok || js(v) != want {
			t.Errorf("%s = %s (%v), want %s", src, js(v), ok, want)
		}
	}
}
