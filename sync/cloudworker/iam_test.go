package cloudworker_test

import (
	"context"
	"os"
	"path"
	"testing"

	"jobdesk/assets/deploy"
	"jobdesk/sync/cloudworker"
	"jobdesk/sync/internal/awstest"
)

// Every AWS call a worker built by cloudworker.New makes in these tests is recorded as its
// function's (JOBDESK_FUNCTION) and checked against the deploy template's policy for that
// function; the tests' status queues (standard and FIFO) are the stack's.
func TestMain(m *testing.M) {
	stack := deploy.Stack{Name: "jobdesk", Region: awstest.Region, Account: "000000000000", Bucket: "jobdesk-test", Prefix: prefix,
		BedrockModelID: "anthropic.claude-test"}
	calls := &awstest.Recorder{Rename: func(c deploy.Call) deploy.Call {
		if b := path.Base(c.QueueURL); b == "status-queue" || b == "status.fifo" { // the tests' status queues
			c.QueueURL = path.Dir(c.QueueURL) + "/" + stack.Name + "-status-queue"
		}
		return awstest.StandInNames(stack)(c)
	}}
	cloudworker.APIOptions = append(cloudworker.APIOptions, calls.Option(func(context.Context) string {
		return deploy.FunctionPrincipal(os.Getenv(cloudworker.EnvFunction))
	}))
	code := m.Run()
	if code == 0 {
		code = awstest.ReportIAM(calls, stack, "cloudworker")
	}
	os.Exit(code)
}
