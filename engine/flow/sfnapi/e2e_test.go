package sfnapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/aws/smithy-go"

	"jobdesk/engine/flow"
	"jobdesk/engine/flow/sfnapi"
	"jobdesk/engine/functions"
	"jobdesk/engine/job"
	"jobdesk/engine/queue"
	"jobdesk/engine/store"
)

// The end-to-end tests: the real engine on a real SQLite file, a queue worker running its Go
// functions, the server on 127.0.0.1 and the real aws-sdk-go-v2 Step Functions client.

const role = "arn:aws:iam::000000000000:role/jobdesk-local"

type harness struct {
	eng  *flow.Engine
	c    *sfn.Client
	gate atomic.Bool // the "gate" function fails while the gate is closed
}

func newHarness(t testing.TB, o sfnapi.Options) *harness {
	t.Helper()
	dir := t.TempDir()
	db, err := store.OpenDir(dir, queue.Migrations, flow.Migrations)
	if err != nil {
		t.Fatal(err)
	}
	q, err := queue.Open(db, queue.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := flow.New(db, q, flow.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{eng: eng}
	eng.RegisterFunction("double", func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
		var v struct{ N float64 }
		if err := json.Unmarshal(in, &v); err != nil {
			return nil, job.Wrap(job.E006, err, "input is not {\"n\": number}").Permanent()
		}
		return json.Marshal(map[string]any{"n": v.N * 2})
	}, functions.Options{})
	eng.RegisterFunction("gate", func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
		if !h.gate.Load() {
			return nil, job.Errorf(job.E006, "the gate is closed").WithName("Gate.Closed").Permanent()
		}
		return in, nil
	}, functions.Options{})
	w := queue.NewWorker(q, queue.WorkerOptions{Workers: 4})
	eng.Attach(w)
	ctx, cancel := context.WithCancel(context.Background())
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if o.Logf == nil {
		o.Logf = t.Logf
	}
	url := serve(t, newServer(eng, o))
	t.Cleanup(func() { // after the server (cleanups run last-in first-out)
		cancel()
		w.Stop()
		q.Close()
		db.Close()
	})
	h.c = client(url)
	return h
}

func (h *harness) machine(t testing.TB, name, def string) string {
	t.Helper()
	out, err := h.c.CreateStateMachine(context.Background(), &sfn.CreateStateMachineInput{
		Name: aws.String(name), Definition: aws.String(def), RoleArn: aws.String(role)})
	if err != nil {
		t.Fatalf("CreateStateMachine %s: %v", name, err)
	}
	return *out.StateMachineArn
}

// wait polls DescribeExecution until the execution is final.
func (h *harness) wait(t testing.TB, arn string) *sfn.DescribeExecutionOutput {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := h.c.DescribeExecution(context.Background(), &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
		if err != nil {
			t.Fatal(err)
		}
		if out.Status != types.ExecutionStatusRunning {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still RUNNING", arn)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func lambda(name string) string { return "arn:aws:lambda:local:000000000000:function:" + name }

var doubleDef = `{
  "Comment": "double a number twice",
  "StartAt": "Prepare",
  "States": {
    "Prepare": {"Type": "Pass", "Next": "Double"},
    "Double": {"Type": "Task", "Resource": "` + lambda("double") + `", "Next": "Big?"},
    "Big?": {"Type": "Choice", "Choices": [{"Variable": "$.n", "NumericGreaterThan": 100, "Next": "TooBig"}], "Default": "Again"},
    "TooBig": {"Type": "Fail", "Error": "Number.TooBig", "Cause": "the number grew past 100"},
    "Again": {"Type": "Task", "Resource": "` + lambda("double") + `", "End": true}
  }
}`

func apiCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return fmt.Sprint(err)
}

func TestE2EStateMachines(t *testing.T) {
	h := newHarness(t, sfnapi.Options{})
	ctx := context.Background()
	arn := h.machine(t, "doubler", doubleDef)
	if !strings.HasSuffix(arn, ":stateMachine:doubler") || !strings.HasPrefix(arn, "arn:aws:states:") {
		t.Fatal(arn)
	}
	d, err := h.c.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: aws.String(arn)})
	if err != nil {
		t.Fatal(err)
	}
	if *d.Name != "doubler" || *d.Definition != doubleDef || *d.RoleArn != role || d.Type != types.StateMachineTypeStandard ||
		d.Status != types.StateMachineStatusActive || time.Since(*d.CreationDate) > time.Minute {
		t.Fatalf("%+v", d)
	}
	// Same name, other definition: StateMachineAlreadyExists.
	_, err = h.c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("doubler"), RoleArn: aws.String(role),
		Definition: aws.String(`{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`)})
	var exists *types.StateMachineAlreadyExists
	if !errors.As(err, &exists) {
		t.Fatalf("duplicate: %v", err)
	}
	// An invalid definition: InvalidDefinition.
	_, err = h.c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("broken"), RoleArn: aws.String(role),
		Definition: aws.String(`{"StartAt":"Nowhere","States":{"P":{"Type":"Pass","End":true}}}`)})
	var invalid *types.InvalidDefinition
	if !errors.As(err, &invalid) {
		t.Fatalf("invalid: %v", err)
	}
	// Update, then the new definition is described.
	newDef := `{"StartAt":"P","States":{"P":{"Type":"Pass","Result":{"v":2},"End":true}}}`
	u, err := h.c.UpdateStateMachine(ctx, &sfn.UpdateStateMachineInput{StateMachineArn: aws.String(arn), Definition: aws.String(newDef)})
	if err != nil || u.UpdateDate == nil || u.UpdateDate.Before(*d.CreationDate) {
		t.Fatalf("update: %+v %v", u, err)
	}
	d, _ = h.c.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: aws.String(arn)})
	if *d.Definition != newDef {
		t.Fatalf("after update: %s", *d.Definition)
	}
	// Only a role: the definition stays as it is.
	if _, err := h.c.UpdateStateMachine(ctx, &sfn.UpdateStateMachineInput{StateMachineArn: aws.String(arn), RoleArn: aws.String(role + "-2")}); err != nil {
		t.Fatalf("role only: %v", err)
	}
	if d, _ = h.c.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: aws.String(arn)}); *d.Definition != newDef {
		t.Fatalf("after a role update: %s", *d.Definition)
	}
	h.machine(t, "another", newDef)
	l, err := h.c.ListStateMachines(ctx, &sfn.ListStateMachinesInput{})
	if err != nil || len(l.StateMachines) != 2 || *l.StateMachines[0].Name != "another" || *l.StateMachines[1].StateMachineArn != arn {
		t.Fatalf("list: %+v %v", l, err)
	}
	if _, err := h.c.DeleteStateMachine(ctx, &sfn.DeleteStateMachineInput{StateMachineArn: aws.String(arn)}); err != nil {
		t.Fatal(err)
	}
	_, err = h.c.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: aws.String(arn)})
	var gone *types.StateMachineDoesNotExist
	if !errors.As(err, &gone) {
		t.Fatalf("after delete: %v", err)
	}
	_, err = h.c.UpdateStateMachine(ctx, &sfn.UpdateStateMachineInput{StateMachineArn: aws.String(arn), Definition: aws.String(newDef)})
	if !errors.As(err, &gone) {
		t.Fatalf("update after delete: %v", err)
	}
}

func TestE2EExecutions(t *testing.T) {
	h := newHarness(t, sfnapi.Options{})
	ctx := context.Background()
	sm := h.machine(t, "doubler", doubleDef)

	// Idempotent by name: while an execution runs, the same name and input is the same
	// execution (a Wait state keeps it running); other input is ExecutionAlreadyExists.
	slow := h.machine(t, "slow", `{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":3,"End":true}}}`)
	w1, err := h.c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(slow), Name: aws.String("once"), Input: aws.String(`{"n":3}`)})
	if err != nil {
		t.Fatal(err)
	}
	w2, err := h.c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(slow), Name: aws.String("once"), Input: aws.String(`{"n":3}`)})
	if err != nil || *w2.ExecutionArn != *w1.ExecutionArn {
		t.Fatalf("same start: %v %v", w2, err)
	}
	_, err = h.c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(slow), Name: aws.String("once"), Input: aws.String(`{"n":4}`)})
	var already *types.ExecutionAlreadyExists
	if !errors.As(err, &already) {
		t.Fatalf("other input: %v", err)
	}
	s1, err := h.c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(sm), Name: aws.String("run-1"), Input: aws.String(`{"n":3}`)})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(*s1.ExecutionArn, ":execution:doubler:run-1") || time.Since(*s1.StartDate) > time.Minute {
		t.Fatalf("%+v", s1)
	}
	d := h.wait(t, *s1.ExecutionArn)
	if d.Status != types.ExecutionStatusSucceeded || *d.Output != `{"n":12}` || *d.Input != `{"n":3}` || *d.Name != "run-1" ||
		*d.StateMachineArn != sm || d.StopDate == nil || d.StopDate.Before(*d.StartDate) || !d.InputDetails.Included ||
		d.RedriveStatus != types.ExecutionRedriveStatusNotRedrivable {
		t.Fatalf("%+v", d)
	}
	meta, err := h.c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: s1.ExecutionArn, IncludedData: types.IncludedDataMetadataOnly})
	if err != nil || meta.Input != nil || meta.Output != nil || meta.Status != types.ExecutionStatusSucceeded {
		t.Fatalf("metadata only: %+v %v", meta, err)
	}

	// A failing one: the error and cause of the Fail state.
	f, err := h.c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(sm), Input: aws.String(`{"n":70}`)})
	if err != nil {
		t.Fatal(err)
	}
	fd := h.wait(t, *f.ExecutionArn)
	if fd.Status != types.ExecutionStatusFailed || *fd.Error != "Number.TooBig" || *fd.Cause != "the number grew past 100" || fd.Output != nil {
		t.Fatalf("%+v", fd)
	}
	if len(*fd.Name) != 36 { // a UUID when no name is given
		t.Errorf("name %q", *fd.Name)
	}

	// Five more, then the list in pages of two, newest first.
	for i := range 5 {
		if _, err := h.c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(sm), Name: aws.String(fmt.Sprintf("batch-%d", i)), Input: aws.String(`{"n":1}`)}); err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	pages := 0
	p := sfn.NewListExecutionsPaginator(h.c, &sfn.ListExecutionsInput{StateMachineArn: aws.String(sm), MaxResults: 2})
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, e := range out.Executions {
			names = append(names, *e.Name)
			if *e.StateMachineArn != sm || e.StartDate == nil {
				t.Errorf("%+v", e)
			}
		}
	}
	if pages != 4 || len(names) != 7 || names[0] != "batch-4" || names[6] != "run-1" {
		t.Fatalf("%d pages: %v", pages, names)
	}
	failed, err := h.c.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(sm), StatusFilter: types.ExecutionStatusFailed})
	if err != nil || len(failed.Executions) != 1 || *failed.Executions[0].ExecutionArn != *f.ExecutionArn {
		t.Fatalf("status filter: %+v %v", failed, err)
	}
	_, err = h.c.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(sm + "-nope")})
	var noSM *types.StateMachineDoesNotExist
	if !errors.As(err, &noSM) {
		t.Fatalf("list of a missing machine: %v", err)
	}

	// Typed errors of executions.
	_, err = h.c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(strings.Replace(*s1.ExecutionArn, "run-1", "run-9", 1))})
	var noExec *types.ExecutionDoesNotExist
	if !errors.As(err, &noExec) {
		t.Fatalf("missing execution: %v", err)
	}
	_, err = h.c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(sm + "-nope")})
	if !errors.As(err, &noSM) {
		t.Fatalf("start of a missing machine: %v", err)
	}
	_, err = h.c.RedriveExecution(ctx, &sfn.RedriveExecutionInput{ExecutionArn: s1.ExecutionArn})
	var notRedrivable *types.ExecutionNotRedrivable
	if !errors.As(err, &notRedrivable) {
		t.Fatalf("redrive of a success: %v", err)
	}
}

func TestE2EHistory(t *testing.T) {
	h := newHarness(t, sfnapi.Options{})
	ctx := context.Background()
	sm := h.machine(t, "doubler", doubleDef)
	s, err := h.c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(sm), Input: aws.String(`{"n":5}`)})
	if err != nil {
		t.Fatal(err)
	}
	h.wait(t, *s.ExecutionArn)
	var evs []types.HistoryEvent
	p := sfn.NewGetExecutionHistoryPaginator(h.c, &sfn.GetExecutionHistoryInput{ExecutionArn: s.ExecutionArn, MaxResults: 3})
	pages := 0
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		evs = append(evs, out.Events...)
	}
	if len(evs) < 10 || pages < 4 {
		t.Fatalf("%d events in %d pages", len(evs), pages)
	}
	var typesSeen []string
	for i, e := range evs {
		typesSeen = append(typesSeen, string(e.Type))
		if e.Id != int64(i+1) || e.Timestamp == nil || (i > 0 && e.Timestamp.Before(*evs[i-1].Timestamp)) {
			t.Errorf("event %d: id %d at %v", i, e.Id, e.Timestamp)
		}
	}
	first, last := evs[0], evs[len(evs)-1]
	if first.Type != types.HistoryEventTypeExecutionStarted || first.ExecutionStartedEventDetails == nil ||
		*first.ExecutionStartedEventDetails.Input != `{"n":5}` {
		t.Fatalf("first: %+v", first)
	}
	if last.Type != types.HistoryEventTypeExecutionSucceeded || last.ExecutionSucceededEventDetails == nil ||
		*last.ExecutionSucceededEventDetails.Output != `{"n":20}` {
		t.Fatalf("last: %+v", last)
	}
	seq := strings.Join(typesSeen, ",")
	for _, want := range []string{"PassStateEntered", "TaskStateEntered", "TaskScheduled", "TaskStarted", "TaskSucceeded", "TaskStateExited", "ChoiceStateEntered"} {
		if !strings.Contains(seq, want) {
			t.Errorf("no %s in %s", want, seq)
		}
	}
	for _, e := range evs {
		switch e.Type {
		case types.HistoryEventTypeTaskScheduled:
			if e.TaskScheduledEventDetails == nil || *e.TaskScheduledEventDetails.Resource == "" || e.TaskScheduledEventDetails.ResourceType == nil {
				t.Errorf("TaskScheduled without details: %+v", e)
			}
		case types.HistoryEventTypeTaskStateEntered:
			if e.StateEnteredEventDetails == nil || e.StateEnteredEventDetails.Name == nil || e.StateEnteredEventDetails.Input == nil {
				t.Errorf("TaskStateEntered without details: %+v", e)
			}
		case types.HistoryEventTypeTaskSucceeded:
			if e.TaskSucceededEventDetails == nil || e.TaskSucceededEventDetails.Output == nil {
				t.Errorf("TaskSucceeded without output: %+v", e)
			}
		}
		if e.PreviousEventId >= e.Id {
			t.Errorf("event %d follows %d", e.Id, e.PreviousEventId)
		}
	}
	// Reverse order, without execution data.
	rev, err := h.c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: s.ExecutionArn, ReverseOrder: true,
		IncludeExecutionData: aws.Bool(false), MaxResults: 2})
	if err != nil || len(rev.Events) != 2 || rev.Events[0].Id != last.Id || rev.NextToken == nil {
		t.Fatalf("reverse: %+v %v", rev, err)
	}
	if d := rev.Events[0].ExecutionSucceededEventDetails; d == nil || d.Output != nil {
		t.Fatalf("reverse without data: %+v", rev.Events[0])
	}
	_, err = h.c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: s.ExecutionArn, NextToken: aws.String("garbage")})
	var badToken *types.InvalidToken
	if !errors.As(err, &badToken) {
		t.Fatalf("bad token: %v", err)
	}
}

func TestE2EStopAndRedrive(t *testing.T) {
	h := newHarness(t, sfnapi.Options{})
	ctx := context.Background()
	waiter := h.machine(t, "waiter", `{"StartAt":"Sleep","States":{"Sleep":{"Type":"Wait","Seconds":600,"End":true}}}`)
	s, err := h.c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(waiter)})
	if err != nil {
		t.Fatal(err)
	}
	st, err := h.c.StopExecution(ctx, &sfn.StopExecutionInput{ExecutionArn: s.ExecutionArn, Error: aws.String("Operator.Stop"), Cause: aws.String("止めました")})
	if err != nil || st.StopDate == nil {
		t.Fatalf("stop: %+v %v", st, err)
	}
	d := h.wait(t, *s.ExecutionArn)
	if d.Status != types.ExecutionStatusAborted || *d.Error != "Operator.Stop" || *d.Cause != "止めました" {
		t.Fatalf("%+v", d)
	}

	gated := h.machine(t, "gated", `{"StartAt":"First","States":{
		"First":{"Type":"Task","Resource":"`+lambda("double")+`","Next":"Gate"},
		"Gate":{"Type":"Task","Resource":"`+lambda("gate")+`","End":true}}}`)
	s, err = h.c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(gated), Input: aws.String(`{"n":21}`)})
	if err != nil {
		t.Fatal(err)
	}
	d = h.wait(t, *s.ExecutionArn)
	if d.Status != types.ExecutionStatusFailed || *d.Error != "Gate.Closed" || d.RedriveStatus != types.ExecutionRedriveStatusRedrivable {
		t.Fatalf("%+v", d)
	}
	h.gate.Store(true)
	r, err := h.c.RedriveExecution(ctx, &sfn.RedriveExecutionInput{ExecutionArn: s.ExecutionArn})
	if err != nil || r.RedriveDate == nil {
		t.Fatalf("redrive: %+v %v", r, err)
	}
	d = h.wait(t, *s.ExecutionArn)
	if d.Status != types.ExecutionStatusSucceeded || *d.Output != `{"n":42}` || d.RedriveCount == nil || *d.RedriveCount != 1 {
		t.Fatalf("after redrive: %+v", d)
	}
}

func TestE2EStartSync(t *testing.T) {
	h := newHarness(t, sfnapi.Options{SyncTimeout: 2 * time.Second})
	ctx := context.Background()
	sm := h.machine(t, "doubler", doubleDef)
	out, err := h.c.StartSyncExecution(ctx, &sfn.StartSyncExecutionInput{StateMachineArn: aws.String(sm), Input: aws.String(`{"n":10}`), Name: aws.String("sync-1")})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != types.SyncExecutionStatusSucceeded || *out.Output != `{"n":40}` || *out.Name != "sync-1" || *out.StateMachineArn != sm ||
		out.StopDate == nil || out.StopDate.Before(*out.StartDate) {
		t.Fatalf("%+v", out)
	}
	out, err = h.c.StartSyncExecution(ctx, &sfn.StartSyncExecutionInput{StateMachineArn: aws.String(sm), Input: aws.String(`{"n":60}`)})
	if err != nil || out.Status != types.SyncExecutionStatusFailed || *out.Error != "Number.TooBig" {
		t.Fatalf("failing sync: %+v %v", out, err)
	}
	// Longer than SyncTimeout: stopped and answered TIMED_OUT.
	slow := h.machine(t, "slow", `{"StartAt":"Sleep","States":{"Sleep":{"Type":"Wait","Seconds":600,"End":true}}}`)
	out, err = h.c.StartSyncExecution(ctx, &sfn.StartSyncExecutionInput{StateMachineArn: aws.String(slow)})
	if err != nil || out.Status != types.SyncExecutionStatusTimedOut || *out.Error != "States.Timeout" {
		t.Fatalf("slow sync: %+v %v", out, err)
	}
	d := h.wait(t, *out.ExecutionArn)
	if d.Status == types.ExecutionStatusRunning || d.Status == types.ExecutionStatusSucceeded {
		t.Fatalf("the slow execution is %s", d.Status)
	}
}

func TestE2EMapRun(t *testing.T) {
	h := newHarness(t, sfnapi.Options{})
	ctx := context.Background()
	sm := h.machine(t, "fanout", `{"StartAt":"Each","States":{"Each":{"Type":"Map","ItemsPath":"$.items","MaxConcurrency":3,
		"ToleratedFailurePercentage":50,
		"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"D",
		"States":{"D":{"Type":"Task","Resource":"`+lambda("double")+`","End":true}}},"End":true}}}`)
	s, err := h.c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(sm),
		Input: aws.String(`{"items":[{"n":1},{"n":2},{"n":3},{"n":"x"},{"n":5}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	d := h.wait(t, *s.ExecutionArn)
	if d.Status != types.ExecutionStatusSucceeded {
		t.Fatalf("%+v %s %s", d.Status, aws.ToString(d.Error), aws.ToString(d.Cause))
	}
	l, err := h.c.ListMapRuns(ctx, &sfn.ListMapRunsInput{ExecutionArn: s.ExecutionArn})
	if err != nil || len(l.MapRuns) != 1 {
		t.Fatalf("list: %+v %v", l, err)
	}
	mr := l.MapRuns[0]
	if *mr.ExecutionArn != *s.ExecutionArn || !strings.Contains(*mr.MapRunArn, ":mapRun:fanout/") ||
		!strings.Contains(*mr.StateMachineArn, ":stateMachine:fanout/") || mr.StartDate == nil {
		t.Fatalf("%+v", mr)
	}
	m, err := h.c.DescribeMapRun(ctx, &sfn.DescribeMapRunInput{MapRunArn: mr.MapRunArn})
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != types.MapRunStatusSucceeded || m.MaxConcurrency != 3 || m.ToleratedFailurePercentage != 50 ||
		m.ItemCounts.Total != 5 || m.ItemCounts.Succeeded != 4 || m.ItemCounts.Failed != 1 || m.ExecutionCounts.Total != 5 ||
		m.StopDate == nil {
		t.Fatalf("%+v %+v", m, m.ItemCounts)
	}
	// The history names the map run.
	hist, err := h.c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: s.ExecutionArn, MaxResults: 1000})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range hist.Events {
		if e.Type == types.HistoryEventTypeMapRunStarted && e.MapRunStartedEventDetails != nil && *e.MapRunStartedEventDetails.MapRunArn == *mr.MapRunArn {
			found = true
		}
	}
	if !found {
		t.Error("no MapRunStarted event naming the map run")
	}
	// Each iteration is a child execution of the map run, as in Step Functions: listed by
	// mapRunArn (not with the state machine's own), described and with a history of its own.
	top, err := h.c.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(sm)})
	if err != nil || len(top.Executions) != 1 {
		t.Fatalf("the state machine's executions: %+v %v", top, err)
	}
	kids, err := h.c.ListExecutions(ctx, &sfn.ListExecutionsInput{MapRunArn: mr.MapRunArn})
	if err != nil || len(kids.Executions) != 5 {
		t.Fatalf("the map run's executions: %+v %v", kids, err)
	}
	byStatus := map[types.ExecutionStatus]int{}
	for _, k := range kids.Executions {
		byStatus[k.Status]++
		if aws.ToString(k.MapRunArn) != *mr.MapRunArn || !strings.Contains(*k.ExecutionArn, ":execution:fanout/") {
			t.Fatalf("child %+v", k)
		}
	}
	if byStatus[types.ExecutionStatusSucceeded] != 4 || byStatus[types.ExecutionStatusFailed] != 1 {
		t.Fatalf("children by status %v", byStatus)
	}
	failedKids, err := h.c.ListExecutions(ctx, &sfn.ListExecutionsInput{MapRunArn: mr.MapRunArn, StatusFilter: types.ExecutionStatusFailed})
	if err != nil || len(failedKids.Executions) != 1 {
		t.Fatalf("failed children: %+v %v", failedKids, err)
	}
	kid, err := h.c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: failedKids.Executions[0].ExecutionArn})
	if err != nil || aws.ToString(kid.Input) != `{"n":"x"}` || kid.Error == nil || aws.ToString(kid.MapRunArn) != *mr.MapRunArn {
		t.Fatalf("failed child: %+v %v", kid, err)
	}
	var nr *types.ExecutionNotRedrivable
	if _, err := h.c.RedriveExecution(ctx, &sfn.RedriveExecutionInput{ExecutionArn: kid.ExecutionArn}); !errors.As(err, &nr) {
		t.Fatalf("redriving a child on its own: %v", err)
	}
	kh, err := h.c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: kids.Executions[0].ExecutionArn})
	if err != nil || len(kh.Events) < 3 {
		t.Fatalf("child history: %+v %v", kh, err)
	}
	first, last := kh.Events[0], kh.Events[len(kh.Events)-1]
	if first.Type != types.HistoryEventTypeExecutionStarted || first.Id != 1 ||
		(last.Type != types.HistoryEventTypeExecutionSucceeded && last.Type != types.HistoryEventTypeExecutionFailed) {
		t.Fatalf("child history runs %s … %s", first.Type, last.Type)
	}
	for _, e := range hist.Events {
		if strings.HasPrefix(string(e.Type), "MapIteration") {
			t.Fatalf("the parent's history has iteration event %s: they belong to the child executions", e.Type)
		}
	}
	_, err = h.c.DescribeMapRun(ctx, &sfn.DescribeMapRunInput{MapRunArn: aws.String(*mr.MapRunArn + "0")})
	var nf *types.ResourceNotFound
	if !errors.As(err, &nf) {
		t.Fatalf("missing map run: %v", err)
	}
	_, err = h.c.ListExecutions(ctx, &sfn.ListExecutionsInput{MapRunArn: aws.String(*mr.MapRunArn + "0")})
	if !errors.As(err, &nf) {
		t.Fatalf("children of a missing map run: %v", err)
	}
}

func TestE2EValidate(t *testing.T) {
	h := newHarness(t, sfnapi.Options{})
	ctx := context.Background()
	ok, err := h.c.ValidateStateMachineDefinition(ctx, &sfn.ValidateStateMachineDefinitionInput{Definition: aws.String(doubleDef)})
	if err != nil || ok.Result != types.ValidateStateMachineDefinitionResultCodeOk || len(ok.Diagnostics) != 0 {
		t.Fatalf("%+v %v", ok, err)
	}
	bad := `{"StartAt":"ValidateCSV","States":{"ValidateCSV":{"Type":"Task","Resource":"` + lambda("double") + `",
		"Retry":[{"ErrorEquals":["States.ALL"],"BackoffRate":-2}],"Next":"Missing"}}}`
	out, err := h.c.ValidateStateMachineDefinition(ctx, &sfn.ValidateStateMachineDefinitionInput{Definition: aws.String(bad)})
	if err != nil || out.Result != types.ValidateStateMachineDefinitionResultCodeFail || len(out.Diagnostics) < 2 {
		t.Fatalf("%+v %v", out, err)
	}
	locs := map[string]bool{}
	for _, d := range out.Diagnostics {
		if d.Severity != types.ValidateStateMachineDefinitionSeverityError || *d.Code == "" || *d.Message == "" {
			t.Errorf("%+v", d)
		}
		locs[aws.ToString(d.Location)] = true
	}
	if !locs["/States/ValidateCSV/Retry/0/BackoffRate"] {
		t.Errorf("no diagnostic at the BackoffRate: %v", locs)
	}
	one, err := h.c.ValidateStateMachineDefinition(ctx, &sfn.ValidateStateMachineDefinitionInput{Definition: aws.String(bad), MaxResults: 1})
	if err != nil || len(one.Diagnostics) != 1 || !aws.ToBool(one.Truncated) {
		t.Fatalf("truncated: %+v %v", one, err)
	}
	js, err := h.c.ValidateStateMachineDefinition(ctx, &sfn.ValidateStateMachineDefinitionInput{Definition: aws.String(`{"StartAt":`)})
	if err != nil || js.Result != types.ValidateStateMachineDefinitionResultCodeFail || *js.Diagnostics[0].Code != "INVALID_JSON_DESCRIPTION" {
		t.Fatalf("not JSON: %+v %v", js, err)
	}
}

// activityWorker long-polls GetActivityTask like a real worker and answers each task by its
// input's "decision": approve (heartbeat, then success), reject (failure) or ignore (no answer,
// so the task times out on HeartbeatSeconds). It records the tokens it ignored.
type activityWorker struct {
	c   *sfn.Client
	arn string

	mu      sync.Mutex
	ignored []string
	polls   int
}

func (w *activityWorker) run(ctx context.Context, t *testing.T) {
	for ctx.Err() == nil {
		task, err := w.c.GetActivityTask(ctx, &sfn.GetActivityTaskInput{ActivityArn: aws.String(w.arn), WorkerName: aws.String("経理担当-1")})
		w.mu.Lock()
		w.polls++
		w.mu.Unlock()
		if err != nil {
			if ctx.Err() == nil {
				t.Errorf("GetActivityTask: %v", err)
			}
			return
		}
		if task.TaskToken == nil || *task.TaskToken == "" {
			continue
		}
		var in struct {
			Decision string `json:"decision"`
			Amount   int    `json:"amount"`
		}
		if err := json.Unmarshal([]byte(aws.ToString(task.Input)), &in); err != nil {
			t.Errorf("task input %q: %v", aws.ToString(task.Input), err)
		}
		switch in.Decision {
		case "approve":
			for range 3 {
				if _, err := w.c.SendTaskHeartbeat(ctx, &sfn.SendTaskHeartbeatInput{TaskToken: task.TaskToken}); err != nil {
					t.Errorf("heartbeat: %v", err)
				}
				time.Sleep(50 * time.Millisecond)
			}
			out := fmt.Sprintf(`{"approved":true,"amount":%d}`, in.Amount)
			if _, err := w.c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: task.TaskToken, Output: aws.String(out)}); err != nil {
				t.Errorf("success: %v", err)
			}
		case "reject":
			if _, err := w.c.SendTaskFailure(ctx, &sfn.SendTaskFailureInput{TaskToken: task.TaskToken, Error: aws.String("Approval.Rejected"), Cause: aws.String("金額が上限を超えています")}); err != nil {
				t.Errorf("failure: %v", err)
			}
		default:
			w.mu.Lock()
			w.ignored = append(w.ignored, *task.TaskToken)
			w.mu.Unlock()
		}
	}
}

func TestE2EActivityWorker(t *testing.T) {
	h := newHarness(t, sfnapi.Options{PollTimeout: 2 * time.Second})
	ctx := context.Background()
	act, err := h.c.CreateActivity(ctx, &sfn.CreateActivityInput{Name: aws.String("approve-invoice")})
	if err != nil {
		t.Fatal(err)
	}
	again, err := h.c.CreateActivity(ctx, &sfn.CreateActivityInput{Name: aws.String("approve-invoice")})
	if err != nil || *again.ActivityArn != *act.ActivityArn || !strings.HasSuffix(*act.ActivityArn, ":activity:approve-invoice") {
		t.Fatalf("idempotent create: %v %v", again, err)
	}
	sm := h.machine(t, "approval", `{"StartAt":"Approve","States":{
		"Approve":{"Type":"Task","Resource":"`+*act.ActivityArn+`","HeartbeatSeconds":2,"TimeoutSeconds":60,"End":true}}}`)

	wctx, stop := context.WithCancel(ctx)
	w := &activityWorker{c: h.c, arn: *act.ActivityArn}
	done := make(chan struct{})
	go func() { defer close(done); w.run(wctx, t) }()
	defer func() { stop(); <-done }()

	start := func(input string) string {
		s, err := h.c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(sm), Input: aws.String(input)})
		if err != nil {
			t.Fatal(err)
		}
		return *s.ExecutionArn
	}
	approved, rejected, ignored := start(`{"decision":"approve","amount":1200}`), start(`{"decision":"reject","amount":99000}`), start(`{"decision":"ignore"}`)

	d := h.wait(t, approved)
	var result struct {
		Approved bool `json:"approved"`
		Amount   int  `json:"amount"`
	}
	if d.Status != types.ExecutionStatusSucceeded || json.Unmarshal([]byte(aws.ToString(d.Output)), &result) != nil || !result.Approved || result.Amount != 1200 {
		t.Fatalf("approved: %s %s", d.Status, aws.ToString(d.Output))
	}
	d = h.wait(t, rejected)
	if d.Status != types.ExecutionStatusFailed || *d.Error != "Approval.Rejected" || *d.Cause != "金額が上限を超えています" {
		t.Fatalf("rejected: %+v", d)
	}
	d = h.wait(t, ignored)
	if d.Status != types.ExecutionStatusFailed || *d.Error != "States.HeartbeatTimeout" {
		t.Fatalf("ignored: %+v %s", d.Status, aws.ToString(d.Error))
	}
	w.mu.Lock()
	tokens := append([]string(nil), w.ignored...)
	w.mu.Unlock()
	if len(tokens) != 1 {
		t.Fatalf("ignored tokens %v", tokens)
	}
	// Answering a task that timed out: TaskTimedOut. An unknown token: InvalidToken.
	_, err = h.c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(tokens[0]), Output: aws.String(`{}`)})
	var timedOut *types.TaskTimedOut
	if !errors.As(err, &timedOut) {
		t.Fatalf("late answer: %v", err)
	}
	_, err = h.c.SendTaskHeartbeat(ctx, &sfn.SendTaskHeartbeatInput{TaskToken: aws.String("no-such-token")})
	var invalid *types.InvalidToken
	if !errors.As(err, &invalid) {
		t.Fatalf("unknown token: %v", err)
	}
	// The history tells the activity's story.
	hist, err := h.c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(approved)})
	if err != nil {
		t.Fatal(err)
	}
	var seq []string
	for _, e := range hist.Events {
		seq = append(seq, string(e.Type))
		if e.Type == types.HistoryEventTypeActivityStarted && aws.ToString(e.ActivityStartedEventDetails.WorkerName) != "経理担当-1" {
			t.Errorf("worker name %+v", e.ActivityStartedEventDetails)
		}
	}
	if s := strings.Join(seq, ","); !strings.Contains(s, "ActivityScheduled,ActivityStarted,ActivitySucceeded") {
		t.Errorf("history %s", s)
	}

	// Deleting the activity: polling it is ActivityDoesNotExist.
	if _, err := h.c.DeleteActivity(ctx, &sfn.DeleteActivityInput{ActivityArn: act.ActivityArn}); err != nil {
		t.Fatal(err)
	}
	_, err = h.c.GetActivityTask(ctx, &sfn.GetActivityTaskInput{ActivityArn: act.ActivityArn})
	var noAct *types.ActivityDoesNotExist
	if !errors.As(err, &noAct) {
		t.Fatalf("deleted activity: %v", err)
	}
}

// With the strict check `jobdesk serve` configures, a Task naming a function this device does
// not have is refused at CreateStateMachine / UpdateStateMachine (and by Validate), not at run
// time; a known one is accepted.
func TestE2EUnknownFunctionRefusedAtLoad(t *testing.T) {
	var h *harness
	h = newHarness(t, sfnapi.Options{Validate: func(def []byte) []flow.Diagnostic {
		return flow.Validate(def, h.eng.CheckResourceStrict)
	}})
	ctx := context.Background()
	unknown := `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"` + lambda("nosuchfn") + `","End":true}}}`
	_, err := h.c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("unknown"),
		Definition: aws.String(unknown), RoleArn: aws.String(role)})
	var inv *types.InvalidDefinition
	if !errors.As(err, &inv) || !strings.Contains(err.Error(), "nosuchfn") {
		t.Fatalf("create with an unknown function: %v", err)
	}
	arn := h.machine(t, "known", doubleDef)
	_, err = h.c.UpdateStateMachine(ctx, &sfn.UpdateStateMachineInput{StateMachineArn: aws.String(arn), Definition: aws.String(unknown)})
	if !errors.As(err, &inv) {
		t.Fatalf("update to an unknown function: %v", err)
	}
	v, err := h.c.ValidateStateMachineDefinition(ctx, &sfn.ValidateStateMachineDefinitionInput{Definition: aws.String(unknown)})
	if err != nil || v.Result != types.ValidateStateMachineDefinitionResultCodeFail {
		t.Fatalf("validate: %+v %v", v, err)
	}
}
