package cloudjobs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"jobdesk/engine/blob"
	"jobdesk/engine/csvjob"
	"jobdesk/engine/csvjob/csvtest"
	"jobdesk/engine/docjob"
	"jobdesk/engine/flow"
	"jobdesk/engine/functions"
	"jobdesk/engine/job"
	"jobdesk/engine/queue"
	"jobdesk/sync/awserr"
	"jobdesk/sync/cloudconfig"
	"jobdesk/sync/cloudjobs"
	"jobdesk/sync/cloudworker"
	"jobdesk/sync/dispatch"
	"jobdesk/sync/internal/awstest"
	"jobdesk/sync/internal/faultproxy"
	"jobdesk/sync/internal/sfntest"
	"jobdesk/sync/s3blob"
	"jobdesk/sync/sfnexec"
)

// The network between the device and each cloud server fails in every way the fault proxy
// knows — a request dropped half sent, an answer lost, a blackhole for 10 s, 500, 503 and
// throttling answers — while a CSV job and a conversion are uploading and starting, and again
// while they wait for their executions and bring their results home. Each time the jobs wait
// PENDING with the offline message and, once the network is back, end exactly as an undisturbed
// run does, with one execution each on the stand-in. Permission errors (a missing bucket, keys
// versitygw refuses) fail at once with E010.

// faultCloud is versitygw and the Step Functions stand-in (whose functions reach versitygw
// directly, as Lambda reaches S3 inside AWS) with a fault proxy in front of each for the devices.
type faultCloud struct {
	s3       *awstest.S3
	sfn      *sfntest.Server
	s3Proxy  *faultproxy.Proxy
	sfnProxy *faultproxy.Proxy
	cfg      cloudconfig.Config
	// gate, when set, holds every cloud function until it is closed: the executions stay RUNNING.
	gate atomic.Pointer[chan struct{}]
	// nextID spaces the job ids of the devices, so that "convert-<job id>" names one execution
	// per device on the shared stand-in.
	nextID atomic.Int64
}

func newFaultCloud(t *testing.T) *faultCloud {
	f := &faultCloud{s3: awstest.StartS3(t)}
	f.cfg = cloudconfig.Config{Bucket: f.s3.Bucket, Prefix: "jd/"}
	mux := blob.NewMux(blob.Local{Root: t.TempDir()})
	mux.Handle("s3", s3blob.New(f.s3.Client, s3blob.Options{}))
	reg := functions.New()
	for _, fn := range cloudworker.StandInRegistry(mux, cloudjobs.Results(f.cfg), nil).All() {
		h := fn.Handler
		fn.Handler = func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
			if g := f.gate.Load(); g != nil {
				select {
				case <-*g:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return h(ctx, in, r)
		}
		reg.Add(fn)
	}
	f.sfn = sfntest.StartWith(t, flow.Options{Blobs: mux, Buckets: []string{f.s3.Bucket}, Functions: reg}, machines(t, "csv-processing", "document-conversion"))
	f.cfg.StateMachines = map[string]string{"csv-processing": f.sfn.StateMachineARN("csv-processing"),
		"document-conversion": f.sfn.StateMachineARN("document-conversion")}
	f.s3Proxy = faultproxy.Start(t, f.s3.Endpoint)
	f.sfnProxy = faultproxy.Start(t, f.sfn.Endpoint)
	return f
}

// hold makes the cloud's functions wait until releaseAll.
func (f *faultCloud) hold() {
	g := make(chan struct{})
	f.gate.Store(&g)
}

// callTimeout bounds one call of a device's clients, so that a blackhole costs seconds.
const callTimeout = 2 * time.Second

// device is a new data folder whose dispatcher reaches the cloud through the proxies, with
// clients as the app builds them (dispatch.HTTPClient) but shorter timeouts; edit changes its
// Cloud before it starts.
func (f *faultCloud) device(t *testing.T, edit func(*dispatch.Cloud)) *cloud {
	v := &cloud{folder: newFolder(t), s3: f.s3, sfn: f.sfn}
	v.offsetIDs(t, f.nextID.Add(1000))
	s3c := f.s3.NewClient(dispatch.HTTPClient(callTimeout), func(o *s3.Options) {
		o.BaseEndpoint = aws.String(f.s3Proxy.URL())
		o.RetryMaxAttempts = 2
	})
	sfnc := sfntest.NewClient(f.sfnProxy.URL(), func(o *sfn.Options) {
		o.HTTPClient = dispatch.HTTPClient(callTimeout)
		o.RetryMaxAttempts = 2
	})
	v.c = &dispatch.Cloud{Config: f.cfg, Blobs: s3blob.New(s3c, s3blob.Options{}),
		Exec: sfnexec.New(sfnc, sfnexec.Options{StateMachines: f.cfg.StateMachines, MinPoll: 20 * time.Millisecond, MaxPoll: 200 * time.Millisecond})}
	if edit != nil {
		edit(v.c)
	}
	d := dispatch.New(v.q, v.c, dispatch.Options{Handlers: cloudjobs.Handlers(cloudjobs.HandlerSet{DataDir: v.dir, DB: v.db, Queue: v.q}),
		Backoff: queue.Backoff{Base: 50 * time.Millisecond, Factor: 2, Max: 300 * time.Millisecond, Jitter: 0.2}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); d.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return v
}

// offsetIDs makes the folder's next job id base+1.
func (f *folder) offsetIDs(t *testing.T, base int64) {
	j, _, err := f.q.Enqueue(context.Background(), queue.Params{Type: "placeholder", Input: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.W.Exec(`UPDATE jobs SET id = ?, status = 'CANCELLED' WHERE id = ?`, base, j.ID); err != nil {
		t.Fatal(err)
	}
}

// pair is a CSV job and a conversion submitted together.
type pair struct {
	csv, doc  job.Job
	csvPath   string
	zipPath   string
	csvSHA256 string
}

var fileSeq atomic.Int64

func (v *cloud) submitPair(t *testing.T, dir string, rows int) pair {
	// A name of its own: the CSV execution's name is the file's and the time to the second.
	name := fmt.Sprintf("users-log-%d.csv", fileSeq.Add(1))
	p := pair{csvPath: writeCSV(t, dir, name, csvtest.EncUTF8, rows), zipPath: writeZip(t, dir, 4)}
	p.csvSHA256, _ = csvjob.FileSHA256(context.Background(), p.csvPath)
	p.csv = v.submit(t, cloudjobs.TypeCSV, p.csvPath, map[string]any{"path": p.csvPath, "sha256": p.csvSHA256})
	p.doc = v.submit(t, cloudjobs.TypeConvert, p.zipPath, docjob.Input{Path: p.zipPath})
	return p
}

// waitFor waits until ok(job) or fails the test after within.
func (v *cloud) waitFor(t *testing.T, id int64, within time.Duration, what string, ok func(job.Job) bool) job.Job {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		j, err := v.q.Get(context.Background(), id)
		if err == nil && ok(j) {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %d is %s %q %v, not %s after %v", id, j.Status, j.Message, j.Error, what, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func offline(j job.Job) bool { return j.Status == job.Pending && j.Message == awserr.OfflineJa }

// outcome is what a pair ended with, without what differs by nature between two runs.
type outcome struct {
	csvStatus, docStatus job.Status
	summary              string
	users                string
	errorsCSV, markdown  string
}

func (v *cloud) outcome(t *testing.T, p pair) outcome {
	t.Helper()
	c, _ := v.q.Get(context.Background(), p.csv.ID)
	d, _ := v.q.Get(context.Background(), p.doc.ID)
	var sum csvjob.Summary
	json.Unmarshal(c.Result, &sum)
	var res docjob.Result
	json.Unmarshal(d.Result, &res)
	o := outcome{csvStatus: c.Status, docStatus: d.Status, users: users(t, v.db)}
	s := comparable(sum, v.dir)
	s.ExecutionID, s.Source, s.OutputKey, s.OutputBucket, s.UsersFile = "", "", "", "", ""
	s.ErrorsCSV, s.ReportXLSX = filepath.Base(s.ErrorsCSV), filepath.Base(s.ReportXLSX)
	o.summary = fmt.Sprintf("%+v", s)
	if b, err := os.ReadFile(sum.ErrorsCSV); err == nil {
		o.errorsCSV = string(b)
	}
	if b, err := os.ReadFile(res.OutputPath); err == nil {
		o.markdown = string(b)
	}
	return o
}

// executionsOf counts the stand-in's executions of the pair: exactly one each is right.
// Executions under the names the orchestrator moves on to when a name is taken count too.
func (f *faultCloud) executionsOf(t *testing.T, v *cloud, p pair) (csvRuns, docRuns int) {
	t.Helper()
	c, _ := v.q.Get(context.Background(), p.csv.ID)
	for wf, name := range map[string]string{"csv-processing": csvjob.ExecutionName(p.csvPath, c.CreatedAt),
		"document-conversion": fmt.Sprintf("convert-%d", p.doc.ID)} {
		id := map[string]int64{"csv-processing": p.csv.ID, "document-conversion": p.doc.ID}[wf]
		xs, _, err := f.sfn.Engine.ListExecutions(context.Background(), f.sfn.StateMachineARN(wf), "", 10000, "")
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, x := range xs {
			if sameJobName(x.Name, name, id) {
				n++
			}
		}
		if wf == "csv-processing" {
			csvRuns = n
		} else {
			docRuns = n
		}
	}
	return
}

// S3's own error answers (XML), as versitygw and AWS send them.
var (
	s3SlowDown = faultproxy.Answer{Code: 503, Headers: map[string]string{"Content-Type": "application/xml"},
		Body: `<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>`}
	s3Internal = faultproxy.Answer{Code: 500, Headers: map[string]string{"Content-Type": "application/xml"},
		Body: `<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code><Message>We encountered an internal error.</Message></Error>`}
	s3Unavailable = faultproxy.Answer{Code: 503, Headers: map[string]string{"Content-Type": "application/xml"},
		Body: `<?xml version="1.0" encoding="UTF-8"?><Error><Code>ServiceUnavailable</Code><Message>Service is unable to handle request.</Message></Error>`}
)

type fault struct {
	name string
	// hold is how long the fault lasts once every job waits offline.
	hold time.Duration
	set  func(p *faultproxy.Proxy, s3 bool)
}

var faults = []fault{
	{"dropped mid-request", 0, func(p *faultproxy.Proxy, _ bool) { p.Set(faultproxy.DropHalf) }},
	{"answer lost", 0, func(p *faultproxy.Proxy, _ bool) { p.Set(faultproxy.DropReply) }},
	{"blackhole 10s", 10 * time.Second, func(p *faultproxy.Proxy, _ bool) { p.Set(faultproxy.Blackhole) }},
	{"500", 0, func(p *faultproxy.Proxy, s3 bool) {
		p.SetAnswer(map[bool]faultproxy.Answer{true: s3Internal, false: faultproxy.InternalError}[s3])
	}},
	{"503", 0, func(p *faultproxy.Proxy, s3 bool) {
		p.SetAnswer(map[bool]faultproxy.Answer{true: s3Unavailable, false: faultproxy.Unavailable}[s3])
	}},
	{"throttled", 0, func(p *faultproxy.Proxy, s3 bool) {
		p.SetAnswer(map[bool]faultproxy.Answer{true: s3SlowDown, false: faultproxy.Throttling}[s3])
	}},
}

func TestFaultsInFrontOfEveryServer(t *testing.T) {
	if testing.Short() {
		t.Skip("dozens of cloud runs, four of them with a 10 s blackhole")
	}
	f := newFaultCloud(t)
	const rows = 3000

	// The undisturbed run every faulty one must match.
	base := f.device(t, nil)
	bp := base.submitPair(t, t.TempDir(), rows)
	base.wait(t, bp.csv.ID)
	base.wait(t, bp.doc.ID)
	want := base.outcome(t, bp)
	if want.csvStatus != job.Partial || want.docStatus != job.Succeeded || want.users == "" || want.errorsCSV == "" || want.markdown == "" {
		t.Fatalf("undisturbed run: %+v", want)
	}

	for _, server := range []string{"S3", "Step Functions"} {
		for _, phase := range []string{"upload and start", "wait and results home"} {
			for _, fl := range faults {
				t.Run(server+"/"+phase+"/"+fl.name, func(t *testing.T) {
					proxy, isS3 := f.sfnProxy, server == "S3"
					if isS3 {
						proxy = f.s3Proxy
					}
					defer proxy.Set(faultproxy.Pass)
					v := f.device(t, nil)
					var p pair
					if phase == "upload and start" {
						fl.set(proxy, isS3)
						p = v.submitPair(t, t.TempDir(), rows)
					} else {
						f.hold()
						starts := f.sfn.Count("StartExecution")
						p = v.submitPair(t, t.TempDir(), rows)
						deadline := time.Now().Add(30 * time.Second)
						for f.sfn.Count("StartExecution") < starts+2 && time.Now().Before(deadline) {
							time.Sleep(10 * time.Millisecond)
						}
						fl.set(proxy, isS3)
						if isS3 {
							f.releaseAll() // the executions end; their results cannot come home
						} // else the executions run on; the device cannot see them
					}
					// A job that cannot reach the cloud waits PENDING with the offline message
					// and tries again and again; one that waits for its execution keeps
					// polling. Neither ends while the network is down.
					if phase == "upload and start" || isS3 {
						for _, id := range []int64{p.csv.ID, p.doc.ID} {
							v.waitFor(t, id, 30*time.Second, "waiting offline", offline)
						}
					}
					for end := time.Now().Add(max(fl.hold, time.Second)); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
						for _, id := range []int64{p.csv.ID, p.doc.ID} {
							if j, _ := v.q.Get(context.Background(), id); j.Status.Final() {
								t.Fatalf("job %d ended %s while the network was down: %q %v", id, j.Status, j.Message, j.Error)
							}
						}
					}
					proxy.Set(faultproxy.Pass)
					f.releaseAll()
					v.wait(t, p.csv.ID)
					v.wait(t, p.doc.ID)
					if got := v.outcome(t, p); got != want {
						t.Fatalf("the run differs from the undisturbed one:\ngot  %+v\nwant %+v", got, want)
					}
					if c, d := f.executionsOf(t, v, p); c != 1 || d != 1 {
						t.Fatalf("%d CSV and %d conversion executions, want 1 each", c, d)
					}
				})
			}
		}
	}
}

// releaseAll lets held functions go, if any are held.
func (f *faultCloud) releaseAll() {
	if g := f.gate.Swap(nil); g != nil {
		close(*g)
	}
}

// Permission errors fail at once, naming what to fix: a bucket that does not exist, and keys
// versitygw refuses.
func TestPermissionErrorsFailTheCloudJobsAtOnce(t *testing.T) {
	f := newFaultCloud(t)
	for _, c := range []struct {
		name string
		edit func(*dispatch.Cloud)
		want string
	}{
		{"missing bucket", func(c *dispatch.Cloud) { c.Config.Bucket = "no-such-bucket" }, "no-such-bucket"},
		{"wrong keys", func(c *dispatch.Cloud) {
			wrong := *f.s3
			wrong.Config = f.s3.Config.Copy()
			wrong.Config.Credentials = credentials.NewStaticCredentialsProvider(f.s3.AccessKey, "not-the-secret", "")
			c.Blobs = s3blob.New(wrong.NewClient(dispatch.HTTPClient(callTimeout)), s3blob.Options{})
		}, "refused the AWS credentials"}, // HEAD's bare 403 is not taken as the answer: the upload's own refusal says why
	} {
		t.Run(c.name, func(t *testing.T) {
			v := f.device(t, c.edit)
			p := v.submitPair(t, t.TempDir(), 100)
			for _, id := range []int64{p.csv.ID, p.doc.ID} {
				j := v.waitFor(t, id, 30*time.Second, "FAILED", func(j job.Job) bool { return j.Status.Final() })
				if j.Status != job.Failed || j.Attempts != 1 || j.Error == nil || j.Error.Code != job.E010 ||
					!strings.Contains(j.Error.Message, c.want) || j.Error.Retryable {
					t.Fatalf("job %d %s after %d attempts: %+v", id, j.Status, j.Attempts, j.Error)
				}
			}
			if ca, d := f.executionsOf(t, v, p); ca != 0 || d != 0 {
				t.Fatalf("%d CSV and %d conversion executions started for failed uploads", ca, d)
			}
		})
	}
}

// sameJobName reports whether execution name is job id's execution named base: base itself, or
// one of the names the orchestrator moves on to when base is taken (base-j<id>, base-j<id>-2, …).
func sameJobName(name, base string, id int64) bool {
	j := fmt.Sprintf("%s-j%d", base, id)
	return name == base || name == j || strings.HasPrefix(name, j+"-")
}
