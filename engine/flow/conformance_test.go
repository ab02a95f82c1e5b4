package flow

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"jobdesk/engine/job"

	"jobdesk/engine/flow/asl"
)

// ccase is one conformance case written from the Amazon States Language specification: a
// definition ("λ" stands for the Lambda function ARN prefix), an input, and what Step Functions
// answers: the execution's status and output, or its error name (and part of its cause).
type ccase struct {
	name   string
	def    string
	input  string
	status string // default SUCCEEDED
	output string // compared as JSON when set
	err    string // expected Error when not SUCCEEDED
	cause  string // substring of Cause
	check  func(t *testing.T, v *env, x Execution)
}

// pass builds a one-state Pass machine with the given fields.
func pass(fields string) string {
	return `{"StartAt":"P","States":{"P":{"Type":"Pass",` + fields + `,"End":true}}}`
}

// param builds a Pass machine whose Parameters has one field "v.$" with the expression.
func param(expr string) string {
	b, _ := json.Marshal(expr)
	return pass(`"Parameters":{"v.$":` + string(b) + `}`)
}

// choice builds a Choice machine that answers "yes" when rule matches and "no" otherwise.
func choice(rule string) string {
	return `{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[` + rule + `],"Default":"No"},
		"Yes":{"Type":"Pass","Result":"yes","End":true},"No":{"Type":"Pass","Result":"no","End":true}}}`
}

// rule is one top-level choice rule going to Yes.
func rule(body string) string { return `{` + body + `,"Next":"Yes"}` }

func task(fn, fields string) string {
	if fields != "" {
		fields = "," + fields
	}
	return `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"λ` + fn + `"` + fields + `,"End":true}}}`
}

var cases = []ccase{
	// ---- Pass and input/output processing ----
	{name: "pass-identity", def: pass(`"Comment":"c"`), input: `{"a":1}`, output: `{"a":1}`},
	{name: "pass-result", def: pass(`"Result":{"x":1}`), input: `{"a":1}`, output: `{"x":1}`},
	{name: "pass-resultpath", def: pass(`"Result":"v","ResultPath":"$.r"`), input: `{"a":1}`, output: `{"a":1,"r":"v"}`},
	{name: "pass-resultpath-null", def: pass(`"Result":5,"ResultPath":null`), input: `{"a":1}`, output: `{"a":1}`},
	{name: "pass-resultpath-root", def: pass(`"Result":{"z":0},"ResultPath":"$"`), input: `{"a":1}`, output: `{"z":0}`},
	{name: "pass-resultpath-creates", def: pass(`"Result":1,"ResultPath":"$.a.b.c"`), input: `{}`, output: `{"a":{"b":{"c":1}}}`},
	{name: "pass-resultpath-overwrites", def: pass(`"Result":2,"ResultPath":"$.a"`), input: `{"a":1,"b":1}`, output: `{"a":2,"b":1}`},
	{name: "pass-resultpath-into-scalar", def: pass(`"Result":1,"ResultPath":"$.a.b"`), input: `{"a":1}`, status: StatusFailed, err: "States.ResultPathMatchFailure"},
	{name: "task-resultpath-failure-caught", def: `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"λecho","ResultPath":"$.a.b",
		"Catch":[{"ErrorEquals":["States.ResultPathMatchFailure"],"ResultPath":"$.e","Next":"H"}],"End":true},"H":{"Type":"Pass","OutputPath":"$.e.Error","End":true}}}`,
		input: `{"a":1}`, output: `"States.ResultPathMatchFailure"`},
	{name: "runtime-not-caught-by-all", def: `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"λecho","InputPath":"$.missing",
		"Catch":[{"ErrorEquals":["States.ALL"],"Next":"H"}],"End":true},"H":{"Type":"Succeed"}}}`,
		input: `{}`, status: StatusFailed, err: "States.Runtime"},
	{name: "pass-inputpath", def: pass(`"InputPath":"$.a"`), input: `{"a":{"b":2}}`, output: `{"b":2}`},
	{name: "pass-inputpath-null", def: pass(`"InputPath":null`), input: `{"a":1}`, output: `{}`},
	{name: "pass-outputpath", def: pass(`"OutputPath":"$.a.b"`), input: `{"a":{"b":2}}`, output: `2`},
	{name: "pass-outputpath-null", def: pass(`"OutputPath":null`), input: `{"a":1}`, output: `{}`},
	{name: "pass-missing-path", def: pass(`"InputPath":"$.nope"`), input: `{"a":1}`, status: StatusFailed, err: "States.Runtime", cause: "$.nope"},
	{name: "pass-parameters", def: pass(`"Parameters":{"x.$":"$.a","lit":"k","nested":{"y.$":"$.b[1]"},"arr":[1,{"z.$":"$.a"}]}`),
		input: `{"a":1,"b":[5,6]}`, output: `{"x":1,"lit":"k","nested":{"y":6},"arr":[1,{"z":1}]}`},
	{name: "pass-parameters-then-resultpath", def: pass(`"Parameters":{"x.$":"$.a"},"ResultPath":"$.p"`), input: `{"a":1}`, output: `{"a":1,"p":{"x":1}}`},
	{name: "pass-wildcard", def: param("$.items[*].id"), input: `{"items":[{"id":1},{"id":2}]}`, output: `{"v":[1,2]}`},
	{name: "pass-slice", def: param("$.a[1:3]"), input: `{"a":[0,1,2,3]}`, output: `{"v":[1,2]}`},
	{name: "pass-deep-scan", def: param("$..id"), input: `{"a":{"id":1},"b":[{"id":2}]}`, output: `{"v":[1,2]}`},
	{name: "pass-bracket-name", def: param("$['a b']"), input: `{"a b":3}`, output: `{"v":3}`},
	{name: "pass-negative-index", def: param("$.a[-1]"), input: `{"a":[1,2,3]}`, output: `{"v":3}`},
	{name: "pass-chain", def: `{"StartAt":"A","States":{"A":{"Type":"Pass","Result":1,"ResultPath":"$.a","Next":"B"},
		"B":{"Type":"Pass","Result":2,"ResultPath":"$.b","Next":"C"},"C":{"Type":"Pass","End":true}}}`, input: `{}`, output: `{"a":1,"b":2}`},
	{name: "context-object", def: pass(`"Parameters":{"name.$":"$$.Execution.Name","sm.$":"$$.StateMachine.Name","state.$":"$$.State.Name",
		"input.$":"$$.Execution.Input","role.$":"$$.Execution.RoleArn","state_keys.$":"$$.State"}`), input: `{"k":1}`,
		check: func(t *testing.T, v *env, x Execution) {
			m := obj(x.Output)
			st, _ := m["state_keys"].(map[string]any)
			delete(m, "state_keys")
			if !sameJSON(string(asl.Encode(m)), `{"name":"context-object","sm":"context-object","state":"P","input":{"k":1},"role":"arn:aws:iam::000000000000:role/jobdesk-local"}`) {
				t.Errorf("output %s", x.Output)
			}
			// A Pass state's $$.State has Name and EnteredTime only: no RetryCount, as on AWS.
			if _, ok := st["EnteredTime"].(string); !ok || st["Name"] != "P" || len(st) != 2 {
				t.Errorf("$$.State %v", st)
			}
		}},
	{name: "context-ids", def: pass(`"Parameters":{"id.$":"$$.Execution.Id","sm.$":"$$.StateMachine.Id","start.$":"$$.Execution.StartTime","entered.$":"$$.State.EnteredTime"}`),
		input: `{}`, check: func(t *testing.T, v *env, x Execution) {
			m := obj(x.Output)
			if m["id"] != x.ARN || m["sm"] != x.StateMachineARN {
				t.Errorf("ids %v", m)
			}
			for _, k := range []string{"start", "entered"} {
				if _, ok := asl.ParseTimestamp(fmt.Sprint(m[k])); !ok {
					t.Errorf("%s is not a timestamp: %v", k, m[k])
				}
			}
		}},

	// ---- intrinsic functions ----
	{name: "fn-format", def: param("States.Format('Hello {}, you are {}', $.name, $.age)"), input: `{"name":"Ann","age":30}`, output: `{"v":"Hello Ann, you are 30"}`},
	{name: "fn-format-escape", def: param(`States.Format('It\'s {}', $.x)`), input: `{"x":"ok"}`, output: `{"v":"It's ok"}`},
	{name: "fn-format-escaped-braces", def: param(`States.Format('set \{\} to {}', $.x)`), input: `{"x":"ok"}`, output: `{"v":"set {} to ok"}`},
	{name: "fn-string-to-json", def: param("States.StringToJson($.s)"), input: `{"s":"{\"a\":[1,true]}"}`, output: `{"v":{"a":[1,true]}}`},
	{name: "fn-json-to-string", def: param("States.JsonToString($.o)"), input: `{"o":{"a":1}}`, output: `{"v":"{\"a\":1}"}`},
	{name: "fn-array", def: param("States.Array('a', 1, $.x)"), input: `{"x":true}`, output: `{"v":["a",1,true]}`},
	{name: "fn-array-partition", def: param("States.ArrayPartition($.a, 2)"), input: `{"a":[1,2,3,4,5]}`, output: `{"v":[[1,2],[3,4],[5]]}`},
	{name: "fn-array-contains", def: param("States.ArrayContains($.a, $.x)"), input: `{"a":[1,{"b":2}],"x":{"b":2}}`, output: `{"v":true}`},
	{name: "fn-array-range", def: param("States.ArrayRange(1, 9, 2)"), input: `{}`, output: `{"v":[1,3,5,7,9]}`},
	{name: "fn-array-get-item", def: param("States.ArrayGetItem($.a, 1)"), input: `{"a":["x","y"]}`, output: `{"v":"y"}`},
	{name: "fn-array-length", def: param("States.ArrayLength($.a)"), input: `{"a":[1,2,3]}`, output: `{"v":3}`},
	{name: "fn-array-unique", def: param("States.ArrayUnique($.a)"), input: `{"a":[1,2,2,3,1]}`, output: `{"v":[1,2,3]}`},
	{name: "fn-base64-encode", def: param("States.Base64Encode($.s)"), input: `{"s":"Data to encode"}`, output: `{"v":"RGF0YSB0byBlbmNvZGU="}`},
	{name: "fn-base64-decode", def: param("States.Base64Decode('RGF0YSB0byBlbmNvZGU=')"), input: `{}`, output: `{"v":"Data to encode"}`},
	{name: "fn-hash", def: param("States.Hash($.s, 'SHA-1')"), input: `{"s":"input data"}`, output: `{"v":"aaff4a450a104cd177d28d18d74485e8cae074b7"}`},
	{name: "fn-json-merge", def: param("States.JsonMerge($.a, $.b, false)"), input: `{"a":{"x":1,"y":1},"b":{"y":2}}`, output: `{"v":{"x":1,"y":2}}`},
	{name: "fn-math-random", def: param("States.MathRandom(1, 3)"), input: `{}`, check: func(t *testing.T, v *env, x Execution) {
		if n, _ := obj(x.Output)["v"].(float64); n < 1 || n > 3 {
			t.Errorf("MathRandom gave %v", n)
		}
	}},
	{name: "fn-math-add", def: param("States.MathAdd($.n, -1)"), input: `{"n":111}`, output: `{"v":110}`},
	{name: "fn-string-split", def: param("States.StringSplit($.s, ',')"), input: `{"s":"1,2,3"}`, output: `{"v":["1","2","3"]}`},
	{name: "fn-uuid", def: param("States.UUID()"), input: `{}`, check: func(t *testing.T, v *env, x Execution) {
		if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(fmt.Sprint(obj(x.Output)["v"])) {
			t.Errorf("not a UUID: %s", x.Output)
		}
	}},
	{name: "fn-nested", def: param("States.ArrayLength(States.Array(1, 2, 3))"), input: `{}`, output: `{"v":3}`},
	{name: "fn-failure", def: param("States.ArrayGetItem($.a, 5)"), input: `{"a":[1]}`, status: StatusFailed, err: "States.IntrinsicFailure"},
	{name: "fn-failure-type", def: param("States.MathAdd($.s, 1)"), input: `{"s":"x"}`, status: StatusFailed, err: "States.IntrinsicFailure"},

	// ---- Choice ----
	{name: "choice-string-equals", def: choice(rule(`"Variable":"$.s","StringEquals":"a"`)), input: `{"s":"a"}`, output: `"yes"`},
	{name: "choice-type-sensitive", def: choice(rule(`"Variable":"$.s","StringEquals":"1"`)), input: `{"s":1}`, output: `"no"`},
	{name: "choice-string-less", def: choice(rule(`"Variable":"$.s","StringLessThan":"b"`)), input: `{"s":"a"}`, output: `"yes"`},
	{name: "choice-string-ge", def: choice(rule(`"Variable":"$.s","StringGreaterThanEquals":"b"`)), input: `{"s":"a"}`, output: `"no"`},
	{name: "choice-string-matches", def: choice(rule(`"Variable":"$.f","StringMatches":"log-*.csv"`)), input: `{"f":"log-2024.csv"}`, output: `"yes"`},
	{name: "choice-string-matches-escaped", def: choice(rule(`"Variable":"$.f","StringMatches":"a\\*b"`)), input: `{"f":"axb"}`, output: `"no"`},
	{name: "choice-string-equals-path", def: choice(rule(`"Variable":"$.a","StringEqualsPath":"$.b"`)), input: `{"a":"x","b":"x"}`, output: `"yes"`},
	{name: "choice-numeric-equals", def: choice(rule(`"Variable":"$.n","NumericEquals":3`)), input: `{"n":3.0}`, output: `"yes"`},
	{name: "choice-numeric-less", def: choice(rule(`"Variable":"$.n","NumericLessThan":3`)), input: `{"n":3}`, output: `"no"`},
	{name: "choice-numeric-ge", def: choice(rule(`"Variable":"$.n","NumericGreaterThanEquals":3`)), input: `{"n":3}`, output: `"yes"`},
	{name: "choice-numeric-le-path", def: choice(rule(`"Variable":"$.n","NumericLessThanEqualsPath":"$.max"`)), input: `{"n":3,"max":2}`, output: `"no"`},
	{name: "choice-numeric-string-value", def: choice(rule(`"Variable":"$.n","NumericEquals":1`)), input: `{"n":"1"}`, output: `"no"`},
	{name: "choice-boolean", def: choice(rule(`"Variable":"$.b","BooleanEquals":false`)), input: `{"b":false}`, output: `"yes"`},
	{name: "choice-boolean-path", def: choice(rule(`"Variable":"$.b","BooleanEqualsPath":"$.c"`)), input: `{"b":true,"c":true}`, output: `"yes"`},
	{name: "choice-timestamp-less", def: choice(rule(`"Variable":"$.t","TimestampLessThan":"2024-01-01T00:00:00Z"`)), input: `{"t":"2023-12-31T23:59:59Z"}`, output: `"yes"`},
	{name: "choice-timestamp-equals-zones", def: choice(rule(`"Variable":"$.t","TimestampEquals":"2024-01-01T09:00:00+09:00"`)), input: `{"t":"2024-01-01T00:00:00Z"}`, output: `"yes"`},
	{name: "choice-timestamp-gt-path", def: choice(rule(`"Variable":"$.a","TimestampGreaterThanPath":"$.b"`)), input: `{"a":"2024-01-02T00:00:00Z","b":"2024-01-01T00:00:00Z"}`, output: `"yes"`},
	{name: "choice-and", def: choice(rule(`"And":[{"Variable":"$.n","NumericGreaterThan":1},{"Variable":"$.n","NumericLessThan":5}]`)), input: `{"n":3}`, output: `"yes"`},
	{name: "choice-or", def: choice(rule(`"Or":[{"Variable":"$.n","NumericEquals":1},{"Variable":"$.n","NumericEquals":2}]`)), input: `{"n":3}`, output: `"no"`},
	{name: "choice-not", def: choice(rule(`"Not":{"Variable":"$.s","StringEquals":"a"}`)), input: `{"s":"b"}`, output: `"yes"`},
	{name: "choice-is-present", def: choice(rule(`"Variable":"$.x","IsPresent":true`)), input: `{"y":1}`, output: `"no"`},
	{name: "choice-is-null", def: choice(rule(`"Variable":"$.x","IsNull":true`)), input: `{"x":null}`, output: `"yes"`},
	{name: "choice-is-numeric", def: choice(rule(`"Variable":"$.x","IsNumeric":true`)), input: `{"x":"1"}`, output: `"no"`},
	{name: "choice-is-string", def: choice(rule(`"Variable":"$.x","IsString":true`)), input: `{"x":"1"}`, output: `"yes"`},
	{name: "choice-is-boolean", def: choice(rule(`"Variable":"$.x","IsBoolean":false`)), input: `{"x":0}`, output: `"yes"`},
	{name: "choice-is-timestamp", def: choice(rule(`"Variable":"$.x","IsTimestamp":true`)), input: `{"x":"2024-08-02T10:00:00+09:00"}`, output: `"yes"`},
	{name: "choice-first-match-wins", def: `{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[
		{"Variable":"$.n","NumericGreaterThan":0,"Next":"A"},{"Variable":"$.n","NumericGreaterThan":1,"Next":"B"}]},
		"A":{"Type":"Pass","Result":"a","End":true},"B":{"Type":"Pass","Result":"b","End":true}}}`, input: `{"n":5}`, output: `"a"`},
	{name: "choice-no-match", def: `{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"Variable":"$.n","NumericEquals":1,"Next":"A"}]},
		"A":{"Type":"Succeed"}}}`, input: `{"n":2}`, status: StatusFailed, err: "States.NoChoiceMatched"},
	{name: "choice-missing-variable", def: choice(rule(`"Variable":"$.x","StringEquals":"a"`)), input: `{}`, status: StatusFailed, err: "States.Runtime"},
	{name: "choice-input-output-path", def: `{"StartAt":"C","States":{"C":{"Type":"Choice","InputPath":"$.in","OutputPath":"$.v",
		"Choices":[{"Variable":"$.v","NumericEquals":1,"Next":"E"}]},"E":{"Type":"Succeed"}}}`, input: `{"in":{"v":1}}`, output: `1`},

	// ---- Succeed and Fail ----
	{name: "succeed-output-path", def: `{"StartAt":"S","States":{"S":{"Type":"Succeed","InputPath":"$.a","OutputPath":"$.b"}}}`, input: `{"a":{"b":7}}`, output: `7`},
	{name: "fail-error-cause", def: `{"StartAt":"F","States":{"F":{"Type":"Fail","Error":"BusinessError","Cause":"the total is negative"}}}`,
		input: `{}`, status: StatusFailed, err: "BusinessError", cause: "negative"},
	{name: "fail-error-path", def: `{"StartAt":"F","States":{"F":{"Type":"Fail","ErrorPath":"$.e","CausePath":"States.Format('code {}', $.c)"}}}`,
		input: `{"e":"Custom.Error","c":42}`, status: StatusFailed, err: "Custom.Error", cause: "code 42"},

	// ---- Task ----
	{name: "task-lambda-arn", def: task("echo", ""), input: `{"a":1}`, output: `{"a":1}`},
	{name: "task-lambda-invoke", def: `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke",
		"Parameters":{"FunctionName":"arn:aws:lambda:local:000000000000:function:add:$LATEST","Payload":{"a.$":"$.x","b":2}},"End":true}}}`,
		input: `{"x":1}`, output: `{"ExecutedVersion":"$LATEST","Payload":3,"StatusCode":200}`},
	{name: "task-invoke-result-selector", def: `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke",
		"Parameters":{"FunctionName":"echo","Payload.$":"$"},"ResultSelector":{"p.$":"$.Payload.a"},"ResultPath":"$.r","End":true}}}`,
		input: `{"a":5}`, output: `{"a":5,"r":{"p":5}}`},
	{name: "task-parameters-context", def: task("echo", `"Parameters":{"orig.$":"$$.Execution.Input.k","fixed":1}`), input: `{"k":"v"}`, output: `{"orig":"v","fixed":1}`},
	{name: "task-custom-error", def: task("fail", `"Parameters":{"error":"BusinessError","cause":"row 3 is wrong"}`),
		input: `{}`, status: StatusFailed, err: "BusinessError", cause: "row 3 is wrong"},
	{name: "task-go-error-is-task-failed", def: task("fail", `"Parameters":{"cause":"boom"}`), input: `{}`, status: StatusFailed, err: "States.TaskFailed", cause: "boom"},
	{name: "task-catch-resultpath", def: `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"λfail","Parameters":{"error":"BusinessError","cause":"bad"},
		"Catch":[{"ErrorEquals":["BusinessError"],"ResultPath":"$.error","Next":"H"}],"End":true},"H":{"Type":"Pass","End":true}}}`,
		input: `{"a":1}`, check: func(t *testing.T, v *env, x Execution) {
			var out struct {
				A     float64
				Error struct{ Error, Cause string } `json:"error"`
			}
			if err := json.Unmarshal(x.Output, &out); err != nil || out.A != 1 || out.Error.Error != "BusinessError" {
				t.Fatalf("output %s (%v)", x.Output, err)
			}
			wantCoded(t, out.Error.Error, out.Error.Cause, job.E006, "bad")
		}},
	{name: "task-crash-cause-without-stack", def: task("crash", ``), input: `{}`, status: StatusFailed, err: "States.Runtime",
		check: func(t *testing.T, v *env, x Execution) {
			wantCoded(t, x.Error, x.Cause, job.E016, "the function crashed: crash test")
			if strings.Contains(x.Cause, "goroutine") {
				t.Errorf("the cause carries the stack trace: %s", x.Cause)
			}
		}},
	{name: "task-catch-fail-causepath", def: `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"λfail","Parameters":{"error":"BusinessError","cause":"bad"},
		"Catch":[{"ErrorEquals":["States.ALL"],"ResultPath":"$.error","Next":"F"}],"End":true},
		"F":{"Type":"Fail","ErrorPath":"$.error.Error","CausePath":"$.error.Cause"}}}`,
		input: `{}`, status: StatusFailed, err: "BusinessError", check: func(t *testing.T, v *env, x Execution) {
			wantCoded(t, x.Error, x.Cause, job.E006, "bad")
		}},
	{name: "task-go-error-cause-is-coded", def: task("fail", `"Parameters":{"cause":"boom"}`), input: `{}`, status: StatusFailed, err: "States.TaskFailed",
		check: func(t *testing.T, v *env, x Execution) { wantCoded(t, x.Error, x.Cause, job.E016, "boom") }},
	{name: "task-catch-order", def: `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"λfail","Parameters":{"error":"DatabaseConnectionError","cause":"x"},
		"Catch":[{"ErrorEquals":["BusinessError"],"Next":"A"},{"ErrorEquals":["DatabaseConnectionError","Other"],"Next":"B"},{"ErrorEquals":["States.ALL"],"Next":"C"}],"End":true},
		"A":{"Type":"Pass","Result":"a","End":true},"B":{"Type":"Pass","Result":"b","End":true},"C":{"Type":"Pass","Result":"c","End":true}}}`, input: `{}`, output: `"b"`},
	{name: "task-catch-all", def: `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"λfail","Parameters":{"error":"Whatever","cause":"x"},
		"Catch":[{"ErrorEquals":["States.ALL"],"ResultPath":null,"Next":"C"}],"End":true},"C":{"Type":"Pass","End":true}}}`, input: `{"k":1}`, output: `{"k":1}`},
	{name: "task-catch-task-failed", def: `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"λfail","Parameters":{"error":"BusinessError","cause":"x"},
		"Catch":[{"ErrorEquals":["States.TaskFailed"],"Next":"C"}],"End":true},"C":{"Type":"Pass","Result":"caught","End":true}}}`, input: `{}`, output: `"caught"`},
	{name: "task-catch-no-match", def: `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"λfail","Parameters":{"error":"BusinessError","cause":"x"},
		"Catch":[{"ErrorEquals":["Other"],"Next":"C"}],"End":true},"C":{"Type":"Pass","End":true}}}`, input: `{}`, status: StatusFailed, err: "BusinessError"},
	{name: "task-retry-then-succeed", def: task("flaky", `"Parameters":{"key":"retry-ok","times":1,"retryCount.$":"$$.State.RetryCount"},
		"Retry":[{"ErrorEquals":["DatabaseConnectionError"],"IntervalSeconds":1,"MaxAttempts":2,"BackoffRate":1.5,"MaxDelaySeconds":2,"JitterStrategy":"FULL"}]`),
		input: `{}`, output: `{"attempts":2,"retryCount":1}`},
	{name: "task-retry-max-attempts-zero", def: `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"λflaky","Parameters":{"key":"retry-zero","times":1},
		"Retry":[{"ErrorEquals":["States.ALL"],"MaxAttempts":0}],"Catch":[{"ErrorEquals":["States.ALL"],"Next":"C"}],"End":true},
		"C":{"Type":"Pass","Result":"not retried","End":true}}}`, input: `{}`, output: `"not retried"`,
		check: func(t *testing.T, v *env, x Execution) {
			if n := v.count("retry-zero"); n != 1 {
				t.Errorf("called %d times, want 1", n)
			}
		}},
	{name: "task-retry-exhausted", def: task("flaky", `"Parameters":{"key":"retry-out","times":9},"Retry":[{"ErrorEquals":["DatabaseConnectionError"],"IntervalSeconds":1,"MaxAttempts":1}]`),
		input: `{}`, status: StatusFailed, err: "DatabaseConnectionError", check: func(t *testing.T, v *env, x Execution) {
			if n := v.count("retry-out"); n != 2 {
				t.Errorf("called %d times, want 2 (1 + 1 retry)", n)
			}
		}},
	{name: "task-retry-first-matching-retrier", def: task("flaky", `"Parameters":{"key":"retry-which","times":1,"error":"BusinessError"},
		"Retry":[{"ErrorEquals":["Other"],"MaxAttempts":5},{"ErrorEquals":["BusinessError"],"MaxAttempts":0},{"ErrorEquals":["States.ALL"],"MaxAttempts":3}]`),
		input: `{}`, status: StatusFailed, err: "BusinessError"},
	{name: "task-timeout", def: `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"λsleep","Parameters":{"ms":5000},"TimeoutSeconds":1,
		"Catch":[{"ErrorEquals":["States.TaskFailed"],"Next":"W"},{"ErrorEquals":["States.Timeout"],"ResultPath":"$.e","Next":"R"}],"End":true},
		"W":{"Type":"Pass","Result":"wrong","End":true},"R":{"Type":"Pass","OutputPath":"$.e.Error","End":true}}}`, input: `{}`, output: `"States.Timeout"`},
	{name: "task-timeout-path", def: task("sleep", `"Parameters":{"ms":5000},"TimeoutSecondsPath":"$.limit"`), input: `{"limit":1}`, status: StatusFailed, err: "States.Timeout"},
	{name: "task-heartbeat-timeout", def: task("sleep", `"Parameters":{"ms":4000},"TimeoutSeconds":10,"HeartbeatSeconds":1`), input: `{}`, status: StatusFailed, err: "States.HeartbeatTimeout"},
	// AWS: States.Timeout covers a Task that "failed to send a heartbeat for a period longer than
	// the HeartbeatSeconds value"; States.HeartbeatTimeout is matchable on its own too.
	{name: "task-heartbeat-caught-by-timeout", def: `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"λsleep","Parameters":{"ms":4000},
		"TimeoutSeconds":10,"HeartbeatSeconds":1,"Catch":[{"ErrorEquals":["States.Timeout"],"ResultPath":"$.e","Next":"R"}],"End":true},
		"R":{"Type":"Pass","OutputPath":"$.e.Error","End":true}}}`, input: `{}`, output: `"States.HeartbeatTimeout"`},
	{name: "task-heartbeat-retried-by-timeout", def: `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"λsleep","Parameters":{"ms":4000},
		"TimeoutSeconds":10,"HeartbeatSeconds":1,"Retry":[{"ErrorEquals":["States.Timeout"],"IntervalSeconds":1,"MaxAttempts":1}],
		"Catch":[{"ErrorEquals":["States.HeartbeatTimeout"],"ResultPath":"$.e","Next":"R"}],"End":true},
		"R":{"Type":"Pass","OutputPath":"$.e.Error","End":true}}}`, input: `{}`,
		output: `"States.HeartbeatTimeout"`, check: func(t *testing.T, v *env, x Execution) {
			evs, _, err := v.e.History(context.Background(), x.ARN, false, 0, "")
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, ev := range evs {
				if ev.Type == "TaskTimedOut" {
					n++
				}
			}
			if n != 2 {
				t.Errorf("%d TaskTimedOut events, want 2 (the task and its one retry)", n)
			}
		}},
	{name: "task-heartbeat-caught-by-own-name", def: `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"λsleep","Parameters":{"ms":4000},
		"TimeoutSeconds":10,"HeartbeatSeconds":1,"Catch":[{"ErrorEquals":["Other"],"Next":"W"},
		{"ErrorEquals":["States.HeartbeatTimeout"],"ResultPath":"$.e","Next":"R"},{"ErrorEquals":["States.Timeout"],"Next":"W"}],"End":true},
		"W":{"Type":"Pass","Result":"wrong","End":true},"R":{"Type":"Pass","OutputPath":"$.e.Error","End":true}}}`, input: `{}`, output: `"States.HeartbeatTimeout"`},
	{name: "task-timeout-not-caught-by-heartbeat", def: `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"λsleep","Parameters":{"ms":5000},
		"TimeoutSeconds":1,"Catch":[{"ErrorEquals":["States.HeartbeatTimeout"],"Next":"W"}],"End":true},
		"W":{"Type":"Pass","Result":"wrong","End":true}}}`, input: `{}`, status: StatusFailed, err: "States.Timeout"},
	{name: "task-heartbeat-caught-by-all", def: `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"λsleep","Parameters":{"ms":4000},
		"TimeoutSeconds":10,"HeartbeatSeconds":1,"Catch":[{"ErrorEquals":["States.ALL"],"ResultPath":"$.e","Next":"R"}],"End":true},
		"R":{"Type":"Pass","OutputPath":"$.e.Error","End":true}}}`, input: `{}`, output: `"States.HeartbeatTimeout"`},
	{name: "task-heartbeat-kept", def: task("sleep", `"Parameters":{"ms":1800,"beat_ms":200},"TimeoutSeconds":10,"HeartbeatSeconds":1`), input: `{}`, output: `{"slept":1800}`},
	{name: "task-unknown-function", def: task("nosuch", ""), input: `{}`, status: StatusFailed, err: "Lambda.ResourceNotFoundException"},
	{name: "task-sns-publish", def: `{"StartAt":"N","States":{"N":{"Type":"Task","Resource":"arn:aws:states:::sns:publish",
		"Parameters":{"TopicArn":"arn:aws:sns:local:000000000000:done","Subject":"finished","Message.$":"$"},"ResultSelector":{"ok.$":"States.ArrayLength(States.Array($.MessageId))"},"End":true}}}`,
		input: `{"n":1}`, output: `{"ok":1}`, check: func(t *testing.T, v *env, x Execution) {
			ns, err := v.e.Notifications(context.Background(), 100)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range ns {
				if n.ExecutionARN == x.ARN && n.Subject == "finished" && n.Message == `{"n":1}` {
					return
				}
			}
			t.Errorf("no notification recorded: %+v", ns)
		}},
	{name: "task-loop-visits", def: `{"StartAt":"Init","States":{"Init":{"Type":"Pass","Result":0,"ResultPath":"$.i","Next":"T"},
		"T":{"Type":"Task","Resource":"λcount","Parameters":{"key":"loop","i.$":"$.i"},"ResultPath":null,"Next":"Inc"},
		"Inc":{"Type":"Pass","Parameters":{"i.$":"States.MathAdd($.i, 1)"},"Next":"C"},
		"C":{"Type":"Choice","Choices":[{"Variable":"$.i","NumericLessThan":3,"Next":"T"}],"Default":"Done"},"Done":{"Type":"Succeed"}}}`,
		input: `{}`, output: `{"i":3}`, check: func(t *testing.T, v *env, x Execution) {
			if n := v.count("loop"); n != 3 {
				t.Errorf("the task in the loop ran %d times, want 3", n)
			}
		}},

	// ---- Wait ----
	{name: "wait-seconds", def: `{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":1,"End":true}}}`, input: `{"a":1}`, output: `{"a":1}`,
		check: func(t *testing.T, v *env, x Execution) {
			if x.StopDate.Sub(x.StartDate).Seconds() < 0.9 {
				t.Errorf("waited only %s", x.StopDate.Sub(x.StartDate))
			}
		}},
	{name: "wait-seconds-path", def: `{"StartAt":"W","States":{"W":{"Type":"Wait","SecondsPath":"$.s","Next":"E"},"E":{"Type":"Succeed"}}}`, input: `{"s":0}`, output: `{"s":0}`},
	{name: "wait-timestamp-past", def: `{"StartAt":"W","States":{"W":{"Type":"Wait","Timestamp":"2020-01-01T00:00:00Z","End":true}}}`, input: `{}`, output: `{}`},
	{name: "wait-timestamp-path", def: `{"StartAt":"W","States":{"W":{"Type":"Wait","TimestampPath":"$.t","OutputPath":"$.t","End":true}}}`,
		input: `{"t":"2021-06-01T00:00:00Z"}`, output: `"2021-06-01T00:00:00Z"`},
	{name: "wait-bad-seconds-path", def: `{"StartAt":"W","States":{"W":{"Type":"Wait","SecondsPath":"$.s","End":true}}}`, input: `{"s":"x"}`, status: StatusFailed, err: "States.Runtime"},

	// ---- Parallel ----
	{name: "parallel-branches", def: `{"StartAt":"P","States":{"P":{"Type":"Parallel","End":true,"Branches":[
		{"StartAt":"A","States":{"A":{"Type":"Pass","Result":"a","End":true}}},
		{"StartAt":"B","States":{"B":{"Type":"Task","Resource":"λadd","Parameters":{"a.$":"$.x","b":1},"End":true}}}]}}}`,
		input: `{"x":1}`, output: `["a",2]`},
	{name: "parallel-result-selector-path", def: `{"StartAt":"P","States":{"P":{"Type":"Parallel","ResultSelector":{"first.$":"$[0]"},"ResultPath":"$.r","End":true,"Branches":[
		{"StartAt":"A","States":{"A":{"Type":"Pass","Result":1,"End":true}}},{"StartAt":"B","States":{"B":{"Type":"Pass","Result":2,"End":true}}}]}}}`,
		input: `{"x":0}`, output: `{"x":0,"r":{"first":1}}`},
	{name: "parallel-branch-fails", def: `{"StartAt":"P","States":{"P":{"Type":"Parallel","End":true,"Branches":[
		{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"λsleep","Parameters":{"ms":3000},"End":true}}},
		{"StartAt":"B","States":{"B":{"Type":"Fail","Error":"BranchError","Cause":"b"}}}]}}}`, input: `{}`, status: StatusFailed, err: "BranchError",
		check: func(t *testing.T, v *env, x Execution) {
			// The other branch's running task is stopped, not left running.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			kids, _ := v.q.List(ctx, queueFilterChildren(x.JobID))
			for _, k := range kids {
				if k.Type == "lambda:sleep" {
					if k, _ = v.e.waitJob(ctx, k.ID); k.Status != job.Cancelled {
						t.Errorf("the sleeping branch's task ended %s", k.Status)
					}
				}
			}
		}},
	{name: "parallel-catch", def: `{"StartAt":"P","States":{"P":{"Type":"Parallel","Next":"OK","Catch":[{"ErrorEquals":["BranchError"],"ResultPath":"$.err","Next":"H"}],"Branches":[
		{"StartAt":"B","States":{"B":{"Type":"Fail","Error":"BranchError","Cause":"b"}}}]},"OK":{"Type":"Succeed"},"H":{"Type":"Pass","OutputPath":"$.err.Error","End":true}}}`,
		input: `{}`, output: `"BranchError"`},
	{name: "parallel-nested-map", def: `{"StartAt":"P","States":{"P":{"Type":"Parallel","End":true,"Branches":[
		{"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.xs","ItemProcessor":{"StartAt":"D","States":{"D":{"Type":"Task","Resource":"λdouble","End":true}}},"End":true}}}]}}}`,
		input: `{"xs":[1,2]}`, output: `[[2,4]]`},

	// ---- Map ----
	{name: "map-inline-task", def: `{"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.xs","MaxConcurrency":2,
		"ItemProcessor":{"ProcessorConfig":{"Mode":"INLINE"},"StartAt":"D","States":{"D":{"Type":"Task","Resource":"λdouble","End":true}}},"ResultPath":"$.ys","End":true}}}`,
		input: `{"xs":[1,2,3,4,5]}`, output: `{"xs":[1,2,3,4,5],"ys":[2,4,6,8,10]}`},
	{name: "map-item-selector", def: `{"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.xs",
		"ItemSelector":{"i.$":"$$.Map.Item.Index","v.$":"$$.Map.Item.Value","k.$":"$.k"},
		"ItemProcessor":{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
		input: `{"xs":["a","b"],"k":1}`, output: `[{"i":0,"v":"a","k":1},{"i":1,"v":"b","k":1}]`},
	{name: "map-legacy-iterator-parameters", def: `{"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.xs","Parameters":{"v.$":"$$.Map.Item.Value"},
		"Iterator":{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`, input: `{"xs":[1]}`, output: `[{"v":1}]`},
	{name: "map-order-kept", def: `{"StartAt":"M","States":{"M":{"Type":"Map","MaxConcurrency":3,
		"ItemProcessor":{"StartAt":"S","States":{"S":{"Type":"Task","Resource":"λsleep","Parameters":{"ms.$":"$.ms"},"OutputPath":"$.slept","End":true}}},"End":true}}}`,
		input: `[{"ms":300},{"ms":10},{"ms":150}]`, output: `[300,10,150]`},
	{name: "map-empty", def: `{"StartAt":"M","States":{"M":{"Type":"Map","ItemProcessor":{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
		input: `[]`, output: `[]`},
	{name: "map-iteration-fails", def: `{"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.xs",
		"ItemProcessor":{"StartAt":"D","States":{"D":{"Type":"Task","Resource":"λdouble","End":true}}},"End":true}}}`,
		input: `{"xs":[1,-2,3]}`, status: StatusFailed, err: "NegativeNumber"},
	{name: "map-not-array", def: `{"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.xs","ItemProcessor":{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
		input: `{"xs":{"a":1}}`, status: StatusFailed, err: "States.Runtime"},
	{name: "map-nested", def: `{"StartAt":"M","States":{"M":{"Type":"Map","ItemProcessor":{"StartAt":"N","States":{"N":{"Type":"Map",
		"ItemProcessor":{"StartAt":"D","States":{"D":{"Type":"Task","Resource":"λdouble","End":true}}},"End":true}}},"End":true}}}`,
		input: `[[1,2],[3]]`, output: `[[2,4],[6]]`},
	{name: "map-catch", def: `{"StartAt":"M","States":{"M":{"Type":"Map","ItemProcessor":{"StartAt":"D","States":{"D":{"Type":"Task","Resource":"λdouble","End":true}}},
		"Catch":[{"ErrorEquals":["NotANumber"],"ResultPath":"$","Next":"H"}],"End":true},"H":{"Type":"Pass","OutputPath":"$.Error","End":true}}}`,
		input: `[1,"x"]`, output: `"NotANumber"`},
	{name: "map-distributed-tolerated-count", def: `{"StartAt":"M","States":{"M":{"Type":"Map","ToleratedFailureCount":1,
		"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"D","States":{"D":{"Type":"Task","Resource":"λdouble","End":true}}},"End":true}}}`,
		input: `[1,-1,3]`, output: `[2,null,6]`, check: func(t *testing.T, v *env, x Execution) {
			runs, err := v.e.ListMapRuns(context.Background(), x.ARN)
			if err != nil || len(runs) != 1 {
				t.Fatalf("map runs %v %v", runs, err)
			}
			it := runs[0].Items
			if runs[0].Status != "SUCCEEDED" || it.Total != 3 || it.Succeeded != 2 || it.Failed != 1 || it.Pending != 0 || it.Running != 0 {
				t.Errorf("map run %+v", runs[0])
			}
		}},
	{name: "map-distributed-exceeds-tolerance", def: `{"StartAt":"M","States":{"M":{"Type":"Map",
		"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED"},"StartAt":"D","States":{"D":{"Type":"Task","Resource":"λdouble","End":true}}},"End":true}}}`,
		input: `[1,-1,3]`, status: StatusFailed, err: "States.ExceedToleratedFailureThreshold"},
	{name: "map-distributed-tolerated-percentage", def: `{"StartAt":"M","States":{"M":{"Type":"Map","ToleratedFailurePercentage":50,
		"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED"},"StartAt":"D","States":{"D":{"Type":"Task","Resource":"λdouble","End":true}}},"ResultPath":null,"End":true}}}`,
		input: `[1,-1,3,4]`, output: `[1,-1,3,4]`},
	{name: "map-retry", def: `{"StartAt":"M","States":{"M":{"Type":"Map","ItemProcessor":{"StartAt":"F","States":{"F":{"Type":"Task","Resource":"λflaky",
		"Parameters":{"key":"map-retry","times":1},"OutputPath":"$.attempts","End":true}}},"Retry":[{"ErrorEquals":["DatabaseConnectionError"],"IntervalSeconds":1}],"End":true}}}`,
		input: `[0]`, output: `[2]`},

	// ---- state machine ----
	{name: "machine-timeout", def: `{"TimeoutSeconds":1,"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":5,"End":true}}}`, input: `{}`, status: StatusTimedOut, err: "States.Timeout"},
	{name: "machine-input-array", def: pass(`"InputPath":"$[1]"`), input: `[1,2]`, output: `2`},
}

// wantCoded checks that a task failure's cause carries the function's coded error as JSON.
func wantCoded(t *testing.T, name, cause string, code job.Code, message string) {
	t.Helper()
	e, ok := job.ErrorFromCause(name, cause)
	if !ok || e.Code != code || e.Message != message {
		t.Errorf("cause %q: %+v (coded %v), want %s %q", cause, e, ok, code, message)
	}
}

func TestConformance(t *testing.T) {
	if len(cases) < 80 {
		t.Fatalf("only %d conformance cases", len(cases))
	}
	runCases(t, cases)
}

// runCases runs each case on a fresh engine as a parallel subtest.
func runCases(t *testing.T, cases []ccase) {
	v := newEnv(t)
	seen := map[string]bool{}
	for _, c := range cases {
		if seen[c.name] {
			t.Fatalf("duplicate case %s", c.name)
		}
		seen[c.name] = true
		c := c
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			arn := v.machine(t, c.name, c.def)
			x := v.run(t, arn, c.name, c.input)
			want := c.status
			if want == "" {
				want = StatusSucceeded
			}
			if x.Status != want {
				t.Fatalf("status %s (%s: %s), want %s; output %s", x.Status, x.Error, x.Cause, want, x.Output)
			}
			if c.output != "" && !sameJSON(string(x.Output), c.output) {
				t.Errorf("output %s, want %s", x.Output, c.output)
			}
			if c.err != "" && x.Error != c.err {
				t.Errorf("error %q (%s), want %q", x.Error, x.Cause, c.err)
			}
			if c.cause != "" && !strings.Contains(x.Cause, c.cause) {
				t.Errorf("cause %q does not contain %q", x.Cause, c.cause)
			}
			if c.check != nil {
				c.check(t, v, x)
			}
			// Every execution's job ends in the matching queue status.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			j, err := v.e.waitJob(ctx, x.JobID)
			if err != nil || !j.Status.Final() || (j.Status == job.Succeeded) != (x.Status == StatusSucceeded) {
				t.Errorf("job %d: %v %s", x.JobID, err, j.Status)
			}
		})
	}
}

func TestItemReaderCSVBatcherResultWriter(t *testing.T) {
	v := newEnv(t)
	var b strings.Builder
	b.WriteString("\xEF\xBB\xBFuser_id,logins\n")
	for i := 0; i < 2500; i++ {
		fmt.Fprintf(&b, "u%d,%d\n", i, i%7)
	}
	if err := os.MkdirAll(filepath.Join(v.dir, "in"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(v.dir, "in", "users.csv"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	arn := v.machine(t, "csv-map", `{"StartAt":"M","States":{"M":{"Type":"Map",
		"ItemReader":{"Resource":"arn:aws:states:::s3:getObject","ReaderConfig":{"InputType":"CSV","CSVHeaderLocation":"FIRST_ROW"},
			"Parameters":{"Bucket":"in","Key.$":"$.key"}},
		"ItemBatcher":{"MaxItemsPerBatch":1000,"BatchInput":{"file.$":"$.key"}},
		"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"C","States":{"C":{"Type":"Task","Resource":"λdouble","End":true}}},
		"ResultWriter":{"Resource":"arn:aws:states:::s3:putObject","Parameters":{"Bucket":"out","Prefix":"results"}},"MaxConcurrency":2,"End":true}}}`)
	x := v.run(t, arn, "csv-1", `{"key":"users.csv"}`)
	if x.Status != StatusSucceeded {
		t.Fatalf("%s %s %s", x.Status, x.Error, x.Cause)
	}
	out := obj(x.Output)
	det, _ := out["ResultWriterDetails"].(map[string]any)
	key, _ := det["Key"].(string)
	if det["Bucket"] != "out" || !strings.HasSuffix(key, "/manifest.json") || out["MapRunArn"] == nil {
		t.Fatalf("output %s", x.Output)
	}
	mb, err := os.ReadFile(filepath.Join(v.dir, "out", filepath.FromSlash(key)))
	if err != nil {
		t.Fatal(err)
	}
	var manifest struct {
		ResultFiles map[string][]struct{ Key string }
	}
	json.Unmarshal(mb, &manifest)
	sb, err := os.ReadFile(filepath.Join(v.dir, "out", filepath.FromSlash(manifest.ResultFiles["SUCCEEDED"][0].Key)))
	if err != nil {
		t.Fatal(err)
	}
	var results []struct {
		Index  int
		Output string
	}
	if err := json.Unmarshal(sb, &results); err != nil {
		t.Fatal(err)
	}
	if len(results) != 3 || results[0].Output != `{"count":1000}` || results[2].Output != `{"count":500}` {
		t.Fatalf("results %+v", results)
	}
	runs, _ := v.e.ListMapRuns(context.Background(), x.ARN)
	if len(runs) != 1 || runs[0].Items.Total != 3 || runs[0].Items.Succeeded != 3 || runs[0].Items.ResultsWritten != 3 {
		t.Fatalf("map run %+v", runs)
	}
}

func TestItemReaderJSON(t *testing.T) {
	v := newEnv(t)
	if err := os.WriteFile(filepath.Join(v.dir, "items.json"), []byte(`[1, 2, 3, 4]`), 0o644); err != nil {
		t.Fatal(err)
	}
	arn := v.machine(t, "json-map", `{"StartAt":"M","States":{"M":{"Type":"Map",
		"ItemReader":{"Resource":"arn:aws:states:::s3:getObject","ReaderConfig":{"InputType":"JSON","MaxItems":3},"Parameters":{"Key":"items.json"}},
		"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED"},"StartAt":"C","States":{"C":{"Type":"Task","Resource":"λdouble","End":true}}},"End":true}}}`)
	x := v.run(t, arn, "json-1", `{}`)
	if x.Status != StatusSucceeded || !sameJSON(string(x.Output), `[2,4,6]`) {
		t.Fatalf("%s %s %s %s", x.Status, x.Output, x.Error, x.Cause)
	}
	x = v.run(t, arn, "json-missing", `{}`)
	if x.Status != StatusSucceeded {
		t.Fatalf("second run %s", x.Status)
	}
	os.Remove(filepath.Join(v.dir, "items.json"))
	x = v.run(t, arn, "json-gone", `{}`)
	if x.Status != StatusFailed || x.Error != "States.ItemReaderFailed" {
		t.Fatalf("missing file: %s %s", x.Status, x.Error)
	}
}
