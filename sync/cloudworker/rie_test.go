package cloudworker_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"jobdesk/engine/aijob/aitest"
	"jobdesk/engine/csvjob"
	"jobdesk/engine/csvjob/csvtest"
	"jobdesk/engine/job"
	"jobdesk/sync/cloudworker"
	"jobdesk/sync/internal/awstest"
)

var (
	bootstrapOnce sync.Once
	bootstrapPath string
	bootstrapErr  error
)

// bootstrap builds app/lambda as `make lambda` does (static, lambda.norpc) once per test run.
func bootstrap(t *testing.T) string {
	t.Helper()
	bootstrapOnce.Do(func() {
		dir, err := os.MkdirTemp("", "jobdesk-bootstrap")
		if err != nil {
			bootstrapErr = err
			return
		}
		_, file, _, _ := runtime.Caller(0)
		root := filepath.Join(filepath.Dir(file), "..", "..")
		bootstrapPath = filepath.Join(dir, "bootstrap")
		cmd := exec.Command("go", "build", "-tags", "lambda.norpc", "-trimpath", "-o", bootstrapPath, "./app/lambda")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			bootstrapErr = fmt.Errorf("go build ./app/lambda: %v\n%s", err, out)
		}
	})
	if bootstrapErr != nil {
		t.Fatal(bootstrapErr)
	}
	return bootstrapPath
}

// emulator is the bootstrap running under the Lambda Runtime Interface Emulator.
type emulator struct {
	url     string
	log     *awstest.Log
	started time.Time
}

func (e *emulator) logText() string { return e.log.String() }

// startEmulator runs the bootstrap under aws-lambda-rie on 127.0.0.1 with env (and nothing of
// this process's environment but PATH and HOME).
func startEmulator(t *testing.T, env ...string) *emulator {
	t.Helper()
	rie, err := awstest.Find("aws-lambda-rie")
	if err != nil {
		t.Fatal(err)
	}
	bin := bootstrap(t)
	addr, err := awstest.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	e := &emulator{url: "http://" + addr + "/2015-03-31/functions/function/invocations"}
	cmd := exec.Command(rie, "--runtime-interface-emulator-address", addr, bin)
	cmd.Dir = filepath.Dir(bin)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, env...)
	e.started = time.Now()
	p, err := awstest.StartProcess("aws-lambda-rie", cmd, awstest.Listening(addr), 15*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	e.log = p.Log
	t.Cleanup(func() {
		p.Stop(5 * time.Second)
		if t.Failed() {
			t.Logf("emulator log:\n%s", e.logText())
		}
	})
	return e
}

// invoke posts payload and returns the response body. The emulator answers a handler's error
// with HTTP 200 and no X-Amz-Function-Error header: the body tells.
func (e *emulator) invoke(t *testing.T, payload any) []byte {
	t.Helper()
	b, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(e.url, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("invoke: HTTP %d %s", resp.StatusCode, body)
	}
	return body
}

var initReport = regexp.MustCompile(`INIT REPORT\(durationMs: ([0-9.]+)\)`)

// initDuration is the emulator's measure of the bootstrap's init (process start to its first
// request for work), read from its log.
func (e *emulator) initDuration(t *testing.T) time.Duration {
	m := initReport.FindStringSubmatch(e.logText())
	if m == nil {
		t.Fatalf("no INIT REPORT in the emulator log")
	}
	ms, _ := strconv.ParseFloat(m[1], 64)
	return time.Duration(ms * float64(time.Millisecond))
}

// envelope is the body of a failed invocation.
type envelope struct {
	ErrorType    string `json:"errorType"`
	ErrorMessage string `json:"errorMessage"`
}

func failure(t *testing.T, body []byte) (string, *job.Error) {
	t.Helper()
	var env envelope
	if json.Unmarshal(body, &env) != nil || env.ErrorType == "" {
		t.Fatalf("not an error envelope: %s", body)
	}
	e, ok := job.ErrorFromCause(env.ErrorType, string(body))
	if !ok {
		t.Fatalf("no coded error in %s", body)
	}
	return env.ErrorType, e
}

func TestBootstrapUnderTheEmulator(t *testing.T) {
	c := startCloud(t, func(aitest.Call) aitest.Step { return aitest.Step{Hang: true} })
	key := prefix + "inputs/rie-users.csv"
	c.put(t, key, csvtest.BigUserLog(5_000, 100, csvjob.EncUTF8))

	t.Run("success and handler error", func(t *testing.T) {
		e := startEmulator(t, append(c.env, cloudworker.EnvFunction+"=csv-processor")...)
		body := e.invoke(t, map[string]any{"eventType": csvjob.EventValidation, "bucket": c.s3.Bucket, "key": key, "executionId": "rie-users-1"})
		var v csvjob.Validation
		if json.Unmarshal(body, &v) != nil || !v.IsValid || v.RowCount != 5_000 {
			t.Fatalf("validation: %s", body)
		}
		if _, ok := c.get(t, v.Manifest.Key); !ok || !strings.HasPrefix(v.Manifest.Key, prefix+"results/csv/rie-users-1/") {
			t.Fatalf("manifest %+v not in S3: %v", v.Manifest, c.keys(t, prefix+"results/"))
		}
		t.Logf("init %v (emulator), first response %v after the emulator started", e.initDuration(t), time.Since(e.started))

		name, coded := failure(t, e.invoke(t, map[string]any{"eventType": csvjob.EventValidation, "executionId": "rie-no-file"}))
		if name != "ValidationError" || coded.Code != job.E014 || coded.MessageJa == "" {
			t.Fatalf("Error %q, cause %+v", name, coded)
		}
	})

	t.Run("function from the Lambda function name", func(t *testing.T) {
		e := startEmulator(t, append(c.env, "AWS_LAMBDA_FUNCTION_NAME=csv-processor")...)
		name, coded := failure(t, e.invoke(t, map[string]any{"eventType": "NO_SUCH_EVENT", "executionId": "x"}))
		if name != "States.TaskFailed" || coded.Code != job.E014 || !strings.Contains(coded.Message, "NO_SUCH_EVENT") {
			t.Fatalf("Error %q, cause %+v", name, coded)
		}
	})

	t.Run("partial batch failure", func(t *testing.T) {
		e := startEmulator(t, append(c.env, cloudworker.EnvFunction+"=document-converter")...)
		c.put(t, prefix+"inputs/rie-a.txt", []byte("記入例\n"))
		c.put(t, prefix+"inputs/rie-b.txt", []byte("様式第1号\n"))
		ev := sqsEvent(1, convertMessage("rie-a", prefix+"inputs/rie-a.txt"), convertMessage("rie-bad", prefix+"inputs/none.pdf"),
			convertMessage("rie-b", prefix+"inputs/rie-b.txt"))
		var first map[string][]byte
		for round := 1; round <= 2; round++ {
			var resp events.SQSEventResponse
			if body := e.invoke(t, ev); json.Unmarshal(body, &resp) != nil || len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "msg-1" {
				t.Fatalf("round %d: %s", round, body)
			}
			got := map[string][]byte{}
			for _, id := range []string{"rie-a", "rie-b"} {
				b, ok := c.get(t, prefix+"results/jobs/"+id+".json")
				if !ok {
					t.Fatalf("round %d: no result for %s", round, id)
				}
				got[id] = b
			}
			if first == nil {
				first = got
			} else if fmt.Sprint(first) != fmt.Sprint(got) {
				t.Fatalf("the redelivered batch wrote the finished jobs again")
			}
		}
		if rs := c.replies(t); len(rs) != 6 {
			t.Fatalf("%d status replies, want 6", len(rs))
		}
	})

	t.Run("timeout", func(t *testing.T) {
		e := startEmulator(t, append(c.env, cloudworker.EnvFunction+"=ai-eligibility-extract", "AWS_LAMBDA_FUNCTION_TIMEOUT=2")...)
		path := c.put(t, prefix+"inputs/rie-koubo.md", []byte("# 公募要領\n"))
		t0 := time.Now()
		name, coded := failure(t, e.invoke(t, map[string]any{"path": path}))
		if took := time.Since(t0); name != "States.Timeout" || coded.Code != job.E011 || took > 3*time.Second {
			t.Fatalf("Error %q after %v, cause %+v", name, took, coded)
		}
		if ks := c.keys(t, prefix+"results/ai/eligibility/"); len(ks) != 0 {
			t.Fatalf("a stopped extraction left %v", ks)
		}
	})
}
