package jsonata

import (
	"strings"
	"testing"
	"time"

	"jobdesk/engine/flow/jsonata/internal/xj"
)

func TestRecursiveFunctions(t *testing.T) {
	for src, want := range map[string]string{
		`($f := function($n){$n <= 1 ? 1 : $n * $f($n - 1)}; $f(10))`:                                                              `3628800`,
		`($f := λ($n){$n < 2 ? $n : $f($n - 1) + $f($n - 2)}; $f(15))`:                                                             `610`,
		`($count := function($n, $acc){$n = 0 ? $acc : $count($n - 1, $acc + 2)}; $count(50000, 0))`:                               `100000`,
		`($even := function($n){$n = 0 ? true : $odd($n - 1)}; $odd := function($n){$n = 0 ? false : $even($n - 1)}; $odd(20001))`: `true`,
		`($walk := function($x){$type($x) = "array" ? $sum($map($x, $walk)) : $x}; $walk([1, [2, [3, [4]]]]))`:                     `10`,
	} {
		v, ok := eval(t, src, nil, nil)
		if !ok || js(v) != want {
			t.Errorf("%s = %s, want %s", src, js(v), want)
		}
	}
}

// A function that recurses without end stops with U1001: by depth when its calls nest, by
// time when they are tail calls (which do not nest).
func TestEndlessRecursionStops(t *testing.T) {
	for _, c := range []struct {
		src  string
		want string
	}{
		{`($f := function($n){1 + $f($n + 1)}; $f(0))`, "Stack overflow"},
		{`($f := function($n){$f($n)[0]}; $f(0))`, "Stack overflow"},
		{`($f := function(){$f()}; $f())`, "timeout"},
		{`($g := function($n){$n > 0 ? $g($n + 1) : 0}; $g(1))`, "timeout"},
	} {
		e, err := Compile(c.src)
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		_, _, err = e.eval(nil, nil, xj.DefaultMaxDepth, 300*time.Millisecond)
		if err == nil || !strings.Contains(err.Error(), "U1001") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want U1001 %s", c.src, err, c.want)
		}
	}
	// the default limits apply to Eval
	e, _ := Compile(`($f := function($n){1 + $f($n + 1)}; $f(0))`)
	if _, _, err := e.Eval(nil, nil); err == nil || !strings.Contains(err.Error(), "U1001") {
		t.Errorf("endless recursion through Eval: %v", err)
	}
}
