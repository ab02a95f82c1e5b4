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
