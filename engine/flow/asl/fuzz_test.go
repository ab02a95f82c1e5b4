package asl

import (
	"testing"
)

// FuzzPath: any path text either fails to parse or evaluates (and sets) without panicking.
func FuzzPath(f *testing.F) {
	for _, s := range []string{"$", "$.a.b[0]", "$['x y'][1:3]", "$..id", "$.a[*].b", "$$.Map.Item.Value", "$[-1]", "$.a[", "$['", "$.a.b[?(@.id == 3)]", "$..b[?(@ != 'x')]", "$.a.b[?(@.id)]", "$v.a[0]", "$[?(@.k <= 2)].k"} {
		f.Add(s, `{"a":{"b":[1,2,{"id":3}]},"x y":[0,1,2,3]}`)
	}
	f.Fuzz(func(t *testing.T, path, doc string) {
		p, err := ParsePath(path)
		if err != nil {
			return
		}
		v, err := Decode([]byte(doc))
		if err != nil {
			return
		}
		got, found := p.Get(v)
		if found && !p.Reference() {
			if _, ok := got.([]any); !ok {
				t.Fatalf("a non-reference path returned %T", got)
			}
		}
		if p.Reference() && !p.Context() {
			out, err := p.Set(v, "new")
			if err == nil {
				if back, ok := p.Get(out); !ok || back != "new" {
					t.Fatalf("Set then Get on %q gave %v %v", path, back, ok)
				}
			}
		}
	})
}

// FuzzTemplate: a Parameters template with any ".$" expression (path or intrinsic function)
// evaluates or fails with a named error, never panics.
func FuzzTemplate(f *testing.F) {
	for _, s := range []string{"$.a", "States.Format('{} and {}', $.a, $.b)", "States.ArrayPartition($.l, 2)",
		"States.StringToJson($.s)", "States.Hash($.a, 'SHA-256')", "States.MathRandom(1, 9, 3)", "States.ArrayRange(0, 10, 0)",
		"States.JsonMerge($.o, $.o, false)", "States.Base64Decode($.s)", "States.Array(States.UUID(), $$.x)", "States.Format('x\\'y')"} {
		f.Add(s, `{"a":"A","b":2,"l":[1,2,3],"s":"{\"k\":[1]}","o":{"x":1}}`)
	}
	f.Fuzz(func(t *testing.T, expr, input string) {
		in, err := Decode([]byte(input))
		if err != nil {
			return
		}
		env := Env{Input: in, Context: map[string]any{"x": 1.0}}
		_, err = Template(map[string]any{"v.$": expr, "lit": []any{1.0, map[string]any{"w.$": expr}}}, env)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error is %T, want *Error: %v", err, err)
			}
		}
	})
}

// FuzzParse: any definition parses or yields diagnostics, never panics; a parsed machine's
// states all exist.
func FuzzParse(f *testing.F) {
	f.Add(`{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"B"},"B":{"Type":"Choice","Choices":[{"Variable":"$.x","NumericEquals":1,"Next":"A"}],"Default":"C"},"C":{"Type":"Succeed"}}}`)
	f.Add(`{"StartAt":"M","States":{"M":{"Type":"Map","ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"ItemReader":{"ReaderConfig":{"InputType":"CSV"},"Parameters":{"Key":"a.csv"}},"End":true}}}`)
	f.Add(`{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"r","Retry":[{"ErrorEquals":["States.ALL"],"MaxAttempts":0}],"Catch":[{"ErrorEquals":["X"],"Next":"T"}],"End":true}}}`)
	f.Add(`{"StartAt":"P","States":{"P":{"Type":"Parallel","Branches":[{"StartAt":"F","States":{"F":{"Type":"Fail"}}}],"End":true}}}`)
	f.Add(`[1,2]`)
	f.Add(`{"QueryLanguage":"JSONata","StartAt":"A","States":{"A":{"Type":"Pass","Assign":{"x":"{% $states.input.a %}"},"Output":{"y":"{% $x + 1 %}"},"Next":"C"},"C":{"Type":"Choice","Choices":[{"Condition":"{% $x > 1 %}","Next":"M"}],"Default":"M"},"M":{"Type":"Map","Items":"{% [1,2] %}","ItemProcessor":{"StartAt":"I","States":{"I":{"Type":"Pass","End":true}}},"End":true}}}`)
	f.Add(`{"StartAt":"A","States":{"A":{"Type":"Pass","QueryLanguage":"JSONata","Output":"{% $states.input.[ %}","End":true}}}`)
	f.Add(`{"StartAt":"A","States":{"A":{"Type":"Pass","Assign":{"v.$":"$.a[?(@.b == 1)]"},"Parameters":{"w.$":"$v"},"End":true}}}`)
	f.Fuzz(func(t *testing.T, def string) {
		m, ds := Parse([]byte(def), nil)
		if m == nil {
			if len(ds) == 0 {
				t.Fatal("no machine and no diagnostics")
			}
			return
		}
		if m.States[m.StartAt] == nil {
			t.Fatalf("StartAt %q is not a state", m.StartAt)
		}
		for _, s := range m.States {
			if s.Next != "" && m.States[s.Next] == nil {
				t.Fatalf("Next %q is not a state", s.Next)
			}
		}
	})
}

// FuzzChoice: a Choice rule over any input evaluates or fails with a named error.
func FuzzChoice(f *testing.F) {
	f.Add(`{"Variable":"$.x","StringMatches":"a*\\*b","Next":"N"}`, `{"x":"a1*b"}`)
	f.Add(`{"And":[{"Variable":"$.n","NumericLessThanPath":"$.m"},{"Not":{"Variable":"$.t","IsTimestamp":true}}],"Next":"N"}`, `{"n":1,"m":2,"t":"2024-01-01T00:00:00Z"}`)
	f.Add(`{"Variable":"$.t","TimestampGreaterThanEquals":"2024-01-01T00:00:00Z","Next":"N"}`, `{"t":"x"}`)
	f.Fuzz(func(t *testing.T, rule, input string) {
		def := `{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[` + rule + `]},"N":{"Type":"Succeed"}}}`
		m, _ := Parse([]byte(def), nil)
		if m == nil {
			return
		}
		in, err := Decode([]byte(input))
		if err != nil {
			return
		}
		next, err := m.States["C"].Choose(Env{Input: in})
		if err == nil && next != "N" {
			t.Fatalf("next %q", next)
		}
	})
}
