package cloudjobs_test

import (
	"archive/zip"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"jobdesk/assets"
	"jobdesk/assets/deploy"
	"jobdesk/engine/aijob"
	"jobdesk/engine/aijob/aisqlite"
	"jobdesk/engine/blob"
	"jobdesk/engine/csvjob"
	"jobdesk/engine/csvjob/csvsqlite"
	"jobdesk/engine/csvjob/csvtest"
	"jobdesk/engine/docjob"
	"jobdesk/engine/docjob/docsqlite"
	"jobdesk/engine/flow"
	"jobdesk/engine/job"
	"jobdesk/engine/orchestrator"
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

// A CSV file and a ZIP of documents run with target cloud — uploaded to versitygw, run by the
// Step Functions stand-in whose functions read and write that bucket as the Lambda worker does —
// end with the same summary, result files and table contents as the same inputs run on the device.

// folder is a data folder with the families' tables.
type folder struct {
	dir string
	db  *store.DB
	q   *queue.Queue
}

func newFolder(t *testing.T) *folder {
	t.Helper()
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
	return f
}

// Every AWS call these tests make as the desktop (its clients come from cloudconfig, or carry
// the recorder) or as a Lambda function (the stand-in's functions' clients) is recorded, and
// TestMain checks each against the deploy template's policy for its principal, in a stack
// named jobdesk whose Prefix is the tests' jd/.
var (
	stack = deploy.Stack{Name: "jobdesk", Region: awstest.Region, Account: "000000000000", Bucket: "jobdesk-test", Prefix: "jd/"}
	calls = &awstest.Recorder{Rename: func(c deploy.Call) deploy.Call {
		// The tests on cloudopstest's backend keep their files under its prefix, jobdesk/.
		if rest, ok := strings.CutPrefix(c.Key, "jobdesk/"); ok {
			c.Key = stack.Prefix + rest
		}
		return awstest.StandInNames(stack)(c)
	}}
)

func TestMain(m *testing.M) {
	cloudconfig.APIOptions = append(cloudconfig.APIOptions, calls.Option(awstest.Desktop))
	code := m.Run()
	if code == 0 {
		code = awstest.ReportIAM(calls, stack, "cloudjobs")
	}
	os.Exit(code)
}

// recordS3 is an S3 client option recording each call under principal.
func recordS3(principal func(context.Context) string) func(*s3.Options) {
	return func(o *s3.Options) { o.APIOptions = append(o.APIOptions, calls.Option(principal)) }
}

// machines returns the shipped workflows of the given names (name → ASL).
func machines(t *testing.T, names ...string) map[string]string {
	if len(names) == 0 {
		t.Fatal("machines: name the workflows")
	}
	m := map[string]string{}
	for _, name := range names {
		def, err := assets.Workflow(name)
		if err != nil {
			t.Fatal(err)
		}
		m[name] = string(def)
	}
	return m
}

// device runs the families' workflows on this folder as the app does.
type device struct {
	*folder
	eng  *flow.Engine
	csvP *csvjob.Processor
}

func newDevice(t *testing.T) *device {
	f := newFolder(t)
	local := blob.NewMux(blob.Local{Root: f.dir})
	d := &device{folder: f, csvP: csvjob.NewProcessor(csvsqlite.New(f.db), local, f.dir)}
	var err error
	d.eng, err = flow.New(f.db, f.q, flow.Options{DataDir: f.dir, Blobs: local})
	if err != nil {
		t.Fatal(err)
	}
	for _, fn := range append(d.csvP.Functions(), docjob.NewConverter(docsqlite.New(f.db), local).Functions()...) {
		d.eng.RegisterFunction(fn.Name, fn.Handler, fn.Options)
	}
	for name, def := range machines(t, "csv-processing", "document-conversion") {
		// As the app does: the device's values fill the workflow's placeholders.
		arn := strings.Split(d.eng.StateMachineARN(name), ":")
		sub, err := assets.Substitute([]byte(def), assets.DeviceSubstitutions(arn[3], arn[4]))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.eng.PutStateMachine(context.Background(), name, string(sub)); err != nil {
			t.Fatal(err)
		}
	}
	w := queue.NewWorker(f.q, queue.WorkerOptions{Workers: 4})
	d.eng.Attach(w)
	ctx, cancel := context.WithCancel(context.Background())
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); w.Stop(); d.eng.Close() })
	return d
}

// runCSV runs the CSV workflow for path as app's csv family does, and returns the Summary.
func (d *device) runCSV(t *testing.T, path string, jobID int64, created time.Time) csvjob.Summary {
	ctx := job.WithInfo(context.Background(), job.Info{ID: jobID, Output: d.dir})
	in, err := d.csvP.EventInput(ctx, path, csvjob.Options{}, jobID)
	if err != nil {
		t.Fatal(err)
	}
	x, err := orchestrator.Run(ctx, d.eng.Executions(), orchestrator.Spec{Workflow: "csv-processing",
		Name: csvjob.ExecutionName(path, created), Input: in, What: "csv", WhatJa: "csv"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out struct{ Aggregation csvjob.Summary }
	json.Unmarshal(x, &out)
	return out.Aggregation
}

func (d *device) runDoc(t *testing.T, path string, jobID int64) docjob.Result {
	ctx := job.WithInfo(context.Background(), job.Info{ID: jobID, Output: d.dir})
	in, _ := json.Marshal(map[string]any{"path": path, "force": false, "furigana": false, "no_ocr": false, "max_pages": 0})
	x, err := orchestrator.Run(ctx, d.eng.Executions(), orchestrator.Spec{Workflow: "document-conversion",
		Name: fmt.Sprintf("convert-%d", jobID), Input: in, What: "doc", WhatJa: "doc"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var res docjob.Result
	json.Unmarshal(x, &res)
	return res
}

// cloud is the cloud: versitygw, the stand-in, and a device folder whose dispatcher sends jobs.
type cloud struct {
	*folder
	s3  *awstest.S3
	sfn *sfntest.Server
	c   *dispatch.Cloud
}

// newCloud runs the CSV and document workflows in the cloud.
func newCloud(t *testing.T) *cloud {
	return newCloudWith(t, nil, "csv-processing", "document-conversion")
}

// newCloudWith runs the shipped workflows named in the cloud, whose AI functions call provider.
func newCloudWith(t *testing.T, provider aijob.Provider, workflows ...string) *cloud {
	v := &cloud{folder: newFolder(t), s3: awstest.StartS3(t)}
	store := s3blob.New(v.s3.NewClient(nil, recordS3(awstest.Desktop)), s3blob.Options{})
	cfg := cloudconfig.Config{Bucket: v.s3.Bucket, Prefix: "jd/"}
	mux := blob.NewMux(blob.Local{Root: t.TempDir()})
	mux.Handle("s3", s3blob.New(v.s3.NewClient(nil, recordS3(awstest.Function)), s3blob.Options{}))
	v.sfn = sfntest.StartWith(t, flow.Options{Blobs: mux, Buckets: []string{v.s3.Bucket},
		Functions: cloudworker.StandInRegistry(mux, cloudjobs.Results(cfg), provider)}, machines(t, workflows...))
	cfg.StateMachines = map[string]string{}
	for _, name := range workflows {
		cfg.StateMachines[name] = v.sfn.StateMachineARN(name)
	}
	v.c = &dispatch.Cloud{Config: cfg, Blobs: store,
		Exec: sfnexec.New(sfntest.NewClient(v.sfn.Endpoint, func(o *sfn.Options) { o.APIOptions = append(o.APIOptions, calls.Option(awstest.Desktop)) }), sfnexec.Options{StateMachines: cfg.StateMachines, MinPoll: 20 * time.Millisecond, MaxPoll: 200 * time.Millisecond})}
	d := dispatch.New(v.q, v.c, dispatch.Options{Handlers: cloudjobs.Handlers(cloudjobs.HandlerSet{DataDir: v.dir, DB: v.db, Queue: v.q})})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); d.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return v
}

func (v *cloud) submit(t *testing.T, typ, path string, in any) job.Job {
	b, _ := json.Marshal(in)
	j, _, err := v.q.Enqueue(context.Background(), queue.Params{Type: typ, Name: filepath.Base(path), Input: b, Target: job.TargetCloud})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func (v *cloud) wait(t *testing.T, id int64) job.Job {
	t.Helper()
	j, err := v.q.Wait(context.Background(), id)
	deadline := time.Now().Add(2 * time.Minute)
	for err == nil && !j.Status.Final() && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		j, err = v.q.Get(context.Background(), id)
	}
	if err != nil || !j.Status.Final() {
		t.Fatalf("job %d: %v %s %s", id, err, j.Status, j.Message)
	}
	return j
}

func users(t *testing.T, db *store.DB) string {
	rows, err := db.R.Query(`SELECT user_id, login_count, post_count FROM csv_users ORDER BY user_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var id string
		var l, p int64
		rows.Scan(&id, &l, &p)
		fmt.Fprintf(&b, "%s,%d,%d\n", id, l, p)
	}
	return b.String()
}

// comparable is a Summary without what differs by nature between two runs: the job, the time
// taken, and the data folder the files are in.
func comparable(s csvjob.Summary, dir string) csvjob.Summary {
	s.JobID, s.ProcessingTimeSeconds = 0, 0
	s.ErrorsCSV = strings.TrimPrefix(s.ErrorsCSV, dir)
	s.ReportXLSX = strings.TrimPrefix(s.ReportXLSX, dir)
	s.OutputKey = strings.TrimPrefix(s.OutputKey, dir)
	return s
}

func writeCSV(t *testing.T, dir, name, enc string, rows int) string {
	body := csvtest.BigUserLog(rows, 5000, csvtest.EncUTF8)
	body = append(body, "U00001,abc,3\nU00002,4\n"...) // two rejected rows for the errors file
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, csvtest.EncodeAs(enc, string(body)), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCSVInTheCloudMatchesTheDevice(t *testing.T) {
	for _, enc := range []string{csvtest.EncUTF8, csvtest.EncCP932} {
		t.Run(enc, func(t *testing.T) {
			v := newCloud(t)
			path := writeCSV(t, t.TempDir(), "users-log.csv", enc, 200_000)
			sha, _ := csvjob.FileSHA256(context.Background(), path)
			j := v.submit(t, cloudjobs.TypeCSV, path, map[string]any{"path": path, "sha256": sha})
			j = v.wait(t, j.ID)
			if j.Status != job.Partial {
				t.Fatalf("cloud job %s: %s %s", j.Status, j.Message, j.Error)
			}
			var got csvjob.Summary
			json.Unmarshal(j.Result, &got)

			d := newDevice(t)
			want := d.runCSV(t, path, 7, j.CreatedAt)
			if g, w := comparable(got, v.dir), comparable(want, d.dir); fmt.Sprint(g) != fmt.Sprint(w) {
				t.Fatalf("summaries differ:\ncloud  %+v\ndevice %+v", g, w)
			}
			if g, w := users(t, v.db), users(t, d.db); g != w || len(g) == 0 {
				t.Fatalf("csv_users differ (%d vs %d bytes)", len(g), len(w))
			}
			for _, f := range []string{got.ErrorsCSV, got.ReportXLSX} {
				if !strings.HasPrefix(f, v.dir) {
					t.Fatalf("result file %s is not in the data folder", f)
				}
				if _, err := os.Stat(f); err != nil {
					t.Fatal(err)
				}
			}
			ge, _ := os.ReadFile(got.ErrorsCSV)
			we, _ := os.ReadFile(want.ErrorsCSV)
			if string(ge) != string(we) {
				t.Fatalf("errors.csv differ:\n%s\n%s", ge, we)
			}
			// An independent client sees the input, content-addressed.
			key := s3blob.InputKey("jd/", sha, "users-log.csv")
			if out := v.s3.RunAWS(t, "s3api", "head-object", "--bucket", v.s3.Bucket, "--key", key, "--query", "ContentLength"); strings.TrimSpace(out) == "" {
				t.Fatalf("aws s3api head-object %s: %q", key, out)
			}
			// Applying the same result again changes nothing.
			before := users(t, v.db)
			again, err := csvsqlite.New(v.db).ApplyCloudResult(context.Background(), j.ID, got, strings.NewReader(`{"users":[["U00001",0,0]]}`))
			if err != nil || again.UsersChanged != got.UsersChanged || users(t, v.db) != before {
				t.Fatalf("applying twice changed the table or the summary: %v %d→%d", err, got.UsersChanged, again.UsersChanged)
			}
		})
	}
}

func writeZip(t *testing.T, dir string, n int) string {
	p := filepath.Join(dir, "docs.zip")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for i := 0; i < n; i++ {
		w, _ := zw.Create(fmt.Sprintf("memo-%02d.txt", i))
		fmt.Fprintf(w, "議事録 %d\n\n本日の議題は予算です。Item %d of the meeting notes.\n", i, i)
	}
	zw.Close()
	f.Close()
	return p
}

func TestZipOfDocumentsInTheCloudMatchesTheDevice(t *testing.T) {
	v := newCloud(t)
	path := writeZip(t, t.TempDir(), 10)
	j := v.submit(t, cloudjobs.TypeConvert, path, docjob.Input{Path: path})
	j = v.wait(t, j.ID)
	if j.Status != job.Succeeded {
		t.Fatalf("cloud job %s: %s %s", j.Status, j.Message, j.Error)
	}
	var got docjob.Result
	json.Unmarshal(j.Result, &got)
	d := newDevice(t)
	want := d.runDoc(t, path, j.ID)
	if len(got.Children) != 10 || got.SHA256 != want.SHA256 || got.Status != want.Status || got.PageCount != want.PageCount ||
		got.TextLength != want.TextLength || filepath.Base(got.OutputPath) != filepath.Base(want.OutputPath) {
		t.Fatalf("results differ:\ncloud  %+v\ndevice %+v", got, want)
	}
	if !strings.HasPrefix(got.OutputPath, filepath.Join(v.dir, "documents")) {
		t.Fatalf("the Markdown is at %s", got.OutputPath)
	}
	gm, _ := os.ReadFile(got.OutputPath)
	wm, _ := os.ReadFile(want.OutputPath)
	if string(gm) != string(wm) || len(gm) == 0 {
		t.Fatalf("Markdown differs:\n%s\n%s", gm, wm)
	}
	// The device's cache has the conversion: the same bytes converted here reuse it.
	res, found, err := docsqlite.New(v.db).Get(context.Background(), docjob.CacheKey(got.SHA256, docjob.Input{}))
	if err != nil || !found || res.OutputPath != got.OutputPath {
		t.Fatalf("cache: %v %v %+v", err, found, res)
	}
	if n := v.sfn.Count("StartExecution"); n != 1 {
		t.Fatalf("%d StartExecution calls", n)
	}
}
