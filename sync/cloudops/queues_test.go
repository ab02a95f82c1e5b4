package cloudops

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"

	"jobdesk/sync/cloudconfig"
	"jobdesk/sync/internal/awstest"
	"jobdesk/sync/sqsqueue"
)

// sqsBackend is local-aws-sqs with every job type's queue and dead-letter queue (3 receives), as
// the template creates them, and a Console on it configured through the SDK's environment.
type sqsBackend struct {
	srv     *awstest.SQS
	console *Console
}

func startSQSBackend(t *testing.T) *sqsBackend {
	t.Helper()
	srv := awstest.StartSQS(t)
	for _, kv := range srv.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	t.Setenv("AWS_CONFIG_FILE", "/dev/null")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
	ctx := context.Background()
	cfg := cloudconfig.Config{Region: srv.Region, Queues: map[string]string{}, DeadLetterQueues: map[string]string{}}
	for _, jt := range JobTypes() {
		// Named as the deploy template names them in a stack called jobdesk.
		short := strings.ReplaceAll(strings.ToLower(jt), "_", "-")
		name := "jobdesk-" + short + "-queue"
		dlq := srv.CreateQueue(t, "jobdesk-dlq-"+short)
		arn, err := srv.Client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &dlq,
			AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn}})
		if err != nil {
			t.Fatal(err)
		}
		out, err := srv.Client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: map[string]string{
			"RedrivePolicy": sqsqueue.RedrivePolicy(arn.Attributes["QueueArn"], 3)}})
		if err != nil {
			t.Fatal(err)
		}
		cfg.Queues[jt] = aws.ToString(out.QueueUrl)
		if jt != "ATTACHMENT_CONVERT" { // this one's is found through the redrive policy
			cfg.DeadLetterQueues[jt] = dlq
		}
	}
	c, err := New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &sqsBackend{srv: srv, console: c}
}

func TestSendArrivesWithItsFields(t *testing.T) {
	b := startSQSBackend(t)
	ctx := context.Background()
	for jt, body := range validBodies {
		sent, err := b.console.Send(ctx, jt, []byte(body), PrepareOptions{})
		if err != nil {
			t.Fatalf("%s: %v", jt, err)
		}
		res, err := b.srv.Client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(b.console.Config.Queues[jt]), WaitTimeSeconds: 1})
		if err != nil || len(res.Messages) != 1 {
			t.Fatalf("%s: received %v, %v; want the message", jt, res, err)
		}
		var m map[string]any
		json.Unmarshal([]byte(aws.ToString(res.Messages[0].Body)), &m)
		if m["job_type"] != jt || m["job_id"] != sent.JobID || aws.ToString(res.Messages[0].MessageId) != sent.MessageID {
			t.Errorf("%s: received %s; sent %+v", jt, aws.ToString(res.Messages[0].Body), sent)
		}
	}
	if _, err := b.console.Send(ctx, "NOTIFICATION", []byte(`{"notification_type":"NEW_MATCH"}`), PrepareOptions{}); err == nil ||
		!strings.Contains(err.Error(), `"user_id"`) {
		t.Errorf("an invalid message: %v; want E014 naming user_id", err)
	}
}

// deadLetterOne sends a message to jobType's queue and lets it fail three receives, so it lands
// in the dead-letter queue; it returns the job id.
func (b *sqsBackend) deadLetterOne(t *testing.T, jobType string) string {
	t.Helper()
	ctx := context.Background()
	sent, err := b.console.Send(ctx, jobType, []byte(validBodies[jobType]), PrepareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	url := b.console.Config.Queues[jobType]
	for i := 0; i < 3; i++ {
		res, err := b.srv.Client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url, VisibilityTimeout: 1, WaitTimeSeconds: 3})
		if err != nil || len(res.Messages) != 1 {
			t.Fatalf("receive %d: %v, %v", i+1, res, err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		s, err := b.console.Queue(ctx, jobType)
		if err != nil {
			t.Fatal(err)
		}
		if s.DeadLetter != nil && s.DeadLetter.Visible == 1 {
			return sent.JobID
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("the %s message did not reach the dead-letter queue", jobType)
	return ""
}

func TestQueuesDeadLettersAndRedrive(t *testing.T) {
	b := startSQSBackend(t)
	ctx := context.Background()
	c := b.console

	// One message waiting, one in flight.
	for i := 0; i < 2; i++ {
		if _, err := c.Send(ctx, "EVALUATION", []byte(validBodies["EVALUATION"]), PrepareOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.srv.Client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(c.Config.Queues["EVALUATION"]), VisibilityTimeout: 60}); err != nil {
		t.Fatal(err)
	}
	jobID := b.deadLetterOne(t, "ATTACHMENT_CONVERT")

	all, err := c.Queues(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(Schemas) {
		t.Fatalf("%d queues; want %d", len(all), len(Schemas))
	}
	for _, s := range all {
		switch s.JobType {
		case "EVALUATION":
			// local-aws-sqs counts in-flight messages in ApproximateNumberOfMessages too.
			if s.Queue.InFlight != 1 || (s.Queue.Visible != 1 && s.Queue.Visible != 2) || s.MaxReceives != 3 {
				t.Errorf("EVALUATION: %+v; want 1 in flight, 1 visible, max receives 3", s.Queue)
			}
		case "ATTACHMENT_CONVERT":
			if s.DeadLetter == nil || s.DeadLetter.Visible != 1 || s.DeadLetter.OldestAge == nil || time.Duration(*s.DeadLetter.OldestAge) > time.Minute {
				t.Errorf("ATTACHMENT_CONVERT dead letters: %+v; want 1 with its age", s.DeadLetter)
			}
		}
	}

	dls, err := c.DeadLetters(ctx, "ATTACHMENT_CONVERT", 10)
	if err != nil || len(dls) != 1 || dls[0].JobID != jobID || dls[0].JobType != "ATTACHMENT_CONVERT" {
		t.Fatalf("dead letters %+v, %v; want job %s", dls, err, jobID)
	}
	// Listing takes nothing.
	if again, err := c.DeadLetters(ctx, "ATTACHMENT_CONVERT", 10); err != nil || len(again) != 1 {
		t.Fatalf("dead letters again %+v, %v", again, err)
	}

	// A dead letter that tells its error (as Lambda's do).
	_, err = b.srv.Client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(c.Config.DeadLetterQueues["NOTIFICATION"]),
		MessageBody: aws.String(`{"job_type":"NOTIFICATION","job_id":"n-1"}`), MessageAttributes: map[string]types.MessageAttributeValue{
			"ErrorCode":    {DataType: aws.String("String"), StringValue: aws.String("200")},
			"ErrorMessage": {DataType: aws.String("String"), StringValue: aws.String("E001: SendGrid unreachable")}}})
	if err != nil {
		t.Fatal(err)
	}
	if dls, err := c.DeadLetters(ctx, "NOTIFICATION", 10); err != nil || len(dls) != 1 || dls[0].Error != "200 E001: SendGrid unreachable" {
		t.Fatalf("NOTIFICATION dead letters %+v, %v; want its error", dls, err)
	}

	// Redrive with the server's move task.
	r, err := c.Redrive(ctx, "ATTACHMENT_CONVERT")
	if err != nil || r.Method != "move-task" || r.ToMove != 1 {
		t.Fatalf("redrive %+v, %v; want a move task of 1 message", r, err)
	}
	b.expectBack(t, "ATTACHMENT_CONVERT", jobID)
}

// expectBack waits for job id's message on jobType's queue and its dead-letter queue empty.
func (b *sqsBackend) expectBack(t *testing.T, jobType, id string) {
	t.Helper()
	ctx := context.Background()
	res, err := b.srv.Client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(b.console.Config.Queues[jobType]), WaitTimeSeconds: 5})
	if err != nil || len(res.Messages) != 1 || !strings.Contains(aws.ToString(res.Messages[0].Body), id) {
		t.Fatalf("after the redrive, the queue gave %v, %v; want job %s", res, err, id)
	}
	if s, err := b.console.Queue(ctx, jobType); err != nil || s.DeadLetter.Visible != 0 {
		t.Fatalf("after the redrive: %+v, %v; want an empty dead-letter queue", s.DeadLetter, err)
	}
}

// noMoveTasks is an SQS server without StartMessageMoveTask.
type noMoveTasks struct{ SQSAPI }

func (noMoveTasks) StartMessageMoveTask(context.Context, *sqs.StartMessageMoveTaskInput, ...func(*sqs.Options)) (*sqs.StartMessageMoveTaskOutput, error) {
	return nil, &smithy.GenericAPIError{Code: "AWS.SimpleQueueService.UnsupportedOperation", Message: "StartMessageMoveTask is not supported"}
}

func TestRedriveResendsWhereTheServerHasNoMoveTask(t *testing.T) {
	b := startSQSBackend(t)
	b.console.SQS = noMoveTasks{b.console.SQS}
	id := b.deadLetterOne(t, "CAPTION_GENERATION")
	r, err := b.console.Redrive(context.Background(), "CAPTION_GENERATION")
	if err != nil || r.Method != "resend" || r.Moved != 1 {
		t.Fatalf("redrive %+v, %v; want 1 message resent", r, err)
	}
	b.expectBack(t, "CAPTION_GENERATION", id)
}

func TestPurge(t *testing.T) {
	b := startSQSBackend(t)
	ctx := context.Background()
	url, err := b.console.Purge(ctx, "SUBSIDY_SYNC", true)
	if err != nil || url != b.console.Config.DeadLetterQueues["SUBSIDY_SYNC"] {
		t.Fatalf("purge of the dead-letter queue: %q, %v", url, err)
	}
	// A job queue too (`jobdesk cloud purge TYPE`): its messages are gone.
	if _, err := b.srv.Client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(b.console.Config.Queues["NOTIFICATION"]), MessageBody: aws.String("{}")}); err != nil {
		t.Fatal(err)
	}
	url, err = b.console.Purge(ctx, "NOTIFICATION", false)
	if err != nil || url != b.console.Config.Queues["NOTIFICATION"] {
		t.Fatalf("purge of the job queue: %q, %v", url, err)
	}
	if _, err := b.console.Purge(ctx, "NO_SUCH", false); err == nil || !strings.Contains(err.Error(), "no queue") {
		t.Fatalf("purge of an unknown queue: %v", err)
	}
}
