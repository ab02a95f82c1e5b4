package cloudjobs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"jobdesk/engine/csvjob"
	"jobdesk/engine/csvjob/csvsqlite"
	"jobdesk/engine/csvjob/csvtest"
	"jobdesk/engine/docjob"
	"jobdesk/engine/docjob/docsqlite"
	"jobdesk/engine/flow"
	"jobdesk/engine/job"
	"jobdesk/engine/queue"
	"jobdesk/engine/store"
	"jobdesk/internal/crashtest"
	"jobdesk/sync/cloudconfig"
	"jobdesk/sync/cloudjobs"
	"jobdesk/sync/dispatch"
	"jobdesk/sync/internal/awstest"
	"jobdesk/sync/internal/sfntest"
	"jobdesk/sync/s3blob"
	"jobdesk/sync/sfnexec"
)

// The dispatching process — a child, this test binary run again — is killed with SIGKILL at
// each step of a cloud handler: with the upload begun, with the upload done, right after
// StartExecution, while it waits, with the results downloaded but not applied, and with them
// applied but the job not yet finished. A new child takes over the data folder until the job
// ends. Each time the job ends as an undisturbed run does — the same summary, result file and
// csv_users — with exactly one execution on the stand-in and no part of the upload sent twice
// (the parts go up one at a time, so none is in flight at the kill).

// Kill points, in the order a handler passes them.
const (
	killUploadStarted  = "upload-started"  // the first part stored (a single PutObject: sent, not answered)
	killUploadFinished = "upload-finished" // the input complete in S3
	killStarted        = "started"         // StartExecution answered
	killWaiting        = "waiting"         // the first DescribeExecution after the start answered
	killDownloaded     = "downloaded"      // the result files in the data folder, nothing applied
	killApplied        = "applied"         // the results applied to SQLite, the job not finished
)

var killPoints = []string{killUploadStarted, killUploadFinished, killStarted, killWaiting, killDownloaded, killApplied}

// partSize is the children's multipart part size (S3's smallest): the CSV goes up in parts.
const partSize = 5 << 20

func TestKilledAtEachStepEndsAsAnUndisturbedRun(t *testing.T) {
	if testing.Short() {
		t.Skip("a dozen processes killed and restarted")
	}
	f := newFaultCloud(t)
	counter := awstest.StartCountingProxy(t, f.s3.Endpoint)
	inputs := t.TempDir()
	csvPath := writeBigCSV(t, inputs)
	zipPath := writeZip(t, inputs, 6)
	for _, typ := range []string{cloudjobs.TypeCSV, cloudjobs.TypeConvert} {
		t.Run(typ, func(t *testing.T) {
			path := map[string]string{cloudjobs.TypeCSV: csvPath, cloudjobs.TypeConvert: zipPath}[typ]
			want := runKilled(t, f, counter, typ, path, "")
			t.Logf("undisturbed: %s, %d upload requests, %d executions, %d rows applied", want.Status, want.Parts, want.Starts, want.Applied)
			for _, point := range killPoints {
				t.Run(point, func(t *testing.T) {
					got := runKilled(t, f, counter, typ, path, point)
					if got != want {
						t.Fatalf("killed %s, the job ended otherwise than undisturbed:\ngot  %+v\nwant %+v", point, got, want)
					}
				})
			}
		})
	}
}

// writeBigCSV writes a CSV of a little more than two parts.
func writeBigCSV(t *testing.T, dir string) string {
	p := writeCSV(t, dir, "users-log.csv", csvtest.EncUTF8, 420_000)
	if st, err := os.Stat(p); err != nil || st.Size() <= partSize {
		t.Fatalf("the CSV is %d bytes, not more than a part", st.Size())
	}
	return p
}

// killOutcome is how a cloud job ended, without what differs by nature between two runs.
type killOutcome struct {
	Status  job.Status
	Result  string
	Users   string
	File    string // errors.csv, or the Markdown
	Kills   int
	Parts   int // UploadPart and PutObject requests of the input
	Starts  int // executions of the job on the stand-in
	Applied int // rows recording the job's results
}

// runKilled submits one job of typ on path in a new data folder and runs children, the first
// killed at point ("": none), until the job ends.
func runKilled(t *testing.T, f *faultCloud, counter *awstest.CountingProxy, typ, path, point string) killOutcome {
	t.Helper()
	v := &cloud{folder: newFolder(t), s3: f.s3, sfn: f.sfn}
	base := f.nextID.Add(1000)
	v.offsetIDs(t, base)
	if typ == cloudjobs.TypeCSV {
		// A name of its own: the CSV execution's name is the file's and the time to the second.
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		path = filepath.Join(t.TempDir(), fmt.Sprintf("users-log-%d.csv", base))
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Each run uploads the same bytes again: none are in the bucket before it.
	sha, _ := csvjob.FileSHA256(context.Background(), path)
	key := s3blob.InputKey(f.cfg.Prefix, sha, filepath.Base(path))
	f.s3.Client.DeleteObject(context.Background(), &s3.DeleteObjectInput{Bucket: &f.s3.Bucket, Key: &key})
	counter.Reset()

	var j job.Job
	if typ == cloudjobs.TypeCSV {
		j = v.submit(t, typ, path, map[string]any{"path": path, "sha256": sha})
	} else {
		j = v.submit(t, typ, path, docjob.Input{Path: path})
	}
	var o killOutcome
	deadline := time.Now().Add(3 * time.Minute)
	for round := 0; ; round++ {
		if round == 6 || time.Now().After(deadline) {
			t.Fatalf("job %d is not final after %d children", j.ID, round)
		}
		cmd := crashtest.Command(context.Background(), "TestKilledAtEachStepChild", v.dir)
		cmd.Env = append(cmd.Env, "KILL_AT="+point, "KILL_S3="+counter.URL,
			"KILL_BUCKET="+f.s3.Bucket, "KILL_SFN="+f.sfn.Endpoint,
			"KILL_CSV_ARN="+f.cfg.StateMachines["csv-processing"], "KILL_DOC_ARN="+f.cfg.StateMachines["document-conversion"])
		cmd.Stderr = os.Stderr
		// The job's events, and other processes' commits as ExternalChange, from before the start.
		events, stop := v.q.Watch(j.ID)
		if err := cmd.Start(); err != nil {
			stop()
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		timeout := time.NewTimer(time.Until(deadline))
		var err error
	watch:
		for {
			if j, _ = v.q.Get(context.Background(), j.ID); j.Status.Final() {
				cmd.Process.Kill()
				<-exited
				break watch
			}
			select {
			case err = <-exited:
				break watch
			case <-events:
			case <-timeout.C:
				cmd.Process.Kill()
				<-exited
				stop()
				t.Fatalf("job %d is %s, not final after %d children", j.ID, j.Status, round+1)
			}
		}
		timeout.Stop()
		stop()
		if j.Status.Final() {
			break
		}
		if !crashtest.Killed(err) {
			t.Fatalf("the child ended by itself: %v", err)
		}
		o.Kills++
	}
	if point != "" && o.Kills != 1 {
		t.Fatalf("killed %d times at %s, want once", o.Kills, point)
	}
	j, _ = v.q.Get(context.Background(), j.ID)
	o.Status, o.Users, o.Parts = j.Status, users(t, v.db), counter.Count("UploadPart", key)+counter.Count("PutObject", key)
	if typ == cloudjobs.TypeCSV {
		var sum csvjob.Summary
		json.Unmarshal(j.Result, &sum)
		b, _ := os.ReadFile(sum.ErrorsCSV)
		o.File = string(b)
		name := csvjob.ExecutionName(path, j.CreatedAt)
		o.Starts = executionsNamed(t, f, "csv-processing", name, j.ID)
		s := comparable(sum, v.dir)
		s.ExecutionID, s.Source, s.OutputKey, s.OutputBucket, s.UsersFile = "", "", "", "", ""
		s.ErrorsCSV, s.ReportXLSX = filepath.Base(s.ErrorsCSV), filepath.Base(s.ReportXLSX)
		o.Result = fmt.Sprintf("%+v", s)
		v.db.R.QueryRow(`SELECT count(*) FROM csv_imports WHERE job_id = ?`, j.ID).Scan(&o.Applied)
	} else {
		var res docjob.Result
		json.Unmarshal(j.Result, &res)
		b, _ := os.ReadFile(res.OutputPath)
		o.File = string(b)
		o.Starts = executionsNamed(t, f, "document-conversion", fmt.Sprintf("convert-%d", j.ID), j.ID)
		o.Result = fmt.Sprintf("%s %s pages=%d text=%d children=%d %s", res.Status, res.SHA256, res.PageCount, res.TextLength,
			len(res.Children), filepath.Base(res.OutputPath))
		v.db.R.QueryRow(`SELECT count(*) FROM docjob_results WHERE job_id = ?`, j.ID).Scan(&o.Applied)
	}
	if point != "" {
		o.Kills = 0 // compared with the undisturbed run
	}
	if o.Starts != 1 {
		t.Fatalf("%d executions of job %d", o.Starts, j.ID)
	}
	return o
}

// executionsNamed counts job id's executions of workflow named name on the stand-in.
func executionsNamed(t *testing.T, f *faultCloud, workflow, name string, id int64) int {
	xs, _, err := f.sfn.Engine.ListExecutions(context.Background(), f.sfn.StateMachineARN(workflow), "", 10000, "")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, x := range xs {
		if sameJobName(x.Name, name, id) {
			n++
		}
	}
	return n
}

// TestKilledAtEachStepChild is the dispatching process TestKilledAtEachStepEndsAsAnUndisturbedRun
// starts: the app's cloud handlers over the data folder, its clients watched by a killer that
// ends the process at KILL_AT, once per folder.
func TestKilledAtEachStepChild(t *testing.T) {
	dir := crashtest.Child(t, "TestKilledAtEachStepEndsAsAnUndisturbedRun")
	db, err := store.OpenDir(dir, queue.Migrations, flow.Migrations, csvsqlite.Migrations, docsqlite.Migrations)
	if err != nil {
		t.Fatal(err)
	}
	q, err := queue.Open(db, queue.Options{DataDir: dir, WatchInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	k := &killer{point: os.Getenv("KILL_AT"), marker: filepath.Join(dir, "killed-"+os.Getenv("KILL_AT"))}
	awsCfg := aws.Config{Region: awstest.Region, Credentials: credentials.NewStaticCredentialsProvider("jobdesk-test", "jobdesk-test-secret", "")}
	s3c := s3.NewFromConfig(awsCfg, func(o *s3.Options) {
		o.BaseEndpoint = aws.String(os.Getenv("KILL_S3"))
		o.UsePathStyle = true
		o.HTTPClient = k.client(dispatch.HTTPClient(10*time.Second), "s3")
	})
	cfg := cloudconfig.Config{Bucket: os.Getenv("KILL_BUCKET"), Prefix: "jd/", StateMachines: map[string]string{
		"csv-processing": os.Getenv("KILL_CSV_ARN"), "document-conversion": os.Getenv("KILL_DOC_ARN")}}
	sfnc := sfntest.NewClient(os.Getenv("KILL_SFN"), func(o *sfn.Options) { o.HTTPClient = k.client(dispatch.HTTPClient(10*time.Second), "sfn") })
	c := &dispatch.Cloud{Config: cfg, Blobs: s3blob.New(s3c, s3blob.Options{PartSize: partSize, Concurrency: 1}),
		Exec: sfnexec.New(sfnc, sfnexec.Options{StateMachines: cfg.StateMachines, MinPoll: 20 * time.Millisecond, MaxPoll: 100 * time.Millisecond})}
	handlers := cloudjobs.Handlers(cloudjobs.HandlerSet{DataDir: dir, DB: db, Queue: q})
	for typ, h := range handlers {
		handlers[typ] = func(ctx context.Context, c *dispatch.Cloud, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
			out, err := h(ctx, c, in, r)
			var partial *job.PartialResult
			if err == nil || errors.As(err, &partial) {
				k.at(killApplied)
			}
			return out, err
		}
	}
	d := dispatch.New(q, c, dispatch.Options{Handlers: handlers, Visibility: 2 * time.Second,
		Backoff: queue.Backoff{Base: 50 * time.Millisecond, Factor: 2, Max: 300 * time.Millisecond}})
	d.Run(context.Background())
}

// killer ends the process with SIGKILL when the handler reaches its point, the first time in a
// data folder (a marker file remembers it).
type killer struct {
	point   string
	marker  string
	started atomic.Bool // a StartExecution was answered in this process
}

func (k *killer) at(point string) {
	if point != k.point {
		return
	}
	if _, err := os.Stat(k.marker); err == nil {
		return
	}
	os.WriteFile(k.marker, nil, 0o644)
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}

type killClient struct {
	k       *killer
	next    aws.HTTPClient
	service string
}

func (k *killer) client(next aws.HTTPClient, service string) aws.HTTPClient {
	return killClient{k: k, next: next, service: service}
}

func (c killClient) Do(r *http.Request) (*http.Response, error) {
	op := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "AWSStepFunctions.")
	if c.service == "s3" {
		op = awstest.Operation(r)
	}
	input := strings.Contains(r.URL.Path, "/inputs/")
	if op == "PutObject" && input {
		c.k.at(killUploadStarted)
	}
	if op == "GetObject" && strings.HasSuffix(r.URL.Path, "/"+csvjob.UsersFile) {
		c.k.at(killDownloaded) // errors.csv and report.xlsx are home; the users are read into the transaction
	}
	resp, err := c.next.Do(r)
	if err != nil || resp.StatusCode >= 300 {
		return resp, err
	}
	switch {
	case op == "UploadPart":
		c.k.at(killUploadStarted)
	case op == "CompleteMultipartUpload" || (op == "PutObject" && input):
		c.k.at(killUploadFinished)
	case op == "StartExecution":
		c.k.started.Store(true)
		c.k.at(killStarted)
	case op == "DescribeExecution" && c.k.started.Load():
		c.k.at(killWaiting)
	case op == "GetObject" && strings.HasSuffix(r.URL.Path, ".md"):
		resp.Body = &atEOF{ReadCloser: resp.Body, eof: func() { c.k.at(killDownloaded) }}
	}
	return resp, err
}

// atEOF calls eof when its body has been read to the end.
type atEOF struct {
	io.ReadCloser
	eof func()
}

func (b *atEOF) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.eof()
	}
	return n, err
}
