package flow

import (
	"strings"
	"testing"

	"jobdesk/engine/flow/asl"
)

// JSONata path bindings in states: @ (focus), # (index) and % (parent).
var jsonataPathCases = []ccase{
	{name: "j-focus-join", def: jm(`"P":{"Type":"Pass","Output":"{% $states.input.orders@$o.customers@$c[$o.cid = $c.id].{'who': $c.name, 'what': $o.item} %}","End":true}`, "P"),
		input:  `{"orders":[{"cid":2,"item":"pen"},{"cid":1,"item":"ink"}],"customers":[{"id":1,"name":"Ann"},{"id":2,"name":"Ben"}]}`,
		output: `[{"who":"Ben","what":"pen"},{"who":"Ann","what":"ink"}]`},
	{name: "j-index-and-parent", def: jm(`"A":{"Type":"Pass","Assign":{"firsts":"{% $states.input.lists.items#$i[$i = 0].(%.name & ':' & v) %}"},"Next":"B"},
		"B":{"Type":"Pass","Output":"{% $firsts %}","End":true}`, "A"),
		input:  `{"lists":[{"name":"x","items":[{"v":"1"},{"v":"2"}]},{"name":"y","items":[{"v":"3"}]}]}`,
		output: `["x:1","y:3"]`},
	{name: "j-map-parent", def: jm(`"M":{"Type":"Map","Items":"{% $states.input.groups.members.{'g': %.g, 'm': $} %}","ItemProcessor":{"StartAt":"I","States":{"I":{"Type":"Pass","Output":"{% $states.input.g & $states.input.m %}","End":true}}},"End":true}`, "M"),
		input: `{"groups":[{"g":"a","members":["1","2"]},{"g":"b","members":["3"]}]}`, output: `["a1","a2","b3"]`},
	{name: "j-recursive-function", def: jm(`"P":{"Type":"Pass","Output":"{% ($fact := function($n){$n <= 1 ? 1 : $n * $fact($n - 1)}; $fact($states.input.n)) %}","End":true}`, "P"),
		input: `{"n":6}`, output: `720`},
	{name: "j-endless-recursion", def: jm(`"P":{"Type":"Pass","Output":"{% ($f := function($n){1 + $f($n)}; $f(0)) %}","End":true}`, "P"),
		input: `{}`, status: StatusFailed, err: "States.QueryEvaluationError"},
	{name: "j-eval-function", def: jm(`"A":{"Type":"Pass","Assign":{"rate":3},"Next":"B"},"B":{"Type":"Pass","Output":"{% $eval($states.input.formula, $states.input.values) %}","End":true}`, "A"),
		input: `{"formula":"a * b + $rate","values":{"a":2,"b":5}}`, output: `13`},
	{name: "j-map-concurrent-context", def: jm(`"M":{"Type":"Map","Items":"{% $states.input.ws %}","MaxConcurrency":10,"ItemProcessor":{"StartAt":"I","States":{"I":{"Type":"Pass","Output":"{% $states.input.$uppercase() %}","End":true}}},"End":true}`, "M"),
		input: `{"ws":["w0","w1","w2","w3","w4","w5","w6","w7","w8","w9","w10","w11","w12","w13","w14","w15","w16","w17","w18","w19","w20","w21","w22","w23","w24","w25","w26","w27","w28","w29","w30","w31","w32","w33","w34","w35","w36","w37","w38","w39"]}`, output: `["W0","W1","W2","W3","W4","W5","W6","W7","W8","W9","W10","W11","W12","W13","W14","W15","W16","W17","W18","W19","W20","W21","W22","W23","W24","W25","W26","W27","W28","W29","W30","W31","W32","W33","W34","W35","W36","W37","W38","W39"]`},
}

func TestJSONataPathBindings(t *testing.T) { runCases(t, jsonataPathCases) }

// A parent operator with no step to refer to, or a binding that is not a variable, is a
// definition error at creation.
func TestJSONataPathBindingDefinitionErrors(t *testing.T) {
	for _, expr := range []string{`(%)`, `$states.% `, `$states.input@x`, `$states.input.a[0]@$a`} {
		def := jm(`"P":{"Type":"Pass","Output":"{% `+expr+` %}","End":true}`, "P")
		m, ds := asl.Parse([]byte(def), nil)
		if m != nil {
			t.Errorf("%s: accepted", expr)
			continue
		}
		found := false
		for _, d := range ds {
			if strings.Contains(d.Message, "not valid") {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: diagnostics %v", expr, ds)
		}
	}
}
