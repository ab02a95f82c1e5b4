package cli_test

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"jobdesk/engine/csvjob"
	"jobdesk/engine/csvjob/csvtest"
	"jobdesk/engine/docjob"
	"jobdesk/engine/job"
)

// The built jobdesk binary end to end, as a person runs it: `jobdesk serve` over a second data
// folder whose cloud.json names a versitygw bucket stands in for the cloud (one AWS key pair
// signs S3 and it: --access-key/--secret-key), a first data folder's cloud.json points at it,
// and `jobdesk run --target cloud --wait --json` on a CSV of 200,000 rows (UTF-8, then
// Shift_JIS) and on a ZIP of 10 documents ends with the same summary, files and csv_users as
// `--target device`. The AWS CLI, an independent client, sees the uploaded inputs and the
// started executions.

// The key pair of versitygw, given to serve too (the region is the one serve prints).
const (
	e2eKey    = "jobdesk-e2e"
	e2eSecret = "jobdesk-e2e-secret"
	e2eBucket = "jobdesk-e2e"
)

func TestCloudRunsOfTheBuiltBinaryMatchTheDevice(t *testing.T) {
	if testing.Short() {
		t.Skip("builds jobdesk and starts versitygw and jobdesk serve")
	}
	awsCLI := "/usr/bin/aws"
	if _, err := os.Stat(awsCLI); err != nil {
		t.Fatalf("%s is missing: run `make test` (it installs Debian's awscli package)", awsCLI)
	}
	bin := filepath.Join(t.TempDir(), "jobdesk")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	// The region serve signs in (its ARNs are in it), as it prints it; S3 is in the same one,
	// since one AWS configuration reaches both.
	cloudDir := t.TempDir()
	creds, err := exec.Command(bin, "--data-dir", cloudDir, "serve", "--print-credentials").Output()
	if err != nil {
		t.Fatalf("serve --print-credentials: %v", err)
	}
	region := ""
	for _, line := range strings.Split(string(creds), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimPrefix(line, "export "), "AWS_REGION="); ok {
			region = strings.Trim(v, `'"`)
		}
	}
	if region == "" {
		t.Fatalf("serve --print-credentials printed no region:\n%s", creds)
	}
	s3 := startVersitygw(t, region)
	env := append(os.Environ(), "AWS_ACCESS_KEY_ID="+e2eKey, "AWS_SECRET_ACCESS_KEY="+e2eSecret, "AWS_REGION="+region,
		"AWS_DEFAULT_REGION="+region, "AWS_CONFIG_FILE="+os.DevNull, "AWS_SHARED_CREDENTIALS_FILE="+os.DevNull, "AWS_PAGER=",
		"AWS_ENDPOINT_URL_S3="+s3)
	aws := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(awsCLI, args...)
		cmd.Env = env
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("aws %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		return string(out)
	}
	aws("--endpoint-url", s3, "s3api", "create-bucket", "--bucket", e2eBucket)

	// The cloud: jobdesk serve over its own folder, its functions on the bucket.
	writeJSON(t, filepath.Join(cloudDir, "cloud.json"), map[string]any{"region": region, "bucket": e2eBucket, "prefix": "jd/"})
	sfnURL := startServeProcess(t, bin, cloudDir, env)
	var machines struct {
		StateMachines []struct{ Name, StateMachineArn string }
	}
	json.Unmarshal([]byte(aws("--endpoint-url", sfnURL, "stepfunctions", "list-state-machines")), &machines)
	arns := map[string]string{}
	for _, m := range machines.StateMachines {
		arns[m.Name] = m.StateMachineArn
	}
	if arns["csv-processing"] == "" || arns["document-conversion"] == "" {
		t.Fatalf("serve's state machines: %+v", machines)
	}

	// The device sending to it, and one running on its own.
	cloudUser := t.TempDir()
	writeJSON(t, filepath.Join(cloudUser, "cloud.json"), map[string]any{"region": region, "bucket": e2eBucket, "prefix": "jd/",
		"state_machines": map[string]string{"csv-processing": arns["csv-processing"], "document-conversion": arns["document-conversion"]}})
	deviceUser := t.TempDir()
	userEnv := append(env, "AWS_ENDPOINT_URL_SFN="+sfnURL)
	run := func(dir, target, file string) job.Job {
		t.Helper()
		cmd := exec.Command(bin, "--data-dir", dir, "run", "--target", target, "--wait", "--json", file)
		cmd.Env = userEnv
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, _ := cmd.Output()
		var j job.Job
		if err := json.Unmarshal(out, &j); err != nil || !j.Status.Final() {
			t.Fatalf("jobdesk run --target %s %s: %v %q\n%s", target, filepath.Base(file), err, out, stderr.String())
		}
		if j.Target != target {
			t.Fatalf("job %d ran with target %q, want %q", j.ID, j.Target, target)
		}
		return j
	}

	inputs := t.TempDir()
	for _, enc := range []string{csvtest.EncUTF8, csvtest.EncCP932} {
		t.Run("csv "+enc, func(t *testing.T) {
			body := append(csvtest.BigUserLog(200_000, 5000, csvtest.EncUTF8), "U00001,abc,3\nU00002,4\n"...)
			name := "users-log-" + enc + ".csv"
			csvPath := filepath.Join(inputs, name)
			if err := os.WriteFile(csvPath, csvtest.EncodeAs(enc, string(body)), 0o644); err != nil {
				t.Fatal(err)
			}
			cloud, device := run(cloudUser, "cloud", csvPath), run(deviceUser, "device", csvPath)
			if cloud.Status != job.Partial || device.Status != cloud.Status {
				t.Fatalf("cloud %s %v, device %s %v", cloud.Status, cloud.Error, device.Status, device.Error)
			}
			var cs, ds csvjob.Summary
			json.Unmarshal(cloud.Result, &cs)
			json.Unmarshal(device.Result, &ds)
			if g, w := sameCSVSummary(cs, cloudUser), sameCSVSummary(ds, deviceUser); g != w || cs.TotalRows != 200_002 {
				t.Fatalf("summaries differ:\ncloud  %s\ndevice %s", g, w)
			}
			if g, w := readFile(t, cs.ErrorsCSV), readFile(t, ds.ErrorsCSV); g != w || g == "" || !strings.HasPrefix(cs.ErrorsCSV, cloudUser) {
				t.Fatalf("errors.csv differ (%s):\n%s\n%s", cs.ErrorsCSV, g, w)
			}
			if g, w := exported(t, bin, cloudUser, cloud.Number, userEnv), exported(t, bin, deviceUser, device.Number, userEnv); g != w || g == "" {
				t.Fatalf("jobdesk export differs:\n%.300s\n%.300s", g, w)
			}
			if g, w := csvUsers(t, cloudUser), csvUsers(t, deviceUser); g != w || g == "" {
				t.Fatalf("csv_users differ:\n%.300s\n%.300s", g, w)
			}
			// The AWS CLI sees the input in the bucket and the execution on serve.
			if out := aws("--endpoint-url", s3, "s3api", "list-objects-v2", "--bucket", e2eBucket, "--prefix", "jd/inputs/",
				"--query", "Contents[].Key", "--output", "text"); !strings.Contains(out, "/"+cs.SHA256+"/"+name) {
				t.Fatalf("aws s3api list-objects-v2 does not see the input %s: %s", cs.SHA256, out)
			}
			executions(t, aws, sfnURL, arns["csv-processing"], cs.ExecutionID, cloud.ID)
		})
	}
	zipPath := writeDocsZip(t, inputs, 10)

	t.Run("zip", func(t *testing.T) {
		cloud, device := run(cloudUser, "cloud", zipPath), run(deviceUser, "device", zipPath)
		if cloud.Status != job.Succeeded || device.Status != cloud.Status {
			t.Fatalf("cloud %s %v, device %s %v", cloud.Status, cloud.Error, device.Status, device.Error)
		}
		var cr, dr docjob.Result
		json.Unmarshal(cloud.Result, &cr)
		json.Unmarshal(device.Result, &dr)
		if cr.Status != dr.Status || cr.SHA256 != dr.SHA256 || cr.PageCount != dr.PageCount || cr.TextLength != dr.TextLength ||
			len(cr.Children) != 10 || len(dr.Children) != 10 || filepath.Base(cr.OutputPath) != filepath.Base(dr.OutputPath) {
			t.Fatalf("results differ:\ncloud  %+v\ndevice %+v", cr, dr)
		}
		if g, w := readFile(t, cr.OutputPath), readFile(t, dr.OutputPath); g != w || g == "" || !strings.HasPrefix(cr.OutputPath, cloudUser) {
			t.Fatalf("Markdown differs (%s):\n%.300s\n%.300s", cr.OutputPath, g, w)
		}
		if out := aws("--endpoint-url", s3, "s3api", "list-objects-v2", "--bucket", e2eBucket, "--prefix", "jd/inputs/",
			"--query", "Contents[].Key", "--output", "text"); !strings.Contains(out, "/"+cr.SHA256+"/docs.zip") {
			t.Fatalf("aws s3api list-objects-v2 does not see the ZIP %s: %s", cr.SHA256, out)
		}
		executions(t, aws, sfnURL, arns["document-conversion"], fmt.Sprintf("convert-%d", cloud.ID), cloud.ID)
	})
}

// executions checks with the AWS CLI that serve ran exactly one execution of job id, named name,
// and that it succeeded.
func executions(t *testing.T, aws func(...string) string, endpoint, arn, name string, id int64) {
	t.Helper()
	var out struct {
		Executions []struct{ Name, Status string }
	}
	json.Unmarshal([]byte(aws("--endpoint-url", endpoint, "stepfunctions", "list-executions", "--state-machine-arn", arn)), &out)
	n := 0
	for _, x := range out.Executions {
		// Or a name the orchestrator moves on to when name is taken: name-j<job id>[-N].
		if j := fmt.Sprintf("%s-j%d", name, id); x.Name == name || x.Name == j || strings.HasPrefix(x.Name, j+"-") {
			n++
			if x.Status != "SUCCEEDED" {
				t.Fatalf("execution %s is %s", name, x.Status)
			}
		}
	}
	if n != 1 {
		t.Fatalf("aws stepfunctions list-executions sees %d executions named %s: %+v", n, name, out.Executions)
	}
}

// sameCSVSummary is s without what differs by nature between two data folders and runs.
func sameCSVSummary(s csvjob.Summary, dir string) string {
	s.JobID, s.ProcessingTimeSeconds = 0, 0
	s.ErrorsCSV = strings.TrimPrefix(s.ErrorsCSV, dir)
	s.ReportXLSX = strings.TrimPrefix(s.ReportXLSX, dir)
	s.OutputKey = strings.TrimPrefix(s.OutputKey, dir)
	// The execution is named after the file and the second it was submitted in.
	return strings.ReplaceAll(fmt.Sprintf("%+v", s), s.ExecutionID, "EXECUTION")
}

func csvUsers(t *testing.T, dir string) string {
	t.Helper()
	out, err := exec.Command("sqlite3", "-readonly", filepath.Join(dir, "jobdesk.db"),
		"SELECT user_id, login_count, post_count FROM csv_users ORDER BY user_id").Output()
	if err != nil {
		t.Fatalf("sqlite3: %v", err)
	}
	return string(out)
}

// exported is the errors file of the job with number n as `jobdesk export` writes it.
func exported(t *testing.T, bin, dir string, n int64, env []string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "errors.csv")
	cmd := exec.Command(bin, "--data-dir", dir, "export", fmt.Sprint(n), "--format", "csv", "-o", dst)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("jobdesk export: %v\n%s", err, out)
	}
	return readFile(t, dst)
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeJSON(t *testing.T, path string, v any) {
	b, _ := json.Marshal(v)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func writeDocsZip(t *testing.T, dir string, n int) string {
	p := filepath.Join(dir, "docs.zip")
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := 0; i < n; i++ {
		w, _ := zw.Create(fmt.Sprintf("memo-%02d.txt", i))
		fmt.Fprintf(w, "議事録 %d\n\n本日の議題は予算です。Item %d of the meeting notes.\n", i, i)
	}
	zw.Close()
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// freeAddr is a free 127.0.0.1 port.
func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startProcess starts cmd, stops it (SIGTERM, then SIGKILL) when the test ends, and waits until
// addr accepts connections.
func startProcess(t *testing.T, cmd *exec.Cmd, addr string) {
	t.Helper()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
		select {
		case <-done:
			t.Fatalf("%s exited:\n%s", filepath.Base(cmd.Path), out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not listen on %s:\n%s", filepath.Base(cmd.Path), addr, out.String())
		}
	}
}

// startVersitygw runs versitygw (installed by `make test`) in region with the test's key pair,
// and returns its endpoint.
func startVersitygw(t *testing.T, region string) string {
	t.Helper()
	bin, err := exec.LookPath("versitygw")
	if err != nil {
		gopath, _ := exec.Command("go", "env", "GOPATH").Output()
		bin = filepath.Join(strings.TrimSpace(strings.Split(string(gopath), ":")[0]), "bin", "versitygw")
		if _, err := os.Stat(bin); err != nil {
			t.Fatal("versitygw is not installed: run `make test` (scripts/test-servers.sh installs it)")
		}
	}
	addr := freeAddr(t)
	startProcess(t, exec.Command(bin, "--access", e2eKey, "--secret", e2eSecret, "--region", region, "--port", addr, "--quiet",
		"posix", t.TempDir()), addr)
	return "http://" + addr
}

// startServeProcess runs `jobdesk serve` over dir, accepting the test's key pair, and returns
// its endpoint.
func startServeProcess(t *testing.T, bin, dir string, env []string) string {
	t.Helper()
	addr := freeAddr(t)
	cmd := exec.Command(bin, "--data-dir", dir, "serve", "--listen", addr, "--access-key", e2eKey, "--secret-key", e2eSecret)
	cmd.Env = env
	startProcess(t, cmd, addr)
	return "http://" + addr
}
