package cloudjobs_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"jobdesk/assets"
	"jobdesk/engine/aijob"
	"jobdesk/engine/aijob/aisqlite"
	"jobdesk/engine/blob"
	"jobdesk/engine/csvjob/csvsqlite"
	"jobdesk/engine/docjob/docsqlite"
	"jobdesk/engine/flow"
	"jobdesk/engine/job"
	"jobdesk/engine/queue"
	"jobdesk/engine/store"
	"jobdesk/sync/cloudconfig"
	"jobdesk/sync/cloudjobs"
	"jobdesk/sync/cloudworker"
	"jobdesk/sync/dispatch"
	"jobdesk/sync/internal/awstest"
	"jobdesk/sync/internal/sfntest"
	"jobdesk/sync/s3blob"
	"jobdesk/sync/sfnexec"
)

// refusingModel is a model provider that refuses every call (a revoked key): the generation fails
// for good at once.
type refusingModel struct{}

func (refusingModel) Name() string  { return "openai" }
func (refusingModel) Model() string { return "test-model" }
func (refusingModel) Complete(context.Context, aijob.Request) (aijob.Reply, error) {
	return aijob.Reply{}, &aijob.ProviderError{Kind: aijob.KindAuth, Status: 403, Message: "the API key was revoked"}
}

// A generation that fails in the cloud ends on the device as one that fails on the device: the
// goal becomes failed and a local notification says why.
func TestCloudGenerationFailureFailsTheGoal(t *testing.T) {
	ctx := context.Background()
	f := &folder{dir: t.TempDir()}
	var err error
	f.db, err = store.OpenDir(f.dir, queue.Migrations, flow.Migrations, csvsqlite.Migrations, docsqlite.Migrations, aisqlite.Migrations)
	if err != nil {
		t.Fatal(err)
	}
	f.q, err = queue.Open(f.db, queue.Options{DataDir: f.dir, WatchInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.q.Close(); f.db.Close() })
	v := &cloud{folder: f, s3: awstest.StartS3(t)}
	s3 := s3blob.New(v.s3.Client, s3blob.Options{})
	cfg := cloudconfig.Config{Bucket: v.s3.Bucket, Prefix: "jd/"}
	mux := blob.NewMux(blob.Local{Root: t.TempDir()})
	mux.Handle("s3", s3)
	def, err := assets.Workflow("subgoal-generation")
	if err != nil {
		t.Fatal(err)
	}
	v.sfn = sfntest.StartWith(t, flow.Options{Blobs: mux, Buckets: []string{v.s3.Bucket},
		Functions: cloudworker.StandInRegistry(mux, cloudjobs.Results(cfg), refusingModel{})}, map[string]string{"subgoal-generation": string(def)})
	cfg.StateMachines = map[string]string{"subgoal-generation": v.sfn.StateMachineARN("subgoal-generation")}
	v.c = &dispatch.Cloud{Config: cfg, Blobs: s3,
		Exec: sfnexec.New(v.sfn.Client, sfnexec.Options{StateMachines: cfg.StateMachines, MinPoll: 20 * time.Millisecond, MaxPoll: 200 * time.Millisecond})}
	d := dispatch.New(v.q, v.c, dispatch.Options{Handlers: cloudjobs.Handlers(cloudjobs.HandlerSet{DataDir: v.dir, DB: v.db, Queue: v.q})})
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); d.Run(runCtx) }()
	t.Cleanup(func() { cancel(); <-done })

	st := aisqlite.New(v.db)
	gid, err := st.CreateGoal(ctx, "資格取得", "半年で合格する", "2027-01-31")
	if err != nil {
		t.Fatal(err)
	}
	j := v.wait(t, v.submit(t, aijob.TypeSubgoals, "goal", aijob.GoalInput{GoalID: gid}).ID)
	if j.Status != job.Failed {
		t.Fatalf("generation %s %s", j.Status, j.Message)
	}
	g, err := st.LoadGoal(ctx, gid)
	if err != nil || g.Status != "failed" {
		t.Fatalf("goal %q after the failed generation: %v", g.Status, err)
	}
	ns, err := aijob.NewService(st.State(), nil).Notifications(ctx)
	if err != nil || len(ns) != 1 || ns[0].GoalID != gid || ns[0].Level != "failed" || ns[0].JobID != j.ID ||
		!strings.Contains(ns[0].Message, "資格取得") {
		t.Fatalf("notifications %+v %v", ns, err)
	}
}
