package cloudjobs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"jobdesk/app"
	"jobdesk/app/cli"
	"jobdesk/engine/blob"
	"jobdesk/engine/docjob"
	"jobdesk/engine/flow"
	"jobdesk/engine/functions"
	"jobdesk/engine/job"
	"jobdesk/sync/cloudconfig"
	"jobdesk/sync/cloudjobs"
	"jobdesk/sync/cloudworker"
	"jobdesk/sync/internal/awstest"
	"jobdesk/sync/internal/sfntest"
	"jobdesk/sync/s3blob"
)

// The service API on cloud jobs, end to end: an App whose cloud.json names versitygw and the Step
// Functions stand-in (endpoints from the SDK's own settings, as everywhere) runs a conversion with
// target cloud; Redrive, Retry and Cancel act on its Step Functions execution.

// Behaviours of the cloud's document-converter in these tests.
const (
	convertWorks    = iota
	convertFailOnce // the first Convert fails (a full disk): the execution FAILED at Convert
	convertBlocks   // Convert runs until it is stopped
)

type appCloud struct {
	a        *app.App
	dir      string
	sfn      *sfntest.Server
	s3       *awstest.S3
	mode     atomic.Int32
	ingests  atomic.Int64
	converts atomic.Int64
}

func newAppCloud(t *testing.T, mode int32) *appCloud {
	v := &appCloud{dir: t.TempDir()}
	v.mode.Store(mode)
	s3 := awstest.StartS3(t)
	v.s3 = s3
	cfg := cloudconfig.Config{Region: awstest.Region, Bucket: s3.Bucket, Prefix: "jd/"}
	mux := blob.NewMux(blob.Local{Root: t.TempDir()})
	mux.Handle("s3", s3blob.New(s3.NewClient(nil, recordS3(awstest.Function)), s3blob.Options{}))
	fns := cloudworker.StandInRegistry(mux, cloudjobs.Results(cfg), nil)
	real, _ := fns.Get(docjob.FunctionName)
	fns.Add(functions.Function{Name: real.Name, Options: real.Options,
		Handler: func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
			var p struct{ Mode string }
			json.Unmarshal(in, &p)
			switch p.Mode {
			case "ingest":
				v.ingests.Add(1)
			case "convert":
				n := v.converts.Add(1)
				switch v.mode.Load() {
				case convertFailOnce:
					if n == 1 {
						return nil, job.Errorf(job.E009, "the disk is full").WithJa("ディスクがいっぱいです。").Permanent()
					}
				case convertBlocks:
					<-ctx.Done()
					return nil, ctx.Err()
				}
			}
			return real.Handler(ctx, in, r)
		}})
	v.sfn = sfntest.StartWith(t, flow.Options{Blobs: mux, Buckets: []string{s3.Bucket}, Functions: fns}, machines(t, "csv-processing", "document-conversion"))
	cfg.StateMachines = map[string]string{"csv-processing": v.sfn.StateMachineARN("csv-processing"),
		"document-conversion": v.sfn.StateMachineARN("document-conversion")}
	if err := cloudconfig.Save(v.dir, cfg); err != nil {
		t.Fatal(err)
	}
	for _, kv := range s3.Env() {
		k, val, _ := strings.Cut(kv, "=")
		t.Setenv(k, val)
	}
	t.Setenv("AWS_ENDPOINT_URL_SFN", v.sfn.Endpoint)
	t.Setenv("AWS_CONFIG_FILE", os.DevNull)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", os.DevNull)
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	a, err := app.Open(app.Config{DataDir: v.dir, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	if err := a.StartEngine(context.Background()); err != nil {
		t.Fatal(err)
	}
	v.a = a
	return v
}

// submit submits a small text file for conversion in the cloud.
func (v *appCloud) submit(t *testing.T) job.Job {
	t.Helper()
	path := filepath.Join(t.TempDir(), "memo.txt")
	os.WriteFile(path, []byte("議事録\n\n本日の議題は予算です。\n"), 0o644)
	jobs, err := v.a.Submit(context.Background(), []string{path}, app.SubmitOptions{Type: "convert", Target: app.TargetCloud})
	if err != nil {
		t.Fatal(err)
	}
	if jobs[0].Target != job.TargetCloud {
		t.Fatalf("target %s", jobs[0].Target)
	}
	return jobs[0]
}

func (v *appCloud) wait(t *testing.T, id int64) job.Job {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	j, err := v.a.Wait(ctx, id)
	if err != nil {
		t.Fatalf("job %d: %v (%s %s)", id, err, j.Status, j.Message)
	}
	return j
}

// execution is the stand-in's own record of an execution.
func (v *appCloud) execution(t *testing.T, arn string) flow.Execution {
	t.Helper()
	x, err := v.sfn.Engine.DescribeExecution(context.Background(), arn)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func (v *appCloud) executions(t *testing.T) int {
	xs, _, err := v.sfn.Engine.ListExecutions(context.Background(), v.sfn.StateMachineARN("document-conversion"), "", 100, "")
	if err != nil {
		t.Fatal(err)
	}
	return len(xs)
}

// Redrive of a cloud job: RedriveExecution of its execution on Step Functions, which goes on from
// Convert (Ingest is not run again); the job waits for it and ends with its outcome.
func TestCloudRedrive(t *testing.T) {
	v := newAppCloud(t, convertFailOnce)
	ctx := context.Background()
	j := v.wait(t, v.submit(t).ID)
	if j.Status != job.Failed || j.Error == nil || j.Error.Code != job.E009 {
		t.Fatalf("first run: %s %+v", j.Status, j.Error)
	}
	ref, err := v.a.ExecutionOf(ctx, j.ID)
	if err != nil || !ref.Cloud || !strings.HasSuffix(ref.ARN, ":convert-"+itoa(j.ID)) {
		t.Fatalf("ExecutionOf: %+v %v", ref, err)
	}
	if x := v.execution(t, ref.ARN); x.Status != flow.StatusFailed {
		t.Fatalf("execution %s", x.Status)
	}
	// `jobdesk redrive ID` in a process of its own (no engine there): App.Redrive with clients of
	// its own.
	var out, errOut bytes.Buffer
	if code := cli.Main([]string{"--data-dir", v.dir, "redrive", itoa(j.ID)}, &out, &errOut); code != cli.ExitOK ||
		!strings.HasPrefix(out.String(), "job "+itoa(j.ID)+"\t") || !strings.Contains(out.String(), ref.ARN) {
		t.Fatalf("redrive: %d\n%s%s", code, &out, &errOut)
	}
	j = v.wait(t, j.ID)
	if j.Status != job.Succeeded {
		t.Fatalf("after the redrive: %s %s %+v", j.Status, j.Message, j.Error)
	}
	x := v.execution(t, ref.ARN)
	if x.Status != flow.StatusSucceeded || x.RedriveCount != 1 || v.executions(t) != 1 {
		t.Fatalf("execution %s, redriven %d times, %d executions", x.Status, x.RedriveCount, v.executions(t))
	}
	if v.ingests.Load() != 1 || v.converts.Load() != 2 {
		t.Fatalf("ingest ran %d times, convert %d; want 1 and 2", v.ingests.Load(), v.converts.Load())
	}
	if n := v.sfn.Count("RedriveExecution"); n != 1 {
		t.Fatalf("%d RedriveExecution calls", n)
	}
	var res docjob.Result
	if json.Unmarshal(j.Result, &res) != nil || !strings.HasPrefix(res.OutputPath, v.dir) {
		t.Fatalf("result %s", j.Result)
	}
	// Succeeded: nothing to redrive.
	var je *job.Error
	if _, err := v.a.Redrive(ctx, j.ID); !errors.As(err, &je) || je.Code != job.E014 {
		t.Fatalf("Redrive of a succeeded job: %v", err)
	}
}

// Retry of a cloud job: the orchestrator runs again and starts a new execution, <name>-j<id>,
// linked to the failed one through the job (its history names both); the failed one stays.
func TestCloudRetry(t *testing.T) {
	v := newAppCloud(t, convertFailOnce)
	ctx := context.Background()
	j := v.wait(t, v.submit(t).ID)
	if j.Status != job.Failed {
		t.Fatalf("first run: %s", j.Status)
	}
	old, _ := v.a.ExecutionOf(ctx, j.ID)
	r, err := v.a.Retry(ctx, j.ID)
	if err != nil || r.ID != j.ID {
		t.Fatalf("Retry: %+v %v", r, err)
	}
	if j = v.wait(t, j.ID); j.Status != job.Succeeded {
		t.Fatalf("after the retry: %s %s", j.Status, j.Message)
	}
	cur, err := v.a.ExecutionOf(ctx, j.ID)
	if err != nil || cur.ARN != old.ARN+"-j"+itoa(j.ID) {
		t.Fatalf("the retry's execution %s (the first %s): %v", cur.ARN, old.ARN, err)
	}
	if v.execution(t, old.ARN).Status != flow.StatusFailed || v.execution(t, cur.ARN).Status != flow.StatusSucceeded || v.executions(t) != 2 {
		t.Fatalf("executions after the retry: %d", v.executions(t))
	}
	if v.ingests.Load() != 2 || v.sfn.Count("RedriveExecution") != 0 {
		t.Fatalf("a retry runs from the start: ingest ran %d times", v.ingests.Load())
	}
	hist, _ := v.a.History(ctx, j.ID)
	var arns []string
	for _, e := range hist {
		if e.Kind == "CloudExecution" {
			arns = append(arns, e.Message)
		}
	}
	if len(arns) != 2 || arns[0] != old.ARN || arns[1] != cur.ARN {
		t.Fatalf("the job's history names %v", arns)
	}

	// The job's detail names the region, the execution, its page in the console and the input.
	d, err := v.a.CloudDetail(ctx, j.ID)
	if err != nil || d.Region != awstest.Region || d.ExecutionARN != cur.ARN || !strings.HasPrefix(d.InputURI, "s3://jobdesk-test/jd/inputs/") ||
		d.ConsoleURL != "https://us-east-1.console.aws.amazon.com/states/home?region=us-east-1#/v2/executions/details/"+cur.ARN {
		t.Fatalf("CloudDetail: %+v %v", d, err)
	}
	var out, errOut bytes.Buffer
	if code := cli.Main([]string{"--data-dir", v.dir, "show", itoa(j.ID)}, &out, &errOut); code != cli.ExitOK ||
		!strings.Contains(out.String(), "Execution") || !strings.Contains(out.String(), cur.ARN) ||
		!strings.Contains(out.String(), d.ConsoleURL) || !strings.Contains(out.String(), d.InputURI) || !strings.Contains(out.String(), "us-east-1") {
		t.Fatalf("show: %d\n%s%s", code, &out, &errOut)
	}
	out.Reset()
	var shown struct {
		ID    int64
		Cloud app.CloudDetail
	}
	if code := cli.Main([]string{"--data-dir", v.dir, "show", "--json", itoa(j.ID)}, &out, &errOut); code != cli.ExitOK ||
		json.Unmarshal(out.Bytes(), &shown) != nil || shown.ID != j.ID || shown.Cloud != d {
		t.Fatalf("show --json: %d\n%s%s", code, &out, &errOut)
	}
	// flow history takes the job number of a cloud job too: the execution's events, as Step
	// Functions names them.
	out.Reset()
	if code := cli.Main([]string{"--data-dir", v.dir, "flow", "history", itoa(j.ID)}, &out, &errOut); code != cli.ExitOK ||
		!strings.Contains(out.String(), "ExecutionSucceeded") || !strings.Contains(out.String(), "name=Convert") {
		t.Fatalf("flow history: %d\n%s%s", code, &out, &errOut)
	}
}

// Cancel of a running cloud job through the service API: the dispatcher stops its execution
// (StopExecution) on its beat; the execution ends ABORTED and the job CANCELLED.
func TestCloudCancel(t *testing.T) {
	v := newAppCloud(t, convertBlocks)
	ctx := context.Background()
	j := v.submit(t)
	deadline := time.Now().Add(time.Minute)
	for v.converts.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	ref, err := v.a.ExecutionOf(ctx, j.ID)
	if err != nil {
		t.Fatalf("no execution while converting: %v", err)
	}
	if err := v.a.Cancel(ctx, j.ID); err != nil {
		t.Fatal(err)
	}
	if j = v.wait(t, j.ID); j.Status != job.Cancelled {
		t.Fatalf("after Cancel: %s %s", j.Status, j.Message)
	}
	if x := v.execution(t, ref.ARN); x.Status != flow.StatusAborted {
		t.Fatalf("execution %s after the cancel", x.Status)
	}
	if n := v.sfn.Count("StopExecution"); n != 1 {
		t.Fatalf("%d StopExecution calls", n)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// --target reaches the cloud from every command that makes a job: generate, caption,
// extract-eligibility (and the window's goal, App.SubmitGoal), and flow start.
func TestTargetOnEveryCommand(t *testing.T) {
	v := newAppCloud(t, convertWorks)
	ctx := context.Background()
	run := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := cli.Main(append([]string{"--data-dir", v.dir}, args...), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	n := 0
	for _, cmd := range []func(target string) []string{
		func(target string) []string {
			return []string{"generate", "subgoals", "--title", "クラウドで生成 " + target, "--target", target, "--json"}
		},
		func(target string) []string { // a new image each time: the same bytes return the job that has them
			n++
			img := filepath.Join(t.TempDir(), "photo.png")
			pngFile(t, img, n)
			return []string{"caption", img, "--target", target, "--json"}
		},
		func(target string) []string {
			md := filepath.Join(t.TempDir(), "notice.md")
			os.WriteFile(md, []byte("# 募集要項 "+target+"\n\n対象: 中小企業\n"), 0o644)
			return []string{"extract-eligibility", md, "--target", target, "--json"}
		},
	} {
		// cloud goes to the cloud; auto keeps small inputs on the device; a bad value is a usage
		// error.
		for target, want := range map[string]string{"cloud": job.TargetCloud, "auto": job.TargetDevice} {
			args := cmd(target)
			code, out, errOut := run(args...)
			var j job.Job
			if code != cli.ExitOK || json.Unmarshal([]byte(out), &j) != nil || j.Target != want {
				t.Fatalf("%v: %d %s %s", args, code, out, errOut)
			}
		}
		args := cmd("moon")
		if code, _, errOut := run(args...); code != cli.ExitUsage || !strings.Contains(errOut, "device, cloud or auto") {
			t.Fatalf("%v: %d %s", args, code, errOut)
		}
	}
	g, err := v.a.SubmitGoal(ctx, app.GoalRequest{Title: "窓から", Target: app.TargetCloud})
	if err != nil || g.Target != job.TargetCloud {
		t.Fatalf("SubmitGoal: %+v %v", g, err)
	}

	// flow start --target cloud: the deployed state machine runs it, on an object where the
	// stack's functions may read (PREFIXinputs/).
	if _, err := v.s3.Client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(v.s3.Bucket), Key: aws.String("jd/inputs/by-hand/memo.txt"),
		Body: strings.NewReader("議事録\n")}); err != nil {
		t.Fatal(err)
	}
	in := `{"path":"s3://` + v.s3.Bucket + `/jd/inputs/by-hand/memo.txt","force":false,"furigana":false,"no_ocr":false,"max_pages":0}`
	code, out, errOut := run("flow", "start", "document-conversion", "--target", "cloud", "--input", in, "--name", "by-hand", "--wait", "--json")
	var x struct{ ExecutionArn, Status, Target string }
	if code != cli.ExitOK || json.Unmarshal([]byte(out), &x) != nil || x.Status != "SUCCEEDED" ||
		x.ExecutionArn != strings.Replace(v.sfn.StateMachineARN("document-conversion"), ":stateMachine:", ":execution:", 1)+":by-hand" {
		t.Fatalf("flow start --target cloud: %d %s %s", code, out, errOut)
	}
	if v.execution(t, x.ExecutionArn).Status != flow.StatusSucceeded {
		t.Fatal("the stand-in did not run it")
	}
	if code, _, errOut = run("flow", "start", "no-such-workflow", "--target", "cloud"); code == cli.ExitOK || !strings.Contains(errOut, "state_machines") {
		t.Fatalf("flow start of a workflow the cloud lacks: %d %s", code, errOut)
	}
}

// pngFile writes a small PNG image.
func pngFile(t *testing.T, path string, size int) {
	t.Helper()
	m := image.NewRGBA(image.Rect(0, 0, size, size))
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := png.Encode(f, m); err != nil {
		t.Fatal(err)
	}
}
