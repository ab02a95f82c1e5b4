package cloudops

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"jobdesk/engine/job"
)

// validBodies are one message of each job type, as the specifications give them (seed 003).
var validBodies = map[string]string{
	"SUBSIDY_SYNC":        `{"params":{"acceptance_only":true,"sort":"acceptance_start_datetime","order":"DESC","limit":100}}`,
	"ATTACHMENT_INGEST":   `{"subsidy_id":"a0WJ200000CDIWiMAP","force":true,"triggered_by":"SYNC"}`,
	"ATTACHMENT_CONVERT":  `{"attachment_id":"3f0c","subsidy_id":"s1","file_type":"PDF","s3_path":"inputs/s1/a.pdf"}`,
	"ELIGIBILITY_EXTRACT": `{"subsidy_id":"s1","attachment_ids":["3f0c","3f0d"]}`,
	"EVALUATION":          `{"trigger":"NEW_SUBSIDY","company_ids":[],"subsidy_ids":["s1"],"force":false}`,
	"NOTIFICATION":        `{"notification_type":"NEW_MATCH","user_id":"u1","company_id":"c1","subsidy_id":null,"data":{"title":"t","message":"m","action_url":null}}`,
	"CAPTION_GENERATION":  `{"s3_path":"inputs/photo.png"}`,
}

func TestPrepareFillsTheCommonFields(t *testing.T) {
	if len(validBodies) != len(Schemas) {
		t.Fatalf("the test covers %d job types; Schemas has %d", len(validBodies), len(Schemas))
	}
	now := time.Date(2026, 1, 19, 9, 0, 0, 0, time.UTC)
	for jt, body := range validBodies {
		out, err := Prepare(jt, []byte(body), PrepareOptions{Now: now})
		if err != nil {
			t.Fatalf("%s: %v", jt, err)
		}
		var m map[string]any
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatal(err)
		}
		wantBy := "USER"
		if jt == "ATTACHMENT_INGEST" {
			wantBy = "SYNC" // given in the body: kept
		}
		if m["job_type"] != jt || m["triggered_at"] != "2026-01-19T09:00:00Z" || m["triggered_by"] != wantBy ||
			m["retry_count"] != 0.0 || len(m["job_id"].(string)) != 36 || len(m["correlation_id"].(string)) != 36 {
			t.Errorf("%s: prepared %s", jt, out)
		}
		if _, ok := m["user_id"]; !ok {
			t.Errorf("%s: user_id missing (want null or the body's)", jt)
		}
	}
}

func TestPrepareRejectsWithTheField(t *testing.T) {
	for _, c := range []struct{ jobType, body, field string }{
		{"SUBSIDY_SYNC", `{}`, `"params"`},
		{"SUBSIDY_SYNC", `{"params":{"order":"UP"}}`, `"params.order"`},
		{"SUBSIDY_SYNC", `{"params":{"limit":"100"}}`, `"params.limit"`},
		{"ATTACHMENT_INGEST", `{"subsidy_id":""}`, `"subsidy_id"`},
		{"ATTACHMENT_INGEST", `{"subsidy_id":"s","force":"yes"}`, `"force"`},
		{"ATTACHMENT_CONVERT", `{"attachment_id":"a","subsidy_id":"s","file_type":"GIF","s3_path":"k"}`, `"file_type"`},
		{"ATTACHMENT_CONVERT", `{"attachment_id":"a","subsidy_id":"s","file_type":"PDF"}`, `"s3_path"`},
		{"ELIGIBILITY_EXTRACT", `{"subsidy_id":"s","attachment_ids":[]}`, `"attachment_ids"`},
		{"ELIGIBILITY_EXTRACT", `{"subsidy_id":"s","attachment_ids":[1]}`, `"attachment_ids"`},
		{"EVALUATION", `{"company_ids":["c"]}`, `"trigger"`},
		{"NOTIFICATION", `{"notification_type":"NEW_MATCH","user_id":"u","company_id":"c","data":{"title":"t"}}`, `"data.message"`},
		{"NOTIFICATION", `{"notification_type":"NEW_MATCH","user_id":null,"company_id":"c","data":{"title":"t","message":"m"}}`, `"user_id"`},
		{"CAPTION_GENERATION", `{}`, `"path or s3_path"`},
		{"EVALUATION", `{"trigger":"NEW_SUBSIDY","job_id":"has space"}`, `"job_id"`},
		{"EVALUATION", `{"trigger":"NEW_SUBSIDY","triggered_at":"yesterday"}`, `"triggered_at"`},
		{"EVALUATION", `{"trigger":"NEW_SUBSIDY","retry_count":-1}`, `"retry_count"`},
		{"EVALUATION", `{"trigger":"NEW_SUBSIDY","triggered_by":"ROBOT"}`, `"triggered_by"`},
		{"EVALUATION", `{"trigger":"NEW_SUBSIDY","job_type":"NOTIFICATION"}`, `"job_type"`},
		{"EVALUATION", `[1]`, `not one JSON object`},
		{"NO_SUCH_JOB", `{}`, `unknown job type`},
		// Every missing field at once (a nested one only when its object is there).
		{"NOTIFICATION", `{"notification_type":"NEW_MATCH"}`, `fields "user_id", "company_id", "data" are missing`},
		{"NOTIFICATION", `{"notification_type":"NEW_MATCH","user_id":"u","company_id":"c","data":{}}`, `fields "data.title", "data.message" are missing`},
	} {
		_, err := Prepare(c.jobType, []byte(c.body), PrepareOptions{})
		var je *job.Error
		if !errors.As(err, &je) || je.Code != job.E014 || !strings.Contains(je.Message, c.field) || je.MessageJa == "" ||
			(strings.HasPrefix(c.field, `"`) && !strings.Contains(je.MessageJa, c.field)) {
			t.Errorf("%s %s: got %v (ja %q); want E014 naming %s in English and Japanese", c.jobType, c.body, err, jaOf(je), c.field)
		}
	}
}

func jaOf(e *job.Error) string {
	if e == nil {
		return ""
	}
	return e.MessageJa
}

// A message carrying the handler's whole input needs only the common fields.
func TestPrepareAcceptsAWholeInput(t *testing.T) {
	if _, err := Prepare("ELIGIBILITY_EXTRACT", []byte(`{"input":{"path":"s3://b/k.pdf"}}`), PrepareOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestTemplateHasEveryRequiredField: each job type's template, its empty strings and lists
// filled in, passes the check; as it comes, it lacks only what a person must type.
func TestTemplateHasEveryRequiredField(t *testing.T) {
	var fill func(v any) any
	fill = func(v any) any {
		switch v := v.(type) {
		case string:
			if v == "" {
				return "x"
			}
		case []any:
			if len(v) == 0 {
				return []any{"x"}
			}
		case map[string]any:
			for k, e := range v {
				v[k] = fill(e)
			}
		}
		return v
	}
	for _, jt := range JobTypes() {
		tmpl, err := Template(jt)
		if err != nil {
			t.Fatalf("%s: %v", jt, err)
		}
		var m map[string]any
		if err := json.Unmarshal(tmpl, &m); err != nil {
			t.Fatalf("%s: template %s: %v", jt, tmpl, err)
		}
		if _, has := m["job_id"]; has {
			t.Errorf("%s: the template carries the common fields: %s", jt, tmpl)
		}
		filled, _ := json.Marshal(fill(m))
		if _, err := Prepare(jt, filled, PrepareOptions{}); err != nil {
			t.Errorf("%s: template %s filled in as %s: %v", jt, tmpl, filled, err)
		}
	}
	if _, err := Template("NO_SUCH"); err == nil || job.AsError(err).Code != job.E014 {
		t.Errorf("an unknown job type: %v", err)
	}
}
