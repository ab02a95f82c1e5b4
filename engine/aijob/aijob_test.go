package aijob_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/quick"
	"time"

	// The tests run the handlers on their SQLite state, which imports this package: hence an
	// external test package, reading the package's names unqualified.
	. "jobdesk/engine/aijob"
	"jobdesk/engine/aijob/aisqlite"
	"jobdesk/engine/aijob/aitest"
	"jobdesk/engine/blob"
	"jobdesk/engine/flow"
	"jobdesk/engine/functions"
	"jobdesk/engine/job"
	"jobdesk/engine/queue"
	"jobdesk/engine/store"
)

func newTestService(t testing.TB, p Provider) *Service {
	s, _ := newTestServiceDB(t, p)
	return s
}

// newTestServiceDB returns a Service on a new database, and the database.
func newTestServiceDB(t testing.TB, p Provider) (*Service, *store.DB) {
	t.Helper()
	db, err := store.OpenDir(t.TempDir(), aisqlite.Migrations)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s := NewService(aisqlite.New(db).State(), p)
	s.CallRetry = RetryPolicy{5 * time.Millisecond, 4, 2}
	return s, db
}

// newTestDevice returns a Service on a new database and a device running the AI jobs with it
// as the app does (aitest.Device: the shipped workflows on the flow engine, each job run by
// RunJob), its workflows edited by edits.
func newTestDevice(t testing.TB, p Provider, edits map[string][]string) (*Service, *store.DB, *aitest.Device) {
	t.Helper()
	dir := t.TempDir()
	db, err := store.OpenDir(dir, aisqlite.Migrations, queue.Migrations, flow.Migrations)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s := NewService(aisqlite.New(db).State(), p)
	s.CallRetry = RetryPolicy{5 * time.Millisecond, 4, 2}
	return s, db, aitest.NewDevice(t, dir, db, s, edits)
}

func local(srv *aitest.Server) *OpenAI {
	return &OpenAI{Endpoint: srv.URL, ModelID: "test-model", Heartbeat: 2 * time.Second}
}

type progressLog struct {
	mu  sync.Mutex
	pct []float64
}

func (p *progressLog) Progress(pct float64, _ string) {
	p.mu.Lock()
	p.pct = append(p.pct, pct)
	p.mu.Unlock()
}

func withJob(id int64) context.Context {
	return job.WithInfo(context.Background(), job.Info{ID: id, Type: "test", Attempt: 1, MaxAttempts: 3})
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

func TestSubgoalsSendSchemaAndSaveEight(t *testing.T) {
	srv := aitest.NewOpenAI(t, nil)
	s := newTestService(t, local(srv))
	s.Prices = map[string]Price{"test-model": {InputPer1K: 1, OutputPer1K: 2}}
	var p progressLog
	out, err := s.Subgoals(withJob(7), mustJSON(GoalInput{Title: "TOEIC 900点", Description: "半年で", Deadline: "2027-03-31"}), &p)
	if err != nil {
		t.Fatal(err)
	}
	var res SubgoalResult
	json.Unmarshal(out, &res)
	if res.GoalID == 0 || len(res.Subgoals) != 8 || res.Subgoals[7].Position != 8 || res.Subgoals[0].JobID != 7 {
		t.Fatalf("result %s", out)
	}
	if !slices.Equal(p.pct, []float64{0, 50, 100}) {
		t.Fatalf("progress %v, want 0 50 100", p.pct)
	}
	calls := srv.Calls()
	if len(calls) != 1 || calls[0].SchemaName != "subgoals" || calls[0].Model != "test-model" || !strings.Contains(calls[0].Prompt, "TOEIC 900点") {
		t.Fatalf("calls %+v", calls)
	}
	var rf struct {
		ResponseFormat struct {
			Type       string `json:"type"`
			JSONSchema struct {
				Name   string          `json:"name"`
				Schema json.RawMessage `json:"schema"`
			} `json:"json_schema"`
		} `json:"response_format"`
	}
	json.Unmarshal(calls[0].Body, &rf)
	if rf.ResponseFormat.Type != "json_schema" || string(rf.ResponseFormat.JSONSchema.Schema) != string(SubgoalSchema.Raw) {
		t.Fatalf("response_format %+v", rf.ResponseFormat)
	}
	if res.Usage == nil || res.Usage.Calls != 1 || res.Usage.PromptTokens == 0 || res.Usage.CostUSD == nil || *res.Usage.CostUSD <= 0 {
		t.Fatalf("usage %+v", res.Usage)
	}
	// Generating again keeps them; regenerating replaces the eight, never adds to them.
	if _, err := s.Subgoals(withJob(8), mustJSON(GoalInput{GoalID: res.GoalID}), job.Discard); err != nil || len(srv.Calls()) != 1 {
		t.Fatal(err, len(srv.Calls()))
	}
	if _, err := s.Subgoals(withJob(8), mustJSON(GoalInput{GoalID: res.GoalID, Regenerate: true}), job.Discard); err != nil {
		t.Fatal(err)
	}
	g, _ := s.LoadGoal(context.Background(), res.GoalID)
	if len(g.Subgoals) != 8 || g.Subgoals[0].JobID != 8 {
		t.Fatalf("after regeneration: %d sub-goals", len(g.Subgoals))
	}
}

func TestInvalidReplyRetriedOnceWithTheError(t *testing.T) {
	tests := []struct {
		name    string
		replies []string
		wantErr job.Code
		calls   int
	}{
		{"malformed then valid", []string{`{"subgoals": [`, ""}, "", 2},
		{"seven then valid", []string{sevenSubgoals(), ""}, "", 2},
		{"fenced valid", []string{"```json\n" + aitest.Answer(aitest.Call{SchemaName: "subgoals"}) + "\n```"}, "", 1},
		{"malformed twice", []string{`not json`, `{"subgoals": 5}`}, job.E008, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := aitest.NewOpenAI(t, func(c aitest.Call) aitest.Step {
				if c.N <= len(tt.replies) && tt.replies[c.N-1] != "" {
					return aitest.Step{Text: tt.replies[c.N-1]}
				}
				return aitest.Step{Text: aitest.Answer(c)}
			})
			s := newTestService(t, local(srv))
			_, err := s.Subgoals(withJob(1), mustJSON(GoalInput{Title: "目標"}), job.Discard)
			calls := srv.Calls()
			if len(calls) != tt.calls {
				t.Fatalf("%d calls, want %d", len(calls), tt.calls)
			}
			if tt.calls == 2 && !strings.Contains(calls[1].Prompt, "rejected") {
				t.Fatalf("the retry does not carry the validation error: %q", calls[1].Prompt)
			}
			if tt.wantErr == "" && err != nil {
				t.Fatal(err)
			}
			if tt.wantErr != "" {
				je := job.AsError(err)
				if je == nil || je.Code != tt.wantErr || je.Retryable || je.ErrorName() != ErrInvalidReply {
					t.Fatalf("err %v", err)
				}
			}
		})
	}
}

func sevenSubgoals() string {
	var v struct {
		Subgoals []any `json:"subgoals"`
	}
	json.Unmarshal([]byte(aitest.Answer(aitest.Call{SchemaName: "subgoals"})), &v)
	v.Subgoals = v.Subgoals[:7]
	b, _ := json.Marshal(v)
	return string(b)
}

// One call's failure is classified by the OpenAI-compatible server's answer (the call's own
// retries are off here: TestCallRetriesThenFailsForGood classifies what they give up on).
func TestOpenAIErrorClasses(t *testing.T) {
	tests := []struct {
		step      aitest.Step
		code      job.Code
		name      string
		retryable bool
	}{
		{aitest.Step{Status: 429, ErrorType: "rate_limit_exceeded"}, job.E002, "ThrottlingException", true},
		{aitest.Step{Status: 429, ErrorType: "insufficient_quota", Message: "You exceeded your current quota"}, job.E007, "ServiceQuotaExceededException", false},
		{aitest.Step{Status: 503}, job.E001, "ServiceUnavailableException", true},
		{aitest.Step{Status: 500}, job.E001, "ServiceUnavailableException", true},
		{aitest.Step{Status: 401, ErrorType: "invalid_api_key"}, job.E007, "AccessDeniedException", false},
		{aitest.Step{Status: 400, Message: "model 'x' not found"}, job.E007, "ValidationException", false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.step.Status, tt.step.ErrorType), func(t *testing.T) {
			srv := aitest.NewOpenAI(t, func(aitest.Call) aitest.Step { return tt.step })
			s := newTestService(t, local(srv))
			s.CallRetry = RetryPolicy{}
			_, err := s.Subgoals(withJob(1), mustJSON(GoalInput{Title: "目標"}), job.Discard)
			je := job.AsError(err)
			if je == nil || je.Code != tt.code || je.ErrorName() != tt.name || je.Retryable != tt.retryable || je.MessageJa == "" {
				t.Fatalf("got %+v", je)
			}
			if len(srv.Calls()) != 1 {
				t.Fatalf("%d calls: a provider error is not the schema retry's business", len(srv.Calls()))
			}
		})
	}
}

func TestSubgoalTimeoutEndsWithTheSeedsMessage(t *testing.T) {
	srv := aitest.NewOpenAI(t, func(aitest.Call) aitest.Step { return aitest.Step{Hang: true} })
	s := newTestService(t, local(srv))
	s.SubgoalTimeout = 200 * time.Millisecond
	start := time.Now()
	_, err := s.Subgoals(withJob(1), mustJSON(GoalInput{Title: "目標"}), job.Discard)
	je := job.AsError(err)
	if je == nil || je.ErrorName() != "States.Timeout" || je.Code != job.E011 || je.Retryable || je.MessageJa != "処理時間が制限を超えました" {
		t.Fatalf("got %+v", je)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("the timeout took %s", d)
	}
	gs, _ := s.ListGoals(context.Background())
	notes, _ := s.Notifications(context.Background())
	if len(gs) != 1 || gs[0].Status != "failed" || len(notes) != 1 || notes[0].Title != "サブ目標の生成に失敗しました" {
		t.Fatalf("goals %+v, notifications %+v", gs, notes)
	}
}

func TestHeartbeatKeepsAliveThenStops(t *testing.T) {
	srv := aitest.NewOpenAI(t, func(aitest.Call) aitest.Step {
		return aitest.Step{Heartbeats: 6, HeartbeatEvery: 60 * time.Millisecond}
	})
	p := local(srv)
	p.Heartbeat = 200 * time.Millisecond
	start := time.Now()
	_, err := p.Complete(context.Background(), Request{Prompt: "x"})
	var pe *ProviderError
	if !errors.As(err, &pe) || pe.Kind != KindHeartbeat || !pe.Retryable() {
		t.Fatalf("err %v", err)
	}
	// Six heartbeats 60 ms apart kept the call alive past one heartbeat interval.
	if d := time.Since(start); d < 360*time.Millisecond || d > 3*time.Second {
		t.Fatalf("failed after %s", d)
	}
	if pe.JobError().ErrorName() != "States.HeartbeatTimeout" {
		t.Fatal(pe.JobError())
	}
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func TestOfflineDefersWithGrowingDelay(t *testing.T) {
	addr := freeAddr(t)
	s := newTestService(t, &OpenAI{Endpoint: "http://" + addr + "/v1", ModelID: "m"})
	var delays []time.Duration
	for i := 0; i < 3; i++ {
		_, err := s.Subgoals(withJob(1), mustJSON(GoalInput{Title: "目標"}), job.Discard)
		var d *job.DeferredError
		if !errors.As(err, &d) || d.Message != OfflineMessage {
			t.Fatalf("err %v", err)
		}
		delays = append(delays, d.After)
	}
	if !(delays[0] == time.Second && delays[1] == 2*time.Second && delays[2] == 4*time.Second) {
		t.Fatalf("delays %v", delays)
	}
	// The provider comes back: the job succeeds and the backoff starts over.
	srv := aitest.NewOpenAIAt(t, addr, nil)
	if _, err := s.Subgoals(withJob(1), mustJSON(GoalInput{Title: "目標"}), job.Discard); err != nil {
		t.Fatal(err)
	}
	if len(srv.Calls()) != 1 || OfflineDeferrals(s) != 0 {
		t.Fatalf("calls %d offline %d", len(srv.Calls()), OfflineDeferrals(s))
	}
}

func TestChainFallsBackWhenOffline(t *testing.T) {
	srv := aitest.NewOpenAI(t, nil)
	c := Chain{&OpenAI{Endpoint: "http://" + freeAddr(t) + "/v1", ModelID: "a"}, local(srv)}
	rep, err := c.Complete(context.Background(), Request{Prompt: "8つのサブ目標", SchemaName: "subgoals"})
	if err != nil || rep.Model != "test-model" {
		t.Fatalf("%v %+v", err, rep)
	}
	// A refusal is not offline: the chain stops there.
	bad := aitest.NewOpenAI(t, func(aitest.Call) aitest.Step { return aitest.Step{Status: 401} })
	c = Chain{local(bad), local(srv)}
	if _, err := c.Complete(context.Background(), Request{Prompt: "x"}); err == nil {
		t.Fatal("want the first provider's error")
	}
}

// goalWithActions generates sub-goals and actions for a new goal.
func goalWithActions(t testing.TB, s *Service) Goal {
	t.Helper()
	out, err := s.Actions(withJob(1), mustJSON(GoalInput{Title: "資格取得", Deadline: "2027-01-31"}), job.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var res ActionResult
	json.Unmarshal(out, &res)
	g, err := s.LoadGoal(context.Background(), res.GoalID)
	if err != nil || len(g.Actions()) != 64 {
		t.Fatalf("%v: %d actions", err, len(g.Actions()))
	}
	return g
}

func TestActionsProgressPerSubgoal(t *testing.T) {
	srv := aitest.NewOpenAI(t, nil)
	s := newTestService(t, local(srv))
	id, _ := s.CreateGoal(context.Background(), "目標", "", "")
	if _, err := s.Subgoals(withJob(1), mustJSON(GoalInput{GoalID: id}), job.Discard); err != nil {
		t.Fatal(err)
	}
	var p progressLog
	out, err := s.Actions(withJob(2), mustJSON(GoalInput{GoalID: id}), &p)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0, 12.5, 25, 37.5, 50, 62.5, 75, 87.5, 100}
	if !slices.Equal(p.pct, want) {
		t.Fatalf("progress %v", p.pct)
	}
	var res ActionResult
	json.Unmarshal(out, &res)
	if res.GoalID != id || res.Actions != 64 {
		t.Fatalf("%s", out)
	}
	for _, a := range (Goal{Subgoals: res.Subgoals}).Actions() {
		if a.Type != "execution" && a.Type != "habit" {
			t.Fatalf("action type %q", a.Type)
		}
	}
}

// failingTasks answers every task request except those for action titles in fail, which get
// step.
func failingTasks(fail map[string]bool, step aitest.Step) aitest.Script {
	return func(c aitest.Call) aitest.Step {
		if c.SchemaName == "tasks" {
			for title := range fail {
				if strings.Contains(c.Prompt, "アクション: "+title+"（") {
					return step
				}
			}
		}
		return aitest.Step{Text: aitest.Answer(c)}
	}
}

func TestTasksAllPartialNone(t *testing.T) {
	for _, tt := range []struct {
		name       string
		failing    int // actions that fail
		goalStatus string
		wantErr    bool
	}{
		{"all succeed", 0, "active", false},
		{"partial", 5, "partial", false},
		{"none", 64, "failed", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := aitest.NewOpenAI(t, nil)
			s, _, d := newTestDevice(t, local(srv), nil)
			g := goalWithActions(t, s)
			fail := map[string]bool{}
			failed := map[int64]bool{}
			for i, a := range g.Actions() {
				if i%13 == 0 && len(fail) < tt.failing || tt.failing == 64 {
					fail[a.Title] = true
					failed[a.ID] = true
				}
			}
			srv.SetScript(failingTasks(fail, aitest.Step{Status: 400, Message: "bad request"}))
			j := d.Run(t, TypeTasks, GoalInput{GoalID: g.ID})
			var out json.RawMessage
			switch {
			case tt.goalStatus == "partial":
				if j.Status != job.Partial {
					t.Fatalf("job %s %v", j.Status, j.Error)
				}
				out = j.Result
			case tt.wantErr:
				je := j.Error
				if j.Status != job.Failed || je == nil || je.Code != job.E007 || je.Retryable {
					t.Fatalf("job %s %v", j.Status, je)
				}
			case j.Status != job.Succeeded:
				t.Fatalf("job %s %v", j.Status, j.Error)
			default:
				out = j.Result
			}
			ng, _ := s.LoadGoal(context.Background(), g.ID)
			if ng.Status != tt.goalStatus {
				t.Fatalf("goal status %q", ng.Status)
			}
			for _, a := range ng.Actions() {
				// Property 7: successful tasks are saved even when others fail.
				if failed[a.ID] != (len(a.Tasks) == 0) {
					t.Fatalf("action %d failed=%v has %d tasks", a.ID, failed[a.ID], len(a.Tasks))
				}
			}
			notes, _ := s.Notifications(context.Background())
			levels := map[string]int{}
			for _, n := range notes {
				levels[n.Level]++
			}
			// One notification on partial or failure; the failure rate alert only when more
			// than 10 % of the calls failed (all of them here in "none").
			if levels[tt.goalStatus] != map[bool]int{true: 1}[tt.goalStatus != "active"] || (levels["alert"] == 1) != (tt.failing == 64) {
				t.Fatalf("notifications %v", notes)
			}
			if out != nil {
				var res TaskResult
				json.Unmarshal(out, &res)
				got := map[int64]bool{}
				for _, id := range res.FailedActions {
					got[id] = true
				}
				if res.GoalID != g.ID || res.TotalActions != 64 || res.FailedCount != len(failed) || len(got) != len(failed) {
					t.Fatalf("result %s", out)
				}
				for id := range failed {
					if !got[id] {
						t.Fatalf("failed action %d not listed", id)
					}
				}
			}
		})
	}
}

// Property 3: a failing call is retried after 1×, 2×, 4× the interval (seed: 2 s, 4 s, 8 s).
// The task-generation workflow's GenerateTasks retries only timeouts; throttling and an
// unavailable service are retried by each call itself (CallRetry), which alone retries here.
func TestTaskRetryBackoffIntervals(t *testing.T) {
	srv := aitest.NewOpenAI(t, nil)
	s, _, d := newTestDevice(t, local(srv), nil)
	g := goalWithActions(t, s)
	target := g.Actions()[10]
	s.CallRetry = RetryPolicy{80 * time.Millisecond, 3, 2}
	var mu sync.Mutex
	var at []time.Time
	n := 0
	srv.SetScript(func(c aitest.Call) aitest.Step {
		if c.SchemaName == "tasks" && strings.Contains(c.Prompt, "アクション: "+target.Title+"（") {
			mu.Lock()
			defer mu.Unlock()
			at = append(at, c.At)
			n++
			switch n {
			case 1:
				return aitest.Step{Status: 429}
			case 2:
				return aitest.Step{Status: 503}
			case 3:
				return aitest.Step{Status: 429}
			}
		}
		return aitest.Step{Text: aitest.Answer(c)}
	})
	if j := d.Run(t, TypeTasks, GoalInput{GoalID: g.ID, ActionIDs: []int64{target.ID}}); j.Status != job.Succeeded {
		t.Fatalf("job %s %v", j.Status, j.Error)
	}
	if len(at) != 4 {
		t.Fatalf("%d calls for the action, want 4", len(at))
	}
	// The schedule is exact; the waits are at least as long (a busy machine may add to them, so
	// only a runaway wait, seconds too long, fails the upper bound).
	for i, want := range []time.Duration{80, 160, 320} {
		if d := s.CallRetry.Delay(i + 1); d != want*time.Millisecond {
			t.Fatalf("delay %d = %s, want %d ms", i+1, d, want)
		}
		got := at[i+1].Sub(at[i])
		if got < want*time.Millisecond || got > want*time.Millisecond+2*time.Second {
			t.Fatalf("interval %d = %s, want %d ms", i+1, got, want)
		}
	}
}

// A call that stays unavailable is tried once and retried three times, then its action fails
// with E001 (as the execution's history shows); the job, whose only action got no tasks, fails
// E007 ("no action got its tasks").
func TestTaskRetryGivesUpAfterThreeRetries(t *testing.T) {
	srv := aitest.NewOpenAI(t, nil)
	s, _, d := newTestDevice(t, local(srv), nil)
	g := goalWithActions(t, s)
	a := g.Actions()[0]
	s.CallRetry = RetryPolicy{20 * time.Millisecond, 3, 2} // the call's own retry alone retries
	srv.SetScript(failingTasks(map[string]bool{a.Title: true}, aitest.Step{Status: 503}))
	before := len(srv.Calls())
	j := d.Run(t, TypeTasks, GoalInput{GoalID: g.ID, ActionIDs: []int64{a.ID}})
	if je := j.Error; j.Status != job.Failed || je == nil || je.Code != job.E007 {
		t.Fatalf("job %s %v", j.Status, je)
	}
	if actionError(t, d, j.ID) != job.E001 {
		t.Fatal("the action did not fail E001")
	}
	if n := len(srv.Calls()) - before; n != 4 {
		t.Fatalf("%d calls, want 1 + 3 retries", n)
	}
}

// actionError returns the code of the error a GenerateTasks Task of job id's execution failed
// with ("" when none did), from the execution's history.
func actionError(t *testing.T, d *aitest.Device, id int64) job.Code {
	t.Helper()
	ctx := context.Background()
	kids, err := d.Queue.List(ctx, queue.Filter{ParentID: id})
	if err != nil || len(kids) != 1 {
		t.Fatalf("%d children of job %d: %v", len(kids), id, err)
	}
	x, err := d.Engine.ExecutionByJob(ctx, kids[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	hist, _, err := d.Engine.History(ctx, x.ARN, false, 1000, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hist {
		if h.Type != "TaskFailed" {
			continue
		}
		var f struct {
			Cause string `json:"cause"`
		}
		for _, v := range h.Details {
			b, _ := json.Marshal(v)
			if json.Unmarshal(b, &f) == nil && f.Cause != "" {
				if e, ok := job.ErrorFromCause("", f.Cause); ok {
					return e.Code
				}
			}
		}
	}
	return ""
}

// Property 2: every action lands in exactly one batch of at most eight.
func TestBatchesCompleteness(t *testing.T) {
	f := func(n uint8) bool {
		count := int(n) % 65
		ids := make([]int64, count)
		for i := range ids {
			ids[i] = int64(i + 1)
		}
		seen := map[int64]int{}
		for _, b := range Batches(ids, 8) {
			if len(b) == 0 || len(b) > 8 {
				return false
			}
			for _, id := range b {
				seen[id]++
			}
		}
		for _, id := range ids {
			if seen[id] != 1 {
				return false
			}
		}
		return len(seen) == count
	}
	if err := quick.Check(f, nil); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 1, 8, 9, 64} {
		ids := make([]int64, n)
		want := (n + 7) / 8
		if got := len(Batches(ids, 8)); got != want {
			t.Errorf("%d actions: %d batches, want %d", n, got, want)
		}
	}
}

// Property 6: progress is processed / total × 100. The job a person sees follows its workflow's
// execution (the states it passed and the Map items it finished), so what holds at every step
// is that the progress only moves forward and stays below 100 until the end; at the end it is
// 100 and the job's counts are every one of the k actions processed, out of k.
func TestTaskProgressAccuracy(t *testing.T) {
	srv := aitest.NewOpenAI(t, nil)
	s, _, d := newTestDevice(t, local(srv), nil)
	g := goalWithActions(t, s)
	k := rand.IntN(20) + 1
	var ids []int64
	for _, a := range g.Actions()[:k] {
		ids = append(ids, a.ID)
	}
	events, stop := d.Queue.Subscribe(4096)
	defer stop()
	j := d.Submit(t, TypeTasks, GoalInput{GoalID: g.ID, ActionIDs: ids})
	var pct []float64
	for end := false; !end; {
		select {
		case ev := <-events:
			if ev.JobID == j.ID {
				pct = append(pct, ev.Progress)
				end = ev.Status.Final()
			}
		case <-time.After(time.Minute):
			t.Fatalf("job %d did not end: %v", j.ID, pct)
		}
	}
	if j = d.Wait(t, j.ID); j.Status != job.Succeeded {
		t.Fatalf("job %s %v", j.Status, j.Error)
	}
	if len(pct) < 2 {
		t.Fatalf("%d reports", len(pct))
	}
	for i, p := range pct {
		if i > 0 && p < pct[i-1] || p > 100 {
			t.Fatalf("report %d = %v: %v", i, p, pct)
		}
	}
	if pct[len(pct)-1] != 100 || j.Progress != 100 {
		t.Fatal(pct, j.Progress)
	}
	var res TaskResult
	json.Unmarshal(j.Result, &res)
	if res.TotalActions != k || res.SuccessCount != k || res.Tasks != 3*k ||
		j.Message != fmt.Sprintf("%d tasks generated for %d of %d actions", 3*k, k, k) {
		t.Fatalf("%q %s", j.Message, j.Result)
	}
}

// Property 4: the whole execution is bounded. The shipped workflow's 900 s is shortened to 1 s.
func TestTaskExecutionTimeout(t *testing.T) {
	srv := aitest.NewOpenAI(t, nil)
	s, _, d := newTestDevice(t, local(srv), map[string][]string{"task-generation": {`"TimeoutSeconds": 900`, `"TimeoutSeconds": 1`}})
	g := goalWithActions(t, s)
	srv.SetScript(func(c aitest.Call) aitest.Step { return aitest.Step{Hang: true} })
	start := time.Now()
	j := d.Run(t, TypeTasks, GoalInput{GoalID: g.ID})
	je := j.Error
	if j.Status != job.TimedOut || je == nil || je.ErrorName() != "States.Timeout" {
		t.Fatalf("job %s %v", j.Status, je)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("took %s", d)
	}
	// The goal, processing while the job ran, does not stay so: failed, with a notification.
	ng, _ := s.LoadGoal(context.Background(), g.ID)
	notes, _ := s.Notifications(context.Background())
	if ng.Status != "failed" || len(notes) != 1 || notes[0].Level != "failed" || notes[0].GoalID != g.ID || notes[0].JobID != j.ID ||
		!strings.Contains(notes[0].Message, "処理時間が制限を超えました") {
		t.Fatalf("goal %q, notifications %+v", ng.Status, notes)
	}
}

// Property 8: two goals generating at once do not touch each other's tasks; generating again
// never duplicates tasks (property 1's "no duplicate tasks").
func TestConcurrentGoalsIsolatedAndNoDuplicates(t *testing.T) {
	srv := aitest.NewOpenAI(t, nil)
	s, db, d := newTestDevice(t, local(srv), nil)
	g1, g2 := goalWithActions(t, s), goalWithActions(t, s)
	var jobs []job.Job
	for _, g := range []Goal{g1, g2, g1} {
		jobs = append(jobs, d.Submit(t, TypeTasks, GoalInput{GoalID: g.ID}))
	}
	for _, j := range jobs {
		if j = d.Wait(t, j.ID); j.Status != job.Succeeded {
			t.Fatalf("job %d: %s %v", j.ID, j.Status, j.Error)
		}
	}
	for _, g := range []Goal{g1, g2} {
		ng, _ := s.LoadGoal(context.Background(), g.ID)
		for _, a := range ng.Actions() {
			if len(a.Tasks) != 3 {
				t.Fatalf("goal %d action %d has %d tasks", g.ID, a.ID, len(a.Tasks))
			}
		}
		if ng.Status != "active" {
			t.Fatal(ng.Status)
		}
	}
	var n int
	db.R.QueryRow(`SELECT COUNT(*) FROM goal_tasks`).Scan(&n)
	if n != 2*64*3 {
		t.Fatalf("%d tasks, want %d", n, 2*64*3)
	}
}

func pngFile(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "写真.png")
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 8, 6))); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p, b.Bytes(), 0o600)
	return p
}

func TestCaption(t *testing.T) {
	srv := aitest.NewOpenAI(t, nil)
	s := newTestService(t, local(srv))
	out, err := s.Caption(withJob(1), mustJSON(FileInput{Path: pngFile(t)}), job.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var res CaptionResult
	json.Unmarshal(out, &res)
	if res.Description == "" || res.Model != "test-model" || !srv.Calls()[0].HasImage {
		t.Fatalf("%s", out)
	}
	noVision := aitest.NewOpenAI(t, func(aitest.Call) aitest.Step {
		return aitest.Step{Status: 500, Message: "this model is missing data required for image input"}
	})
	s.Provider = local(noVision)
	_, err = s.Caption(withJob(2), mustJSON(FileInput{Path: pngFile(t)}), job.Discard)
	je := job.AsError(err)
	if je == nil || je.Code != job.E007 || je.Retryable || !strings.Contains(je.Message, "cannot read images") || !strings.Contains(je.MessageJa, "画像を読み取れません") {
		t.Fatalf("err %+v", je)
	}
	// An Ollama server says per model whether it reads images (/api/show capabilities); a model
	// without "vision" fails before any chat call instead of describing an image it never saw.
	ollama := aitest.NewOpenAI(t, nil)
	ollama.SetCapabilities([]string{"completion"})
	s.Provider = local(ollama)
	_, err = s.Caption(withJob(4), mustJSON(FileInput{Path: pngFile(t)}), job.Discard)
	if je := job.AsError(err); je == nil || je.Code != job.E007 || je.Retryable || !strings.Contains(je.Message, "cannot read images") {
		t.Fatalf("text-only Ollama model: err %+v", je)
	}
	if n := len(ollama.Calls()); n != 0 {
		t.Fatalf("%d chat calls to a model that cannot read images", n)
	}
	ollama.SetCapabilities([]string{"completion", "vision"})
	s.Provider = local(ollama) // a new client: capabilities are remembered per client and model
	if _, err := s.Caption(withJob(5), mustJSON(FileInput{Path: pngFile(t)}), job.Discard); err != nil || len(ollama.Calls()) != 1 {
		t.Fatalf("vision model: %v, %d calls", err, len(ollama.Calls()))
	}
	txt := filepath.Join(t.TempDir(), "a.png")
	os.WriteFile(txt, []byte("not an image"), 0o600)
	if _, err := s.Caption(withJob(3), mustJSON(FileInput{Path: txt}), job.Discard); job.AsError(err).Code != job.E004 {
		t.Fatalf("err %v", err)
	}
}

const guideline = `# 令和8年度 業務改善補助金 公募要領

## 補助対象者の要件
- 県内に事業所を有する中小企業であること
- 従業員が300人以下であること

## 対象外となる事業者
- 風俗営業を営む者

## 補助額
- 上限100万円
`

func TestEligibilityLevelsAndCache(t *testing.T) {
	dir := t.TempDir()
	md := filepath.Join(dir, "guide.md")
	os.WriteFile(md, []byte(guideline), 0o600)
	tests := []struct {
		name      string
		script    aitest.Script
		fallback  bool
		level     int
		partial   bool
		wantCalls int
	}{
		{"model", nil, false, LevelModel, false, 1},
		{"fallback model", func(c aitest.Call) aitest.Step {
			if c.Model == "fallback" {
				return aitest.Step{Text: aitest.Answer(c)}
			}
			return aitest.Step{Text: "{}"}
		}, true, LevelFallback, false, 3},
		{"headings", func(c aitest.Call) aitest.Step { return aitest.Step{Text: "これはJSONではありません"} }, false, LevelHeadings, true, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := aitest.NewOpenAI(t, tt.script)
			s := newTestService(t, local(srv))
			if tt.fallback {
				s.Fallback = &OpenAI{Endpoint: srv.URL, ModelID: "fallback"}
			}
			out, err := s.Eligibility(withJob(1), mustJSON(FileInput{Path: md}), job.Discard)
			var partial *job.PartialResult
			if tt.partial {
				if !errors.As(err, &partial) {
					t.Fatalf("err %v", err)
				}
				out = partial.Result
			} else if err != nil {
				t.Fatal(err)
			}
			var res EligibilityResult
			json.Unmarshal(out, &res)
			if res.FallbackLevel != tt.level || res.Cached || len(srv.Calls()) != tt.wantCalls {
				t.Fatalf("level %d calls %d: %s", res.FallbackLevel, len(srv.Calls()), out)
			}
			if tt.level == LevelHeadings && (res.NeedCheckCount != 2 || res.MustNotCount != 1 || res.MustCount != 0) {
				t.Fatalf("heading extraction: %s", out)
			}
			// The same content again comes from the cache, without a call, when a model extracted
			// it; a heading-based result is made again (the model is asked again).
			out2, err := s.Eligibility(withJob(2), mustJSON(FileInput{Path: md}), job.Discard)
			if errors.As(err, &partial) {
				out2 = partial.Result
			}
			var res2 EligibilityResult
			json.Unmarshal(out2, &res2)
			if tt.level >= LevelHeadings {
				if res2.Cached || len(srv.Calls()) != 2*tt.wantCalls {
					t.Fatalf("a heading-based result was kept: %s (%d calls)", out2, len(srv.Calls()))
				}
				return
			}
			if !res2.Cached || len(srv.Calls()) != tt.wantCalls || res2.MustCount != res.MustCount {
				t.Fatalf("second run not cached: %s", out2)
			}
			// After seven days the cache entry has expired.
			s.Now = func() time.Time { return time.Now().Add(8 * 24 * time.Hour) }
			s.Eligibility(withJob(3), mustJSON(FileInput{Path: md}), job.Discard)
			if len(srv.Calls()) == tt.wantCalls {
				t.Fatal("an expired cache entry was used")
			}
		})
	}
}

func TestEligibilityMinimalLevel(t *testing.T) {
	md := filepath.Join(t.TempDir(), "plain.md")
	os.WriteFile(md, []byte("見出しのない文章です。"), 0o600)
	srv := aitest.NewOpenAI(t, func(aitest.Call) aitest.Step { return aitest.Step{Text: "[]"} })
	s := newTestService(t, local(srv))
	_, err := s.Eligibility(withJob(1), mustJSON(FileInput{Path: md}), job.Discard)
	var partial *job.PartialResult
	if !errors.As(err, &partial) {
		t.Fatalf("err %v", err)
	}
	var res EligibilityResult
	json.Unmarshal(partial.Result, &res)
	if res.FallbackLevel != LevelMinimal || res.MissingKeysCount != len(EligibilityKeys) || res.NeedCheckCount != 1 {
		t.Fatalf("%s", partial.Result)
	}
}

func TestChartLayout(t *testing.T) {
	g := Goal{Title: "G"}
	for i := 1; i <= 8; i++ {
		sg := Subgoal{Position: i, Title: fmt.Sprint("S", i)}
		for j := 1; j <= 8; j++ {
			sg.Actions = append(sg.Actions, Action{Position: j, Title: fmt.Sprintf("A%d%d", i, j)})
		}
		g.Subgoals = append(g.Subgoals, sg)
	}
	c := g.Chart()
	checks := map[[2]int]string{{4, 4}: "G", {3, 3}: "S1", {3, 4}: "S2", {5, 3}: "S7", {4, 3}: "S8", {1, 1}: "S1", {0, 0}: "A11", {1, 7}: "S3", {8, 8}: "A55", {7, 1}: "S7"}
	for at, want := range checks {
		if c[at[0]][at[1]] != want {
			t.Errorf("cell %v = %q, want %q", at, c[at[0]][at[1]], want)
		}
	}
	for i := range 9 {
		for j := range 9 {
			if c[i][j] == "" {
				t.Fatalf("cell %d,%d empty", i, j)
			}
		}
	}
}

// A handler waiting on a slow model keeps reporting (its heartbeat), so a workflow's
// HeartbeatSeconds does not end a generation that is merely slow.
func TestSlowGenerationKeepsHeartbeating(t *testing.T) {
	old := HeartbeatEvery
	HeartbeatEvery = 50 * time.Millisecond
	defer func() { HeartbeatEvery = old }()
	srv := aitest.NewOpenAI(t, func(c aitest.Call) aitest.Step {
		return aitest.Step{Text: aitest.Answer(c), Delay: 400 * time.Millisecond}
	})
	s := newTestService(t, local(srv))
	var p progressLog
	if _, err := s.Subgoals(withJob(1), mustJSON(GoalInput{Title: "遅いモデル"}), &p); err != nil {
		t.Fatal(err)
	}
	zeros := 0
	for _, v := range p.pct {
		if v == 0 {
			zeros++
		}
	}
	if zeros < 4 {
		t.Fatalf("progress %v: no heartbeats while waiting", p.pct)
	}
}

// Property 10: an alert is raised exactly when more than 10 % of the calls in the last five
// minutes failed, and only once per window.
func TestAlertThreshold(t *testing.T) {
	f := func(okN, failN uint8, old uint8) bool {
		s, db := newTestServiceDB(t, &OpenAI{})
		now := time.Now()
		s.Now = func() time.Time { return now }
		ins := func(ok int, at time.Time) {
			db.W.Exec(`INSERT INTO llm_usage(purpose, provider, model, ok, created_at) VALUES ('t','p','m',?,?)`, ok, at.UnixMilli())
		}
		for range int(okN % 40) {
			ins(1, now.Add(-time.Minute))
		}
		for range int(failN % 10) {
			ins(0, now.Add(-2*time.Minute))
		}
		for range int(old % 20) { // failures outside the window do not count
			ins(0, now.Add(-6*time.Minute))
		}
		total := int(okN%40) + int(failN%10)
		want := total > 0 && float64(failN%10) > 0.1*float64(total)
		got, err := s.CheckAlert(context.Background())
		again, _ := s.CheckAlert(context.Background())
		return err == nil && got == want && !again
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 40}); err != nil {
		t.Fatal(err)
	}
	if ShouldAlert(1, 10, 0.1) || !ShouldAlert(2, 10, 0.1) || ShouldAlert(0, 0, 0.1) {
		t.Fatal("boundary")
	}
}

// A busy service is not a reason to extract less: the error goes back to the queue (retried with
// backoff) and nothing is cached — and so when the call's own retries gave up on it (final, no
// longer retryable); refused credentials fail at once with E007.
func TestEligibilityErrorClasses(t *testing.T) {
	dir := t.TempDir()
	md := filepath.Join(dir, "guide.md")
	os.WriteFile(md, []byte(guideline), 0o600)
	for _, c := range []struct {
		status    int
		callRetry bool
		code      job.Code
		retryable bool
	}{{429, false, job.E002, true}, {503, false, job.E001, true}, {401, false, job.E007, false},
		{429, true, job.E002, false}, {503, true, job.E001, false}} {
		srv := aitest.NewOpenAI(t, func(aitest.Call) aitest.Step { return aitest.Step{Status: c.status} })
		s := newTestService(t, local(srv))
		if !c.callRetry {
			s.CallRetry = RetryPolicy{}
		}
		_, err := s.Eligibility(withJob(1), mustJSON(FileInput{Path: md}), job.Discard)
		je := job.AsError(err)
		if je == nil || je.Code != c.code || je.Retryable != c.retryable {
			t.Fatalf("HTTP %d (call retries %v): %v", c.status, c.callRetry, err)
		}
		if _, _, cached := CachedEligibilityOf(s, context.Background(), contentHash(t, md)); cached {
			t.Fatalf("HTTP %d: a result was cached", c.status)
		}
	}
}

func contentHash(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// CheckImage tells an image from anything else by its first bytes, with the coded error
// CAPTION_GENERATION fails with; an empty file says it is empty, in both languages.
func TestCheckImage(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, b, 0o600)
		return p
	}
	cases := []struct {
		path     string
		mime     string
		code     job.Code
		says, ja string
	}{
		{pngFile(t), "image/png", "", "", ""},
		{write("a.jpg", jpegBytes(t, 16, 9)), "image/jpeg", "", "", ""},
		{write("damaged.png", append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 64)...)), "", job.E004, "damaged.png is damaged", "壊れています"},
		{write("cut.jpg", []byte{0xFF, 0xD8, 0xFF, 0xDB, 0}), "", job.E004, "cut.jpg is damaged", "壊れています"},
		{write("wide.jpg", jpegBytes(t, MaxImageSide+1, 2)), "", job.E003, "8001 × 2 pixels", "一辺 8000 ピクセルまで"},
		{write("a.png", []byte("not an image")), "", job.E004, "not a PNG or JPEG image", "PNG または JPEG の画像ではありません"},
		{write("empty.png", nil), "", job.E004, "empty.png: the file is empty", "ファイルが空です"},
		{write("empty.jpg", nil), "", job.E004, "empty.jpg: the file is empty", "ファイルが空です"},
		{filepath.Join(dir, "missing.png"), "", job.E014, "cannot be read", "読み取れません"},
		{dir, "", job.E014, "cannot be read", "読み取れません"},
	}
	for _, c := range cases {
		mime, err := new(Service).CheckImage(context.Background(), c.path)
		je := job.AsError(err)
		if mime != c.mime || (c.code == "") != (je == nil) || (je != nil && (je.Code != c.code || je.Retryable ||
			!strings.Contains(je.Message, c.says) || !strings.Contains(je.MessageJa, c.ja))) {
			t.Errorf("%s: %q %+v, want %q %s %q", filepath.Base(c.path), mime, je, c.mime, c.code, c.says)
		}
	}
}

// A generation the user cancels neither fails the goal nor leaves it processing: it is a draft
// again (nothing was generated), with no failure notification.
func TestCancelledGenerationReturnsTheGoalToDraft(t *testing.T) {
	ctx, cancel := context.WithCancelCause(withJob(1))
	defer cancel(nil)
	srv := aitest.NewOpenAI(t, func(aitest.Call) aitest.Step {
		cancel(job.ErrUserCancel) // the user presses Cancel while the model is answering
		return aitest.Step{Hang: true}
	})
	s := newTestService(t, local(srv))
	if _, err := s.Subgoals(ctx, mustJSON(GoalInput{Title: "やめる目標"}), job.Discard); err == nil {
		t.Fatal("a cancelled generation succeeded")
	}
	gs, _ := s.ListGoals(context.Background())
	notes, _ := s.Notifications(context.Background())
	if len(gs) != 1 || gs[0].Status != "draft" || len(notes) != 0 {
		t.Fatalf("goals %+v, notifications %+v", gs, notes)
	}
}

// The handlers read their files by URI through the Service's blob store, so a file:// URI (and,
// with an S3 store in the Mux, an s3:// one) reads as a path does.
func TestHandlersReadFilesByURI(t *testing.T) {
	srv := aitest.NewOpenAI(t, nil)
	s := newTestService(t, local(srv))
	s.Blobs = blob.NewMux(blob.Local{})
	md := filepath.Join(t.TempDir(), "guide.md")
	os.WriteFile(md, []byte(guideline), 0o600)
	out, err := s.Eligibility(withJob(1), mustJSON(FileInput{Path: "file://" + filepath.ToSlash(md)}), job.Discard)
	var res EligibilityResult
	if err != nil || json.Unmarshal(out, &res) != nil || res.MustCount != 1 {
		t.Fatalf("eligibility: %v %s", err, out)
	}
	png := "file://" + filepath.ToSlash(pngFile(t))
	if mime, err := s.CheckImage(context.Background(), png); err != nil || mime != "image/png" {
		t.Fatalf("CheckImage: %q %v", mime, err)
	}
	if _, err := s.Caption(withJob(2), mustJSON(FileInput{Path: png}), job.Discard); err != nil {
		t.Fatalf("caption: %v", err)
	}
}

// Every Lambda function of the family is offered once to the registry, with the device options
// of a network-bound function.
func TestFunctionsForTheRegistry(t *testing.T) {
	s := newTestService(t, &OpenAI{})
	reg := functions.New(s.Functions()...)
	names := []string{FnSubgoals, FnActions, FnCaption, FnEligibility, FnTaskValidate, FnTaskBatches, FnTaskGenerate,
		FnTaskSave, FnTaskAggr, FnGoalStatus}
	if len(reg.Names()) != len(names) {
		t.Fatalf("registry %v", reg.Names())
	}
	for _, n := range names {
		f, ok := reg.Get(n)
		if !ok || !f.Options.Waits || f.Options.Concurrency != 24 || f.Options.Timeout != 20*time.Minute || f.Options.Visibility != time.Minute {
			t.Fatalf("%s: %v %+v", n, ok, f.Options)
		}
	}
}
