package sqsqueue_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"jobdesk/engine/queueport"
	"jobdesk/engine/queueport/queueporttest"
	"jobdesk/sync/internal/awstest"
	"jobdesk/sync/sqsqueue"
)

var queueSeq atomic.Int64

// CreateWithDLQ creates a queue (FIFO when fifo) and its dead-letter queue with a redrive policy
// of maxReceives, and returns the queue's URL.
func createWithDLQ(t *testing.T, srv *awstest.SQS, fifo bool, maxReceives int) string {
	t.Helper()
	ctx := context.Background()
	n := queueSeq.Add(1)
	name, dlqName := fmt.Sprintf("contract-%d", n), fmt.Sprintf("dlq-contract-%d", n)
	attrs := map[string]string{}
	if fifo {
		name, dlqName = name+".fifo", dlqName+".fifo"
		attrs[string(types.QueueAttributeNameFifoQueue)] = "true"
	}
	dlq, err := srv.Client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(dlqName), Attributes: attrs})
	if err != nil {
		t.Fatal(err)
	}
	arn, err := srv.Client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: dlq.QueueUrl,
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatal(err)
	}
	main := map[string]string{string(types.QueueAttributeNameRedrivePolicy): sqsqueue.RedrivePolicy(
		arn.Attributes[string(types.QueueAttributeNameQueueArn)], maxReceives)}
	for k, v := range attrs {
		main[k] = v
	}
	out, err := srv.Client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: main})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(out.QueueUrl)
}

// TestPortContract runs the queue-port contract (the same suite as the SQLite queue's) against
// local-aws-sqs.
func TestPortContract(t *testing.T) {
	srv := awstest.StartSQS(t)
	queueporttest.Run(t, func(t *testing.T, c queueporttest.Config) queueport.Port {
		url := createWithDLQ(t, srv, c.FIFO, c.MaxReceives)
		q, err := sqsqueue.Open(context.Background(), srv.Client, url)
		if err != nil {
			t.Fatal(err)
		}
		if q.DeadLetterURL == "" || q.MaxReceives != c.MaxReceives || q.FIFO != c.FIFO {
			t.Fatalf("opened %+v; want its dead-letter queue, max receives %d, FIFO %v", q, c.MaxReceives, c.FIFO)
		}
		return q
	})
}

func TestParseRedrivePolicy(t *testing.T) {
	for _, c := range []struct {
		in   string
		arn  string
		max  int
		fail bool
	}{
		{``, "", 0, false},
		{`{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:1:d","maxReceiveCount":3}`, "arn:aws:sqs:us-east-1:1:d", 3, false},
		{`{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:1:d","maxReceiveCount":"5"}`, "arn:aws:sqs:us-east-1:1:d", 5, false},
		{`{"maxReceiveCount":"x"}`, "", 0, true},
		{`nope`, "", 0, true},
	} {
		arn, max, err := sqsqueue.ParseRedrivePolicy(c.in)
		if (err != nil) != c.fail || arn != c.arn || max != c.max {
			t.Errorf("ParseRedrivePolicy(%s) = %q, %d, %v", c.in, arn, max, err)
		}
	}
}
