package aisqlite

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"jobdesk/engine/aijob"
	"jobdesk/engine/aijob/aiblob"
	"jobdesk/engine/aijob/aitest"
	"jobdesk/engine/blob"
	"jobdesk/engine/job"
	"jobdesk/engine/store"
)

// A goal made on the device, seeded into the cloud's objects, generated there and brought home:
// the device ends with the cloud's tree and the calls' usage, and applying again changes nothing.
func TestApplyCloudResultOnce(t *testing.T) {
	ctx := context.Background()
	srv := aitest.NewOpenAI(t, nil)
	db, err := store.OpenDir(t.TempDir(), Migrations)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	st := New(db)
	gid, err := st.CreateGoal(ctx, "資格取得", "", "2027-01-31")
	if err != nil {
		t.Fatal(err)
	}
	device, _ := st.LoadGoal(ctx, gid)

	cloud := aiblob.New(blob.Local{}, t.TempDir())
	if err := cloud.Seed(ctx, device); err != nil {
		t.Fatal(err)
	}
	svc := aijob.NewService(cloud.State(), &aijob.OpenAI{Endpoint: srv.URL, ModelID: "test-model"})
	const cloudJob = 777
	in, _ := json.Marshal(aijob.GoalInput{GoalID: gid})
	if _, err := svc.Actions(job.WithInfo(ctx, job.Info{ID: cloudJob, Type: "lambda:ai-action-generation", Attempt: 1, MaxAttempts: 1}), in, job.Discard); err != nil {
		t.Fatal(err)
	}
	g, err := cloud.LoadGoal(ctx, gid)
	if err != nil || len(g.Actions()) != 64 {
		t.Fatalf("cloud goal: %v, %d actions", err, len(g.Actions()))
	}
	usage, err := cloud.UsageRecords(ctx, cloudJob)
	if err != nil || len(usage) == 0 {
		t.Fatalf("cloud usage: %v, %d records", err, len(usage))
	}
	const deviceJob = 5
	for i := range g.Subgoals {
		g.Subgoals[i].JobID = deviceJob
		for k := range g.Subgoals[i].Actions {
			g.Subgoals[i].Actions[k].JobID = deviceJob
		}
	}
	for round := 0; round < 2; round++ {
		applied, err := st.ApplyCloudResult(ctx, deviceJob, CloudResult{Goal: &g, Usage: usage})
		if err != nil || applied != (round == 0) {
			t.Fatalf("round %d: applied %v, %v", round, applied, err)
		}
		home, err := st.LoadGoal(ctx, gid)
		if err != nil {
			t.Fatal(err)
		}
		home.JobID = g.JobID
		if !reflect.DeepEqual(home, g) {
			t.Fatalf("round %d: home\n%+v\ncloud\n%+v", round, home, g)
		}
		u, err := st.JobUsage(ctx, deviceJob)
		if err != nil || u.Calls != len(usage) {
			t.Fatalf("round %d: usage %+v, %v; want %d calls", round, u, err, len(usage))
		}
	}
}
