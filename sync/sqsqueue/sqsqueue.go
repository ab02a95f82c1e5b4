// Package sqsqueue is the queue port (engine/queueport) over Amazon SQS: the adapter the cloud
// worker's SQS path and the operations console use, so they speak the same verbs as the device's
// SQLite queue (engine/queue's MessageQueue). Dead-lettering is the queue's redrive policy; Open
// reads it to find the dead-letter queue.
package sqsqueue

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"jobdesk/engine/queueport"
)

// API is the part of *sqs.Client the adapter calls.
type API interface {
	SendMessage(context.Context, *sqs.SendMessageInput, ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
	ReceiveMessage(context.Context, *sqs.ReceiveMessageInput, ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	ChangeMessageVisibility(context.Context, *sqs.ChangeMessageVisibilityInput, ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error)
	DeleteMessage(context.Context, *sqs.DeleteMessageInput, ...func(*sqs.Options)) (*sqs.DeleteMessageOutput, error)
	GetQueueAttributes(context.Context, *sqs.GetQueueAttributesInput, ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error)
	GetQueueUrl(context.Context, *sqs.GetQueueUrlInput, ...func(*sqs.Options)) (*sqs.GetQueueUrlOutput, error)
}

// Queue is one SQS queue as a queueport.Port.
type Queue struct {
	client API
	// URL is the queue's URL.
	URL string
	// DeadLetterURL is its dead-letter queue's URL ("" when it has no redrive policy).
	DeadLetterURL string
	// MaxReceives is the redrive policy's maxReceiveCount (0 without one).
	MaxReceives int
	// FIFO is set for a FIFO queue (its name ends in .fifo): ordered within a message group,
	// deduplicated by MessageDeduplicationId.
	FIFO bool
}

var _ queueport.Port = (*Queue)(nil)

// DefaultGroup is the message group of a FIFO message sent without one.
const DefaultGroup = "default"

// New returns the queue at url without asking SQS anything; set DeadLetterURL and MaxReceives
// when known (Open reads them from the queue).
func New(client API, url string) *Queue {
	return &Queue{client: client, URL: url, FIFO: strings.HasSuffix(url, ".fifo")}
}

// Open returns the queue at url with its dead-letter queue, read from its RedrivePolicy.
func Open(ctx context.Context, client API, url string) (*Queue, error) {
	q := New(client, url)
	out, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &url,
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameRedrivePolicy}})
	if err != nil {
		return nil, err
	}
	dlqArn, maxReceives, err := ParseRedrivePolicy(out.Attributes[string(types.QueueAttributeNameRedrivePolicy)])
	if err != nil || dlqArn == "" {
		return q, err
	}
	q.MaxReceives = maxReceives
	q.DeadLetterURL, err = URLOfArn(ctx, client, dlqArn)
	return q, err
}

// URLOfArn returns the URL of the queue an ARN names (arn:aws:sqs:REGION:ACCOUNT:NAME).
func URLOfArn(ctx context.Context, client API, arn string) (string, error) {
	parts := strings.Split(arn, ":")
	if len(parts) != 6 || parts[2] != "sqs" {
		return "", fmt.Errorf("%q is not an SQS queue ARN", arn)
	}
	out, err := client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(parts[5]), QueueOwnerAWSAccountId: aws.String(parts[4])})
	if err != nil {
		// Some servers know no account id of their own: ask by name alone.
		if out, err = client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(parts[5])}); err != nil {
			return "", err
		}
	}
	return aws.ToString(out.QueueUrl), nil
}

// seconds rounds d up to whole seconds, as SQS counts them, within [0, limit].
func seconds(d time.Duration, limit int32) int32 {
	s := int32(math.Ceil(d.Seconds()))
	return max(0, min(s, limit))
}

// Send sends the body. On a FIFO queue the message goes to its GroupID (DefaultGroup when
// empty) with its DedupID as MessageDeduplicationId (required unless the queue deduplicates by
// content); a standard queue ignores both.
func (q *Queue) Send(ctx context.Context, m queueport.Outgoing) (string, error) {
	in := &sqs.SendMessageInput{QueueUrl: &q.URL, MessageBody: &m.Body}
	if q.FIFO {
		group := m.GroupID
		if group == "" {
			group = DefaultGroup
		}
		in.MessageGroupId = &group
		if m.DedupID != "" {
			in.MessageDeduplicationId = aws.String(m.DedupID)
		}
	}
	out, err := q.client.SendMessage(ctx, in)
	if err != nil {
		return "", err
	}
	return aws.ToString(out.MessageId), nil
}

// receiveAttributes are the system attributes a receive asks for, through both the current
// field and the older AttributeNames one (some servers read only that).
var receiveAttributes = []types.MessageSystemAttributeName{
	types.MessageSystemAttributeNameApproximateReceiveCount, types.MessageSystemAttributeNameMessageGroupId,
	types.MessageSystemAttributeNameSentTimestamp,
}

func (q *Queue) receive(ctx context.Context, url string, max int32, visibility, wait int32) ([]types.Message, error) {
	old := make([]types.QueueAttributeName, len(receiveAttributes))
	for i, a := range receiveAttributes {
		old[i] = types.QueueAttributeName(a)
	}
	out, err := q.client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: max,
		VisibilityTimeout: visibility, WaitTimeSeconds: wait, MessageSystemAttributeNames: receiveAttributes,
		AttributeNames: old})
	if err != nil {
		return nil, err
	}
	return out.Messages, nil
}

// Receive receives up to p.Max messages (long polling up to p.Wait, at most 20 s).
func (q *Queue) Receive(ctx context.Context, p queueport.ReceiveParams) ([]queueport.Delivery, error) {
	p = p.Normalized()
	ms, err := q.receive(ctx, q.URL, int32(p.Max), seconds(p.Visibility, 12*3600), seconds(p.Wait, 20))
	if err != nil {
		return nil, err
	}
	return Deliveries(ms), nil
}

// Deliveries turns received SQS messages into the port's.
func Deliveries(ms []types.Message) []queueport.Delivery {
	if len(ms) == 0 {
		return nil
	}
	out := make([]queueport.Delivery, len(ms))
	for i, m := range ms {
		n, _ := strconv.Atoi(m.Attributes[string(types.MessageSystemAttributeNameApproximateReceiveCount)])
		out[i] = queueport.Delivery{ID: aws.ToString(m.MessageId), Body: aws.ToString(m.Body), Receipt: aws.ToString(m.ReceiptHandle),
			ReceiveCount: n, GroupID: m.Attributes[string(types.MessageSystemAttributeNameMessageGroupId)]}
	}
	return out
}

// Extend changes the message's visibility timeout (0: visible at once).
func (q *Queue) Extend(ctx context.Context, receipt string, visibility time.Duration) error {
	_, err := q.client.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: &q.URL,
		ReceiptHandle: &receipt, VisibilityTimeout: seconds(visibility, 12*3600)})
	return receiptError(err)
}

// Delete deletes the message.
func (q *Queue) Delete(ctx context.Context, receipt string) error {
	_, err := q.client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &q.URL, ReceiptHandle: &receipt})
	return receiptError(err)
}

func receiptError(err error) error {
	var invalid *types.ReceiptHandleIsInvalid
	var notInFlight *types.MessageNotInflight
	if errors.As(err, &invalid) || errors.As(err, &notInFlight) {
		return fmt.Errorf("%w: %v", queueport.ErrReceiptInvalid, err)
	}
	return err
}

// DeadLetters lists up to max messages of the dead-letter queue without taking them (see Peek).
func (q *Queue) DeadLetters(ctx context.Context, max int) ([]queueport.Delivery, error) {
	if q.DeadLetterURL == "" {
		return nil, nil
	}
	return Peek(ctx, q.client, q.DeadLetterURL, max)
}

// peekVisibility is how long Peek holds the messages it looks at (so a second receive of the
// look finds others) before it makes them visible again.
const peekVisibility = 30

// Peek lists up to max messages of the queue at url without taking them: they are received,
// then made visible again at once. Their receive counts go up, as with any look at SQS
// messages. (A receive cannot ask for visibility 0: the SDK leaves a zero out, and the queue's
// default applies.) SQS samples its servers, so a few receives are made and merged.
func Peek(ctx context.Context, client API, url string, max int) ([]queueport.Delivery, error) {
	if max <= 0 {
		max = 10
	}
	q := &Queue{client: client}
	var out []queueport.Delivery
	var receipts []string
	defer func() {
		// Give every message back, even when the look failed half-way or ctx ended.
		back, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		for _, r := range receipts {
			client.ChangeMessageVisibility(back, &sqs.ChangeMessageVisibilityInput{QueueUrl: &url, ReceiptHandle: aws.String(r)})
		}
	}()
	for try := 0; try < 3 && len(out) < max; try++ {
		ms, err := q.receive(ctx, url, int32(min(max-len(out), 10)), peekVisibility, 0)
		if err != nil {
			return nil, err
		}
		if len(ms) == 0 {
			break
		}
		for _, d := range Deliveries(ms) {
			receipts = append(receipts, d.Receipt)
			d.Receipt = ""
			out = append(out, d)
		}
	}
	return out, nil
}
