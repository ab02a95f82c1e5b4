package flow

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func TestTestState(t *testing.T) {
	v := newEnv(t)
	ctx := context.Background()
	for _, c := range []struct {
		name  string
		in    TestStateInput
		check func(t *testing.T, o TestStateOutput)
	}{
		{"pass-debug", TestStateInput{Definition: `{"Type":"Pass","InputPath":"$.a","Parameters":{"x.$":"$.b"},"ResultPath":"$.r","Next":"N"}`,
			Input: json.RawMessage(`{"a":{"b":1}}`), InspectionLevel: "DEBUG"}, func(t *testing.T, o TestStateOutput) {
			if o.Status != "SUCCEEDED" || o.NextState != "N" || string(o.Output) != `{"a":{"b":1},"r":{"x":1}}` {
				t.Errorf("%+v", o)
			}
			d := o.InspectionData
			if d["input"] != `{"a":{"b":1}}` || d["afterInputPath"] != `{"b":1}` || d["afterParameters"] != `{"x":1}` || d["afterResultPath"] != `{"a":{"b":1},"r":{"x":1}}` {
				t.Errorf("inspection %v", d)
			}
		}},
		{"info-has-no-inspection", TestStateInput{Definition: `{"Type":"Pass","End":true}`, Input: json.RawMessage(`{}`)}, func(t *testing.T, o TestStateOutput) {
			if o.Status != "SUCCEEDED" || o.InspectionData != nil || o.NextState != "" {
				t.Errorf("%+v", o)
			}
		}},
		{"task-runs-function", TestStateInput{Definition: `{"Type":"Task","Resource":"` + lambdaARN + "add" + `","ResultSelector":{"s.$":"$"},"End":true}`,
			Input: json.RawMessage(`{"a":2,"b":3}`), InspectionLevel: "TRACE"}, func(t *testing.T, o TestStateOutput) {
			if o.Status != "SUCCEEDED" || string(o.Output) != `{"s":5}` || o.InspectionData["result"] != "5" || o.InspectionData["afterResultSelector"] != `{"s":5}` {
				t.Errorf("%+v", o)
			}
		}},
		{"task-retriable", TestStateInput{Definition: `{"Type":"Task","Resource":"` + lambdaARN + "fail" + `","Parameters":{"error":"Boom","cause":"c"},
			"Retry":[{"ErrorEquals":["Boom"]}],"End":true}`, Input: json.RawMessage(`{}`)}, func(t *testing.T, o TestStateOutput) {
			if o.Status != "RETRIABLE" || o.Error != "Boom" {
				t.Errorf("%+v", o)
			}
		}},
		{"task-caught", TestStateInput{Definition: `{"Type":"Task","Resource":"` + lambdaARN + "fail" + `","Parameters":{"error":"Boom","cause":"c"},
			"Catch":[{"ErrorEquals":["States.ALL"],"ResultPath":"$.err","Next":"H"}],"End":true}`, Input: json.RawMessage(`{"k":1}`)}, func(t *testing.T, o TestStateOutput) {
			if o.Status != "CAUGHT_ERROR" || o.NextState != "H" || !strings.Contains(string(o.Output), `"Error":"Boom"`) {
				t.Errorf("%+v", o)
			}
		}},
		{"choice", TestStateInput{Definition: `{"Type":"Choice","Choices":[{"Variable":"$.n","NumericGreaterThan":1,"Next":"Big"}],"Default":"Small"}`,
			Input: json.RawMessage(`{"n":2}`)}, func(t *testing.T, o TestStateOutput) {
			if o.Status != "SUCCEEDED" || o.NextState != "Big" {
				t.Errorf("%+v", o)
			}
		}},
		{"fail-state", TestStateInput{Definition: `{"Type":"Fail","Error":"E","Cause":"C"}`}, func(t *testing.T, o TestStateOutput) {
			if o.Status != "FAILED" || o.Error != "E" || o.Cause != "C" {
				t.Errorf("%+v", o)
			}
		}},
		{"wait-does-not-wait", TestStateInput{Definition: `{"Type":"Wait","Seconds":3600,"Next":"N"}`, Input: json.RawMessage(`{"a":1}`)}, func(t *testing.T, o TestStateOutput) {
			if o.Status != "SUCCEEDED" || o.NextState != "N" || string(o.Output) != `{"a":1}` {
				t.Errorf("%+v", o)
			}
		}},
		{"jsonata-with-variables", TestStateInput{Definition: `{"QueryLanguage":"JSONata","Type":"Pass","Output":"{% $states.input.a + $k %}","Assign":{"m":"{% $k * 2 %}"},"End":true}`,
			Input: json.RawMessage(`{"a":1}`), Variables: json.RawMessage(`{"k":10}`), InspectionLevel: "DEBUG"}, func(t *testing.T, o TestStateOutput) {
			if o.Status != "SUCCEEDED" || string(o.Output) != `11` || o.InspectionData["variables"] != `{"k":10,"m":20}` {
				t.Errorf("%+v", o)
			}
		}},
		{"state-of-a-machine", TestStateInput{Definition: `{"QueryLanguage":"JSONata","StartAt":"A","States":{"A":{"Type":"Pass","Next":"B"},"B":{"Type":"Pass","Output":"{% $states.input.x %}","End":true}}}`,
			StateName: "B", Input: json.RawMessage(`{"x":"y"}`)}, func(t *testing.T, o TestStateOutput) {
			if o.Status != "SUCCEEDED" || string(o.Output) != `"y"` {
				t.Errorf("%+v", o)
			}
		}},
		{"runtime-error", TestStateInput{Definition: `{"Type":"Pass","InputPath":"$.nope","End":true}`, Input: json.RawMessage(`{}`)}, func(t *testing.T, o TestStateOutput) {
			if o.Status != "FAILED" || o.Error != "States.Runtime" || !strings.Contains(o.Cause, "$.nope") {
				t.Errorf("%+v", o)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			o, err := v.e.TestState(ctx, c.in)
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, o)
		})
	}
	for _, in := range []TestStateInput{
		{Definition: `{"Type":"Pass","Bogus":1,"End":true}`},
		{Definition: `{"Type":"Map","ItemProcessor":{"StartAt":"I","States":{"I":{"Type":"Pass","End":true}}},"End":true}`},
		{Definition: `{"Type":"Task","Resource":"` + lambdaARN + "nosuch" + `","End":true}`},
		{Definition: `{"Type":"Pass","End":true}`, InspectionLevel: "LOUD"},
		{Definition: `not json`},
		{Definition: `{"StartAt":"A","States":{"A":{"Type":"Pass","End":true}}}`, StateName: "Z"},
	} {
		if o, err := v.e.TestState(ctx, in); err == nil {
			t.Errorf("%s: %+v, want an error", in.Definition, o)
		}
	}
}
