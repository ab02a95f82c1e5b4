package flow

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"jobdesk/engine/functions"
	"jobdesk/engine/job"
	"jobdesk/engine/queue"
	"jobdesk/engine/store"
)

func apiType(err error) string {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Type
	}
	return ""
}

func TestValidateNamesStateAndField(t *testing.T) {
	e := &Engine{opts: Options{Region: "local", Account: "000000000000"}, funcs: functions.New(functions.Function{Name: "known", Handler: func(context.Context, json.RawMessage, job.Reporter) (json.RawMessage, error) { return nil, nil }})}
	tests := []struct {
		name, def, code, loc string
	}{
		{"not-json", `{`, "INVALID_JSON_DESCRIPTION", "/"},
		{"no-start", `{"States":{"A":{"Type":"Succeed"}}}`, "SCHEMA_VALIDATION_FAILED", "/StartAt"},
		{"start-missing", `{"StartAt":"X","States":{"A":{"Type":"Succeed"}}}`, "MISSING_TRANSITION_TARGET", "/StartAt"},
		{"bad-next", `{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"B"}}}`, "MISSING_TRANSITION_TARGET", "/States/A/Next"},
		{"bad-type", `{"StartAt":"A","States":{"A":{"Type":"Magic","End":true}}}`, "SCHEMA_VALIDATION_FAILED", "/States/A/Type"},
		{"no-end", `{"StartAt":"A","States":{"A":{"Type":"Pass"}}}`, "SCHEMA_VALIDATION_FAILED", "/States/A/Next"},
		{"unreachable", `{"StartAt":"A","States":{"A":{"Type":"Succeed"},"B":{"Type":"Succeed"}}}`, "UNREACHABLE_STATE", "/States/B"},
		{"backoff-rate", `{"StartAt":"ValidateCSV","States":{"ValidateCSV":{"Type":"Task","Resource":"arn:aws:lambda:local:000000000000:function:known",
			"Retry":[{"ErrorEquals":["States.ALL"],"BackoffRate":0.5}],"End":true}}}`, "SCHEMA_VALIDATION_FAILED", "/States/ValidateCSV/Retry/0/BackoffRate"},
		{"all-not-last", `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:lambda:local:000000000000:function:known",
			"Catch":[{"ErrorEquals":["States.ALL"],"Next":"A"},{"ErrorEquals":["X"],"Next":"A"}],"End":true}}}`, "SCHEMA_VALIDATION_FAILED", "/States/A/Catch/0/ErrorEquals"},
		{"all-not-alone", `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:lambda:local:000000000000:function:known",
			"Retry":[{"ErrorEquals":["States.ALL","X"]}],"End":true}}}`, "SCHEMA_VALIDATION_FAILED", "/States/A/Retry/0/ErrorEquals/0"},
		{"unknown-resource", `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:states:::dynamodb:putItem","End":true}}}`, "INVALID_RESOURCE", "/States/A/Resource"},
		{"unregistered-function", `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:lambda:local:000000000000:function:nope","End":true}}}`, "INVALID_RESOURCE", "/States/A/Resource"},
		{"bad-jsonpath", `{"StartAt":"A","States":{"A":{"Type":"Pass","InputPath":"a.b","End":true}}}`, "INVALID_JSON_PATH", "/States/A/InputPath"},
		{"resultpath-not-reference", `{"StartAt":"A","States":{"A":{"Type":"Pass","ResultPath":"$.a[*]","End":true}}}`, "INVALID_REFERENCE_PATH", "/States/A/ResultPath"},
		{"bad-operator", `{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"Variable":"$.a","StringIs":"x","Next":"E"}]},"E":{"Type":"Succeed"}}}`,
			"SCHEMA_VALIDATION_FAILED", "/States/C/Choices/0/StringIs"},
		{"operator-value-type", `{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"Variable":"$.a","NumericEquals":"1","Next":"E"}]},"E":{"Type":"Succeed"}}}`,
			"SCHEMA_VALIDATION_FAILED", "/States/C/Choices/0/NumericEquals"},
		{"bad-intrinsic", `{"StartAt":"A","States":{"A":{"Type":"Pass","Parameters":{"x.$":"States.Nope(1)"},"End":true}}}`, "INVALID_INTRINSIC_FUNCTION", "/States/A/Parameters/x.$"},
		{"field-not-allowed", `{"StartAt":"A","States":{"A":{"Type":"Pass","Resource":"x","End":true}}}`, "SCHEMA_VALIDATION_FAILED", "/States/A/Resource"},
		{"wait-two-fields", `{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":1,"SecondsPath":"$.s","End":true}}}`, "SCHEMA_VALIDATION_FAILED", "/States/W"},
		{"branch-error-location", `{"StartAt":"P","States":{"P":{"Type":"Parallel","End":true,"Branches":[{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"Z"}}}]}}}`,
			"MISSING_TRANSITION_TARGET", "/States/P/Branches/0/States/A/Next"},
		{"tolerance-inline", `{"StartAt":"M","States":{"M":{"Type":"Map","ToleratedFailureCount":1,"ItemProcessor":{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			"SCHEMA_VALIDATION_FAILED", "/States/M/ToleratedFailurePercentage"},
		{"heartbeat-over-timeout", `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:lambda:local:000000000000:function:known","TimeoutSeconds":5,"HeartbeatSeconds":5,"End":true}}}`,
			"SCHEMA_VALIDATION_FAILED", "/States/A/HeartbeatSeconds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ds := Validate([]byte(tt.def), e.CheckResourceStrict)
			for _, d := range ds {
				if d.Code == tt.code && d.Location == tt.loc && d.Severity == "ERROR" {
					return
				}
			}
			t.Errorf("no %s at %s in %+v", tt.code, tt.loc, ds)
		})
	}
	if ds := Validate([]byte(`{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:lambda:local:000000000000:function:known","End":true}}}`), e.CheckResourceStrict); len(ds) != 0 {
		t.Errorf("a valid definition gave %+v", ds)
	}
}

func TestStateMachineAPI(t *testing.T) {
	v := newEnv(t)
	ctx := context.Background()
	def := `{"StartAt":"A","States":{"A":{"Type":"Succeed"}}}`
	sm, err := v.e.CreateStateMachine(ctx, "sm", def, "")
	if err != nil || sm.ARN != "arn:aws:states:local:000000000000:stateMachine:sm" || sm.Status != "ACTIVE" || sm.Type != "STANDARD" {
		t.Fatalf("%+v %v", sm, err)
	}
	if _, err := v.e.CreateStateMachine(ctx, "sm", def, ""); err != nil {
		t.Fatalf("same definition again: %v", err)
	}
	other := `{"StartAt":"B","States":{"B":{"Type":"Succeed"}}}`
	if _, err := v.e.CreateStateMachine(ctx, "sm", other, ""); apiType(err) != "StateMachineAlreadyExists" {
		t.Fatalf("want StateMachineAlreadyExists, got %v", err)
	}
	if _, err := v.e.CreateStateMachine(ctx, "bad", `{"StartAt":"X","States":{}}`, ""); apiType(err) != "InvalidDefinition" {
		t.Fatalf("want InvalidDefinition, got %v", err)
	}
	if _, err := v.e.CreateStateMachine(ctx, "bad name!", def, ""); apiType(err) != "InvalidName" {
		t.Fatalf("want InvalidName, got %v", err)
	}
	if sm, err = v.e.UpdateStateMachine(ctx, sm.ARN, other); err != nil || sm.Definition != other {
		t.Fatalf("update: %v", err)
	}
	if sm, err = v.e.PutStateMachine(ctx, "sm", def); err != nil || sm.Definition != def {
		t.Fatalf("put: %v", err)
	}
	if _, err := v.e.DescribeStateMachine(ctx, "arn:aws:states:local:000000000000:stateMachine:none"); apiType(err) != "StateMachineDoesNotExist" {
		t.Fatalf("want StateMachineDoesNotExist, got %v", err)
	}
	if _, err := v.e.DescribeStateMachine(ctx, "nonsense"); apiType(err) != "InvalidArn" {
		t.Fatalf("want InvalidArn, got %v", err)
	}
	list, err := v.e.ListStateMachines(ctx)
	if err != nil || len(list) != 1 {
		t.Fatalf("list %v %v", list, err)
	}
	if err := v.e.DeleteStateMachine(ctx, sm.ARN); err != nil {
		t.Fatal(err)
	}
	if list, _ = v.e.ListStateMachines(ctx); len(list) != 0 {
		t.Fatalf("after delete: %v", list)
	}
}

func TestStartIdempotentByName(t *testing.T) {
	v := newEnv(t)
	ctx := context.Background()
	arn := v.machine(t, "slow", `{"StartAt":"S","States":{"S":{"Type":"Task","Resource":"λsleep","Parameters":{"ms":400},"End":true}}}`)
	a, err := v.e.StartExecution(ctx, arn, json.RawMessage(`{"a":1, "b":2}`), StartOptions{Name: "user-log-20240802-001"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := v.e.StartExecution(ctx, arn, json.RawMessage(`{"b":2,"a":1}`), StartOptions{Name: "user-log-20240802-001"})
	if err != nil || b.ARN != a.ARN || b.JobID != a.JobID {
		t.Fatalf("same name and input: %+v %v", b, err)
	}
	if _, err := v.e.StartExecution(ctx, arn, json.RawMessage(`{"a":2}`), StartOptions{Name: "user-log-20240802-001"}); apiType(err) != "ExecutionAlreadyExists" {
		t.Fatalf("other input: want ExecutionAlreadyExists, got %v", err)
	}
	if _, err := v.e.StartExecution(ctx, arn, json.RawMessage(`{`), StartOptions{}); apiType(err) != "InvalidExecutionInput" {
		t.Fatalf("bad input: %v", err)
	}
	x, err := v.e.Wait(ctx, a.ARN)
	if err != nil || x.Status != StatusSucceeded {
		t.Fatalf("%+v %v", x, err)
	}
	if _, err := v.e.StartExecution(ctx, arn, json.RawMessage(`{"a":1,"b":2}`), StartOptions{Name: "user-log-20240802-001"}); apiType(err) != "ExecutionAlreadyExists" {
		t.Fatalf("closed execution: want ExecutionAlreadyExists, got %v", err)
	}
	byJob, err := v.e.ExecutionByJob(ctx, a.JobID)
	if err != nil || byJob.ARN != a.ARN {
		t.Fatalf("by job: %+v %v", byJob, err)
	}
	j, err := v.q.Get(ctx, a.JobID)
	if err != nil || j.Type != TypeExecution || j.Name != "user-log-20240802-001" {
		t.Fatalf("job %+v %v", j, err)
	}
}

func TestExecutionNameFromFile(t *testing.T) {
	at := time.Date(2024, 8, 2, 13, 4, 5, 0, time.UTC)
	for in, want := range map[string]string{
		"data/user-log-20240802-001.csv":  "user-log-20240802-001-130405",
		"input/report 2024.08.02.csv":     "report-2024-08-02-130405",
		"日本語のファイル.csv":                    "file-130405",
		"--a__b--.tsv":                    "a__b-130405",
		strings.Repeat("x", 100) + ".csv": strings.Repeat("x", 70) + "-130405",
	} {
		if got := ExecutionNameFromFile(in, at); got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
	if got := ExecutionNameFromFile(`C:\in\a b.csv`, time.Time{}); got != "a-b" {
		t.Errorf("got %q", got)
	}
}

func TestStopExecutionCancelsTasks(t *testing.T) {
	v := newEnv(t)
	ctx := context.Background()
	arn := v.machine(t, "stop", `{"StartAt":"M","States":{"M":{"Type":"Map","ItemProcessor":{"StartAt":"S","States":{"S":{"Type":"Task","Resource":"λsleep","Parameters":{"ms":20000},"End":true}}},"End":true}}}`)
	x, err := v.e.StartExecution(ctx, arn, json.RawMessage(`[1,2,3]`), StartOptions{Name: "to-stop"})
	if err != nil {
		t.Fatal(err)
	}
	// Wait until the iterations' tasks run.
	deadline := time.Now().Add(10 * time.Second)
	for {
		kids, _ := v.q.List(ctx, queueFilterChildren(x.JobID))
		running := 0
		for _, k := range kids {
			if k.Status == job.Running {
				running++
			}
		}
		if running == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("tasks did not start: %+v", kids)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := v.e.StopExecution(ctx, x.ARN, "UserStop", "stopped by the test"); err != nil {
		t.Fatal(err)
	}
	x, err = v.e.DescribeExecution(ctx, x.ARN)
	if err != nil || x.Status != StatusAborted || x.Error != "UserStop" || x.StopDate == nil {
		t.Fatalf("%+v %v", x, err)
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if j, err := v.e.waitJob(wctx, x.JobID); err != nil || j.Status != job.Cancelled {
		t.Fatalf("job %s %v", j.Status, err)
	}
	kids, _ := v.q.List(ctx, queueFilterChildren(x.JobID))
	for _, k := range kids {
		if k.Type == "lambda:sleep" {
			if k, err = v.e.waitJob(wctx, k.ID); err != nil || k.Status != job.Cancelled {
				t.Fatalf("task job %d is %s", k.ID, k.Status)
			}
		}
	}
	h, _, _ := v.e.History(ctx, x.ARN, true, 1, "")
	if len(h) != 1 || h[0].Type != "ExecutionAborted" {
		t.Fatalf("last event %+v", h)
	}
	if _, err := v.e.StopExecution(ctx, "arn:aws:states:local:000000000000:execution:stop:none", "", ""); apiType(err) != "ExecutionDoesNotExist" {
		t.Fatalf("want ExecutionDoesNotExist, got %v", err)
	}
}

func TestRedriveFromFailedState(t *testing.T) {
	v := newEnv(t)
	ctx := context.Background()
	arn := v.machine(t, "redrive", `{"StartAt":"First","States":{
		"First":{"Type":"Task","Resource":"λcount","Parameters":{"key":"redrive-first"},"ResultPath":null,"Next":"M"},
		"M":{"Type":"Map","ItemsPath":"$.xs","ItemProcessor":{"StartAt":"C","States":{"C":{"Type":"Task","Resource":"λcount","Parameters":{"key.$":"States.Format('redrive-item-{}', $)"},"ResultPath":null,"Next":"F"},
			"F":{"Type":"Task","Resource":"λflaky","Parameters":{"key.$":"States.Format('redrive-flaky-{}', $)","times.$":"$"},"End":true}}},"Next":"Last"},
		"Last":{"Type":"Task","Resource":"λcount","Parameters":{"key":"redrive-last"},"ResultPath":null,"End":true}}}`)
	x := v.run(t, arn, "r1", `{"xs":[0,1,0],"key":"x"}`)
	if x.Status != StatusFailed || x.Error != "DatabaseConnectionError" {
		t.Fatalf("%+v", x)
	}
	if _, err := v.e.RedriveExecution(ctx, arn); apiType(err) != "InvalidArn" {
		t.Fatalf("redrive of a state machine ARN: %v", err)
	}
	if _, err := v.e.RedriveExecution(ctx, x.ARN); err != nil {
		t.Fatal(err)
	}
	x, err := v.e.Wait(ctx, x.ARN)
	if err != nil || x.Status != StatusSucceeded || x.RedriveCount != 1 {
		t.Fatalf("after redrive: %+v %v", x, err)
	}
	if n := v.count("redrive-first"); n != 1 {
		t.Errorf("the first state ran %d times", n)
	}
	if n := v.count("redrive-item-0"); n != 2 { // items 0 and 2 each once
		t.Errorf("succeeded iterations ran again: %d", n)
	}
	if n := v.count("redrive-item-1"); n != 1 { // its first task succeeded before the redrive
		t.Errorf("the failed iteration's finished task ran %d times, want 1", n)
	}
	if n := v.count("redrive-flaky-1"); n != 2 { // the task that failed runs again
		t.Errorf("the failed task ran %d times, want 2", n)
	}
	if n := v.count("redrive-last"); n != 1 {
		t.Errorf("last ran %d times", n)
	}
	if _, err := v.e.RedriveExecution(ctx, x.ARN); apiType(err) != "ExecutionNotRedrivable" {
		t.Fatalf("want ExecutionNotRedrivable, got %v", err)
	}
	h, _, _ := v.e.History(ctx, x.ARN, false, 0, "")
	found := false
	for _, ev := range h {
		found = found || ev.Type == "ExecutionRedriven"
	}
	if !found {
		t.Error("no ExecutionRedriven event")
	}
	// RetryExecution: a new execution with the same input, linked to the first.
	y, err := v.e.RetryExecution(ctx, x.ARN)
	if err != nil || y.RetryOf != x.ARN || string(y.Input) != string(x.Input) {
		t.Fatalf("retry %+v %v", y, err)
	}
	if y, err = v.e.Wait(ctx, y.ARN); err != nil || y.Status != StatusSucceeded {
		t.Fatalf("retry run %+v %v", y, err)
	}
	j, _ := v.q.Get(ctx, y.JobID)
	if j.RetryOf != x.JobID {
		t.Errorf("job retry_of %d, want %d", j.RetryOf, x.JobID)
	}
}

func TestHistoryEventsInOrder(t *testing.T) {
	v := newEnv(t)
	ctx := context.Background()
	arn := v.machine(t, "hist", `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"λfail","Parameters":{"error":"BusinessError","cause":"c"},
		"Catch":[{"ErrorEquals":["States.ALL"],"Next":"C"}],"Next":"C"},"C":{"Type":"Choice","Choices":[{"Variable":"$.Error","IsPresent":true,"Next":"M"}]},
		"M":{"Type":"Map","ItemsPath":"$.xs","ItemProcessor":{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`)
	x := v.run(t, arn, "h1", `{}`)
	if x.Status != StatusFailed || x.Error != "States.Runtime" {
		t.Fatalf("%+v", x)
	}
	h, next, err := v.e.History(ctx, x.ARN, false, 0, "")
	if err != nil || next != "" {
		t.Fatal(err, next)
	}
	var types []string
	for i, ev := range h {
		if ev.ID != int64(i+1) || ev.PreviousEventID != int64(i) {
			t.Fatalf("event %d has id %d prev %d", i, ev.ID, ev.PreviousEventID)
		}
		types = append(types, ev.Type)
	}
	want := "ExecutionStarted TaskStateEntered TaskScheduled TaskStarted TaskFailed TaskStateExited ChoiceStateEntered ChoiceStateExited MapStateEntered ExecutionFailed"
	if strings.Join(types, " ") != want {
		t.Fatalf("history\n%s\nwant\n%s", strings.Join(types, " "), want)
	}
	d := h[4].Details["taskFailedEventDetails"].(map[string]any)
	if c, _ := d["cause"].(string); d["error"] != "BusinessError" {
		t.Errorf("TaskFailed details %v", d)
	} else {
		wantCoded(t, "BusinessError", c, job.E006, "c")
	}
	// paging, both directions
	page, tok, _ := v.e.History(ctx, x.ARN, false, 4, "")
	rest, _, _ := v.e.History(ctx, x.ARN, false, 100, tok)
	if len(page) != 4 || len(rest) != len(h)-4 || rest[0].ID != 5 {
		t.Fatalf("paging: %d + %d", len(page), len(rest))
	}
	rev, _, _ := v.e.History(ctx, x.ARN, true, 2, "")
	if rev[0].Type != "ExecutionFailed" || rev[1].ID != rev[0].ID-1 {
		t.Fatalf("reverse %+v", rev)
	}
	list, tok, err := v.e.ListExecutions(ctx, arn, "", 0, "")
	if err != nil || len(list) != 1 || tok != "" {
		t.Fatalf("list %v %v", list, err)
	}
	if list, _, _ = v.e.ListExecutions(ctx, "", StatusSucceeded, 0, ""); len(list) != 0 {
		t.Fatalf("status filter %v", list)
	}
}

func TestListExecutionsPaging(t *testing.T) {
	v := newEnv(t)
	ctx := context.Background()
	arn := v.machine(t, "many", `{"StartAt":"A","States":{"A":{"Type":"Succeed"}}}`)
	for i := 0; i < 5; i++ {
		v.run(t, arn, "m"+string(rune('a'+i)), `{}`)
	}
	seen := map[string]bool{}
	tok := ""
	for pages := 0; ; pages++ {
		list, next, err := v.e.ListExecutions(ctx, arn, StatusSucceeded, 2, tok)
		if err != nil || pages > 5 {
			t.Fatal(err)
		}
		for _, x := range list {
			seen[x.Name] = true
		}
		if next == "" {
			break
		}
		tok = next
	}
	if len(seen) != 5 {
		t.Fatalf("saw %v", seen)
	}
}

func TestActivityWorker(t *testing.T) {
	v := newEnv(t)
	ctx := context.Background()
	act, err := v.e.CreateActivity(ctx, "approve")
	if err != nil {
		t.Fatal(err)
	}
	if again, err := v.e.CreateActivity(ctx, "approve"); err != nil || again.ARN != act.ARN {
		t.Fatalf("idempotent create: %v", err)
	}
	arn := v.machine(t, "act", `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"`+act.ARN+`","TimeoutSeconds":30,"HeartbeatSeconds":10,
		"Parameters":{"doc.$":"$.doc","token.$":"$$.Task.Token"},"ResultPath":"$.approval","Next":"B"},
		"B":{"Type":"Task","Resource":"`+act.ARN+`","Catch":[{"ErrorEquals":["Rejected"],"ResultPath":"$.err","Next":"Done"}],"End":true},"Done":{"Type":"Succeed"}}}`)
	x, err := v.e.StartExecution(ctx, arn, json.RawMessage(`{"doc":"d1"}`), StartOptions{Name: "a1"})
	if err != nil {
		t.Fatal(err)
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	token, input, err := v.e.GetActivityTask(pctx, act.ARN, "worker-1")
	if err != nil || token == "" || obj(input)["doc"] != "d1" {
		d, _ := v.e.DescribeExecution(ctx, x.ARN)
		t.Fatalf("get task: %q %s %v; execution %+v", token, input, err, d)
	}
	if err := v.e.SendTaskHeartbeat(ctx, token); err != nil {
		t.Fatal(err)
	}
	if err := v.e.SendTaskSuccess(ctx, token, json.RawMessage(`{"ok":true}`)); err != nil {
		t.Fatal(err)
	}
	if err := v.e.SendTaskSuccess(ctx, token, json.RawMessage(`{}`)); apiType(err) != "TaskDoesNotExist" {
		t.Fatalf("second success: %v", err)
	}
	if err := v.e.SendTaskSuccess(ctx, "nope", json.RawMessage(`{}`)); apiType(err) != "InvalidToken" {
		t.Fatalf("bad token: %v", err)
	}
	token2, _, err := v.e.GetActivityTask(pctx, act.ARN, "worker-1")
	if err != nil || token2 == "" {
		t.Fatalf("second task: %v", err)
	}
	if err := v.e.SendTaskFailure(ctx, token2, "Rejected", "no budget"); err != nil {
		t.Fatal(err)
	}
	x, err = v.e.Wait(pctx, x.ARN)
	if err != nil || x.Status != StatusSucceeded {
		t.Fatalf("%+v %v", x, err)
	}
	if !sameJSON(string(x.Output), `{"doc":"d1","approval":{"ok":true},"err":{"Error":"Rejected","Cause":"no budget"}}`) {
		t.Fatalf("output %s", x.Output)
	}
	// no task: an empty token once ctx ends
	sctx, scancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer scancel()
	if tok, _, err := v.e.GetActivityTask(sctx, act.ARN, "w"); err != nil || tok != "" {
		t.Fatalf("idle poll: %q %v", tok, err)
	}
	if err := v.e.DeleteActivity(ctx, act.ARN); err != nil {
		t.Fatal(err)
	}
	if _, _, err := v.e.GetActivityTask(ctx, act.ARN, "w"); apiType(err) != "ActivityDoesNotExist" {
		t.Fatalf("deleted activity: %v", err)
	}
}

func TestActivityHeartbeatTimeout(t *testing.T) {
	v := newEnv(t)
	ctx := context.Background()
	act, _ := v.e.CreateActivity(ctx, "slowpoke")
	arn := v.machine(t, "act-hb", `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"`+act.ARN+`","HeartbeatSeconds":1,"End":true}}}`)
	x, err := v.e.StartExecution(ctx, arn, json.RawMessage(`{}`), StartOptions{Name: "hb"})
	if err != nil {
		t.Fatal(err)
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	token, _, err := v.e.GetActivityTask(pctx, act.ARN, "w")
	if err != nil || token == "" {
		t.Fatal(err)
	}
	x, err = v.e.Wait(pctx, x.ARN)
	if err != nil || x.Status != StatusFailed || x.Error != "States.HeartbeatTimeout" {
		t.Fatalf("%+v %v", x, err)
	}
	if err := v.e.SendTaskSuccess(ctx, token, nil); apiType(err) != "TaskTimedOut" {
		t.Fatalf("late success: %v", err)
	}
}

func TestDataLimitExceeded(t *testing.T) {
	v := newEnv(t)
	arn := v.machine(t, "big", `{"StartAt":"Twice","States":{"Twice":{"Type":"Pass","Parameters":{"a.$":"$.s","b.$":"$.s"},"Next":"Catchable"},
		"Catchable":{"Type":"Succeed"}}}`)
	big := `{"s":"` + strings.Repeat("あ", 50000) + `"}` // 150 KB in, 300 KB out
	x := v.run(t, arn, "big-1", big)
	if x.Status != StatusFailed || x.Error != "States.DataLimitExceeded" {
		t.Fatalf("%s %s %s", x.Status, x.Error, x.Cause)
	}
	if _, err := v.e.StartExecution(context.Background(), arn, json.RawMessage(`{"s":"`+strings.Repeat("x", 300*1024)+`"}`), StartOptions{}); apiType(err) != "InvalidExecutionInput" {
		t.Fatalf("a 300 KB input: %v", err)
	}
}

// TestCappedTypesDoNotStarveTasks: another family's job type with a concurrency cap of its own,
// and nothing to do, must not keep a workflow's tasks from running (2 worker slots, as on a
// two-core laptop).
func TestCappedTypesDoNotStarveTasks(t *testing.T) {
	dir := t.TempDir()
	db, err := store.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	q, err := queue.Open(db, queue.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	e, err := New(db, q, Options{})
	if err != nil {
		t.Fatal(err)
	}
	e.RegisterFunction("echo", func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) { return in, nil }, functions.Options{})
	w := queue.NewWorker(q, queue.WorkerOptions{Workers: 2})
	for _, typ := range []string{"capped-a", "capped-b", "capped-c"} {
		w.Handle(typ, func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) { return in, nil }, queue.TypeOptions{Concurrency: 5})
	}
	e.Attach(w)
	if err := w.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	sm, err := e.CreateStateMachine(context.Background(), "echo", `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:lambda:local:000000000000:function:echo","End":true}}}`, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for i := 0; i < 5; i++ {
		x, err := e.StartSyncExecution(ctx, sm.ARN, json.RawMessage(`{"i":1}`), StartOptions{})
		if err != nil || x.Status != StatusSucceeded {
			t.Fatalf("run %d: %+v %v", i, x, err)
		}
	}
}

func TestRedriveParallelKeepsFinishedBranch(t *testing.T) {
	v := newEnv(t)
	ctx := context.Background()
	arn := v.machine(t, "redrive-par", `{"StartAt":"P","States":{"P":{"Type":"Parallel","End":true,"Branches":[
		{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"λcount","Parameters":{"key":"par-a"},"End":true}}},
		{"StartAt":"B","States":{"B":{"Type":"Task","Resource":"λsleep","Parameters":{"ms":200},"Next":"C"},
			"C":{"Type":"Task","Resource":"λflaky","Parameters":{"key":"par-c","times":1},"End":true}}}]}}}`)
	x := v.run(t, arn, "par", `{}`)
	if x.Status != StatusFailed {
		t.Fatalf("%+v", x)
	}
	if _, err := v.e.RedriveExecution(ctx, x.ARN); err != nil {
		t.Fatal(err)
	}
	if x, _ = v.e.Wait(ctx, x.ARN); x.Status != StatusSucceeded || !sameJSON(string(x.Output), `[{"key":"par-a"},{"attempts":2,"retryCount":null}]`) {
		t.Fatalf("%+v %s", x, x.Output)
	}
	if n := v.count("par-a"); n != 1 {
		t.Fatalf("the finished branch ran %d times", n)
	}
}

func TestRedriveDoesNotRerunFinishedTasks(t *testing.T) {
	v := newEnv(t)
	ctx := context.Background()
	arn := v.machine(t, "redrive-tail", `{"StartAt":"T1","States":{
		"T1":{"Type":"Task","Resource":"λcount","Parameters":{"key":"tail-t1"},"ResultPath":null,"Next":"P"},
		"P":{"Type":"Pass","Next":"T2"},
		"T2":{"Type":"Task","Resource":"λflaky","Parameters":{"key":"tail-t2","times":1},"End":true}}}`)
	x := v.run(t, arn, "tail", `{}`)
	if x.Status != StatusFailed {
		t.Fatalf("%+v", x)
	}
	if _, err := v.e.RedriveExecution(ctx, x.ARN); err != nil {
		t.Fatal(err)
	}
	if x, _ = v.e.Wait(ctx, x.ARN); x.Status != StatusSucceeded {
		t.Fatalf("%+v", x)
	}
	if n := v.count("tail-t1"); n != 1 {
		t.Fatalf("T1 ran %d times", n)
	}
	// `jobdesk retry` of the execution's job is a redrive too.
	y := v.run(t, v.machine(t, "redrive-job", `{"StartAt":"F","States":{"F":{"Type":"Task","Resource":"λflaky","Parameters":{"key":"job-retry","times":1},"End":true}}}`), "jr", `{}`)
	if y.Status != StatusFailed {
		t.Fatalf("%+v", y)
	}
	if _, err := v.q.Retry(ctx, y.JobID); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if j, err := v.e.waitJob(wctx, y.JobID); err != nil || j.Status != job.Succeeded {
		t.Fatalf("job %s %v", j.Status, err)
	}
	if y, _ = v.e.DescribeExecution(ctx, y.ARN); y.Status != StatusSucceeded || y.RedriveCount != 1 {
		t.Fatalf("%+v", y)
	}
}

// A DISTRIBUTED iteration is a child execution of its map run; redriving the parent runs the
// failed iteration again and its child record (same ARN) then shows the success, with a fresh
// history.
func TestMapRunChildrenOnRedrive(t *testing.T) {
	v := newEnv(t)
	ctx := context.Background()
	arn := v.machine(t, "kids", `{"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.keys","End":true,
		"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"F",
		"States":{"F":{"Type":"Task","Resource":"λflaky","Parameters":{"key.$":"$","times":1},"End":true}}}}}}`)
	// The task fails the first time: the map (no tolerance) and the execution fail.
	x := v.run(t, arn, "kids-1", `{"keys":["kid-b"]}`)
	if x.Status != StatusFailed {
		t.Fatalf("%+v", x)
	}
	runs, err := v.e.ListMapRuns(ctx, x.ARN)
	if err != nil || len(runs) != 1 {
		t.Fatalf("%+v %v", runs, err)
	}
	kids, _, err := v.e.ListMapRunExecutions(ctx, runs[0].ARN, "", 0, "")
	if err != nil || len(kids) != 1 || kids[0].Status != StatusFailed || kids[0].MapRunARN != runs[0].ARN {
		t.Fatalf("before redrive: %+v %v", kids, err)
	}
	failedARN := kids[0].ARN
	if _, err := v.e.RedriveExecution(ctx, failedARN); apiType(err) != "ExecutionNotRedrivable" {
		t.Fatalf("redriving the child alone: %v", err)
	}
	if _, err := v.e.RedriveExecution(ctx, x.ARN); err != nil {
		t.Fatal(err)
	}
	if x, _ = v.e.Wait(ctx, x.ARN); x.Status != StatusSucceeded {
		t.Fatalf("%+v", x)
	}
	kids, _, err = v.e.ListMapRunExecutions(ctx, runs[0].ARN, "", 0, "")
	if err != nil || len(kids) != 1 || kids[0].ARN != failedARN || kids[0].Status != StatusSucceeded || kids[0].Error != "" {
		t.Fatalf("after redrive: %+v %v", kids, err)
	}
	evs, _, err := v.e.History(ctx, failedARN, false, 0, "")
	if err != nil || len(evs) < 3 || evs[0].Type != "ExecutionStarted" || evs[len(evs)-1].Type != "ExecutionSucceeded" {
		t.Fatalf("child history %+v %v", evs, err)
	}
	for _, ev := range evs[1 : len(evs)-1] {
		if strings.HasPrefix(ev.Type, "Execution") {
			t.Fatalf("the child's history keeps its earlier run: %+v", evs)
		}
	}
	if _, _, err := v.e.ListMapRunExecutions(ctx, runs[0].ARN+"x", "", 0, ""); apiType(err) != "MapRunDoesNotExist" {
		t.Fatalf("missing map run: %v", err)
	}
}

// A DISTRIBUTED map run's child executions are real executions from their start: while an
// iteration runs, its child is listed RUNNING by mapRunArn, DescribeExecution and its history
// show it; once it ends it is SUCCEEDED. Stopping the parent ends the children still running
// ABORTED.
func TestMapRunChildrenListedWhileRunning(t *testing.T) {
	v := newEnv(t)
	ctx := context.Background()
	arn := v.machine(t, "running-kids", `{"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.ms","MaxConcurrency":2,"End":true,
		"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"S",
		"States":{"S":{"Type":"Task","Resource":"λsleep","Parameters":{"ms.$":"$"},"End":true}}}}}}`)
	running := func(x Execution) (MapRun, []Execution) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			runs, err := v.e.ListMapRuns(ctx, x.ARN)
			if err != nil {
				t.Fatal(err)
			}
			if len(runs) == 1 {
				kids, _, err := v.e.ListMapRunExecutions(ctx, runs[0].ARN, StatusRunning, 0, "")
				if err != nil {
					t.Fatal(err)
				}
				if len(kids) > 0 {
					return runs[0], kids
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("no map-run child was listed RUNNING")
		return MapRun{}, nil
	}

	x, err := v.e.StartExecution(ctx, arn, json.RawMessage(`{"ms":[1500,1500,1500]}`), StartOptions{Name: "kids-run"})
	if err != nil {
		t.Fatal(err)
	}
	run, kids := running(x)
	if len(kids) > 2 {
		t.Fatalf("%d children RUNNING with MaxConcurrency 2", len(kids))
	}
	kid, err := v.e.DescribeExecution(ctx, kids[0].ARN)
	if err != nil || kid.Status != StatusRunning || kid.MapRunARN != run.ARN || kid.StopDate != nil || string(kid.Input) != "1500" {
		t.Fatalf("describe a running child: %+v %v", kid, err)
	}
	evs, _, err := v.e.History(ctx, kid.ARN, false, 0, "")
	if err != nil || len(evs) == 0 || evs[0].Type != "ExecutionStarted" {
		t.Fatalf("history of a running child: %+v %v", evs, err)
	}
	if mr, err := v.e.DescribeMapRun(ctx, run.ARN); err != nil || mr.Items.Running < 1 || mr.Items.Running > 2 {
		t.Fatalf("map run counts while running: %+v %v", mr.Items, err)
	}
	if x, _ = v.e.Wait(ctx, x.ARN); x.Status != StatusSucceeded {
		t.Fatalf("%+v", x)
	}
	all, _, err := v.e.ListMapRunExecutions(ctx, run.ARN, "", 0, "")
	if err != nil || len(all) != 3 {
		t.Fatalf("children %+v %v", all, err)
	}
	for _, k := range all {
		evs, _, _ := v.e.History(ctx, k.ARN, false, 0, "")
		if k.Status != StatusSucceeded || k.StopDate == nil || len(evs) == 0 || evs[len(evs)-1].Type != "ExecutionSucceeded" {
			t.Fatalf("child after the map: %+v %+v", k, evs)
		}
		for i, ev := range evs {
			if ev.ID != int64(i+1) || ev.PreviousEventID != int64(i) {
				t.Fatalf("child history ids: %+v", evs)
			}
		}
	}

	// Stopping the parent: the children still running end ABORTED.
	x, err = v.e.StartExecution(ctx, arn, json.RawMessage(`{"ms":[5000,5000,5000]}`), StartOptions{Name: "kids-stop"})
	if err != nil {
		t.Fatal(err)
	}
	run, kids = running(x)
	if _, err := v.e.StopExecution(ctx, x.ARN, "UserStop", "enough"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		kid, err := v.e.DescribeExecution(ctx, kids[0].ARN)
		if err != nil {
			t.Fatal(err)
		}
		if kid.Status == StatusAborted && kid.StopDate != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a running child of a stopped execution is %s", kid.Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if left, _, _ := v.e.ListMapRunExecutions(ctx, run.ARN, StatusRunning, 0, ""); len(left) != 0 {
		t.Fatalf("children still RUNNING after the stop: %+v", left)
	}
}

// A timed-out execution that is redriven gets its TimeoutSeconds again, counted from the
// redrive: here the finished Wait is not re-run and the Task now has the time it needs.
func TestRedriveAfterTimeout(t *testing.T) {
	v := newEnv(t)
	ctx := context.Background()
	arn := v.machine(t, "redrive-timeout", `{"TimeoutSeconds":2,"StartAt":"W","States":{
		"W":{"Type":"Wait","Seconds":1,"Next":"T"},
		"T":{"Type":"Task","Resource":"λsleep","Parameters":{"ms":1500},"End":true}}}`)
	x := v.run(t, arn, "slow", `{}`)
	if x.Status != StatusTimedOut {
		t.Fatalf("first run %s %s", x.Status, x.Error)
	}
	if _, err := v.e.RedriveExecution(ctx, x.ARN); err != nil {
		t.Fatal(err)
	}
	if x, _ = v.e.Wait(ctx, x.ARN); x.Status != StatusSucceeded {
		t.Fatalf("after redrive: %s %s %s", x.Status, x.Error, x.Cause)
	}
}

// The history shows the running state: TaskScheduled is there while the task still runs, and
// TaskStarted carries the time its job began.
func TestHistoryIsLive(t *testing.T) {
	v := newEnv(t)
	ctx := context.Background()
	arn := v.machine(t, "live", `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"λsleep","Parameters":{"ms":1500},"End":true}}}`)
	x, err := v.e.StartExecution(ctx, arn, json.RawMessage(`{}`), StartOptions{Name: "live"})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		evs, _, err := v.e.History(ctx, x.ARN, false, 0, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) > 0 && evs[len(evs)-1].Type == "TaskScheduled" {
			break
		}
		if d, _ := v.e.DescribeExecution(ctx, x.ARN); d.Status != StatusRunning || time.Now().After(deadline) {
			t.Fatalf("TaskScheduled never showed while the task ran (status %s): %+v", d.Status, evs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	x, _ = v.e.Wait(ctx, x.ARN)
	evs, _, _ := v.e.History(ctx, x.ARN, false, 0, "")
	var scheduled, started, succeeded time.Time
	for _, ev := range evs {
		switch ev.Type {
		case "TaskScheduled":
			scheduled = ev.Timestamp
		case "TaskStarted":
			started = ev.Timestamp
		case "TaskSucceeded":
			succeeded = ev.Timestamp
		}
	}
	if started.Before(scheduled) || succeeded.Sub(started) < time.Second {
		t.Fatalf("scheduled %s started %s succeeded %s: TaskStarted is not when the task began", scheduled, started, succeeded)
	}
}

// The history of a Parallel state is in time order: the branches' events interleave as they
// happened, not one branch after the other.
func TestParallelHistoryInTimeOrder(t *testing.T) {
	v := newEnv(t)
	ctx := context.Background()
	arn := v.machine(t, "par-order", `{"StartAt":"P","States":{"P":{"Type":"Parallel","End":true,"Branches":[
		{"StartAt":"Slow","States":{"Slow":{"Type":"Task","Resource":"λsleep","Parameters":{"ms":600},"End":true}}},
		{"StartAt":"Quick","States":{"Quick":{"Type":"Task","Resource":"λsleep","Parameters":{"ms":10},"Next":"Quick2"},
			"Quick2":{"Type":"Task","Resource":"λsleep","Parameters":{"ms":10},"End":true}}}]}}}`)
	x := v.run(t, arn, "order", `{}`)
	if x.Status != StatusSucceeded {
		t.Fatalf("%+v", x)
	}
	evs, _, err := v.e.History(ctx, x.ARN, false, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(evs); i++ {
		if evs[i].Timestamp.Before(evs[i-1].Timestamp) {
			t.Fatalf("event %d %s at %s comes after event %d %s at %s", evs[i].ID, evs[i].Type, evs[i].Timestamp.Format("15:04:05.000"),
				evs[i-1].ID, evs[i-1].Type, evs[i-1].Timestamp.Format("15:04:05.000"))
		}
	}
}

// A task whose branch was stopped while its job ran (another branch failed) may still finish
// that job; redriven at once, the execution waits for it and, as it succeeded, does not run the
// task's work again.
func TestRedriveWaitsForAStoppedTaskStillEnding(t *testing.T) {
	v := newEnv(t)
	ctx := context.Background()
	arn := v.machine(t, "redrive-ending", `{"StartAt":"P","States":{"P":{"Type":"Parallel","End":true,"Branches":[
		{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"λstubborn","Parameters":{"key":"ending-a","ms":120},"End":true}}},
		{"StartAt":"B","States":{"B":{"Type":"Task","Resource":"λflaky","Parameters":{"key":"ending-b","times":1},"End":true}}}]}}}`)
	x := v.run(t, arn, "e1", `{}`)
	if x.Status != StatusFailed {
		t.Fatalf("%+v", x)
	}
	if _, err := v.e.RedriveExecution(ctx, x.ARN); err != nil {
		t.Fatal(err)
	}
	x, err := v.e.Wait(ctx, x.ARN)
	if err != nil || x.Status != StatusSucceeded {
		t.Fatalf("after redrive: %+v %v", x, err)
	}
	if n := v.count("ending-a"); n != 1 {
		t.Fatalf("the stopped task's work ran %d times; its job succeeded after the stop, want 1", n)
	}
}
