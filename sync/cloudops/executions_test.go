package cloudops

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"jobdesk/assets/deploy"
	"jobdesk/sync/cloudconfig"
	"jobdesk/sync/internal/awstest"
)

// jobdeskBinary builds jobdesk once for the package's tests.
var jobdeskBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "jobdesk-cloudops-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "jobdesk")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

// calls records every AWS call the console makes in these tests (its clients come from
// cloudconfig); TestMain checks each against the deploy template's desktop policy.
var (
	stack = deploy.Stack{Name: "jobdesk", Region: awstest.Region, Account: "000000000000", Bucket: "jobdesk-test", Prefix: "jobdesk/"}
	calls = &awstest.Recorder{Rename: func(c deploy.Call) deploy.Call {
		// `jobdesk serve` signs in region local; the executions test's machines boom and fine
		// stand for two deployed workflows.
		c.ARN = strings.NewReplacer(":states:local:", ":states:"+awstest.Region+":",
			":boom", ":caption-generation", ":fine", ":csv-processing").Replace(c.ARN)
		return awstest.StandInNames(stack)(c)
	}}
)

func TestMain(m *testing.M) {
	cloudconfig.APIOptions = append(cloudconfig.APIOptions, calls.Option(awstest.Desktop))
	code := m.Run()
	if code == 0 {
		code = awstest.ReportIAM(calls, stack, "cloudops")
	}
	if bin, err := jobdeskBinary(); err == nil {
		os.RemoveAll(filepath.Dir(bin))
	}
	os.Exit(code)
}

// buildJobdesk returns the jobdesk binary, built from this tree.
func buildJobdesk(t *testing.T) string {
	t.Helper()
	bin, err := jobdeskBinary()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// startServe runs `jobdesk serve` on a free port of 127.0.0.1 with a fresh data folder, and
// points the SDK's environment at it (its key pair from --print-credentials). It returns the
// binary.
func startServe(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	bin := buildJobdesk(t)
	data := filepath.Join(dir, "data")
	creds, err := exec.Command(bin, "--data-dir", data, "serve", "--print-credentials").Output()
	if err != nil {
		t.Fatalf("serve --print-credentials: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(creds)), "\n") {
		k, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		if !ok {
			t.Fatalf("serve --print-credentials printed %q", line)
		}
		t.Setenv(k, strings.Trim(v, `'"`))
	}
	addr, err := awstest.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	p, err := awstest.StartProcess("jobdesk serve", exec.Command(bin, "--data-dir", data, "serve", "--listen", addr),
		awstest.Listening(addr), 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop(15 * time.Second) })
	t.Setenv("AWS_ENDPOINT_URL_SFN", "http://"+addr)
	t.Setenv("AWS_CONFIG_FILE", os.DevNull)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", os.DevNull)
	return bin
}

func TestExecutionsAndRedriveOnJobdeskServe(t *testing.T) {
	bin := startServe(t)
	ctx := context.Background()
	cfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	client := sfn.NewFromConfig(cfg)
	machines := map[string]string{}
	for name, def := range map[string]string{
		"boom": `{"StartAt":"Boom","States":{"Boom":{"Type":"Fail","Error":"Boom","Cause":"on purpose"}}}`,
		"fine": `{"StartAt":"Done","States":{"Done":{"Type":"Pass","End":true}}}`,
	} {
		out, err := client.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String(name), Definition: aws.String(def),
			RoleArn: aws.String("arn:aws:iam::000000000000:role/jobdesk")})
		if err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		machines[name] = aws.ToString(out.StateMachineArn)
	}
	start := func(machine, name string) string {
		out, err := client.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(machines[machine]), Name: aws.String(name)})
		if err != nil {
			t.Fatal(err)
		}
		arn := aws.ToString(out.ExecutionArn)
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			d, err := client.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: &arn})
			if err != nil {
				t.Fatal(err)
			}
			if d.Status != sfntypes.ExecutionStatusRunning {
				return arn
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("execution %s still running after 20 s", name)
		return ""
	}
	failed := start("boom", "boom-1")
	start("fine", "fine-1")
	start("fine", "fine-2")

	c, err := New(ctx, cloudconfig.Config{StateMachines: machines})
	if err != nil {
		t.Fatal(err)
	}
	all, err := c.Executions(ctx, ExecutionFilter{})
	if err != nil || len(all) != 3 {
		t.Fatalf("all executions: %+v, %v; want 3", all, err)
	}
	fails, err := c.Executions(ctx, ExecutionFilter{Status: "failed"})
	if err != nil || len(fails) != 1 || fails[0].ARN != failed || fails[0].Workflow != "boom" || fails[0].Status != "FAILED" || fails[0].StopDate.IsZero() {
		t.Fatalf("failed executions: %+v, %v; want boom-1", fails, err)
	}
	fine, err := c.Executions(ctx, ExecutionFilter{StateMachine: "fine", Status: "SUCCEEDED"})
	if err != nil || len(fine) != 2 {
		t.Fatalf("fine's succeeded executions: %+v, %v; want 2", fine, err)
	}
	if _, err := c.Executions(ctx, ExecutionFilter{Status: "EXPLODED"}); err == nil {
		t.Error("an unknown status was accepted")
	}
	if _, err := c.Executions(ctx, ExecutionFilter{StateMachine: "nope"}); err == nil || !strings.Contains(err.Error(), "boom, fine") {
		t.Errorf("an unknown state machine: %v; want the known ones listed", err)
	}

	// Redrive by name, then by ARN; a succeeded execution cannot be redriven.
	r, err := c.RedriveExecution(ctx, "boom-1", "")
	if err != nil || r.ARN != failed || r.RedriveDate.IsZero() {
		t.Fatalf("redrive boom-1: %+v, %v", r, err)
	}
	// failedAgain waits for boom-1 to have failed again after its n-th redrive.
	failedAgain := func(n int) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			es, err := c.Executions(ctx, ExecutionFilter{StateMachine: machines["boom"], Status: "FAILED"})
			if err != nil {
				t.Fatal(err)
			}
			if len(es) == 1 && es[0].RedriveCount == n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("after redrive %d: %+v; want boom-1 failed again with redrive count %d", n, es, n)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// redrive redrives boom-1 once its last end has settled (the engine refuses until then).
	redrive := func(try func() error) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			err := try()
			if err == nil {
				return
			}
			if !strings.Contains(err.Error(), "still stopping") || time.Now().After(deadline) {
				t.Fatalf("redrive: %v", err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	failedAgain(1)
	redrive(func() error { _, err := c.RedriveExecution(ctx, failed, ""); return err })
	failedAgain(2)
	if _, err := c.RedriveExecution(ctx, "fine-1", ""); err == nil || !strings.Contains(err.Error(), "no failed") {
		t.Errorf("redrive of a succeeded execution: %v", err)
	}

	// The same through the command line.
	data := t.TempDir()
	if err := cloudconfig.Save(data, cloudconfig.Config{Region: "local", StateMachines: machines}); err != nil {
		t.Fatal(err)
	}
	out, _, code := runCLI(t, bin, data, "cloud", "executions", "--status", "FAILED", "--json")
	var listed []Execution
	if code != 0 || json.Unmarshal([]byte(out), &listed) != nil || len(listed) != 1 || listed[0].Name != "boom-1" {
		t.Fatalf("cloud executions --status FAILED --json: exit %d\n%s", code, out)
	}
	out, _, code = runCLI(t, bin, data, "cloud", "executions", "--state-machine", "fine")
	if code != 0 || !strings.Contains(out, "fine-1") || !strings.Contains(out, "fine-2") || strings.Contains(out, "boom-1") {
		t.Fatalf("cloud executions --state-machine fine: exit %d\n%s", code, out)
	}
	redrive(func() error {
		out, stderr, code := runCLI(t, bin, data, "cloud", "executions", "redrive", "boom-1", "--state-machine", "boom")
		if code != 0 || !strings.Contains(out, "Redriven "+failed) {
			return fmt.Errorf("cloud executions redrive boom-1: exit %d\n%s%s", code, out, stderr)
		}
		return nil
	})
	failedAgain(3)
	if _, stderr, code := runCLI(t, bin, data, "cloud", "executions", "redrive", "fine-1"); code != 2 || !strings.Contains(stderr, "E014") {
		t.Fatalf("cloud executions redrive fine-1: exit %d\n%s", code, stderr)
	}
}
