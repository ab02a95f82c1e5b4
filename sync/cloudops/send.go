package cloudops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go"

	"jobdesk/engine/job"
	"jobdesk/sync/awserr"
)

// Sent is a message sent by hand.
type Sent struct {
	JobType   string          `json:"job_type"`
	JobID     string          `json:"job_id"`
	QueueURL  string          `json:"queue_url"`
	MessageID string          `json:"message_id"`
	Body      json.RawMessage `json:"body"`
	SentAt    time.Time       `json:"sent_at"`
}

// Send checks body against jobType's schema, fills in the common fields (Prepare) and sends it
// to the job type's queue.
func (c *Console) Send(ctx context.Context, jobType string, body []byte, o PrepareOptions) (Sent, error) {
	msg, err := Prepare(jobType, body, o)
	if err != nil {
		return Sent{}, err
	}
	url, err := c.QueueURL(jobType)
	if err != nil {
		return Sent{}, err
	}
	var fields struct {
		JobID string `json:"job_id"`
	}
	json.Unmarshal(msg, &fields)
	in := &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String(string(msg))}
	if isFIFO(url) {
		// The job id makes a second send of the same job a duplicate, as the worker treats it.
		in.MessageGroupId, in.MessageDeduplicationId = aws.String(jobType), aws.String(fields.JobID)
	}
	out, err := c.SQS.SendMessage(ctx, in)
	if err != nil {
		return Sent{}, awsError(err, fmt.Sprintf("the %s message could not be sent", jobType),
			fmt.Sprintf("%s のメッセージを送れませんでした", jobType))
	}
	return Sent{JobType: jobType, JobID: fields.JobID, QueueURL: url, MessageID: aws.ToString(out.MessageId), Body: msg,
		SentAt: time.Now().UTC()}, nil
}

// awsError wraps a failed AWS call as E001 (the service could not be reached or refused): en and
// ja say what failed, then awserr's sentence says why and what to do; the SDK's own text stays
// in the cause.
func awsError(err error, en, ja string) error {
	var je *job.Error
	if errors.As(err, &je) {
		return err
	}
	service := "AWS"
	var op *smithy.OperationError
	if errors.As(err, &op) {
		service = op.ServiceID
		if service == "SFN" {
			service = "Step Functions"
		}
	}
	why := job.AsError(awserr.Classify(err, awserr.Where{Service: service}))
	en, ja = en+": "+why.Message, ja+"。"+why.MessageJa
	var api smithy.APIError
	if errors.As(err, &api) && api.ErrorMessage() != "" { // the service's own words on what it refused
		en, ja = en+" "+api.ErrorMessage(), ja+"（"+api.ErrorMessage()+"）"
	}
	e := job.Wrap(job.E001, err, en).WithJa(ja)
	e.Retryable = why.Retryable
	return e
}
