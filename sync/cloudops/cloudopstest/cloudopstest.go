// Package cloudopstest runs a deployed cloud backend on 127.0.0.1 for the tests of the
// operations console's callers outside sync/ (the app's service API, the window): local-aws-sqs
// with a queue and a dead-letter queue per job type (3 receives, as the template makes them),
// versitygw as the bucket and JobDesk's Step Functions stand-in with the given state machines.
// The SDK reaches them through its environment (set with t.Setenv), as the app reaches AWS. Its
// API names no AWS type, so those tests need neither the AWS SDK nor sync/internal.
package cloudopstest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"jobdesk/engine/job"
	"jobdesk/sync/cloudconfig"
	"jobdesk/sync/cloudworker"
	"jobdesk/sync/internal/awstest"
	"jobdesk/sync/internal/sfntest"
	"jobdesk/sync/sqsqueue"
)

// Backend is a running backend.
type Backend struct {
	// Config is the backend as cloud.json names it: region, bucket, every job type's queue and
	// dead-letter queue, the state machines.
	Config cloudconfig.Config
	t      *testing.T
	sqs    *awstest.SQS
	s3     *awstest.S3
	sfn    *sfntest.Server
}

// Start starts the servers for jobTypes' queues and machines (workflow name → ASL; none: no
// Step Functions) and points the SDK's environment at them; they stop when the test ends.
func Start(t *testing.T, jobTypes []string, machines map[string]string) *Backend {
	t.Helper()
	b := &Backend{t: t, sqs: awstest.StartSQS(t), s3: awstest.StartS3(t)}
	for _, kv := range append(b.sqs.Env(), b.s3.Env()...) {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	t.Setenv("AWS_CONFIG_FILE", "/dev/null")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
	t.Setenv("AWS_PROFILE", "")
	b.Config = cloudconfig.Config{Region: b.sqs.Region, Bucket: b.s3.Bucket, Prefix: "jobdesk/", S3PathStyle: true,
		Queues: map[string]string{}, DeadLetterQueues: map[string]string{}}
	ctx := context.Background()
	for _, jt := range jobTypes {
		// Named as the deploy template names them in a stack called jobdesk.
		short := strings.ReplaceAll(strings.ToLower(jt), "_", "-")
		name := "jobdesk-" + short + "-queue"
		dlq := b.sqs.CreateQueue(t, "jobdesk-dlq-"+short)
		arn, err := b.sqs.Client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &dlq,
			AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn}})
		if err != nil {
			t.Fatal(err)
		}
		out, err := b.sqs.Client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: map[string]string{
			"RedrivePolicy": sqsqueue.RedrivePolicy(arn.Attributes["QueueArn"], 3)}})
		if err != nil {
			t.Fatal(err)
		}
		b.Config.Queues[jt] = aws.ToString(out.QueueUrl)
		b.Config.DeadLetterQueues[jt] = dlq
	}
	if len(machines) > 0 {
		b.sfn = sfntest.Start(t, nil, machines)
		t.Setenv("AWS_ENDPOINT_URL_SFN", b.sfn.Endpoint)
		b.Config.StateMachines = map[string]string{}
		for name := range machines {
			b.Config.StateMachines[name] = b.sfn.StateMachineARN(name)
		}
	}
	return b
}

// WriteConfig writes the backend's cloud.json into data folder dir.
func (b *Backend) WriteConfig(dir string) {
	b.t.Helper()
	if err := cloudconfig.Save(dir, b.Config); err != nil {
		b.t.Fatal(err)
	}
}

// Counts are a queue's messages as SQS counts them (local-aws-sqs counts in-flight messages in
// Visible too).
type Counts struct{ Visible, InFlight int }

// Queue returns the counts of jobType's queue, or of its dead-letter queue.
func (b *Backend) Queue(jobType string, deadLetter bool) Counts {
	b.t.Helper()
	url := b.Config.Queues[jobType]
	if deadLetter {
		url = b.Config.DeadLetterQueues[jobType]
	}
	out, err := b.sqs.Client.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{QueueUrl: &url,
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameAll}})
	if err != nil {
		b.t.Fatal(err)
	}
	n := func(k types.QueueAttributeName) int {
		var v int
		json.Unmarshal([]byte(out.Attributes[string(k)]), &v)
		return v
	}
	return Counts{Visible: n(types.QueueAttributeNameApproximateNumberOfMessages),
		InFlight: n(types.QueueAttributeNameApproximateNumberOfMessagesNotVisible)}
}

// Take receives one message of jobType's queue and keeps it in flight for a minute; it returns
// the body ("" when none came within 2 seconds).
func (b *Backend) Take(jobType string) string {
	b.t.Helper()
	res, err := b.sqs.Client.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(b.Config.Queues[jobType]),
		VisibilityTimeout: 60, WaitTimeSeconds: 2})
	if err != nil {
		b.t.Fatal(err)
	}
	if len(res.Messages) == 0 {
		return ""
	}
	return aws.ToString(res.Messages[0].Body)
}

// DeadLetter makes the next message of jobType's queue fail three receives, so SQS moves it to
// the dead-letter queue, and records its failure as the worker does (cloudworker.FailureURI)
// with failure's code and sentence. It returns the message's job id once it is there.
func (b *Backend) DeadLetter(jobType string, failure *job.Error) string {
	b.t.Helper()
	ctx := context.Background()
	url := b.Config.Queues[jobType]
	var body string
	for i := 0; i < 3; i++ {
		res, err := b.sqs.Client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url, VisibilityTimeout: 1, WaitTimeSeconds: 3})
		if err != nil || len(res.Messages) != 1 {
			b.t.Fatalf("receive %d of %s: %v, %v", i+1, jobType, res, err)
		}
		body = aws.ToString(res.Messages[0].Body)
	}
	var m struct {
		JobID string `json:"job_id"`
	}
	json.Unmarshal([]byte(body), &m)
	f, _ := json.Marshal(cloudworker.JobFailure{JobID: m.JobID, JobType: jobType, Status: "FAILED", ReceiveCount: 3, Error: failure,
		At: time.Now().UTC()})
	key := strings.TrimPrefix(cloudworker.FailureURI(cloudworker.Config{Bucket: b.Config.Bucket, Prefix: b.Config.Prefix}.Results(), m.JobID),
		"s3://"+b.Config.Bucket+"/")
	if _, err := b.s3.Client.PutObject(ctx, &s3.PutObjectInput{Bucket: &b.Config.Bucket, Key: &key, Body: strings.NewReader(string(f))}); err != nil {
		b.t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for b.Queue(jobType, true).Visible == 0 {
		if time.Now().After(deadline) {
			b.t.Fatalf("the %s message did not reach the dead-letter queue", jobType)
		}
		// A receive lets the server see the message's last lease run out and move it.
		b.sqs.Client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url, VisibilityTimeout: 1, WaitTimeSeconds: 1})
	}
	return m.JobID
}

// Run starts an execution of state machine workflow named name and waits (up to 20 seconds)
// until it has stopped; it returns the execution's ARN.
func (b *Backend) Run(workflow, name string) string {
	b.t.Helper()
	ctx := context.Background()
	out, err := b.sfn.Client.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(b.Config.StateMachines[workflow]),
		Name: aws.String(name)})
	if err != nil {
		b.t.Fatal(err)
	}
	arn := aws.ToString(out.ExecutionArn)
	b.WaitStopped(arn)
	return arn
}

// WaitStopped waits (up to 20 seconds) until execution arn is no longer running, and returns its
// status.
func (b *Backend) WaitStopped(arn string) string {
	b.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		d, err := b.sfn.Client.DescribeExecution(context.Background(), &sfn.DescribeExecutionInput{ExecutionArn: &arn})
		if err != nil {
			b.t.Fatal(err)
		}
		if d.Status != sfntypes.ExecutionStatusRunning && d.Status != sfntypes.ExecutionStatusPendingRedrive {
			return string(d.Status)
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("execution %s still %s after 20 s", arn, d.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
