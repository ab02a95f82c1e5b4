package cloudstatus_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"jobdesk/engine/functions"
	"jobdesk/sync/cloudconfig"
	"jobdesk/sync/cloudstatus"
	"jobdesk/sync/internal/awstest"
	"jobdesk/sync/internal/sfntest"
)

// The endpoints come only from the SDK's own environment variables; S3 is versitygw, Step
// Functions the stand-in. STS has no independent server here: a handler answers
// GetCallerIdentity in STS's XML.
func TestCheckFindsEveryServiceThroughTheSDKSettings(t *testing.T) {
	s3 := awstest.StartS3(t)
	sf := sfntest.Start(t, functions.New(), map[string]string{"wf": `{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`})
	stsSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		if r.Form.Get("Action") != "GetCallerIdentity" {
			http.Error(w, "unexpected", 400)
			return
		}
		w.Header().Set("Content-Type", "text/xml")
		w.Write([]byte(`<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><GetCallerIdentityResult>` +
			`<Arn>arn:aws:iam::123456789012:user/staff</Arn><UserId>AIDA</UserId><Account>123456789012</Account>` +
			`</GetCallerIdentityResult><ResponseMetadata><RequestId>1</RequestId></ResponseMetadata></GetCallerIdentityResponse>`))
	}))
	defer stsSrv.Close()
	for _, kv := range s3.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	t.Setenv("AWS_CONFIG_FILE", "/dev/null")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_ENDPOINT_URL_SFN", sf.Endpoint)
	t.Setenv("AWS_ENDPOINT_URL_STS", stsSrv.URL)

	cfg := cloudconfig.Config{Bucket: s3.Bucket, StateMachines: map[string]string{"wf": sf.StateMachineARN("wf")}}
	r, err := cloudstatus.Check(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(r)
	if !r.Configured || !r.Online || r.Account != "123456789012" || len(r.Probes) != 3 {
		t.Fatalf("report %s", b)
	}

	// A missing bucket and state machine are reachable services that refuse: each says what to fix.
	cfg = cloudconfig.Config{Bucket: "no-such-bucket", StateMachines: map[string]string{"wf": sf.StateMachineARN("wf") + "-gone"}}
	r, _ = cloudstatus.Check(context.Background(), cfg)
	b, _ = json.Marshal(r)
	if r.Online || !r.Probes[1].Reachable || r.Probes[1].Error == "" || !strings.Contains(r.Probes[2].Error, "does not exist") {
		t.Fatalf("report %s", b)
	}
}

// TestCheckSaysWhetherTheBedrockModelIsEnabled: cloud status asks Bedrock whether the stack's
// model may be called in its region (GetFoundationModelAvailability, signed for "bedrock") and
// says what to do when model access is not granted there.
func TestCheckSaysWhetherTheBedrockModelIsEnabled(t *testing.T) {
	status := "AUTHORIZED"
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Method+" "+r.URL.EscapedPath()+" "+r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"modelId":"anthropic.claude-3-haiku-20240307-v1:0","authorizationStatus":"` + status +
			`","entitlementAvailability":"AVAILABLE","regionAvailability":"AVAILABLE","agreementAvailability":{"status":"AVAILABLE"}}`))
	}))
	defer srv.Close()
	t.Setenv("AWS_CONFIG_FILE", "/dev/null")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIASTAFF")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "s")
	t.Setenv("AWS_ENDPOINT_URL_BEDROCK", srv.URL)
	sts := awstest.StartSTS(t)
	t.Setenv("AWS_ENDPOINT_URL_STS", sts.Endpoint)
	cfg := cloudconfig.Config{Region: "ap-northeast-1", BedrockModel: "anthropic.claude-3-haiku-20240307-v1:0"}
	find := func(r cloudstatus.Report) cloudstatus.Probe {
		for _, p := range r.Probes {
			if p.Service == "Bedrock" {
				return p
			}
		}
		t.Fatalf("no Bedrock probe in %+v", r.Probes)
		return cloudstatus.Probe{}
	}
	r, err := cloudstatus.Check(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if p := find(r); !p.Reachable || p.Error != "" || p.Resource != "anthropic.claude-3-haiku-20240307-v1:0 (ap-northeast-1)" {
		t.Fatalf("enabled model: %+v", p)
	}
	if len(seen) != 1 || !strings.HasPrefix(seen[0], "GET /foundation-model-availability/anthropic.claude-3-haiku-20240307-v1%3A0 AWS4-HMAC-SHA256 Credential=AKIASTAFF/") ||
		!strings.Contains(seen[0], "/ap-northeast-1/bedrock/aws4_request") {
		t.Fatalf("requests %q", seen)
	}
	status = "NOT_AUTHORIZED"
	r, _ = cloudstatus.Check(context.Background(), cfg)
	if p := find(r); r.Online || !p.Reachable || !strings.Contains(p.Error, "model access") || !strings.Contains(p.ErrorJa, "モデルアクセス") {
		t.Fatalf("model without access: %+v", p)
	}
	if r.Identity != "arn:aws:iam::000000000000:user/AKIASTAFF" {
		t.Fatalf("identity %q", r.Identity)
	}
}
