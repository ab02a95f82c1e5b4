package deploy

import (
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
