package aijob_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	. "jobdesk/engine/aijob"
	"jobdesk/engine/aijob/aitest"
	"jobdesk/engine/job"
)

func TestSchemaValidate(t *testing.T) {
	tests := []struct {
		name   string
		schema NamedSchema
		value  string
		want   string // a substring of the error, "" for valid
	}{
		{"tasks ok", TaskSchema, `{"tasks":[{"title":"a","description":"","type":"habit","estimatedMinutes":15}]}`, ""},
		{"tasks empty", TaskSchema, `{"tasks":[]}`, "at least 1 items"},
		{"bad enum", TaskSchema, `{"tasks":[{"title":"a","description":"","type":"other","estimatedMinutes":15}]}`, "must be one of"},
		{"fraction", TaskSchema, `{"tasks":[{"title":"a","description":"","type":"habit","estimatedMinutes":1.5}]}`, "must be an integer"},
		{"minimum", TaskSchema, `{"tasks":[{"title":"a","description":"","type":"habit","estimatedMinutes":0}]}`, "at least 1"},
		{"missing", TaskSchema, `{"tasks":[{"title":"a","type":"habit","estimatedMinutes":3}]}`, `missing required property "description"`},
		{"extra", TaskSchema, `{"tasks":[],"x":1}`, `property "x" is not allowed`},
		{"wrong type", CaptionSchema, `{"description":5}`, "must be a string"},
		{"empty string", CaptionSchema, `{"description":""}`, "at least 1 characters"},
		{"not object", CaptionSchema, `[]`, "must be an object"},
		{"not json", CaptionSchema, `{`, "not valid JSON"},
		{"eight", SubgoalSchema, aitest.Answer(aitest.Call{SchemaName: "subgoals"}), ""},
		{"seven", SubgoalSchema, sevenSubgoals(), "at least 8 items"},
		{"eligibility", EligibilitySchema, aitest.Answer(aitest.Call{SchemaName: "eligibility"}), ""},
		{"eligibility missing", EligibilitySchema, `{"must":[]}`, `missing required property "missing_keys"`},
		{"long title", ActionSchema, `{"actions":[{"title":"` + strings.Repeat("あ", 61) + `","description":"d","type":"habit"}]}`, "at most 60 characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.schema.ValidateJSON([]byte(tt.value))
			if tt.want == "" && err != nil {
				t.Fatal(err)
			}
			if tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
		})
	}
}

func TestParseSchemaRefusesUnknownKeywords(t *testing.T) {
	for _, s := range []string{`{"type":"string","pattern":"x"}`, `{"type":"object","properties":{"a":{"oneOf":[]}}}`, `{"items":{"$ref":"#"}}`, `[`} {
		if _, err := ParseSchema([]byte(s)); err == nil {
			t.Errorf("%s accepted", s)
		}
	}
}

func TestExtractJSON(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":1}`:                       `{"a":1}`,
		"```json\n{\"a\":1}\n```":       `{"a":1}`,
		"Sure! {\"a\":1} Hope it helps": `{"a":1}`,
		"  \n {\"a\":[1]}  ":            `{"a":[1]}`,
	} {
		if got := string(ExtractJSON(in)); got != want {
			t.Errorf("%q → %q, want %q", in, got, want)
		}
	}
}

func FuzzValidate(f *testing.F) {
	f.Add([]byte(aitest.Answer(aitest.Call{SchemaName: "tasks"})))
	f.Add([]byte(`{"tasks":[{"estimatedMinutes":"x"}]}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, s := range []NamedSchema{SubgoalSchema, ActionSchema, TaskSchema, CaptionSchema, EligibilitySchema} {
			body := ExtractJSON(string(b))
			if _, err := s.ValidateJSON(body); err == nil && s.Name == "tasks" {
				// What the validator accepts decodes into the Go shape the handlers use.
				var out struct {
					Tasks []GenTask `json:"tasks"`
				}
				if err := json.Unmarshal(body, &out); err != nil || len(out.Tasks) == 0 {
					t.Fatalf("accepted %s but: %v", body, err)
				}
			}
		}
	})
}

func FuzzParseSchema(f *testing.F) {
	f.Add([]byte(TaskSchema.Raw))
	f.Add([]byte(`{"type":"array","items":{"type":"integer","minimum":1}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseSchema(b)
		if err == nil {
			s.ValidateJSON([]byte(`{"a":[1,"x",{}]}`))
		}
	})
}

func FuzzHeadingExtract(f *testing.F) {
	f.Add(guideline)
	f.Add("# \n- \n## 要件\n1) 中小企業\n（1）県内\n①")
	f.Fuzz(func(t *testing.T, md string) {
		e := HeadingExtract(md)
		if e.Must == nil || e.MissingKeys == nil {
			t.Fatal("nil lists")
		}
		if _, err := EligibilitySchema.ValidateJSON(mustJSON(e)); err != nil && len(e.NeedCheck)+len(e.MustNot) == 0 {
			t.Fatal(err)
		}
	})
}

// BenchmarkTaskGeneration64 runs TASK_GENERATION for 64 actions through the task-generation
// workflow against a loopback server that answers each call in 50 ms. Serially that is 3.2 s;
// with 3 batches × 8 actions at once it is about 64/24 rounds × 50 ms.
func BenchmarkTaskGeneration64(b *testing.B) {
	srv := aitest.NewOpenAI(b, nil)
	s, _, d := newTestDevice(b, local(srv), nil)
	g := goalWithActions(b, s)
	srv.SetScript(func(c aitest.Call) aitest.Step {
		return aitest.Step{Text: aitest.Answer(c), Delay: 50 * time.Millisecond}
	})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		j := d.Run(b, TypeTasks, GoalInput{GoalID: g.ID, Regenerate: true})
		if j.Status != job.Succeeded {
			b.Fatalf("%s %v", j.Status, j.Error)
		}
		var res TaskResult
		json.Unmarshal(j.Result, &res)
		if res.SuccessCount != 64 {
			b.Fatalf("%d succeeded", res.SuccessCount)
		}
		b.ReportMetric(time.Since(start).Seconds(), "s/64actions")
	}
}
