package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/aws/smithy-go"

	"jobdesk/app"
	"jobdesk/internal/crashtest"
)

// serveProcess is a `jobdesk serve` started by startServe.
type serveProcess struct {
	endpoint string        // http://127.0.0.1:PORT, as it printed
	stderr   *lockedBuffer // what it wrote to its standard error
	cmd      *exec.Cmd
	exited   chan struct{} // closed when it has exited
	err      error         // its exit, once exited is closed
}

// startServe runs `jobdesk serve --listen 127.0.0.1:0 args…` on data folder dir as a process of
// its own (the test binary run again, see TestServeHelperProcess) with env added, and returns it
// once it has printed its endpoint; it is stopped with SIGTERM when the test ends.
func startServe(t *testing.T, dir string, env []string, args ...string) *serveProcess {
	t.Helper()
	all, _ := json.Marshal(append([]string{"serve", "--listen", "127.0.0.1:0", "--workers", "2"}, args...))
	cmd := crashtest.Command(context.Background(), "TestServeHelperProcess", dir)
	cmd.Env = append(append(cmd.Env, "JOBDESK_SERVE_ARGS="+string(all)), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &serveProcess{stderr: &lockedBuffer{}, cmd: cmd, exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		io.Copy(io.Discard, stdout)
		p.err = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
		}
	})
	select {
	case p.endpoint = <-lines:
		if !strings.HasPrefix(p.endpoint, "http://127.0.0.1:") {
			t.Fatalf("endpoint %q; stderr:\n%s", p.endpoint, p.stderr.String())
		}
		return p
	case <-time.After(60 * time.Second):
		t.Fatalf("no endpoint printed; stderr:\n%s", p.stderr.String())
	}
	return nil
}

// waitExecution polls until the execution is final.
func waitExecution(t *testing.T, c *sfn.Client, arn string) *sfn.DescribeExecutionOutput {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		out, err := c.DescribeExecution(context.Background(), &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
		if err != nil {
			t.Fatal(err)
		}
		if out.Status != types.ExecutionStatusRunning {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still RUNNING", arn)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func smARN(name string) *string {
	return aws.String("arn:aws:states:local:000000000000:stateMachine:" + name)
}

// TestServeRefusesFilesOutsideAllowedFolders reproduces the probe of the local API: starting the
// shipped workflows on a 0600 file elsewhere (csv-processing) and on a system file
// (document-conversion) fails with E014 naming the path, nothing of the file reaches the history
// or the data folder, while a file in a folder listed in folders.json converts.
func TestServeRefusesFilesOutsideAllowedFolders(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	dir, outside, allowed := t.TempDir(), t.TempDir(), t.TempDir()
	secret := filepath.Join(outside, "secret.csv")
	os.WriteFile(secret, []byte("password,hunter2-very-secret\n1,2\n"), 0o600)
	shadow := filepath.Join(outside, "shadow")
	os.WriteFile(shadow, []byte("root:$6$topsecrethash:19000:0:99999:7:::\n"), 0o600)
	note := filepath.Join(allowed, "note.txt")
	os.WriteFile(note, []byte("会議は金曜日です。\n"), 0o600)
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, app.FoldersFile), []byte(`{"allowed_folders": [`+jsonString(allowed)+`]}`), 0o600)

	srv := startServe(t, dir, nil)
	endpoint, stderr := srv.endpoint, srv.stderr
	key, err := ServeCredentials(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := serveClient(endpoint, key.AccessKeyID, key.SecretAccessKey)
	ctx := context.Background()

	csvInput := `{"detail":{"bucket":{"name":""},"object":{"key":` + jsonString(secret) + `,"size":40,"etag":"x"}}}`
	docInput := func(p string) string {
		return `{"path":` + jsonString(p) + `,"force":true,"furigana":false,"no_ocr":true,"max_pages":0}`
	}
	for _, c2 := range []struct{ machine, input, path string }{
		{"csv-processing", csvInput, secret},
		{"document-conversion", docInput(shadow), shadow},
	} {
		x, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: smARN(c2.machine), Input: aws.String(c2.input)})
		if err != nil {
			t.Fatalf("%s: %v", c2.machine, err)
		}
		out := waitExecution(t, c, *x.ExecutionArn)
		cause := aws.ToString(out.Cause)
		if out.Status != types.ExecutionStatusFailed || !strings.Contains(cause, c2.path) || !strings.Contains(cause, "outside the folders") {
			t.Errorf("%s: %s %s %s", c2.machine, out.Status, aws.ToString(out.Error), cause)
		}
		h, err := c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: x.ExecutionArn, MaxResults: 1000})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(h.Events)
		// The Task's failure is the coded refusal, in English and Japanese.
		if !strings.Contains(string(b), `\"code\":\"E014\"`) || !strings.Contains(string(b), "使えるフォルダー") {
			t.Errorf("%s: no coded refusal in the history: %s", c2.machine, b)
		}
		if strings.Contains(string(b), "hunter2") || strings.Contains(string(b), "topsecrethash") {
			t.Errorf("%s: the file's content reached the history: %s", c2.machine, b)
		}
	}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.HasPrefix(d.Name(), "jobdesk.db") {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), "hunter2") || strings.Contains(string(b), "topsecrethash") {
				t.Errorf("%s holds the outside file's content", p)
			}
		}
		return nil
	})

	// A file in a folder listed in folders.json is used.
	x, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: smARN("document-conversion"), Input: aws.String(docInput(note))})
	if err != nil {
		t.Fatal(err)
	}
	if out := waitExecution(t, c, *x.ExecutionArn); out.Status != types.ExecutionStatusSucceeded {
		t.Errorf("a file in an allowed folder: %s %s %s\n%s", out.Status, aws.ToString(out.Error), aws.ToString(out.Cause), stderr.String())
	}
}

// TestServeKeyPairs: the key pair of the data folder (printed by --print-credentials), and one
// given in the environment, sign requests the server accepts; anything else gets AWS's errors.
func TestServeKeyPairs(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	dir := t.TempDir()
	code, out, errOut := runCLI(t, "--data-dir", dir, "serve", "--print-credentials")
	if code != ExitOK {
		t.Fatalf("exit %d %s", code, errOut)
	}
	vars := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.ContainsAny(v, " '\"$`") {
			t.Fatalf("not a shell line: %q", line)
		}
		vars[k] = v
	}
	if len(vars["AWS_ACCESS_KEY_ID"]) != 20 || len(vars["AWS_SECRET_ACCESS_KEY"]) != 40 || vars["AWS_REGION"] != "local" || vars["AWS_DEFAULT_REGION"] != "local" {
		t.Fatalf("printed %q", out)
	}
	st, err := os.Stat(filepath.Join(dir, app.ServeKeyFile))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", st.Mode(), err)
	}
	// Printing again gives the same pair.
	if _, again, _ := runCLI(t, "--data-dir", dir, "serve", "--print-credentials"); again != out {
		t.Fatalf("a second print differs:\n%s\n%s", out, again)
	}

	endpoint := startServe(t, dir, []string{EnvServeAccessKeyID + "=AKIDSHAREDWITHS3", EnvServeSecretAccessKey + "=shared-secret"}, "--allow-remote", "--allow-host", "jobdesk.lan").endpoint
	ctx := context.Background()
	for _, k := range [][2]string{{vars["AWS_ACCESS_KEY_ID"], vars["AWS_SECRET_ACCESS_KEY"]}, {"AKIDSHAREDWITHS3", "shared-secret"}} {
		if _, err := serveClient(endpoint, k[0], k[1]).ListStateMachines(ctx, &sfn.ListStateMachinesInput{}); err != nil {
			t.Errorf("key %s: %v", k[0], err)
		}
	}
	for _, c := range []struct{ id, secret, want string }{
		{vars["AWS_ACCESS_KEY_ID"], "guessed", "InvalidSignatureException"},
		{"AKIDSOMEONEELSE", vars["AWS_SECRET_ACCESS_KEY"], "UnrecognizedClientException"},
	} {
		_, err := serveClient(endpoint, c.id, c.secret).ListStateMachines(ctx, &sfn.ListStateMachinesInput{})
		var ae smithy.APIError
		if !errors.As(err, &ae) || ae.ErrorCode() != c.want {
			t.Errorf("%s: %v, want %s", c.id, err, c.want)
		}
	}
	// Unsigned, and a made-up signature: refused before anything runs.
	for _, auth := range []string{"", "AWS4-HMAC-SHA256 Credential=" + vars["AWS_ACCESS_KEY_ID"] + "/" + time.Now().UTC().Format("20060102") +
		"/local/states/aws4_request, SignedHeaders=host;x-amz-date, Signature=" + strings.Repeat("0", 64)} {
		req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(`{"stateMachineArn":"arn:aws:states:local:000000000000:stateMachine:csv-processing"}`))
		req.Header.Set("X-Amz-Target", "AWSStepFunctions.StartExecution")
		req.Header.Set("Content-Type", "application/x-amz-json-1.0")
		req.Header.Set("X-Amz-Date", time.Now().UTC().Format("20060102T150405Z"))
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		json.NewDecoder(resp.Body).Decode(&m)
		resp.Body.Close()
		want := map[bool]string{true: "UnrecognizedClientException", false: "InvalidSignatureException"}[auth == ""]
		if resp.StatusCode != 400 || m["__type"] != want || m["message"] == "" {
			t.Errorf("auth %q: %d %v", auth, resp.StatusCode, m)
		}
	}
	// --allow-remote on loopback keeps the Host check for names it was not given.
	port := endpoint[strings.LastIndexByte(endpoint, ':')+1:]
	for host, want := range map[string]string{"evil.example.com": "AccessDeniedException", "jobdesk.lan": ""} {
		c := serveClient("http://"+host+":"+port, vars["AWS_ACCESS_KEY_ID"], vars["AWS_SECRET_ACCESS_KEY"])
		_, err := c.ListStateMachines(ctx, &sfn.ListStateMachinesInput{}, func(o *sfn.Options) {
			o.HTTPClient = dialTo(strings.TrimPrefix(endpoint, "http://"))
		})
		if apiCodeOf(err) != want || want == "" && err != nil {
			t.Errorf("host %s: %v", host, err)
		}
	}
	listRes, err := serveClient(endpoint, vars["AWS_ACCESS_KEY_ID"], vars["AWS_SECRET_ACCESS_KEY"]).ListStateMachines(ctx, &sfn.ListStateMachinesInput{})
	if err != nil || len(listRes.StateMachines) == 0 {
		t.Fatalf("%v", err)
	}

	// The real AWS CLI (Debian's awscli; it ignores AWS_ENDPOINT_URL_*, hence --endpoint-url).
	awsCLI := "/usr/bin/aws"
	if _, err := os.Stat(awsCLI); err != nil {
		t.Skip("the AWS CLI is not installed at /usr/bin/aws")
	}
	runAWS := func(keyID, secret string, args ...string) (string, string, error) {
		cmd := exec.Command(awsCLI, append(args, "--endpoint-url", endpoint, "--output", "json")...)
		cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID="+keyID, "AWS_SECRET_ACCESS_KEY="+secret, "AWS_REGION=local", "AWS_DEFAULT_REGION=local",
			"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_PAGER=", "AWS_MAX_ATTEMPTS=1", "AWS_RETRY_MODE=standard")
		var o, e strings.Builder
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		return o.String(), e.String(), err
	}
	o, e, err := runAWS(vars["AWS_ACCESS_KEY_ID"], vars["AWS_SECRET_ACCESS_KEY"], "stepfunctions", "list-state-machines")
	if err != nil || !strings.Contains(o, "csv-processing") {
		t.Fatalf("aws stepfunctions list-state-machines: %v\n%s\n%s", err, o, e)
	}
	o, e, err = runAWS(vars["AWS_ACCESS_KEY_ID"], vars["AWS_SECRET_ACCESS_KEY"], "stepfunctions", "describe-state-machine",
		"--state-machine-arn", "arn:aws:states:local:000000000000:stateMachine:csv-processing")
	if err != nil || !strings.Contains(o, `"name": "csv-processing"`) {
		t.Fatalf("aws stepfunctions describe-state-machine: %v\n%s\n%s", err, o, e)
	}
	if _, e, err = runAWS(vars["AWS_ACCESS_KEY_ID"], "guessed", "stepfunctions", "list-state-machines"); err == nil || !strings.Contains(e, "InvalidSignatureException") {
		t.Fatalf("a wrong secret with the AWS CLI: %v\n%s", err, e)
	}
	if _, e, err = runAWS("AKIDSOMEONEELSE", "x", "stepfunctions", "list-state-machines"); err == nil || !strings.Contains(e, "UnrecognizedClientException") {
		t.Fatalf("an unknown key with the AWS CLI: %v\n%s", err, e)
	}
}

// dialTo connects every request to addr whatever its URL's host, as a DNS name pointing at
// the server would.
func dialTo(addr string) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	return &http.Client{Transport: tr, Timeout: time.Minute}
}

func apiCodeOf(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
