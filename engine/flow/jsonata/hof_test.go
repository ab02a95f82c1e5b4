package jsonata

import (
	"strings"
	"testing"
)

func TestHigherOrderFunctions(t *testing.T) {
	in := map[string]any{"one": 7.0, "many": []any{4.0, 9.0, 2.0}, "obj": map[string]any{"k": "v"}}
	for src, want := range map[string]string{
		`$map(many, $string)`:                                          `["4","9","2"]`,
		`$map(many, function($v, $i){$v * $i})`:                        `[0,9,4]`,
		`$map(many, function($v, $i, $a){$count($a)})`:                 `[3,3,3]`,
		`$map(one, function($v){$v + 1})`:                              `8`,
		`$map([3], function($v){[$v]})`:                                `[3]`,
		`$filter(one, function($v){true})`:                             `7`,
		`$filter(many, function($v, $i){$i > 0})`:                      `[9,2]`,
		`$single(many, function($v){$v > 8})`:                          `9`,
		`$single([5])`:                                                 `5`,
		`$reduce(many, function($a, $v){$a + $v})`:                     `15`,
		`$reduce(many, function($a, $v, $i){$a + $v * $i}, 0)`:         `13`,
		`$reduce(many, function($a, $v, $i, $all){$a + $count($all)})`: `10`,
		`obj.$each(function($v, $k){$k & "=" & $v})`:                   `"k=v"`,
		`$number("0x1F") + $number("0b101") + $number("0o17")`:         `51`,
		`$number("12")`:                                                `12`,
		`$exists($contains("abc", $nothing))`:                          `false`,
		`$exists($distinct($nothing))`:                                 `false`,
	} {
		v, ok := eval(t, src, in, nil)
		if !ok || js(v) != want {
			t.Errorf("%s = %s (%v), want %s", src, js(v), ok, want)
		}
	}
	for src, code := range map[string]string{
		`$single(many, function($v){$v > 1})`:   "D3138",
		`$single(many, function($v){$v > 100})`: "D3139",
		`$reduce(many, function($v){$v})`:       "D3050",
		`$number("0xZZ")`:                       "D3030",
	} {
		e, err := Compile(src)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := e.Eval(in, nil); err == nil || !strings.Contains(err.Error(), code) {
			t.Errorf("%s: %v, want %s", src, err, code)
		}
	}
}
