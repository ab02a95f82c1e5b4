package sfnapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestEpochIsSecondsWithFraction(t *testing.T) {
	cases := []struct {
		t    time.Time
		want string
	}{
		{time.Unix(1700000000, 0), "1700000000"},
		{time.Unix(1700000000, 250e6), "1700000000.25"},
		{time.Unix(1700000000, 1e6+999), "1700000000.001"},
		{time.Unix(0, 0), "0"},
	}
	for _, c := range cases {
		b, err := json.Marshal(at(c.t))
		if err != nil || string(b) != c.want {
			t.Errorf("%v: %s %v, want %s", c.t, b, err, c.want)
		}
	}
	if atp(nil) != nil || atp(&time.Time{}) != nil {
		t.Error("a missing date must be left out")
	}
}

func errType(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Type
	}
	if err != nil {
		return "untyped"
	}
	return ""
}

func TestCheckName(t *testing.T) {
	cases := []struct {
		name, want string
	}{
		{"csv-processing", ""},
		{"Invoice_2024", ""},
		{"請求書処理", ""}, // the API allows non-ASCII names
		{strings.Repeat("a", 80), ""},
		{strings.Repeat("a", 81), "InvalidName"},
		{strings.Repeat("名", 80), ""},
		{"", "ValidationException"},
		{"a b", "InvalidName"},
		{"a\tb", "InvalidName"},
		{"a/b", "InvalidName"},
		{"a:b", "InvalidName"},
		{"a*", "InvalidName"},
		{"{x}", "InvalidName"},
		{"a\u0085b", "InvalidName"},
		{"a\x00", "InvalidName"},
		{"\xff", "InvalidName"},
		{"a\u3000b", "InvalidName"}, // ideographic space
	}
	for _, c := range cases {
		if got := errType(checkName("name", c.name)); got != c.want {
			t.Errorf("%q: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestCheckARN(t *testing.T) {
	cases := []struct {
		arn  string
		kind string
		want string
	}{
		{"arn:aws:states:local:000000000000:stateMachine:m", "stateMachine", ""},
		{"arn:aws:states:us-east-1:123456789012:execution:m:e", "execution", ""},
		{"arn:aws-cn:states:cn-north-1:123456789012:activity:a", "activity", ""},
		{"arn:aws:states:local:000000000000:mapRun:m/label:0b5a", "mapRun", ""},
		{"arn:aws:states:local:000000000000:execution:m:e", "stateMachine", "InvalidArn"},
		{"arn:aws:lambda:local:000000000000:function:f", "stateMachine", "InvalidArn"},
		{"arn:aws:states:local:000000000000:stateMachine:", "stateMachine", "InvalidArn"},
		{"stateMachine:m", "stateMachine", "InvalidArn"},
		{"", "stateMachine", "ValidationException"},
	}
	for _, c := range cases {
		if got := errType(checkARN("arn", c.arn, c.kind)); got != c.want {
			t.Errorf("%q as %s: %q, want %q", c.arn, c.kind, got, c.want)
		}
	}
}

func TestMapRunStateMachine(t *testing.T) {
	got := mapRunStateMachine("arn:aws:states:local:000000000000:mapRun:csv-processing/ProcessFiles:3f2c")
	if got != "arn:aws:states:local:000000000000:stateMachine:csv-processing/ProcessFiles" {
		t.Fatal(got)
	}
}

func TestPage(t *testing.T) {
	items := []string{"e", "a", "d", "b", "c"}
	id := func(s string) string { return s }
	var got []string
	token, pages := "", 0
	for {
		p, next, err := page(append([]string(nil), items...), id, "k", "scope", token, 2)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, p...)
		pages++
		if next == "" {
			break
		}
		token = next
	}
	if fmt.Sprint(got) != "[a b c d e]" || pages != 3 {
		t.Fatalf("%v in %d pages", got, pages)
	}
	_, next, _ := page(append([]string(nil), items...), id, "k", "scope", "", 2)
	for _, c := range []struct{ kind, scope, token string }{
		{"other", "scope", next},
		{"k", "other scope", next},
		{"k", "scope", "not base64!"},
		{"k", "scope", next[:len(next)-3]},
	} {
		if _, _, err := page(items, id, c.kind, c.scope, c.token, 2); errType(err) != "InvalidToken" {
			t.Errorf("%+v: %v", c, err)
		}
	}
	// Exactly a page's worth: no token for an empty next page.
	if p, next, _ := page([]string{"a", "b"}, id, "k", "", "", 2); len(p) != 2 || next != "" {
		t.Errorf("%v %q", p, next)
	}
}

func FuzzParseToken(f *testing.F) {
	f.Add(pageToken("stateMachines", "", "machine-01"))
	f.Add("")
	f.Add("c2ZuYXBpMQ")
	f.Fuzz(func(t *testing.T, token string) {
		key, err := parseToken("stateMachines", "", token)
		if err != nil && errType(err) != "InvalidToken" {
			t.Fatalf("%q: %v", token, err)
		}
		if err == nil && token != "" && pageToken("stateMachines", "", key) != token {
			// A token that parses must be one the server could have made.
			if _, err2 := parseToken("stateMachines", "", pageToken("stateMachines", "", key)); err2 != nil {
				t.Fatalf("%q: round trip %v", token, err2)
			}
		}
	})
}

// TestOperationsCheckTheirARN checks that every operation naming a resource by ARN refuses a
// request without one, and one naming another kind of resource, before it reaches the backend
// (there is none here), naming the request's member.
func TestOperationsCheckTheirARN(t *testing.T) {
	s := &Server{ops: operations} // no backend: a request that got past the check would panic
	want := map[string]struct{ field, kind string }{
		"UpdateStateMachine":   {"stateMachineArn", "stateMachine"},
		"DescribeStateMachine": {"stateMachineArn", "stateMachine"},
		"DeleteStateMachine":   {"stateMachineArn", "stateMachine"},
		"StartExecution":       {"stateMachineArn", "stateMachine"},
		"StartSyncExecution":   {"stateMachineArn", "stateMachine"},
		"DescribeExecution":    {"executionArn", "execution"},
		"StopExecution":        {"executionArn", "execution"},
		"RedriveExecution":     {"executionArn", "execution"},
		"GetExecutionHistory":  {"executionArn", "execution"},
		"ListExecutions":       {"stateMachineArn", "stateMachine"},
		"DescribeMapRun":       {"mapRunArn", "mapRun"},
		"ListMapRuns":          {"executionArn", "execution"},
		"DeleteActivity":       {"activityArn", "activity"},
		"GetActivityTask":      {"activityArn", "activity"},
	}
	for op, w := range want {
		_, err := s.ops[op](s, context.Background(), []byte(`{}`))
		var e *Error
		if !errors.As(err, &e) || e.Type != "ValidationException" || !strings.Contains(e.Message, "'"+w.field+"'") {
			t.Errorf("%s without %s: %v", op, w.field, err)
		}
		other := "arn:aws:states:local:000000000000:activity:x"
		if w.kind == "activity" {
			other = "arn:aws:states:local:000000000000:execution:m:e"
		}
		_, err = s.ops[op](s, context.Background(), []byte(`{"`+w.field+`":"`+other+`"}`))
		if !errors.As(err, &e) || e.Type != "InvalidArn" || !strings.Contains(e.Message, "a "+w.kind) {
			t.Errorf("%s with the ARN of another kind: %v", op, err)
		}
	}
}
