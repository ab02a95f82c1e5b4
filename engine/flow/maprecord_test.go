package flow

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// A new map run's child executions, recorded for the first time as they end (several hundred
// in a batch, in statements of every block size), each get their own history: its
// ExecutionStarted carries the child's input and its last event the child's output, with ids
// 1, 2, 3, … — the ids the record's rows were given are the children's.
func TestMapRunChildrenRecordedOnce(t *testing.T) {
	v := newEnv(t)
	ctx := context.Background()
	arn := v.machine(t, "first-kids", `{"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.xs","MaxConcurrency":8,"End":true,
		"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"E",
		"States":{"E":{"Type":"Task","Resource":"λecho","End":true}}}}}}`)
	const n = 347 // 256 + 64 + 16 + 4 + 4 + 1 + 1 + 1 rows in one batch at most
	xs := make([]string, n)
	for i := range xs {
		xs[i] = fmt.Sprintf(`{"i":%d}`, i)
	}
	x := v.run(t, arn, "first-kids-1", `{"xs":[`+strings.Join(xs, ",")+`]}`)
	if x.Status != StatusSucceeded {
		t.Fatalf("%+v", x)
	}
	runs, err := v.e.ListMapRuns(ctx, x.ARN)
	if err != nil || len(runs) != 1 {
		t.Fatalf("%+v %v", runs, err)
	}
	var kids []Execution
	for next := ""; ; {
		page, token, err := v.e.ListMapRunExecutions(ctx, runs[0].ARN, "", 0, next)
		if err != nil {
			t.Fatal(err)
		}
		kids = append(kids, page...)
		if next = token; next == "" {
			break
		}
	}
	if len(kids) != n {
		t.Fatalf("%d children, want %d: %v", len(kids), n, err)
	}
	seen := map[string]bool{}
	for _, k := range kids {
		evs, _, err := v.e.History(ctx, k.ARN, false, 0, "")
		if err != nil || len(evs) < 3 {
			t.Fatalf("history of %s: %+v %v", k.ARN, evs, err)
		}
		for i, ev := range evs {
			if ev.ID != int64(i+1) || ev.PreviousEventID != int64(i) {
				t.Fatalf("child history ids: %+v", evs)
			}
		}
		first, last := evs[0], evs[len(evs)-1]
		in, _ := first.Details["executionStartedEventDetails"].(map[string]any)["input"].(string)
		out, _ := last.Details["executionSucceededEventDetails"].(map[string]any)["output"].(string)
		if first.Type != "ExecutionStarted" || last.Type != "ExecutionSucceeded" || k.Status != StatusSucceeded ||
			!jsonEqual(in, string(k.Input)) || !jsonEqual(out, string(k.Output)) || !jsonEqual(in, out) {
			t.Fatalf("child %s (input %s, output %s) has the history of another: started with %s, ended with %s",
				k.ARN, k.Input, k.Output, in, out)
		}
		if seen[in] {
			t.Fatalf("two children with the input %s", in)
		}
		seen[in] = true
	}
}

func jsonEqual(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xb) == string(yb)
}
