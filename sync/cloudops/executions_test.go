package cloudops

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"
)

// startServe builds jobdesk, runs `jobdesk serve` on a free port of 127.0.0.1 with a fresh data
// folder, and points the SDK's environment at it (its key pair from --print-credentials).
func startServe(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "jobdesk")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
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
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	var stderr bytes.Buffer
	cmd := exec.Command(bin, "--data-dir", data, "serve", "--listen", addr)
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not listen on %s within 20 s:\n%s", addr, stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Setenv("AWS_ENDPOINT_URL_SFN", "http://"+addr)
	t.Setenv("AWS_CONFIG_FILE", os.DevNull)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", os.DevNull)
}

func TestExecutionsAndRedriveOnJobdeskServe(t *testing.T) {
	startServe(t)
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

	c, err := New(ctx, Options{Config: Config{StateMachines: machines}})
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
	deadline := time.Now().Add(20 * time.Second)
	for {
		es, err := c.Executions(ctx, ExecutionFilter{StateMachine: machines["boom"], Status: "FAILED"})
		if err != nil {
			t.Fatal(err)
		}
		if len(es) == 1 && es[0].RedriveCount == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the redrive: %+v; want boom-1 failed again with redrive count 1", es)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := c.RedriveExecution(ctx, failed, ""); err != nil {
		t.Fatalf("redrive by ARN: %v", err)
	}
	if _, err := c.RedriveExecution(ctx, "fine-1", ""); err == nil || !strings.Contains(err.Error(), "no failed") {
		t.Errorf("redrive of a succeeded execution: %v", err)
	}
}
