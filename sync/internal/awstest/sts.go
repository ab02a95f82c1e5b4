package awstest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// STS is a stand-in for AWS STS on 127.0.0.1 speaking its Query protocol (form POST, XML
// answers) for AssumeRole and GetCallerIdentity, so the desktop's role assumption runs through
// the real SDK: no independent STS server is packaged here. It records who asked (the access key
// of each request's signature) and hands out temporary credentials valid for Lifetime.
type STS struct {
	Endpoint string
	Account  string
	// Lifetime is how long the credentials of an AssumeRole stay valid (default one hour).
	Lifetime time.Duration

	mu      sync.Mutex
	assumed []Assumed
	issued  map[string]string // temporary access key → role ARN
}

// Assumed is one AssumeRole the stand-in answered.
type Assumed struct {
	CallerKey, RoleARN, SessionName string
	AccessKey                       string // the temporary key handed out
}

// StartSTS starts the stand-in; it stops when the test ends.
func StartSTS(t testing.TB) *STS {
	t.Helper()
	s := &STS{Account: "000000000000", Lifetime: time.Hour, issued: map[string]string{}}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.Endpoint = srv.URL
	return s
}

// Assumed returns every AssumeRole answered so far.
func (s *STS) Assumed() []Assumed {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Assumed(nil), s.assumed...)
}

func callerKey(r *http.Request) string {
	_, cred, _ := strings.Cut(r.Header.Get("Authorization"), "Credential=")
	key, _, _ := strings.Cut(cred, "/")
	return key
}

func (s *STS) serve(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || r.Method != http.MethodPost {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	key := callerKey(r)
	if key == "" {
		stsError(w, http.StatusForbidden, "MissingAuthenticationToken", "Request is missing Authentication Token")
		return
	}
	w.Header().Set("Content-Type", "text/xml")
	s.mu.Lock()
	defer s.mu.Unlock()
	switch r.Form.Get("Action") {
	case "AssumeRole":
		role, name := r.Form.Get("RoleArn"), r.Form.Get("RoleSessionName")
		if !strings.HasPrefix(role, "arn:aws:iam::") || name == "" {
			stsError(w, http.StatusBadRequest, "ValidationError", "RoleArn and RoleSessionName are required")
			return
		}
		tmp := fmt.Sprintf("ASIATEST%012d", len(s.assumed)+1)
		s.assumed = append(s.assumed, Assumed{CallerKey: key, RoleARN: role, SessionName: name, AccessKey: tmp})
		s.issued[tmp] = role
		exp := time.Now().Add(s.Lifetime).UTC().Format(time.RFC3339)
		roleName := role[strings.LastIndex(role, "/")+1:]
		fmt.Fprintf(w, `<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleResult>`+
			`<Credentials><AccessKeyId>%s</AccessKeyId><SecretAccessKey>secret-%s</SecretAccessKey><SessionToken>token-%s</SessionToken><Expiration>%s</Expiration></Credentials>`+
			`<AssumedRoleUser><Arn>arn:aws:sts::%s:assumed-role/%s/%s</Arn><AssumedRoleId>AROATEST:%s</AssumedRoleId></AssumedRoleUser>`+
			`</AssumeRoleResult><ResponseMetadata><RequestId>%d</RequestId></ResponseMetadata></AssumeRoleResponse>`,
			tmp, tmp, tmp, exp, s.Account, roleName, name, name, len(s.assumed))
	case "GetCallerIdentity":
		arn := "arn:aws:iam::" + s.Account + ":user/" + key
		if role, ok := s.issued[key]; ok {
			arn = "arn:aws:sts::" + s.Account + ":assumed-role/" + role[strings.LastIndex(role, "/")+1:] + "/jobdesk"
		}
		fmt.Fprintf(w, `<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><GetCallerIdentityResult>`+
			`<Arn>%s</Arn><UserId>AIDATEST</UserId><Account>%s</Account></GetCallerIdentityResult>`+
			`<ResponseMetadata><RequestId>1</RequestId></ResponseMetadata></GetCallerIdentityResponse>`, arn, s.Account)
	default:
		stsError(w, http.StatusBadRequest, "InvalidAction", "Could not find operation "+r.Form.Get("Action"))
	}
}

func stsError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(status)
	fmt.Fprintf(w, `<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type><Code>%s</Code><Message>%s</Message></Error><RequestId>1</RequestId></ErrorResponse>`, code, msg)
}
