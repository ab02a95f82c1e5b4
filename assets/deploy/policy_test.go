package deploy

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

var testStack = Stack{Name: "jobdesk", Region: "ap-northeast-1", Account: "123456789012", Bucket: "jobdesk-bucket-1a2b", Prefix: "jobdesk/"}

// TestPolicyReadsTheTemplate: the template's grants resolved for a stack, checked on calls the
// code makes, including ones the template must refuse.
func TestPolicyReadsTheTemplate(t *testing.T) {
	p, err := ReadPolicy(Template, testStack)
	if err != nil {
		t.Fatal(err)
	}
	q := func(name string) string { return "https://sqs.ap-northeast-1.amazonaws.com/123456789012/" + name }
	cases := []struct {
		call Call
		ok   bool
	}{
		{Call{Principal: DesktopPrincipal, Service: "SQS", Operation: "SendMessage", QueueURL: q("jobdesk-notification-queue")}, true},
		{Call{Principal: DesktopPrincipal, Service: "SQS", Operation: "SendMessage", QueueURL: q("other-stack-notification-queue")}, false},
		{Call{Principal: DesktopPrincipal, Service: "SQS", Operation: "PurgeQueue", QueueURL: q("jobdesk-notification-queue")}, true},
		{Call{Principal: DesktopPrincipal, Service: "SQS", Operation: "PurgeQueue", QueueURL: q("jobdesk-dlq-notification")}, true},
		{Call{Principal: DesktopPrincipal, Service: "SQS", Operation: "ChangeMessageVisibilityBatch", QueueURL: q("jobdesk-dlq-notification")}, true},
		{Call{Principal: DesktopPrincipal, Service: "SQS", Operation: "DeleteQueue", QueueURL: q("jobdesk-dlq-notification")}, false},
		{Call{Principal: DesktopPrincipal, Service: "S3", Operation: "HeadObject", Bucket: testStack.Bucket, Key: "jobdesk/inputs/ab/cd"}, true},
		{Call{Principal: DesktopPrincipal, Service: "S3", Operation: "PutObject", Bucket: testStack.Bucket, Key: "elsewhere/x"}, false},
		{Call{Principal: FunctionPrincipal("csv-processor"), Service: "S3", Operation: "GetObject", Bucket: testStack.Bucket, Key: "jobdesk/inputs/x"}, true},
		{Call{Principal: FunctionPrincipal("csv-processor"), Service: "S3", Operation: "PutObject", Bucket: testStack.Bucket, Key: "jobdesk/inputs/x"}, false},
		{Call{Principal: FunctionPrincipal("csv-processor"), Service: "Bedrock Runtime", Operation: "Converse", ModelID: "anthropic.claude-3-haiku-20240307-v1:0"}, false},
		{Call{Principal: FunctionPrincipal("ai-caption-generation"), Service: "Bedrock Runtime", Operation: "Converse", ModelID: "anthropic.claude-3-haiku-20240307-v1:0"}, true},
		{Call{Principal: DesktopPrincipal, Service: "SFN", Operation: "StartExecution", ARN: "arn:aws:states:ap-northeast-1:123456789012:stateMachine:jobdesk-csv-processing"}, true},
		{Call{Principal: DesktopPrincipal, Service: "SFN", Operation: "DescribeExecution", ARN: "arn:aws:states:ap-northeast-1:123456789012:execution:jobdesk-csv-processing:j-1"}, true},
		{Call{Principal: DesktopPrincipal, Service: "SFN", Operation: "DescribeExecution", ARN: "arn:aws:states:ap-northeast-1:123456789012:execution:other-csv-processing:j-1"}, false},
	}
	for _, c := range cases {
		errs := p.Check([]Call{c.call})
		if (len(errs) == 0) != c.ok {
			t.Errorf("%s %s %s%s%s: allowed=%v, want %v %v", c.call.Principal, c.call.Service, c.call.Operation, c.call.QueueURL, c.call.Key, len(errs) == 0, c.ok, errs)
		}
	}
	if errs := p.Check([]Call{{Principal: DesktopPrincipal, Service: "S3", Operation: "SelectObjectContent"}}); len(errs) != 1 || !strings.Contains(errs[0], "no rule") {
		t.Errorf("an operation with no rule must fail the check: %v", errs)
	}
}

// serviceMade are the grants AWS services use on the stack's behalf, which no JobDesk code
// calls and so no test records: Lambda writes the functions' logs and, for an event source
// mapping, polls and deletes the queue's messages with the function's role; Step Functions
// invokes the functions, delivers its logs, publishes task-generation's notifications and
// starts the Distributed Map's child executions with the state machines' roles.
var serviceMade = []string{
	"logs:CreateLogStream * Logs", "logs:PutLogEvents * Logs",
	"sqs:ReceiveMessage * ConsumeJobQueue", "sqs:DeleteMessage * ConsumeJobQueue",
	"sqs:ChangeMessageVisibility * ConsumeJobQueue", "sqs:GetQueueAttributes * ConsumeJobQueue",
	"lambda:InvokeFunction * InvokeItsFunctions", "logs:* * LogDelivery", "sns:Publish * PublishNotifications",
	"states:* * DistributedMapChildren", "states:* * DistributedMapChildExecutions",
}

// notRecorded are grants the code uses where no recorded SDK client sees it, each with where it
// is tested instead. Keep this list short: each entry is a call the IAM check cannot vouch for.
var notRecorded = map[string]string{
	"bedrock:GetFoundationModelAvailability DesktopPolicy ModelAvailability": "cloud status asks over HTTP (sync/cloudstatus/bedrock.go, TestCheckSaysWhetherTheBedrockModelIsEnabled)",
	"s3:AbortMultipartUpload DesktopPolicy Files":                            "only after a failed multipart upload (sync/s3blob/upload.go)",
	"s3:AbortMultipartUpload FunctionDataPolicy ReadWriteResults":            "only after a failed multipart write (sync/s3blob)",
	"sqs:ReceiveMessage DesktopPolicy ReadStatus":                            "the mirror's tests feed it from an in-process queue (sync/mirror)",
	"sqs:DeleteMessage DesktopPolicy ReadStatus":                             "the mirror's tests feed it from an in-process queue (sync/mirror)",
	"sqs:ChangeMessageVisibility DesktopPolicy ReadStatus":                   "the mirror hands back a status message it cannot use yet (sync/mirror)",
	"sqs:GetQueueAttributes DesktopPolicy ReadStatus":                        "the console counts the status queue (sync/cloudops queues)",
	"bedrock:InvokeModel AiCaptionGenerationRole Bedrock":                    "the same Bedrock provider as ai-eligibility-extract's, whose calls are recorded; no test runs captions against the Bedrock stand-in",
}

// TestEveryGrantIsUsed: every permission the template grants is used by a call the sync tests
// recorded (assets/deploy/testdata/calls, written from their runs), or by an AWS service on the
// stack's behalf (serviceMade); and every recorded use names a grant the template still has.
func TestEveryGrantIsUsed(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "calls", "*.txt"))
	if len(files) == 0 {
		t.Fatal("no recorded calls in testdata/calls: run the sync tests with JOBDESK_UPDATE_IAM=1")
	}
	used := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			used[l] = filepath.Base(f)
		}
	}
	p, err := ReadPolicy(Template, testStack)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range unusedGrants(p.GrantKeys(), used) {
		t.Error(e)
	}
	for k := range notRecorded {
		found := false
		for _, g := range p.GrantKeys() {
			if strings.HasSuffix(g, " "+k) {
				found = true
			}
		}
		if !found {
			t.Errorf("notRecorded names %s, which the template does not grant", k)
		}
	}
}

// unusedGrants compares the grants ("PRINCIPAL ACTION STATEMENT") with the recorded uses, by
// statement and action: a statement shared by several principals (FunctionDataPolicy) is used
// when any of them uses it.
func unusedGrants(grants []string, used map[string]string) []string {
	strip := func(k string) string { _, rest, _ := strings.Cut(k, " "); return rest }
	usedBy := map[string]string{}
	for u, file := range used {
		usedBy[strip(u)] = file
	}
	var errs []string
	have := map[string]bool{}
	for _, g := range grants {
		k := strip(g)
		have[k] = true
		if _, ok := usedBy[k]; ok || notRecorded[k] != "" {
			continue
		}
		service := false
		for _, s := range serviceMade {
			if wildMatch(s, k) {
				service = true
			}
		}
		if !service && !slices.Contains(errs, "granted but no recorded call uses it: "+k) {
			errs = append(errs, "granted but no recorded call uses it: "+k)
		}
	}
	for u, file := range used {
		if !have[strip(u)] {
			errs = append(errs, "testdata/calls/"+file+" names "+u+", which the template no longer grants")
		}
	}
	sort.Strings(errs)
	return errs
}

// TestUnusedGrantIsFound: a grant nothing uses, and a recorded use of a grant that is gone, both
// fail the check.
func TestUnusedGrantIsFound(t *testing.T) {
	errs := unusedGrants([]string{"desktop sqs:SendMessage DesktopPolicy SendJobs", "desktop sqs:DeleteQueue DesktopPolicy SendJobs",
		"function:csv-processor logs:PutLogEvents CsvProcessorRole Logs"},
		map[string]string{"desktop sqs:SendMessage DesktopPolicy SendJobs": "a.txt", "desktop s3:GetObject DesktopPolicy Files": "a.txt"})
	if len(errs) != 2 || !strings.Contains(errs[0], "sqs:DeleteQueue") || !strings.Contains(errs[1], "no longer grants") {
		t.Fatalf("%q", errs)
	}
}
