package dispatch_test

import (
	"context"
	"math/rand/v2"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"jobdesk/engine/job"
	"jobdesk/engine/queue"
	"jobdesk/engine/store"
	"jobdesk/internal/crashtest"
	"jobdesk/sync/cloudconfig"
	"jobdesk/sync/dispatch"
	"jobdesk/sync/internal/awstest"
	"jobdesk/sync/internal/sfntest"
	"jobdesk/sync/s3blob"
	"jobdesk/sync/sfnexec"
)

// The dispatching process is killed with SIGKILL again and again, at whatever step it is in
// (claiming, hashing, uploading, starting, waiting); each time a new one takes over the same data
// folder. In the end every job succeeded and the server holds exactly one execution per job.
func TestKilledDispatcherNeitherDuplicatesNorLoses(t *testing.T) {
	v := newEnv(t, false)
	v.delay = 400 * time.Millisecond
	const n = 12
	ids := v.submit(t, n)
	countDone := func() int {
		done := 0
		for _, id := range ids {
			if j, _ := v.q.Get(context.Background(), id); j.Status.Final() {
				done++
			}
		}
		return done
	}
	// The children's commits, as ExternalChange events, from before the first child starts.
	changes, stop := v.q.Watch(0)
	defer stop()
	rng := rand.New(rand.NewPCG(1, 2))
	kills := 0
	for round := 0; round < 40; round++ {
		cmd := crashtest.Command(context.Background(), "TestKilledDispatcherChild", v.dir)
		cmd.Env = append(cmd.Env, "DISPATCH_S3="+v.s3.Endpoint, "DISPATCH_BUCKET="+v.s3.Bucket,
			"DISPATCH_SFN="+v.sfn.Endpoint, "DISPATCH_ARN="+v.sfn.StateMachineARN("wf"))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := countDone()
		if (done == n && round >= 8) || round == 39 {
			// Let the last one finish the work: re-read the jobs at each of its commits, for up
			// to a minute.
			timeout := time.NewTimer(60 * time.Second)
		wait:
			for done < n {
				select {
				case <-changes:
				case <-timeout.C:
					break wait
				}
				done = countDone()
			}
			timeout.Stop()
			cmd.Process.Kill()
			cmd.Wait()
			break
		}
		time.Sleep(time.Duration(30+rng.IntN(300)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		kills++
	}
	for _, id := range ids {
		j, _ := v.q.Get(context.Background(), id)
		if j.Status != job.Succeeded {
			t.Fatalf("job %d %s %q %v", id, j.Status, j.Message, j.Error)
		}
	}
	if got := v.executions(t); got != n {
		t.Fatalf("%d executions for %d jobs after %d kills", got, n, kills)
	}
	t.Logf("%d jobs, %d kills, %d StartExecution calls, %d executions", n, kills, v.sfn.Count("StartExecution"), n)
}

// TestKilledDispatcherChild is the dispatching process TestKilledDispatcherNeitherDuplicatesNorLoses
// starts, again and again, on its data folder.
func TestKilledDispatcherChild(t *testing.T) {
	dir := crashtest.Child(t, "TestKilledDispatcherNeitherDuplicatesNorLoses")
	db, err := store.OpenDir(dir, queue.Migrations)
	if err != nil {
		t.Fatal(err)
	}
	q, err := queue.Open(db, queue.Options{DataDir: dir, WatchInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	s3srv := &awstest.S3{Endpoint: os.Getenv("DISPATCH_S3"), AccessKey: "jobdesk-test", SecretKey: "jobdesk-test-secret", Region: awstest.Region}
	s3srv.Config = awsConfig(s3srv)
	cfg := cloudconfig.Config{Bucket: os.Getenv("DISPATCH_BUCKET"), Prefix: "jd/", StateMachines: map[string]string{"wf": os.Getenv("DISPATCH_ARN")}}
	cloud := &dispatch.Cloud{Config: cfg, Blobs: s3blob.New(s3srv.NewClient(nil), s3blob.Options{}),
		Exec: sfnexec.New(sfntest.NewClient(os.Getenv("DISPATCH_SFN")), sfnexec.Options{StateMachines: cfg.StateMachines,
			MinPoll: 20 * time.Millisecond, MaxPoll: 100 * time.Millisecond})}
	d := dispatch.New(q, cloud, dispatch.Options{Handlers: map[string]dispatch.Handler{jobType: handler},
		Visibility: 2 * time.Second, Backoff: queue.Backoff{Base: 50 * time.Millisecond, Factor: 2, Max: 300 * time.Millisecond}})
	d.Run(context.Background())
}

func awsConfig(s *awstest.S3) aws.Config {
	return aws.Config{Region: s.Region, Credentials: credentials.NewStaticCredentialsProvider(s.AccessKey, s.SecretKey, "")}
}
