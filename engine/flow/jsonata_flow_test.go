package flow

import (
	"strings"
	"testing"

	"jobdesk/engine/flow/asl"
)

// jm builds a state machine in the JSONata query language.
func jm(states string, start string) string {
	return `{"QueryLanguage":"JSONata","StartAt":"` + start + `","States":{` + states + `}}`
}

var jsonataCases = []ccase{
	{name: "j-pass-output", def: jm(`"P":{"Type":"Pass","Output":{"sum":"{% $states.input.a + $states.input.b %}","lit":"x","arr":[1,"{% $states.input.a %}"]},"End":true}`, "P"),
		input: `{"a":1,"b":2}`, output: `{"sum":3,"lit":"x","arr":[1,1]}`},
	{name: "j-pass-default-output", def: jm(`"P":{"Type":"Pass","End":true}`, "P"), input: `{"a":1}`, output: `{"a":1}`},
	{name: "j-per-state", def: `{"StartAt":"A","States":{"A":{"Type":"Pass","Parameters":{"x.$":"$.a"},"Next":"B"},
		"B":{"Type":"Pass","QueryLanguage":"JSONata","Output":"{% $states.input.x * 10 %}","End":true}}}`, input: `{"a":4}`, output: `40`},
	{name: "j-assign-next-state", def: jm(`"A":{"Type":"Pass","Assign":{"x":"{% $states.input.n %}","y":5},"Output":"{% $x %}","Next":"B"},
		"B":{"Type":"Pass","Output":{"x":"{% $x %}","y":"{% $y %}","in":"{% $states.input %}"},"End":true}`, "A"),
		input: `{"n":1}`, status: StatusFailed, err: "States.QueryEvaluationError",
		cause: at("A", 2) + "The JSONata expression '$x' specified for the field 'Output' returned nothing (undefined)."},
	{name: "j-assign", def: jm(`"A":{"Type":"Pass","Assign":{"x":"{% $states.input.n %}","y":5},"Next":"B"},
		"B":{"Type":"Pass","Output":{"x":"{% $x %}","y":"{% $y %}"},"End":true}`, "A"), input: `{"n":1}`, output: `{"x":1,"y":5}`},
	{name: "j-task-arguments-result", def: jm(`"T":{"Type":"Task","Resource":"λadd","Arguments":{"a":"{% $states.input.x %}","b":2},
		"Output":{"r":"{% $states.result %}","in":"{% $states.input.x %}"},"Assign":{"last":"{% $states.result %}"},"Next":"N"},
		"N":{"Type":"Pass","Output":"{% $last %}","End":true}`, "T"), input: `{"x":40}`, output: `42`},
	{name: "j-task-default-output-is-result", def: jm(`"T":{"Type":"Task","Resource":"λadd","Arguments":{"a":1,"b":2},"End":true}`, "T"), input: `{}`, output: `3`},
	{name: "j-task-timeout-expr", def: jm(`"T":{"Type":"Task","Resource":"λadd","Arguments":{"a":1,"b":2},"TimeoutSeconds":"{% $states.input.t %}","End":true}`, "T"),
		input: `{"t":0}`, status: StatusFailed, err: "States.QueryEvaluationError"},
	{name: "j-choice", def: jm(`"C":{"Type":"Choice","Choices":[{"Condition":"{% $states.input.n > 3 %}","Next":"Big","Output":{"k":"big"}}],"Default":"Small","Assign":{"d":true}},
		"Big":{"Type":"Pass","End":true},"Small":{"Type":"Pass","Output":"{% $d %}","End":true}`, "C"), input: `{"n":5}`, output: `{"k":"big"}`},
	{name: "j-choice-default", def: jm(`"C":{"Type":"Choice","Choices":[{"Condition":"{% $states.input.n > 3 %}","Next":"Big"}],"Default":"Small","Assign":{"d":true}},
		"Big":{"Type":"Pass","End":true},"Small":{"Type":"Pass","Output":"{% $d %}","End":true}`, "C"), input: `{"n":1}`, output: `true`},
	{name: "j-choice-not-boolean", def: jm(`"C":{"Type":"Choice","Choices":[{"Condition":"{% $states.input.n %}","Next":"E"}]},"E":{"Type":"Succeed"}`, "C"),
		input: `{"n":1}`, status: StatusFailed, err: "States.QueryEvaluationError", cause: "Expected 'boolean'"},
	{name: "j-map-items-selector", def: jm(`"M":{"Type":"Map","Items":"{% $states.input.xs %}","ItemSelector":{"v":"{% $states.context.Map.Item.Value %}","i":"{% $states.context.Map.Item.Index %}","k":"{% $states.input.k %}"},
		"MaxConcurrency":"{% 2 %}","ItemProcessor":{"StartAt":"I","States":{"I":{"Type":"Pass","Output":"{% $states.input.v * $states.input.k + $states.input.i %}","End":true}}},"End":true}`, "M"),
		input: `{"xs":[1,2,3],"k":10}`, output: `[10,21,32]`},
	{name: "j-map-items-literal", def: jm(`"M":{"Type":"Map","Items":[1,"{% $states.input.x %}"],"ItemProcessor":{"StartAt":"I","States":{"I":{"Type":"Pass","End":true}}},"End":true}`, "M"),
		input: `{"x":"two"}`, output: `[1,"two"]`},
	{name: "j-map-items-not-array", def: jm(`"M":{"Type":"Map","Items":"{% $states.input.x %}","ItemProcessor":{"StartAt":"I","States":{"I":{"Type":"Pass","End":true}}},"End":true}`, "M"),
		input: `{"x":{"foo":"bar"}}`, status: StatusFailed, err: "States.QueryEvaluationError",
		cause: at("M", 2) + `The JSONata expression '$states.input.x' specified for the field 'Items' returned an unexpected result type. Expected 'array', but was 'object' for value: {"foo":"bar"}`},
	{name: "j-map-outer-variable", def: jm(`"A":{"Type":"Pass","Assign":{"k":3},"Next":"M"},"M":{"Type":"Map","ItemProcessor":{"StartAt":"I","States":{"I":{"Type":"Pass","Output":"{% $states.input * $k %}","End":true}}},"End":true}`, "A"),
		input: `[1,2]`, output: `[3,6]`},
	{name: "j-parallel-arguments", def: jm(`"P":{"Type":"Parallel","Arguments":{"v":"{% $states.input.a %}"},"Branches":[{"StartAt":"B","States":{"B":{"Type":"Pass","Output":"{% $states.input.v + 1 %}","End":true}}}],"Output":"{% $states.result[0] %}","End":true}`, "P"),
		input: `{"a":1}`, output: `2`},
	{name: "j-catch", def: jm(`"T":{"Type":"Task","Resource":"λfail","Arguments":{"error":"Boom","cause":"c"},"Catch":[{"ErrorEquals":["Boom"],"Output":{"e":"{% $states.errorOutput.Error %}","in":"{% $states.input.k %}"},"Assign":{"seen":true},"Next":"H"}],"End":true},
		"H":{"Type":"Pass","Output":{"o":"{% $states.input %}","seen":"{% $seen %}"},"End":true}`, "T"), input: `{"k":1}`, output: `{"o":{"e":"Boom","in":1},"seen":true}`},
	{name: "j-catch-default-output", def: jm(`"T":{"Type":"Task","Resource":"λfail","Arguments":{"error":"Boom","cause":"c"},"Catch":[{"ErrorEquals":["States.ALL"],"Next":"H"}],"End":true},
		"H":{"Type":"Pass","Output":"{% $states.input.Error %}","End":true}`, "T"), input: `{}`, output: `"Boom"`},
	{name: "j-query-error-caught", def: jm(`"T":{"Type":"Task","Resource":"λadd","Arguments":"{% $error('bad') %}","Catch":[{"ErrorEquals":["States.QueryEvaluationError"],"Next":"H"}],"End":true},
		"H":{"Type":"Pass","Output":"{% $states.input.Error %}","End":true}`, "T"), input: `{}`, output: `"States.QueryEvaluationError"`},
	{name: "j-wait-seconds-expr", def: jm(`"W":{"Type":"Wait","Seconds":"{% $states.input.s %}","Output":"{% 'waited' %}","End":true}`, "W"), input: `{"s":0}`, output: `"waited"`},
	{name: "j-wait-seconds-negative", def: jm(`"W":{"Type":"Wait","Seconds":"{% -1 %}","End":true}`, "W"), input: `{}`, status: StatusFailed, err: "States.QueryEvaluationError"},
	{name: "j-wait-timestamp-expr", def: jm(`"W":{"Type":"Wait","Timestamp":"{% $states.input.t %}","End":true}`, "W"), input: `{"t":"2000-01-01T00:00:00Z"}`, output: `{"t":"2000-01-01T00:00:00Z"}`},
	{name: "j-fail", def: jm(`"F":{"Type":"Fail","Error":"{% 'E.' & $states.input.c %}","Cause":"{% $string($states.input.n) %}"}`, "F"), input: `{"c":"X","n":5}`,
		status: StatusFailed, err: "E.X", cause: "5"},
	{name: "j-succeed-output", def: jm(`"S":{"Type":"Succeed","Output":{"done":"{% $states.context.State.Name %}"}}`, "S"), input: `{}`, output: `{"done":"S"}`},
	{name: "j-aws-functions", def: jm(`"P":{"Type":"Pass","Output":{"p":"{% $partition() %}","r":"{% $range(1, 5, 2) %}","h":"{% $hash('abc', 'SHA-1') %}","j":"{% $parse('{\"a\":[1]}') %}","u":"{% $length($uuid()) %}","x":"{% $random() < 1 %}"},"End":true}`, "P"),
		input: `{}`, output: `{"p":"aws","r":[1,3,5],"h":"a9993e364706816aba3e25717850c26c9cd0d89d","j":{"a":[1]},"u":36,"x":true}`},
	{name: "j-undefined-field", def: jm(`"P":{"Type":"Pass","Output":{"result":"{% $doesNotExist %}"},"End":true}`, "P"), input: `{}`, status: StatusFailed, err: "States.QueryEvaluationError",
		cause: at("P", 2) + "The JSONata expression '$doesNotExist' specified for the field 'Output/result' returned nothing (undefined)."},
	{name: "j-eval-error", def: jm(`"P":{"Type":"Pass","Output":"{% $number('x') %}","End":true}`, "P"), input: `{}`, status: StatusFailed, err: "States.QueryEvaluationError",
		cause: at("P", 2) + "The JSONata expression '$number('x')' specified for the field 'Output' threw an error during evaluation."},
	{name: "j-function-result", def: jm(`"M":{"Type":"Map","Items":"{% $fn := function($x){$x} %}","ItemProcessor":{"StartAt":"I","States":{"I":{"Type":"Pass","End":true}}},"End":true}`, "M"),
		input: `{}`, status: StatusFailed, err: "States.QueryEvaluationError",
		cause: at("M", 2) + "The JSONata expression '$fn := function($x){$x}' specified for the field 'Items' returned an unsupported result type."},
}

func TestJSONata(t *testing.T) { runCases(t, jsonataCases) }

func TestJSONataDefinitionErrors(t *testing.T) {
	for _, c := range []struct{ def, want string }{
		{jm(`"P":{"Type":"Pass","Parameters":{"a":1},"End":true}`, "P"), "Parameters"},
		{jm(`"P":{"Type":"Pass","OutputPath":"$.a","End":true}`, "P"), "OutputPath"},
		{jm(`"P":{"Type":"Pass","Output":"{% $states.input. %}","End":true}`, "P"), "not valid"},
		{jm(`"P":{"Type":"Pass","QueryLanguage":"JSONPath","End":true}`, "P"), "can not be 'JSONPath'"},
		{`{"QueryLanguage":"XPath","StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`, "QueryLanguage"},
		{`{"StartAt":"P","States":{"P":{"Type":"Pass","Output":"{% 1 %}","End":true}}}`, "only supported when the query language is JSONata"},
		{jm(`"C":{"Type":"Choice","Choices":[{"Variable":"$.a","IsPresent":true,"Next":"E"}]},"E":{"Type":"Succeed"}`, "C"), "Condition"},
		{jm(`"P":{"Type":"Pass","Assign":{"a-b":1},"End":true}`, "P"), "variable name"},
		{jm(`"M":{"Type":"Map","Items":5,"ItemProcessor":{"StartAt":"I","States":{"I":{"Type":"Pass","End":true}}},"End":true}`, "M"), "Items"},
	} {
		m, ds := asl.Parse([]byte(c.def), nil)
		if m != nil {
			t.Errorf("%s: accepted", c.def)
			continue
		}
		found := false
		for _, d := range ds {
			if strings.Contains(d.Message, c.want) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: diagnostics %v do not say %q", c.def, ds, c.want)
		}
	}
}
