package asl

import (
	"testing"
	"time"
)

func TestPaths(t *testing.T) {
	doc, _ := Decode([]byte(`{"a":{"b":[10,20,{"c":"x"}]},"k y":1,"list":[{"id":1},{"id":2}]}`))
	tests := []struct {
		path, want string
		found      bool
	}{
		{"$", `{"a":{"b":[10,20,{"c":"x"}]},"k y":1,"list":[{"id":1},{"id":2}]}`, true},
		{"$.a.b[1]", `20`, true},
		{"$.a.b[2].c", `"x"`, true},
		{"$['k y']", `1`, true},
		{"$.a.b[-1].c", `"x"`, true},
		{"$.a.b[5]", ``, false},
		{"$.nope", ``, false},
		{"$.list[*].id", `[1,2]`, true},
		{"$.list[0:1]", `[{"id":1}]`, true},
		{"$..id", `[1,2]`, true},
		{"$.a.*", `[[10,20,{"c":"x"}]]`, true},
	}
	for _, tt := range tests {
		p, err := ParsePath(tt.path)
		if err != nil {
			t.Fatalf("%s: %v", tt.path, err)
		}
		v, found := p.Get(doc)
		if found != tt.found || (found && string(Encode(v)) != tt.want) {
			t.Errorf("%s: got %s %v, want %s %v", tt.path, Encode(v), found, tt.want, tt.found)
		}
	}
	for _, bad := range []string{"", "a", "$.", "$[", "$[x]", "$['a", "$.a b", "$..", "$[1:x]"} {
		if _, err := ParsePath(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	p := MustPath("$.a.x")
	out, err := p.Set(doc, 5)
	if err != nil || string(Encode(out.(map[string]any)["a"])) != `{"b":[10,20,{"c":"x"}],"x":5}` {
		t.Fatalf("set: %s %v", Encode(out), err)
	}
	if _, ok := doc.(map[string]any)["a"].(map[string]any)["x"]; ok {
		t.Fatal("Set modified its input")
	}
	if _, err := MustPath("$.list[*]").Set(doc, 1); err == nil {
		t.Fatal("set through a wildcard")
	}
}

func TestStringMatches(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"log-*.csv", "log-2024.csv", true},
		{"log-*.csv", "log-.csv", true},
		{"log-*.csv", "log-2024.txt", false},
		{"*", "", true},
		{"a*b*c", "aXXbYYc", true},
		{"a*b*c", "aXXcYYb", false},
		{`a\*b`, "a*b", true},
		{`a\*b`, "axb", false},
		{`a\\b`, `a\b`, true},
		{"*.csv", "データ.csv", true},
	}
	for _, tt := range tests {
		if got := Match(tt.pattern, tt.s); got != tt.want {
			t.Errorf("Match(%q, %q) = %v", tt.pattern, tt.s, got)
		}
	}
}

func TestErrorMatching(t *testing.T) {
	tests := []struct {
		list []string
		name string
		want bool
	}{
		{[]string{"States.ALL"}, "BusinessError", true},
		{[]string{"States.ALL"}, "States.Timeout", true},
		{[]string{"States.ALL"}, "States.Runtime", false},
		{[]string{"States.ALL"}, "States.DataLimitExceeded", false},
		{[]string{"States.TaskFailed"}, "BusinessError", true},
		{[]string{"States.TaskFailed"}, "States.Timeout", false},
		{[]string{"States.TaskFailed"}, "States.HeartbeatTimeout", true},
		{[]string{"States.Timeout"}, "States.HeartbeatTimeout", true},
		{[]string{"States.HeartbeatTimeout"}, "States.HeartbeatTimeout", true},
		{[]string{"States.HeartbeatTimeout"}, "States.Timeout", false},
		{[]string{"States.ALL"}, "States.HeartbeatTimeout", true},
		{[]string{"BusinessError"}, "BusinessError", true},
		{[]string{"BusinessError"}, "businesserror", false},
		{[]string{"A", "States.Runtime"}, "States.Runtime", false},
		{[]string{"States.DataLimitExceeded"}, "States.DataLimitExceeded", true},
	}
	for _, tt := range tests {
		if got := Matches(tt.list, tt.name); got != tt.want {
			t.Errorf("Matches(%v, %s) = %v", tt.list, tt.name, got)
		}
	}
}

func TestRetryDelay(t *testing.T) {
	r := Retrier{IntervalSeconds: 3, BackoffRate: 2, MaxDelaySeconds: 10, JitterStrategy: "NONE"}
	for i, want := range []time.Duration{3 * time.Second, 6 * time.Second, 10 * time.Second, 10 * time.Second} {
		if got := r.Delay(i); got != want {
			t.Errorf("retry %d: %s, want %s", i, got, want)
		}
	}
	r.JitterStrategy = "FULL"
	for i := 0; i < 50; i++ {
		if d := r.Delay(1); d < 0 || d > 6*time.Second {
			t.Fatalf("jittered delay %s out of [0, 6s]", d)
		}
	}
}

func TestRetrierDefaults(t *testing.T) {
	m, ds := Parse([]byte(`{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"r","Retry":[{"ErrorEquals":["X"]}],"End":true}}}`), nil)
	if m == nil {
		t.Fatal(ds)
	}
	r := m.States["T"].Retry[0]
	if r.IntervalSeconds != 1 || r.MaxAttempts != 3 || r.BackoffRate != 2 || r.JitterStrategy != "NONE" {
		t.Fatalf("defaults %+v", r)
	}
}
