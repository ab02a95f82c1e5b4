package bedrock

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"jobdesk/engine/aijob"
	"jobdesk/engine/aijob/aisqlite"
	"jobdesk/engine/aijob/aitest"
	"jobdesk/engine/job"
	"jobdesk/engine/store"
)

func newProvider(t *testing.T, srv *aitest.Server) *Provider {
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDLOOPBACK")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "loopback")
	t.Setenv("AWS_CONFIG_FILE", t.TempDir()+"/none")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", t.TempDir()+"/none")
	p, err := New(context.Background(), Options{Region: "ap-northeast-1", ModelID: "anthropic.claude-test", Endpoint: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestConverseThroughTheSDK(t *testing.T) {
	srv := aitest.NewBedrock(t, nil)
	p := newProvider(t, srv)
	rep, err := p.Complete(context.Background(), aijob.Request{System: "sys", Prompt: "8つのサブ目標を作成",
		SchemaName: "subgoals", Schema: aijob.SubgoalSchema.Raw})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := aijob.SubgoalSchema.ValidateJSON([]byte(rep.Text)); err != nil {
		t.Fatalf("%v: %s", err, rep.Text)
	}
	if rep.Model != "anthropic.claude-test" || rep.PromptTokens == 0 || rep.CompletionTokens == 0 || rep.Provider != "bedrock" {
		t.Fatalf("%+v", rep)
	}
	c := srv.Calls()[0]
	if c.Path != "/model/anthropic.claude-test/converse" || !strings.Contains(c.System, `"minItems":8`) {
		t.Fatalf("call %+v", c)
	}
}

func TestConverseErrorClasses(t *testing.T) {
	tests := []struct {
		step      aitest.Step
		kind      aijob.Kind
		code      job.Code
		retryable bool
	}{
		{aitest.Step{Status: 429}, aijob.KindThrottled, job.E002, true},
		{aitest.Step{Status: 503}, aijob.KindUnavailable, job.E001, true},
		{aitest.Step{Status: 400, ErrorType: "ServiceQuotaExceededException"}, aijob.KindQuota, job.E007, false},
		{aitest.Step{Status: 403}, aijob.KindAuth, job.E007, false},
		{aitest.Step{Status: 400, Message: "Malformed input request"}, aijob.KindBadRequest, job.E007, false},
	}
	for _, tt := range tests {
		t.Run(string(tt.kind), func(t *testing.T) {
			srv := aitest.NewBedrock(t, func(aitest.Call) aitest.Step { return tt.step })
			p := newProvider(t, srv)
			_, err := p.Complete(context.Background(), aijob.Request{Prompt: "x"})
			var pe *aijob.ProviderError
			if !errors.As(err, &pe) || pe.Kind != tt.kind {
				t.Fatalf("err %v", err)
			}
			je := pe.JobError()
			if je.Code != tt.code || je.Retryable != tt.retryable {
				t.Fatalf("%+v", je)
			}
			if n := len(srv.Calls()); n != 1 {
				t.Fatalf("%d calls: the SDK must not retry on its own", n)
			}
		})
	}
}

func TestImageRefusedAsNoVision(t *testing.T) {
	srv := aitest.NewBedrock(t, func(c aitest.Call) aitest.Step {
		if c.HasImage {
			return aitest.Step{Status: 400, Message: "This model doesn't support the image content block."}
		}
		return aitest.Step{Text: "{}"}
	})
	p := newProvider(t, srv)
	_, err := p.Complete(context.Background(), aijob.Request{Prompt: "画像", Image: []byte("\x89PNG\r\n\x1a\n"), ImageMIME: "image/png"})
	var pe *aijob.ProviderError
	if !errors.As(err, &pe) || pe.Kind != aijob.KindNoVision {
		t.Fatalf("err %v", err)
	}
}

// The whole SUBGOAL_GENERATION handler runs on Bedrock the same way as on the device.
func TestSubgoalsOnBedrock(t *testing.T) {
	srv := aitest.NewBedrock(t, nil)
	db, err := store.OpenDir(t.TempDir(), aisqlite.Migrations)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s := aijob.NewService(aisqlite.New(db).State(), newProvider(t, srv))
	out, err := s.Subgoals(context.Background(), json.RawMessage(`{"title":"売上を2倍にする"}`), job.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var res aijob.SubgoalResult
	json.Unmarshal(out, &res)
	if len(res.Subgoals) != 8 {
		t.Fatalf("%s", out)
	}
}
