package cloudworker_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"jobdesk/engine/queueport"
	"jobdesk/sync/cloudconfig"
	"jobdesk/sync/cloudops"
	"jobdesk/sync/cloudworker"
	"jobdesk/sync/s3blob"
	"jobdesk/sync/sqsqueue"
)

// A job message that keeps failing is dead-lettered after MaxReceives receives (the queue's
// redrive policy on local-aws-sqs, the event source mapping played through the queue port's SQS
// adapter), and the operations console shows why: the worker's failure object, which the
// message itself does not carry. The good message of the same batches ran once and is gone.
func TestDeadLetteredJobShowsItsErrorInTheConsole(t *testing.T) {
	c := startCloud(t, nil)
	w := c.worker(t, "document-converter")
	ctx := context.Background()
	dlq := c.sqs.CreateQueue(t, "convert-dlq")
	attrs, err := c.sqs.Client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &dlq,
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.sqs.Client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("convert"), Attributes: map[string]string{
		string(types.QueueAttributeNameRedrivePolicy): sqsqueue.RedrivePolicy(attrs.Attributes[string(types.QueueAttributeNameQueueArn)], cloudworker.MaxReceives)}})
	if err != nil {
		t.Fatal(err)
	}
	q, err := sqsqueue.Open(ctx, c.sqs.Client, aws.ToString(out.QueueUrl))
	if err != nil || q.DeadLetterURL == "" {
		t.Fatalf("open: %v %+v", err, q)
	}
	c.put(t, prefix+"inputs/a.txt", []byte("申請書の記入例です。\n"))
	for _, body := range []string{convertMessage("job-ok", prefix+"inputs/a.txt"), convertMessage("job-dead", prefix+"inputs/missing.pdf")} {
		if _, err := q.Send(ctx, queueport.Outgoing{Body: body}); err != nil {
			t.Fatal(err)
		}
	}

	// Lambda's event source mapping: receive a batch, invoke, delete what did not fail.
	runs := map[string]int{}
	for deadline := time.Now().Add(30 * time.Second); ; {
		if dl, _ := q.DeadLetters(ctx, 10); len(dl) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the failing message was not dead-lettered")
		}
		// No long polling: local-aws-sqs gathers a message again into the same answer when its
		// visibility ends during the wait.
		ds, err := q.Receive(ctx, queueport.ReceiveParams{Max: 10, Visibility: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) == 0 {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		var ev events.SQSEvent
		for _, d := range ds {
			ev.Records = append(ev.Records, events.SQSMessage{MessageId: d.ID, ReceiptHandle: d.Receipt, Body: d.Body, EventSource: "aws:sqs",
				Attributes: map[string]string{"ApproximateReceiveCount": strconv.Itoa(d.ReceiveCount)}})
			var m cloudworker.Message
			json.Unmarshal([]byte(d.Body), &m)
			runs[m.JobID]++
		}
		failed := map[string]bool{}
		for _, f := range w.HandleSQS(ctx, ev).BatchItemFailures {
			failed[f.ItemIdentifier] = true
		}
		for _, d := range ds {
			if !failed[d.ID] {
				if err := q.Delete(ctx, d.Receipt); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if runs["job-ok"] != 1 || runs["job-dead"] != cloudworker.MaxReceives {
		t.Fatalf("deliveries %v: want job-ok once, job-dead %d times", runs, cloudworker.MaxReceives)
	}

	f, err := cloudworker.ReadFailure(ctx, w.Blob, w.Results, "job-dead")
	if err != nil || f == nil || f.Status != cloudworker.StatusFailed || f.ReceiveCount != cloudworker.MaxReceives || f.Error == nil ||
		f.CorrelationID != "corr-job-dead" {
		t.Fatalf("failure object %+v, %v", f, err)
	}
	if ok, _ := cloudworker.ReadFailure(ctx, w.Blob, w.Results, "job-ok"); ok != nil {
		t.Fatalf("the job that succeeded has a failure object: %+v", ok)
	}

	con := &cloudops.Console{Config: cloudconfig.Config{Region: c.sqs.Region, Bucket: c.s3.Bucket, Prefix: prefix,
		Queues: map[string]string{"ATTACHMENT_CONVERT": q.URL}, DeadLetterQueues: map[string]string{"ATTACHMENT_CONVERT": q.DeadLetterURL}},
		SQS: c.sqs.Client, Blobs: s3blob.New(c.s3.Client, s3blob.Options{})}
	dls, err := con.DeadLetters(ctx, "ATTACHMENT_CONVERT", 10)
	if err != nil || len(dls) != 1 {
		t.Fatalf("dead letters %+v, %v", dls, err)
	}
	if d := dls[0]; d.JobID != "job-dead" || d.Error != string(f.Error.Code)+": "+f.Error.Message || !strings.HasPrefix(d.Error, "E0") {
		t.Fatalf("the console shows %+v; the failure was %s", d, f.Error)
	}
	// Without access to the bucket the console still lists the message, without its error.
	con.Blobs = nil
	if dls, err := con.DeadLetters(ctx, "ATTACHMENT_CONVERT", 10); err != nil || len(dls) != 1 || dls[0].Error != "" {
		t.Fatalf("without the bucket: %+v, %v", dls, err)
	}
}

// The status replies go through the queue port's SQS adapter, so a FIFO status queue works: the
// job's replies form one message group, and the reply a redelivered finished job sends again
// counts once.
func TestRepliesOnAFIFOStatusQueueCountOnce(t *testing.T) {
	c := startCloud(t, nil)
	w := c.worker(t, "document-converter")
	ctx := context.Background()
	out, err := c.sqs.Client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("status.fifo"),
		Attributes: map[string]string{string(types.QueueAttributeNameFifoQueue): "true"}})
	if err != nil {
		t.Fatal(err)
	}
	w.StatusQueueURL = aws.ToString(out.QueueUrl)
	c.put(t, prefix+"inputs/a.txt", []byte("申請書の記入例です。\n"))
	ev := sqsEvent(1, convertMessage("job-fifo", prefix+"inputs/a.txt"))
	for delivery := 1; delivery <= 2; delivery++ {
		ev.Records[0].Attributes["ApproximateReceiveCount"] = strconv.Itoa(delivery)
		if resp := w.HandleSQS(ctx, ev); len(resp.BatchItemFailures) != 0 {
			t.Fatalf("delivery %d failed: %+v", delivery, resp)
		}
	}
	status := sqsqueue.New(c.sqs.Client, w.StatusQueueURL)
	var replies []cloudworker.StatusReply
	for {
		ds, err := status.Receive(ctx, queueport.ReceiveParams{Max: 10, Visibility: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) == 0 {
			break
		}
		for _, d := range ds {
			var r cloudworker.StatusReply
			json.Unmarshal([]byte(d.Body), &r)
			if d.GroupID != "job-fifo" {
				t.Fatalf("reply in group %q", d.GroupID)
			}
			replies = append(replies, r)
			status.Delete(ctx, d.Receipt)
		}
	}
	if len(replies) != 1 || replies[0].JobID != "job-fifo" || replies[0].Status != cloudworker.StatusDone {
		t.Fatalf("replies %+v, want one DONE", replies)
	}
}
