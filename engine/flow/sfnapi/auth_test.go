package sfnapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/smithy-go"

	"jobdesk/engine/flow/sfnapi"
)

// rawCall sends body to ListStateMachines after prepare has made the request what the case
// wants (signed or not), and returns the status and the decoded error body.
func rawCall(t *testing.T, url string, body string, prepare func(*http.Request)) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "AWSStepFunctions.ListStateMachines")
	prepare(req)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("the answer is not JSON: %q", b)
	}
	return resp.StatusCode, m
}

// TestSignatureRequired: every request must be signed with SigV4 by the server's key pair;
// the real SDK signing with it works, anything else gets AWS's own errors and never reaches
// the engine.
func TestSignatureRequired(t *testing.T) {
	d := newDouble()
	other := sfnapi.Credentials{AccessKeyID: "AKIDOTHER", SecretAccessKey: "other-secret"}
	url := serve(t, newServer(d, sfnapi.Options{Credentials: []sfnapi.Credentials{testKey, other}}))
	ctx := context.Background()

	if _, err := client(url).ListStateMachines(ctx, &sfn.ListStateMachinesInput{}); err != nil {
		t.Fatalf("signed by the server's key: %v", err)
	}
	withKey := func(id, secret string) func(*sfn.Options) {
		return func(o *sfn.Options) { o.Credentials = credentials.NewStaticCredentialsProvider(id, secret, "") }
	}
	if _, err := client(url, withKey(other.AccessKeyID, other.SecretAccessKey)).ListStateMachines(ctx, &sfn.ListStateMachinesInput{}); err != nil {
		t.Fatalf("signed by the second key: %v", err)
	}
	sdkCases := []struct {
		name string
		opt  func(*sfn.Options)
		want string
	}{
		{"wrong secret", withKey(testKey.AccessKeyID, "guessed"), "InvalidSignatureException"},
		{"unknown key", withKey("AKIDUNKNOWN", testKey.SecretAccessKey), "UnrecognizedClientException"},
		{"session token", func(o *sfn.Options) {
			o.Credentials = credentials.NewStaticCredentialsProvider(testKey.AccessKeyID, testKey.SecretAccessKey, "token")
		}, "UnrecognizedClientException"},
		{"other region", func(o *sfn.Options) { o.Region = "us-east-1" }, "InvalidSignatureException"},
		{"anonymous", func(o *sfn.Options) { o.Credentials = aws.AnonymousCredentials{} }, "UnrecognizedClientException"},
	}
	for _, c := range sdkCases {
		_, err := client(url, c.opt).ListStateMachines(ctx, &sfn.ListStateMachinesInput{})
		var ae smithy.APIError
		if !errors.As(err, &ae) || ae.ErrorCode() != c.want || ae.ErrorMessage() == "" {
			t.Errorf("%s: %v, want %s", c.name, err, c.want)
		}
	}

	body := `{}`
	rawCases := []struct {
		name, want, msg string
		prepare         func(*http.Request)
	}{
		{"no signature", "UnrecognizedClientException", "Missing Authentication Token", func(*http.Request) {}},
		{"made-up header", "InvalidSignatureException", "does not match", func(r *http.Request) {
			r.Header.Set("X-Amz-Date", time.Now().UTC().Format("20060102T150405Z"))
			r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+testKey.AccessKeyID+"/"+time.Now().UTC().Format("20060102")+
				"/local/states/aws4_request, SignedHeaders=host;x-amz-date, Signature="+strings.Repeat("ab", 32))
		}},
		{"made-up key", "UnrecognizedClientException", "invalid", func(r *http.Request) {
			r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIDLOCAL/20240101/local/states/aws4_request, SignedHeaders=host, Signature=00")
		}},
		{"expired", "InvalidSignatureException", "Signature expired", func(r *http.Request) {
			sign(t, r, []byte(body), testKey, time.Now().Add(-20*time.Minute))
		}},
		{"from the future", "InvalidSignatureException", "not yet current", func(r *http.Request) {
			sign(t, r, []byte(body), testKey, time.Now().Add(20*time.Minute))
		}},
		{"scope date", "InvalidSignatureException", "Date in Credential scope", func(r *http.Request) {
			sign(t, r, []byte(body), testKey, time.Now())
			r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), time.Now().UTC().Format("20060102"), "20200101", 1))
		}},
		{"other service", "InvalidSignatureException", "correct service", func(r *http.Request) {
			sign(t, r, []byte(body), testKey, time.Now())
			r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), "/states/", "/sqs/", 1))
		}},
		{"body changed after signing", "InvalidSignatureException", "does not match", func(r *http.Request) {
			sign(t, r, []byte(`{"maxResults":1}`), testKey, time.Now())
		}},
		{"payload hash header", "InvalidSignatureException", "x-amz-content-sha256", func(r *http.Request) {
			r.Header.Set("X-Amz-Content-Sha256", strings.Repeat("0", 64))
			sign(t, r, []byte(body), testKey, time.Now())
		}},
		{"target changed after signing", "InvalidSignatureException", "does not match", func(r *http.Request) {
			sign(t, r, []byte(body), testKey, time.Now())
			r.Header.Set("X-Amz-Target", "AWSStepFunctions.DeleteStateMachine")
		}},
		{"no date", "InvalidSignatureException", "X-Amz-Date", func(r *http.Request) {
			sign(t, r, []byte(body), testKey, time.Now())
			r.Header.Del("X-Amz-Date")
		}},
	}
	for _, c := range rawCases {
		status, m := rawCall(t, url, body, c.prepare)
		msg, _ := m["message"].(string)
		if status != 400 || m["__type"] != c.want || !strings.Contains(msg, c.msg) {
			t.Errorf("%s: %d %v, want 400 %s containing %q", c.name, status, m, c.want, c.msg)
		}
	}
	for _, call := range d.Calls() {
		if call != "ListStateMachines" {
			t.Errorf("a refused request reached the engine: %s", call)
		}
	}
	if n := len(d.Calls()); n != 2 {
		t.Errorf("the engine was called %d times, want 2 (the signed calls)", n)
	}

	// A server given no key pair accepts nothing.
	closed := serve(t, sfnapi.New(d, sfnapi.Options{}))
	if _, err := client(closed).ListStateMachines(ctx, &sfn.ListStateMachinesInput{}); apiCode(err) != "UnrecognizedClientException" {
		t.Errorf("a server without keys: %v", err)
	}
}

// TestHostCheckWithAllowRemote: serving other machines accepts IP addresses and the names it
// was given, and still refuses any other name (DNS rebinding), even on loopback.
func TestHostCheckWithAllowRemote(t *testing.T) {
	url := serve(t, newServer(newDouble(), sfnapi.Options{AllowRemote: true, AllowedHosts: []string{"jobdesk.lan"}}))
	port := url[strings.LastIndexByte(url, ':')+1:]
	for host, want := range map[string]int{
		"127.0.0.1:" + port:        200,
		"192.168.1.20:" + port:     200,
		"[fe80::1]:" + port:        200,
		"jobdesk.lan:" + port:      200,
		"JOBDESK.LAN.:" + port:     200,
		"evil.example.com:" + port: 403,
		"jobdesk.lan.evil.com":     403,
	} {
		status, _, m := post(t, url, host, "AWSStepFunctions.ListStateMachines", `{}`)
		if status != want {
			t.Errorf("host %s: %d %v, want %d", host, status, m, want)
		}
		if want == 403 && (m["__type"] != "AccessDeniedException" || !strings.Contains(m["message"].(string), "--allow-host")) {
			t.Errorf("host %s: %v", host, m)
		}
	}
}
