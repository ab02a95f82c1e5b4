package jsonata

import (
	"strings"
	"testing"
)

func TestFunctionSignatures(t *testing.T) {
	for src, want := range map[string]string{
		`function($a, $b)<s?:s>{$a & "|" & $b}("x")`:                       `"x|"`,
		`function($xs, $sep)<a<s>s?:s>{$join($xs, $sep)}("solo")`:          `"solo"`,
		`function($xs, $sep)<a<s>s?:s>{$join($xs, $sep)}(["p", "q"], "+")`: `"p+q"`,
		`function($a, $b)<n+:n>{$a + $b}(4, 5, 6)`:                         `9`,
		`function($a, $b, $c)<n+s:a>{[$a, $b, $c]}(1, 2, "z")`:             `[1,2,"z"]`,
		`function($a, $b)<n+s-:a>{[$a, $b]}(7)`:                            `[7,"ctx"]`,
		`function($a)<a<n>>{$count($a)}(3)`:                                `1`,
		`function($a, $b)<s?n+:a<n>>{[$a, $b]}(1, 2, 3)`:                   `[1,2]`,
		`($f := function($x)<n:n>{$x * 2}; $f(21))`:                        `42`,
		`($g := function($v)<(ns):s>{$string($v)}; [$g(1), $g("a")])`:      `["1","a"]`,
	} {
		v, ok := eval(t, src, "ctx", nil)
		if !ok || js(v) != want {
			t.Errorf("%s = %s, want %s", src, js(v), want)
		}
	}
	for _, src := range []string{
		`function($x)<n:n>{$x}("a")`,
		`function($x)<a<n>>{$x}(["a"])`,
		`function($x, $y)<nn:n>{$x}(1)`,
		`function($a)<n-:n>{$a}()`, // the context "ctx" is not a number
	} {
		e, err := Compile(src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if _, _, err := e.Eval("ctx", nil); err == nil || !strings.Contains(err.Error(), "T04") {
			t.Errorf("%s: %v, want a T04xx error", src, err)
		}
	}
}
