package aiblob_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"jobdesk/engine/aijob"
	"jobdesk/engine/aijob/aiblob"
	"jobdesk/engine/aijob/aitest"
	"jobdesk/engine/blob"
	"jobdesk/engine/flow"
	"jobdesk/engine/job"
	"jobdesk/engine/queue"
	"jobdesk/engine/store"
)

func newService(t *testing.T, srv *aitest.Server) (*aijob.Service, *aiblob.Store) {
	st := aiblob.New(blob.Local{}, t.TempDir())
	s := aijob.NewService(st.State(), &aijob.OpenAI{Endpoint: srv.URL, ModelID: "test-model", Heartbeat: 2 * time.Second})
	s.CallRetry = aijob.RetryPolicy{Interval: 10 * time.Millisecond, MaxAttempts: 3, Backoff: 2}
	return s, st
}

// newDevice runs the AI jobs of s as the device runs them (aitest.Device); only the flow engine
// and the queue use a database, the AI state stays in s's objects.
func newDevice(t *testing.T, s *aijob.Service) *aitest.Device {
	dir := t.TempDir()
	db, err := store.OpenDir(dir, queue.Migrations, flow.Migrations)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return aitest.NewDevice(t, dir, db, s, nil)
}

func withJob(id int64) context.Context {
	return job.WithInfo(context.Background(), job.Info{ID: id, Type: "test", Attempt: 1, MaxAttempts: 3})
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// The whole goal chart through the family's handlers, state in objects only: 8 sub-goals, 64
// actions, the tasks of every action saved in parallel but five, whose generation fails (the
// task-generation workflow, run on the flow engine as on the device).
func TestGoalChartInObjects(t *testing.T) {
	srv := aitest.NewOpenAI(t, nil)
	s, _ := newService(t, srv)
	out, err := s.Subgoals(withJob(7), mustJSON(aijob.GoalInput{Title: "TOEIC 900点", Deadline: "2027-03-31"}), job.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var sr aijob.SubgoalResult
	json.Unmarshal(out, &sr)
	if sr.GoalID == 0 || len(sr.Subgoals) != 8 || sr.Subgoals[0].JobID != 7 || sr.Usage == nil || sr.Usage.Calls != 1 {
		t.Fatalf("sub-goals %s", out)
	}
	// Generating again keeps them.
	if _, err := s.Subgoals(withJob(8), mustJSON(aijob.GoalInput{GoalID: sr.GoalID}), job.Discard); err != nil || len(srv.Calls()) != 1 {
		t.Fatal(err, len(srv.Calls()))
	}
	if _, err := s.Actions(withJob(9), mustJSON(aijob.GoalInput{GoalID: sr.GoalID}), job.Discard); err != nil {
		t.Fatal(err)
	}
	g, err := s.LoadGoal(context.Background(), sr.GoalID)
	if err != nil || len(g.Actions()) != 64 {
		t.Fatalf("%d actions, %v", len(g.Actions()), err)
	}
	fail := map[string]bool{}
	failed := map[int64]bool{}
	for i, a := range g.Actions() {
		if i%13 == 0 {
			fail[a.Title] = true
			failed[a.ID] = true
		}
	}
	srv.SetScript(func(c aitest.Call) aitest.Step {
		if c.SchemaName == "tasks" {
			for title := range fail {
				if strings.Contains(c.Prompt, "アクション: "+title+"（") {
					return aitest.Step{Status: 400, Message: "bad request"}
				}
			}
		}
		return aitest.Step{Text: aitest.Answer(c)}
	})
	j := newDevice(t, s).Run(t, aijob.TypeTasks, aijob.GoalInput{GoalID: g.ID})
	if j.Status != job.Partial {
		t.Fatalf("job %s %v", j.Status, j.Error)
	}
	ng, err := s.LoadGoal(context.Background(), g.ID)
	if err != nil || ng.Status != "partial" {
		t.Fatalf("goal status %q, %v", ng.Status, err)
	}
	ids := map[int64]bool{}
	for _, a := range ng.Actions() {
		if failed[a.ID] != (len(a.Tasks) == 0) || failed[a.ID] != (a.Status == "failed") {
			t.Fatalf("action %d failed=%v: status %q, %d tasks", a.ID, failed[a.ID], a.Status, len(a.Tasks))
		}
		for _, task := range a.Tasks {
			if ids[task.ID] || task.JobID != j.ID {
				t.Fatalf("task %+v: duplicate id or wrong job", task)
			}
			ids[task.ID] = true
		}
	}
	notes, err := s.Notifications(context.Background())
	if err != nil || len(notes) != 1 || notes[0].Level != "partial" || notes[0].ID == 0 {
		t.Fatalf("notifications %+v %v", notes, err)
	}
	if gs, err := s.ListGoals(context.Background()); err != nil || len(gs) != 1 || gs[0].ID != g.ID {
		t.Fatalf("goals %+v %v", gs, err)
	}
	if u, err := s.JobUsage(context.Background(), j.ID); err != nil || u.Calls < 59 || u.Model != "test-model" {
		t.Fatalf("usage %+v %v", u, err)
	}
	if _, err := s.LoadGoal(context.Background(), 12345); !errors.Is(err, aijob.ErrGoalNotFound) {
		t.Fatalf("unknown goal: %v", err)
	}
}

func TestEligibilityCacheAndOutcomes(t *testing.T) {
	st := aiblob.New(blob.Local{}, t.TempDir())
	ctx := context.Background()
	at := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	hash := strings.Repeat("ab", 32)
	if _, ok, err := st.CachedEligibility(ctx, hash); ok || err != nil {
		t.Fatal(ok, err)
	}
	e := aijob.Eligibility{Must: []aijob.Item{{Key: "region", Text: "東京都"}}, MissingKeys: []string{"industry"}}
	if err := st.CacheEligibility(ctx, hash, aijob.CachedEligibility{Eligibility: e, Level: 1, At: at}); err != nil {
		t.Fatal(err)
	}
	c, ok, err := st.CachedEligibility(ctx, hash)
	if !ok || err != nil || c.Level != 1 || !c.At.Equal(at) || c.Eligibility.Must[0].Text != "東京都" {
		t.Fatalf("%+v %v %v", c, ok, err)
	}
	for i, okCall := range []bool{true, false, true} {
		if err := st.RecordUsage(ctx, aijob.UsageRecord{JobID: 3, Model: "m", OK: okCall, At: at.Add(time.Duration(i) * time.Minute)}); err != nil {
			t.Fatal(err)
		}
	}
	if failed, total, err := st.CallOutcomes(ctx, at, at.Add(time.Hour)); failed != 1 || total != 2 || err != nil {
		t.Fatalf("outcomes after the first call: %d/%d %v", failed, total, err)
	}
	st.Notify(ctx, aijob.Notification{Level: "alert", Title: "AI"}, at)
	if n, err := st.AlertsSince(ctx, at.Add(-time.Second)); n != 1 || err != nil {
		t.Fatal(n, err)
	}
	if n, _ := st.AlertsSince(ctx, at); n != 0 {
		t.Fatalf("an alert raised at t counted as after t")
	}
}
