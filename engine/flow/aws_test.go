package flow

import (
	"context"
	"strings"
	"testing"

	"jobdesk/engine/flow/asl"
)

// at is the start of the cause Step Functions gives a runtime error in state name, entered at
// history event id.
func at(name string, id int) string {
	return "An error occurred while executing the state '" + name + "' (entered at the event id #" + itoa(int64(id)) + "). "
}

// mapDef is a Map state M whose items are the input's "xs", with extra fields, running a Pass.
func mapDef(fields, mode string) string {
	cfg := ""
	if mode != "" {
		cfg = `"ProcessorConfig":{"Mode":"` + mode + `"},`
	}
	return `{"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.xs",` + fields + `,"ItemProcessor":{` + cfg +
		`"StartAt":"I","States":{"I":{"Type":"Pass","End":true}}},"End":true}}}`
}

// awsCases are results recorded on AWS Step Functions that JobDesk gave differently before.
var awsCases = []ccase{
	// States.MathAdd and States.MathRandom round their arguments (halves upwards).
	{name: "math-add-rounds", def: param("States.MathAdd(1.49, 1.5)"), input: `{}`, output: `{"v":3}`},
	{name: "math-add-rounds-negative", def: param("States.MathAdd(-1.5, -1.51)"), input: `{}`, output: `{"v":-3}`},
	{name: "math-add-rounds-paths", def: param("States.MathAdd($.a, $.b)"), input: `{"a":2.5,"b":-0.5}`, output: `{"v":3}`},
	{name: "math-random-rounds", def: param("States.MathRandom(1.5, 2.4)"), input: `{}`, output: `{"v":2}`},
	{name: "math-random-rounds-seed", def: param("States.MathRandom(-0.5, 0.49, 7.2)"), input: `{}`, output: `{"v":0}`},
	// Causes of runtime errors, word for word.
	{name: "cause-timestamp-path", def: `{"StartAt":"W","States":{"W":{"Type":"Wait","TimestampPath":"$.t","End":true}}}`,
		input: `{"t":"2016-13-05T21:29:29Z"}`, status: StatusFailed, err: "States.Runtime",
		cause: at("W", 2) + "The TimestampPath parameter does not reference a valid ISO-8601 extended offset date-time format string: $.t == 2016-13-05T21:29:29Z"},
	{name: "cause-timestamp-path-no-offset", def: `{"StartAt":"W","States":{"W":{"Type":"Wait","TimestampPath":"$.t","End":true}}}`,
		input: `{"t":"2016-12-05T21:29:29"}`, status: StatusFailed, err: "States.Runtime",
		cause: at("W", 2) + "The TimestampPath parameter does not reference a valid ISO-8601 extended offset date-time format string: $.t == 2016-12-05T21:29:29"},
	{name: "cause-seconds-path-fraction", def: `{"StartAt":"W","States":{"W":{"Type":"Wait","SecondsPath":"$.s","End":true}}}`,
		input: `{"s":1.5}`, status: StatusFailed, err: "States.Runtime",
		cause: at("W", 2) + "The SecondsPath parameter cannot be parsed as a long value: $.s == 1.5"},
	{name: "cause-seconds-path-negative", def: `{"StartAt":"W","States":{"W":{"Type":"Wait","SecondsPath":"$.s","End":true}}}`,
		input: `{"s":-1}`, status: StatusFailed, err: "States.Runtime",
		cause: at("W", 2) + "The SecondsPath parameter references a negative value: $.s == -1"},
	{name: "cause-seconds-path-missing", def: `{"StartAt":"W","States":{"W":{"Type":"Wait","SecondsPath":"$.s","End":true}}}`,
		input: `{}`, status: StatusFailed, err: "States.Runtime",
		cause: at("W", 2) + "The SecondsPath parameter does not reference an input value: $.s"},
	{name: "cause-parameters-path", def: `{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"B"},"B":{"Type":"Pass","Parameters":{"address.$":"$.application.address"},"End":true}}}`,
		input: `{"flagged":false}`, status: StatusFailed, err: "States.Runtime",
		cause: at("B", 4) + `The JSONPath '$.application.address' specified for the field 'address.$' could not be found in the input '{"flagged":false}'`},
	{name: "cause-input-path", def: pass(`"InputPath":"$.NoSuchInputPath"`), input: `{"a":1}`, status: StatusFailed, err: "States.Runtime",
		cause: at("P", 2) + "Invalid path '$.NoSuchInputPath' : No results for path: $['NoSuchInputPath']"},
	{name: "cause-output-path", def: pass(`"OutputPath":"$.NoSuchOutputPath"`), input: `{"a":1}`, status: StatusFailed, err: "States.Runtime",
		cause: at("P", 2) + "Invalid path '$.NoSuchOutputPath' : No results for path: $['NoSuchOutputPath']"},
	{name: "cause-output-path-deep", def: pass(`"OutputPath":"$.no.such.result.path"`), input: `{}`, status: StatusFailed, err: "States.Runtime",
		cause: at("P", 2) + "Invalid path '$.no.such.result.path' : Missing property in path $['no']"},
	{name: "cause-input-path-leaf", def: pass(`"InputPath":"$.a.nope"`), input: `{"a":{}}`, status: StatusFailed, err: "States.Runtime",
		cause: at("P", 2) + "Invalid path '$.a.nope' : No results for path: $['a']['nope']"},
	{name: "cause-error-path", def: `{"StartAt":"F","States":{"F":{"Type":"Fail","ErrorPath":"$.ErrorX","CausePath":"$.Cause"}}}`,
		input: `{"Cause":"c"}`, status: StatusFailed, err: "States.Runtime",
		cause: at("F", 2) + `The JSONPath '$.ErrorX' specified for the field 'ErrorPath' could not be found in the input '{"Cause":"c"}'`},
	{name: "cause-map-items-not-array", def: mapDef(`"MaxConcurrency":1`, ""), input: `{"xs":{"foo":"bar"}}`, status: StatusFailed, err: "States.Runtime",
		cause: at("M", 2) + `Map state input must be an array but was: {"foo":"bar"}`},
	{name: "cause-in-parallel-branch", def: `{"StartAt":"P","States":{"P":{"Type":"Parallel","Branches":[{"StartAt":"B","States":{"B":{"Type":"Pass","InputPath":"$.nope","End":true}}}],"End":true}}}`,
		input: `{}`, status: StatusFailed, err: "States.Runtime", cause: at("B", 4) + "Invalid path '$.nope'"},
	// MaxConcurrencyPath and ToleratedFailureCountPath must name a non-negative integer.
	{name: "max-concurrency-path-object", def: mapDef(`"MaxConcurrencyPath":"$.mc"`, ""), input: `{"xs":[1],"mc":{}}`, status: StatusFailed, err: "States.Runtime",
		cause: at("M", 2) + `The MaxConcurrencyPath field refers to value "{}" which is not a valid integer: $.mc`},
	{name: "max-concurrency-path-string", def: mapDef(`"MaxConcurrencyPath":"$.mc"`, ""), input: `{"xs":[1],"mc":"NoNumber"}`, status: StatusFailed, err: "States.Runtime",
		cause: at("M", 2) + `The MaxConcurrencyPath field refers to value "NoNumber" which is not a valid integer: $.mc`},
	{name: "max-concurrency-path-negative", def: mapDef(`"MaxConcurrencyPath":"$.mc"`, ""), input: `{"xs":[1],"mc":-1}`, status: StatusFailed, err: "States.Runtime",
		cause: at("M", 2)},
	{name: "max-concurrency-path-ok", def: mapDef(`"MaxConcurrencyPath":"$.mc"`, ""), input: `{"xs":[1,2],"mc":1}`, output: `[1,2]`},
	{name: "tolerated-count-path-object", def: mapDef(`"ToleratedFailureCountPath":"$.n"`, "DISTRIBUTED"), input: `{"xs":[1],"n":{}}`, status: StatusFailed, err: "States.Runtime",
		cause: at("M", 2) + `The ToleratedFailureCountPath field refers to value "{}" which is not a valid integer: $.n`},
	{name: "tolerated-count-path-string", def: mapDef(`"ToleratedFailureCountPath":"$.n"`, "DISTRIBUTED"), input: `{"xs":[1],"n":"NoNumber"}`, status: StatusFailed, err: "States.Runtime",
		cause: at("M", 2) + `The ToleratedFailureCountPath field refers to value "NoNumber" which is not a valid integer: $.n`},
	{name: "tolerated-count-path-negative", def: mapDef(`"ToleratedFailureCountPath":"$.n"`, "DISTRIBUTED"), input: `{"xs":[1],"n":-1}`, status: StatusFailed, err: "States.Runtime",
		cause: at("M", 2) + "ToleratedFailureCount cannot be negative."},
	{name: "tolerated-percentage-path-string", def: mapDef(`"ToleratedFailurePercentagePath":"$.n"`, "DISTRIBUTED"), input: `{"xs":[1],"n":"NoNumber"}`, status: StatusFailed, err: "States.Runtime",
		cause: at("M", 2) + `The ToleratedFailurePercentagePath field refers to value "NoNumber" which is not a valid float: $.n`},
	// $$.State.RetryCount exists only where Retry does (Task, Parallel, Map).
	{name: "pass-no-retry-count", def: param("$$.State.RetryCount"), input: `{}`, status: StatusFailed, err: "States.Runtime",
		cause: at("P", 2) + "The JSONPath '$$.State.RetryCount' specified for the field 'v.$' could not be found in the input '{}'"},
	// States.StringToJson: blank strings are null, -0 is 0.
	{name: "string-to-json-empty", def: param("States.StringToJson($.s)"), input: `{"s":""}`, output: `{"v":null}`},
	{name: "string-to-json-blank", def: param("States.StringToJson($.s)"), input: `{"s":" "}`, output: `{"v":null}`},
	{name: "string-to-json-minus-zero", def: param("States.StringToJson($.s)"), input: `{"s":"-0"}`, check: func(t *testing.T, v *env, x Execution) {
		if string(x.Output) != `{"v":0}` {
			t.Errorf("output %s, want {\"v\":0}", x.Output)
		}
	}},
	// States.Format prints objects and arrays as Java does.
	{name: "format-object", def: param("States.Format('{}', $.o)"), input: `{"o":{"Arg1":1,"Arg2":[]}}`, output: `{"v":"{Arg1=1, Arg2=[]}"}`},
	{name: "format-array", def: param("States.Format('x={}', $.a)"), input: `{"a":[1,"b",{"c":null},1.5]}`, output: `{"v":"x=[1, b, {c=null}, 1.5]"}`},
	// JSONPath filter expressions.
	{name: "jsonpath-filter", def: param("$.users[?(@.status == 0)]"), input: `{"users":[{"n":"a","status":0},{"n":"b","status":1},{"n":"c"}]}`,
		output: `{"v":[{"n":"a","status":0}]}`},
	{name: "jsonpath-filter-string", def: param(`$.users[?(@.name != 'b')].name`), input: `{"users":[{"name":"a"},{"name":"b"}]}`, output: `{"v":["a"]}`},
	{name: "jsonpath-filter-less", def: param("$.xs[?(@.n < 2)].n"), input: `{"xs":[{"n":1},{"n":2},{"n":"1"}]}`, output: `{"v":[1]}`},
	{name: "jsonpath-filter-exists", def: param("$.xs[?(@.k)].k"), input: `{"xs":[{"k":1},{"j":2}]}`, output: `{"v":[1]}`},
}

func TestAWSRecordedResults(t *testing.T) { runCases(t, awsCases) }

// varCases are workflow variables (Assign and $name) in JSONPath states.
var varCases = []ccase{
	{name: "var-next-state", def: `{"StartAt":"A","States":{"A":{"Type":"Pass","Assign":{"x":1,"y.$":"$.k"},"Next":"B"},
		"B":{"Type":"Pass","Parameters":{"x.$":"$x","y.$":"$y","sum.$":"States.MathAdd($x, $y)"},"End":true}}}`,
		input: `{"k":41}`, output: `{"x":1,"y":41,"sum":42}`},
	{name: "var-reads-old-values", def: `{"StartAt":"A","States":{"A":{"Type":"Pass","Assign":{"x":1},"Next":"B"},
		"B":{"Type":"Pass","Assign":{"x.$":"States.MathAdd($x, 1)","old.$":"$x"},"Next":"C"},
		"C":{"Type":"Pass","Parameters":{"x.$":"$x","old.$":"$old"},"End":true}}}`, input: `{}`, output: `{"x":2,"old":1}`},
	{name: "var-not-in-own-output", def: `{"StartAt":"A","States":{"A":{"Type":"Pass","Assign":{"x":1},"OutputPath":"$x","End":true}}}`,
		input: `{}`, status: StatusFailed, err: "States.Runtime", cause: "'$x'"},
	{name: "var-pass-result", def: `{"StartAt":"A","States":{"A":{"Type":"Pass","Result":{"r":7},"Assign":{"r.$":"$.r"},"ResultPath":null,"Next":"B"},
		"B":{"Type":"Pass","OutputPath":"$r","End":true}}}`, input: `{}`, output: `7`},
	{name: "var-task-result", def: `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"λadd","Parameters":{"a":1,"b":2},"Assign":{"sum.$":"$"},"ResultPath":null,"Next":"B"},
		"B":{"Type":"Pass","Parameters":{"s.$":"$sum"},"End":true}}}`, input: `{}`, output: `{"s":3}`},
	{name: "var-path-into-value", def: `{"StartAt":"A","States":{"A":{"Type":"Pass","Assign":{"o.$":"$"},"Next":"B"},
		"B":{"Type":"Pass","Parameters":{"v.$":"$o.a[1].b"},"End":true}}}`, input: `{"a":[0,{"b":"x"}]}`, output: `{"v":"x"}`},
	{name: "var-choice-rule", def: `{"StartAt":"A","States":{"A":{"Type":"Pass","Assign":{"n":5},"Next":"C"},
		"C":{"Type":"Choice","Choices":[{"Variable":"$n","NumericGreaterThan":3,"Assign":{"pick":"big"},"Next":"D"}],"Default":"D","Assign":{"pick":"default"}},
		"D":{"Type":"Pass","OutputPath":"$pick","End":true}}}`, input: `{}`, output: `"big"`},
	{name: "var-choice-default", def: `{"StartAt":"A","States":{"A":{"Type":"Pass","Assign":{"n":1},"Next":"C"},
		"C":{"Type":"Choice","Choices":[{"Variable":"$n","NumericGreaterThan":3,"Assign":{"pick":"big"},"Next":"D"}],"Default":"D","Assign":{"pick":"default"}},
		"D":{"Type":"Pass","OutputPath":"$pick","End":true}}}`, input: `{}`, output: `"default"`},
	{name: "var-catch", def: `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"λfail","Parameters":{"error":"Boom","cause":"c"},
		"Catch":[{"ErrorEquals":["States.ALL"],"Assign":{"err.$":"$.Error"},"Next":"H"}],"End":true},"H":{"Type":"Pass","OutputPath":"$err","End":true}}}`,
		input: `{}`, output: `"Boom"`},
	{name: "var-wait", def: `{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":0,"Assign":{"w":true},"Next":"B"},"B":{"Type":"Pass","OutputPath":"$w","End":true}}}`,
		input: `{}`, output: `true`},
	{name: "var-map-reads-outer", def: `{"StartAt":"A","States":{"A":{"Type":"Pass","Assign":{"k":10},"Next":"M"},
		"M":{"Type":"Map","ItemSelector":{"i.$":"$$.Map.Item.Value","k.$":"$k"},"ItemProcessor":{"StartAt":"I","States":{"I":{"Type":"Pass",
		"Parameters":{"s.$":"States.MathAdd($.i, $k)"},"OutputPath":"$.s","End":true}}},"End":true}}}`, input: `[1,2]`, output: `[11,12]`},
	{name: "var-map-own-scope", def: `{"StartAt":"M","States":{"M":{"Type":"Map","ItemProcessor":{"StartAt":"I","States":{"I":{"Type":"Pass",
		"Assign":{"mine.$":"$"},"Next":"J"},"J":{"Type":"Pass","OutputPath":"$mine","End":true}}},"Next":"After"},
		"After":{"Type":"Pass","Parameters":{"m.$":"$mine"},"End":true}}}`, input: `[1]`, status: StatusFailed, err: "States.Runtime", cause: "'$mine'"},
	{name: "var-map-cannot-assign-outer", def: `{"StartAt":"A","States":{"A":{"Type":"Pass","Assign":{"k":10},"Next":"M"},
		"M":{"Type":"Map","ItemProcessor":{"StartAt":"I","States":{"I":{"Type":"Pass","Assign":{"k":1},"End":true}}},"End":true}}}`,
		input: `[1]`, status: StatusFailed, err: "States.Runtime", cause: "outer scope"},
	{name: "var-parallel-reads-outer", def: `{"StartAt":"A","States":{"A":{"Type":"Pass","Assign":{"k":"x"},"Next":"P"},
		"P":{"Type":"Parallel","Branches":[{"StartAt":"B","States":{"B":{"Type":"Pass","OutputPath":"$k","End":true}}}],"Assign":{"all.$":"$"},"Next":"C"},
		"C":{"Type":"Pass","OutputPath":"$all","End":true}}}`, input: `{}`, output: `["x"]`},
	{name: "var-unknown", def: `{"StartAt":"A","States":{"A":{"Type":"Pass","Parameters":{"v.$":"$nope"},"End":true}}}`,
		input: `{}`, status: StatusFailed, err: "States.Runtime", cause: "'$nope'"},
	{name: "var-too-large", def: `{"StartAt":"A","States":{"A":{"Type":"Pass","Assign":{"a.$":"$.s","b.$":"$.s"},"End":true}}}`,
		input: `{"s":"` + strings.Repeat("x", 150*1024) + `"}`, status: StatusFailed, err: "States.DataLimitExceeded"},
	{name: "var-history", def: `{"StartAt":"A","States":{"A":{"Type":"Pass","Assign":{"x":1,"s":"t"},"End":true}}}`, input: `{}`,
		check: func(t *testing.T, v *env, x Execution) {
			evs, _, err := v.e.History(context.Background(), x.ARN, false, 0, "")
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range evs {
				if e.Type != "PassStateExited" {
					continue
				}
				d, _ := e.Details["stateExitedEventDetails"].(map[string]any)
				if !sameJSON(string(asl.Encode(d["assignedVariables"])), `{"x":"1","s":"\"t\""}`) ||
					!sameJSON(string(asl.Encode(d["assignedVariablesDetails"])), `{"truncated":false}`) {
					t.Errorf("exited details %v", d)
				}
				return
			}
			t.Errorf("no PassStateExited in %v", evs)
		}},
}

func TestVariablesJSONPath(t *testing.T) { runCases(t, varCases) }

func TestVariableDefinitionErrors(t *testing.T) {
	for _, def := range []string{
		`{"StartAt":"A","States":{"A":{"Type":"Pass","Assign":{"1x":1},"End":true}}}`,
		`{"StartAt":"A","States":{"A":{"Type":"Pass","Assign":{"states":1},"End":true}}}`,
		`{"StartAt":"A","States":{"A":{"Type":"Pass","Assign":[1],"End":true}}}`,
		`{"StartAt":"A","States":{"A":{"Type":"Pass","Result":1,"ResultPath":"$x","End":true}}}`,
		`{"StartAt":"A","States":{"A":{"Type":"Succeed","Assign":{"x":1}}}}`,
	} {
		if m, ds := asl.Parse([]byte(def), nil); m != nil {
			t.Errorf("%s: accepted (%v)", def, ds)
		}
	}
}
