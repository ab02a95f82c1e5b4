package cloudops

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"jobdesk/sync/cloudconfig"
)

// runCLI runs `jobdesk --data-dir data ARGS…` with the test's environment and no terminal on
// stdin, and returns its stdout, stderr and exit code.
func runCLI(t *testing.T, bin, data string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"--data-dir", data}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("jobdesk %v: %v", args, err)
	}
	return stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()
}

// stackJSON is what `aws cloudformation describe-stacks` prints for a stack whose outputs are
// the backend's queues.
func stackJSON(t *testing.T, c cloudconfig.Config) string {
	t.Helper()
	type output struct{ OutputKey, OutputValue string }
	outs := []output{{"Region", c.Region}, {"Bucket", "jobdesk-bucket"}, {"Prefix", "jobdesk/"}, {"StatusQueue", c.Queues["EVALUATION"]},
		{"StateMachineCsvProcessing", "arn:aws:states:us-east-1:000000000000:stateMachine:jobdesk-csv-processing"}}
	for jt, u := range c.Queues {
		pascal := ""
		for _, w := range strings.Split(strings.ToLower(jt), "_") {
			pascal += strings.ToUpper(w[:1]) + w[1:]
		}
		outs = append(outs, output{"Queue" + pascal, u}, output{"DeadLetterQueue" + pascal, c.DeadLetterQueues[jt]})
	}
	b, _ := json.Marshal(map[string]any{"Stacks": []any{map[string]any{"StackName": "jobdesk", "Outputs": outs}}})
	return string(b)
}

// The console on the command line: cloud.json from the stack's outputs, a message sent (and
// seen arriving by the AWS CLI), queues, dead letters, redrive and purge with their confirmation.
func TestCommandLine(t *testing.T) {
	bin := buildJobdesk(t)
	b := startSQSBackend(t)
	// Every dead-letter queue in the outputs, as the stack has them.
	b.console.Config.DeadLetterQueues["ATTACHMENT_CONVERT"] = strings.Replace(strings.Replace(b.console.Config.Queues["ATTACHMENT_CONVERT"], "/jobdesk-", "/jobdesk-dlq-", 1), "-queue", "", 1)
	b.console.Config.Region = b.srv.Region
	data := t.TempDir()
	stack := filepath.Join(t.TempDir(), "stack.json")
	if err := os.WriteFile(stack, []byte(stackJSON(t, b.console.Config)), 0o600); err != nil {
		t.Fatal(err)
	}
	// The device's own settings, which the stack does not give, stay.
	if err := cloudconfig.Save(data, cloudconfig.Config{UserID: "staff-1", Auto: cloudconfig.Thresholds{Documents: 7}}); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runCLI(t, bin, data, "cloud", "config", "--from-stack-outputs", stack)
	if code != 0 || !strings.Contains(out, "7 queues") {
		t.Fatalf("cloud config: exit %d\n%s%s", code, out, stderr)
	}
	written, err := cloudconfig.Load(data, func(string) string { return "" }, nil)
	if err != nil || written.Queues["NOTIFICATION"] != b.console.Config.Queues["NOTIFICATION"] || written.StateMachines["csv-processing"] == "" ||
		written.UserID != "staff-1" || written.Auto.Documents != 7 || written.DeadLetterQueues["ATTACHMENT_CONVERT"] == "" {
		t.Fatalf("cloud.json: %+v, %v", written, err)
	}

	// send: checked first, then sent; the AWS CLI sees it arrive.
	_, stderr, code = runCLI(t, bin, data, "cloud", "send", "NOTIFICATION", "--body", `{"notification_type":"NEW_MATCH","company_id":"c1","data":{"title":"t","message":"m"}}`)
	if code != 2 || !strings.Contains(stderr, `E014: NOTIFICATION message: field "user_id" is missing`) || !strings.Contains(stderr, `項目 "user_id" がありません`) {
		t.Fatalf("cloud send without user_id: exit %d\n%s", code, stderr)
	}
	body := filepath.Join(t.TempDir(), "sync.json")
	os.WriteFile(body, []byte(validBodies["SUBSIDY_SYNC"]), 0o600)
	out, stderr, code = runCLI(t, bin, data, "cloud", "send", "subsidy-sync", "--body", "@"+body, "--json")
	var sent Sent
	if code != 0 || json.Unmarshal([]byte(out), &sent) != nil || sent.JobType != "SUBSIDY_SYNC" || sent.MessageID == "" {
		t.Fatalf("cloud send SUBSIDY_SYNC: exit %d\n%s%s", code, out, stderr)
	}
	aws := exec.Command("/usr/bin/aws", "sqs", "get-queue-attributes", "--endpoint-url", b.srv.Endpoint, "--queue-url", sent.QueueURL,
		"--attribute-names", "ApproximateNumberOfMessages", "--output", "json")
	aws.Env = append(os.Environ(), "AWS_PAGER=")
	awsOut, err := aws.CombinedOutput()
	if err != nil {
		t.Fatalf("aws sqs get-queue-attributes (the AWS CLI is Debian's awscli, scripts/deps.sh): %v\n%s", err, awsOut)
	}
	var attrs struct{ Attributes map[string]string }
	if json.Unmarshal(awsOut, &attrs) != nil || attrs.Attributes["ApproximateNumberOfMessages"] != "1" {
		t.Fatalf("the AWS CLI sees %s; want the 1 message sent", awsOut)
	}

	// A dead letter, seen by queues and dlq.
	jobID := b.deadLetterOne(t, "ATTACHMENT_CONVERT")
	out, _, code = runCLI(t, bin, data, "cloud", "queues", "--json")
	var qs []QueueStatus
	if code != 0 || json.Unmarshal([]byte(out), &qs) != nil || len(qs) != 7 {
		t.Fatalf("cloud queues --json: exit %d\n%s", code, out)
	}
	for _, q := range qs {
		if q.JobType == "ATTACHMENT_CONVERT" && (q.DeadLetter == nil || q.DeadLetter.Visible != 1) {
			t.Errorf("cloud queues: %+v; want 1 dead letter", q)
		}
		if q.JobType == "SUBSIDY_SYNC" && q.Queue.Visible != 1 {
			t.Errorf("cloud queues: %+v; want 1 visible", q)
		}
	}
	out, _, code = runCLI(t, bin, data, "cloud", "queues")
	if code != 0 || !strings.Contains(out, "JOB TYPE") || !strings.Contains(out, "ATTACHMENT_CONVERT") {
		t.Fatalf("cloud queues: exit %d\n%s", code, out)
	}
	out, _, code = runCLI(t, bin, data, "cloud", "dlq", "ATTACHMENT_CONVERT")
	if code != 0 || !strings.Contains(out, jobID) {
		t.Fatalf("cloud dlq: exit %d\n%s", code, out)
	}

	// redrive and purge: refused without a terminal or --yes.
	for _, args := range [][]string{{"cloud", "redrive", "ATTACHMENT_CONVERT"}, {"cloud", "purge", "SUBSIDY_SYNC"}} {
		if _, stderr, code := runCLI(t, bin, data, args...); code != 2 || !strings.Contains(stderr, "--yes") {
			t.Fatalf("%v without --yes: exit %d\n%s", args, code, stderr)
		}
	}
	if s, _ := b.console.Queue(t.Context(), "ATTACHMENT_CONVERT"); s.DeadLetter.Visible != 1 {
		t.Fatal("a refused redrive moved messages")
	}
	out, stderr, code = runCLI(t, bin, data, "cloud", "redrive", "attachment-convert", "--yes")
	if code != 0 || !strings.Contains(out, "Started moving 1 messages") {
		t.Fatalf("cloud redrive --yes: exit %d\n%s%s", code, out, stderr)
	}
	b.expectBack(t, "ATTACHMENT_CONVERT", jobID)
	out, stderr, code = runCLI(t, bin, data, "cloud", "purge", "SUBSIDY_SYNC", "--yes")
	if code != 0 || !strings.Contains(out, "Purging "+b.console.Config.Queues["SUBSIDY_SYNC"]) {
		t.Fatalf("cloud purge --yes: exit %d\n%s%s", code, out, stderr)
	}

	// Without cloud.json, a queue named on the command line (its dead-letter queue found
	// through its redrive policy).
	bare := t.TempDir()
	out, stderr, code = runCLI(t, bin, bare, "cloud", "send", "EVALUATION", "--queue-url", b.console.Config.Queues["EVALUATION"],
		"--region", b.srv.Region, "--body", validBodies["EVALUATION"])
	if code != 0 || !strings.Contains(out, "Sent EVALUATION job") {
		t.Fatalf("cloud send --queue-url: exit %d\n%s%s", code, out, stderr)
	}
	out, stderr, code = runCLI(t, bin, bare, "cloud", "dlq", "EVALUATION", "--queue-url", b.console.Config.Queues["EVALUATION"], "--json")
	if code != 0 || strings.TrimSpace(out) != "[]" {
		t.Fatalf("cloud dlq --queue-url: exit %d\n%s%s", code, out, stderr)
	}

	// Without cloud.json, a hint.
	if _, stderr, code := runCLI(t, bin, t.TempDir(), "cloud", "queues"); code != 2 || !strings.Contains(stderr, "--from-stack-outputs") {
		t.Fatalf("cloud queues without cloud.json: exit %d\n%s", code, stderr)
	}
}
