package cloudops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"

	"jobdesk/engine/job"
	"jobdesk/sync/cloudworker"
	"jobdesk/sync/sqsqueue"
)

// QueueCounts are one queue's approximate counts, as SQS reports them.
type QueueCounts struct {
	URL      string `json:"url"`
	Visible  int    `json:"visible"`   // ApproximateNumberOfMessages
	InFlight int    `json:"in_flight"` // ApproximateNumberOfMessagesNotVisible
	Delayed  int    `json:"delayed"`   // ApproximateNumberOfMessagesDelayed
	// OldestAge is the age of the oldest message, when known: for a dead-letter queue, read from
	// the SentTimestamp of the (up to 10) messages looked at; SQS tells it for a job queue only through CloudWatch
	// (ApproximateAgeOfOldestMessage), which the console does not read yet.
	OldestAge *Duration `json:"oldest_age_seconds,omitempty"`
}

// QueueStatus is one job type's queue and its dead-letter queue.
type QueueStatus struct {
	JobType    string       `json:"job_type"`
	Queue      QueueCounts  `json:"queue"`
	DeadLetter *QueueCounts `json:"dead_letter,omitempty"`
	// MaxReceives is the queue's redrive policy's maxReceiveCount.
	MaxReceives int `json:"max_receives,omitempty"`
}

// Duration is a time.Duration written in JSON as seconds.
type Duration time.Duration

// MarshalJSON writes whole seconds.
func (d Duration) MarshalJSON() ([]byte, error) {
	return []byte(strconv.FormatInt(int64(time.Duration(d)/time.Second), 10)), nil
}

// UnmarshalJSON reads seconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	s, err := strconv.ParseFloat(string(b), 64)
	*d = Duration(time.Duration(s * float64(time.Second)))
	return err
}

// Queues returns the status of every job type's queue in the configuration, by job type.
func (c *Console) Queues(ctx context.Context) ([]QueueStatus, error) {
	types := make([]string, 0, len(c.Config.Queues))
	for t := range c.Config.Queues {
		types = append(types, t)
	}
	sort.Strings(types)
	out := make([]QueueStatus, 0, len(types))
	for _, t := range types {
		s, err := c.Queue(ctx, t)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// Queue returns the status of jobType's queue and its dead-letter queue.
func (c *Console) Queue(ctx context.Context, jobType string) (QueueStatus, error) {
	url, err := c.QueueURL(jobType)
	if err != nil {
		return QueueStatus{}, err
	}
	s := QueueStatus{JobType: jobType}
	attrs, err := c.attributes(ctx, url)
	if err != nil {
		return s, err
	}
	s.Queue = counts(url, attrs)
	dlq := c.Config.DeadLetterQueues[jobType]
	if arn, max, err := sqsqueue.ParseRedrivePolicy(attrs[string(types.QueueAttributeNameRedrivePolicy)]); err == nil && arn != "" {
		s.MaxReceives = max
		if dlq == "" {
			if dlq, err = sqsqueue.URLOfArn(ctx, c.SQS, arn); err != nil {
				return s, awsError(err, "the dead-letter queue of "+jobType+" cannot be found", jobType+" のデッドレターキューが見つかりません")
			}
		}
	}
	if dlq != "" {
		dattrs, err := c.attributes(ctx, dlq)
		if err != nil {
			return s, err
		}
		d := counts(dlq, dattrs)
		if d.Visible > 0 {
			dls, err := c.peekDeadLetters(ctx, jobType, dlq, 10)
			if err != nil {
				return s, err
			}
			d.OldestAge = oldestAge(dls, time.Now())
		}
		s.DeadLetter = &d
	}
	return s, nil
}

func (c *Console) attributes(ctx context.Context, url string) (map[string]string, error) {
	out, err := c.SQS.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &url,
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameAll}})
	if err != nil {
		return nil, awsError(err, "the queue "+url+" cannot be read", "キュー "+url+" を読めません")
	}
	return out.Attributes, nil
}

func counts(url string, attrs map[string]string) QueueCounts {
	n := func(k types.QueueAttributeName) int { v, _ := strconv.Atoi(attrs[string(k)]); return v }
	return QueueCounts{URL: url, Visible: n(types.QueueAttributeNameApproximateNumberOfMessages),
		InFlight: n(types.QueueAttributeNameApproximateNumberOfMessagesNotVisible),
		Delayed:  n(types.QueueAttributeNameApproximateNumberOfMessagesDelayed)}
}

// DeadLetter is one message of a dead-letter queue.
type DeadLetter struct {
	MessageID    string          `json:"message_id"`
	JobType      string          `json:"job_type,omitempty"`
	JobID        string          `json:"job_id,omitempty"`
	SentAt       time.Time       `json:"sent_at,omitzero"`
	ReceiveCount int             `json:"receive_count"`
	Error        string          `json:"error,omitempty"` // why it failed, when the message tells
	Body         json.RawMessage `json:"body"`
}

// DeadLetters lists up to max messages of jobType's dead-letter queue without taking them.
// Each message's error is read from its ErrorCode/ErrorMessage attributes (what Lambda sets on
// the messages it dead-letters) or its body's "error" field; a job queue's message carries none,
// so its job's last failure is read from the failure object the worker wrote
// (cloudworker.FailureURI).
func (c *Console) DeadLetters(ctx context.Context, jobType string, max int) ([]DeadLetter, error) {
	url, err := c.deadLetterURL(ctx, jobType)
	if err != nil {
		return nil, err
	}
	dls, err := c.peekDeadLetters(ctx, jobType, url, max)
	for i := range dls {
		dls[i] = c.withFailure(ctx, dls[i])
	}
	return dls, err
}

// peekDeadLetters looks at up to max messages of the dead-letter queue url and gives them back.
func (c *Console) peekDeadLetters(ctx context.Context, jobType, url string, max int) ([]DeadLetter, error) {
	if max <= 0 {
		max = 10
	}
	var out []DeadLetter
	var receipts []string
	defer func() { c.giveBack(ctx, url, receipts) }()
	seen := map[string]bool{}
	for try := 0; try < 3 && len(out) < max; try++ {
		res, err := c.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: int32(min(max-len(out), 10)),
			VisibilityTimeout: 30, MessageAttributeNames: []string{"All"},
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
			AttributeNames:              []types.QueueAttributeName{types.QueueAttributeNameAll}})
		if err != nil {
			return nil, awsError(err, "the dead-letter queue of "+jobType+" cannot be read", jobType+" のデッドレターキューを読めません")
		}
		if len(res.Messages) == 0 {
			break
		}
		for _, m := range res.Messages {
			receipts = append(receipts, aws.ToString(m.ReceiptHandle))
			if id := aws.ToString(m.MessageId); !seen[id] {
				seen[id] = true
				out = append(out, deadLetter(m))
			}
		}
	}
	return out, nil
}

// giveBack makes received messages visible again.
func (c *Console) giveBack(ctx context.Context, url string, receipts []string) {
	back, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	for _, r := range receipts {
		c.SQS.ChangeMessageVisibility(back, &sqs.ChangeMessageVisibilityInput{QueueUrl: &url, ReceiptHandle: aws.String(r)})
	}
}

// withFailure is d with its job's last failure as its error, when its message tells none and
// the worker wrote one.
func (c *Console) withFailure(ctx context.Context, d DeadLetter) DeadLetter {
	if d.Error != "" || d.JobID == "" || c.Blobs == nil || c.Config.Bucket == "" {
		return d
	}
	results := cloudworker.Config{Bucket: c.Config.Bucket, Prefix: c.Config.Prefix}.Results()
	if f, err := cloudworker.ReadFailure(ctx, c.Blobs, results, d.JobID); err == nil && f != nil && f.Error != nil {
		d.Error = string(f.Error.Code) + ": " + f.Error.Message
	}
	return d
}

func deadLetter(m types.Message) DeadLetter {
	d := DeadLetter{MessageID: aws.ToString(m.MessageId)}
	d.ReceiveCount, _ = strconv.Atoi(m.Attributes[string(types.MessageSystemAttributeNameApproximateReceiveCount)])
	if ms, err := strconv.ParseInt(m.Attributes[string(types.MessageSystemAttributeNameSentTimestamp)], 10, 64); err == nil {
		d.SentAt = time.UnixMilli(ms).UTC()
	}
	body := aws.ToString(m.Body)
	if json.Valid([]byte(body)) {
		d.Body = json.RawMessage(body)
	} else {
		d.Body, _ = json.Marshal(body)
	}
	var fields struct {
		JobType string          `json:"job_type"`
		JobID   string          `json:"job_id"`
		Error   json.RawMessage `json:"error"`
	}
	json.Unmarshal([]byte(body), &fields)
	d.JobType, d.JobID = fields.JobType, fields.JobID
	attr := func(k string) string {
		if v, ok := m.MessageAttributes[k]; ok {
			return aws.ToString(v.StringValue)
		}
		return ""
	}
	switch code, msg := attr("ErrorCode"), attr("ErrorMessage"); {
	case code != "" || msg != "":
		d.Error = strings.TrimSpace(code + " " + msg)
	case len(fields.Error) > 0 && string(fields.Error) != "null":
		var e job.Error
		var s string
		if json.Unmarshal(fields.Error, &s) == nil {
			d.Error = s
		} else if json.Unmarshal(fields.Error, &e) == nil && e.Code != "" {
			d.Error = string(e.Code) + ": " + e.Message
		} else {
			d.Error = string(fields.Error)
		}
	}
	return d
}

// oldestAge is the age of the oldest of dls at now (nil when none tells its time).
func oldestAge(dls []DeadLetter, now time.Time) *Duration {
	var oldest time.Time
	for _, d := range dls {
		if !d.SentAt.IsZero() && (oldest.IsZero() || d.SentAt.Before(oldest)) {
			oldest = d.SentAt
		}
	}
	if oldest.IsZero() {
		return nil
	}
	age := Duration(max(now.Sub(oldest), 0))
	return &age
}

// deadLetterURL is jobType's dead-letter queue: from the configuration, else the queue's
// redrive policy.
func (c *Console) deadLetterURL(ctx context.Context, jobType string) (string, error) {
	if u := c.Config.DeadLetterQueues[jobType]; u != "" {
		return u, nil
	}
	url, err := c.QueueURL(jobType)
	if err != nil {
		return "", err
	}
	q, err := sqsqueue.Open(ctx, c.SQS, url)
	if err != nil {
		return "", awsError(err, "the queue of "+jobType+" cannot be read", jobType+" のキューを読めません")
	}
	if q.DeadLetterURL == "" {
		return "", job.Errorf(job.E014, "the queue of %s has no dead-letter queue", jobType).
			WithJa(fmt.Sprintf("%s のキューにはデッドレターキューがありません。", jobType))
	}
	return q.DeadLetterURL, nil
}

// Redriven tells how a redrive went.
type Redriven struct {
	JobType string `json:"job_type"`
	// Method is "move-task" (SQS's StartMessageMoveTask: it moves the messages in the
	// background) or "resend" (received from the dead-letter queue, sent to the queue and
	// deleted, one by one, where the server lacks move tasks).
	Method      string `json:"method"`
	TaskHandle  string `json:"task_handle,omitempty"`
	Moved       int    `json:"moved"`       // resend: messages moved
	ToMove      int    `json:"to_move"`     // visible in the dead-letter queue when it started
	Source      string `json:"source"`      // the dead-letter queue's URL
	Destination string `json:"destination"` // the queue's URL
}

// Redrive moves the messages of jobType's dead-letter queue back to its queue:
// StartMessageMoveTask, or receive-and-resend where the server does not support it.
func (c *Console) Redrive(ctx context.Context, jobType string) (Redriven, error) {
	url, err := c.QueueURL(jobType)
	if err != nil {
		return Redriven{}, err
	}
	dlq, err := c.deadLetterURL(ctx, jobType)
	if err != nil {
		return Redriven{}, err
	}
	r := Redriven{JobType: jobType, Source: dlq, Destination: url}
	dattrs, err := c.attributes(ctx, dlq)
	if err != nil {
		return r, err
	}
	r.ToMove = counts(dlq, dattrs).Visible
	qattrs, err := c.attributes(ctx, url)
	if err != nil {
		return r, err
	}
	out, err := c.SQS.StartMessageMoveTask(ctx, &sqs.StartMessageMoveTaskInput{
		SourceArn: aws.String(dattrs[string(types.QueueAttributeNameQueueArn)]), DestinationArn: aws.String(qattrs[string(types.QueueAttributeNameQueueArn)])})
	if err == nil {
		r.Method, r.TaskHandle = "move-task", aws.ToString(out.TaskHandle)
		return r, nil
	}
	if !unsupported(err) {
		return r, awsError(err, "the redrive of "+jobType+" could not start", jobType+" の再投入を開始できませんでした")
	}
	r.Method = "resend"
	r.Moved, err = c.resend(ctx, dlq, url)
	if err != nil {
		return r, awsError(err, fmt.Sprintf("the redrive of %s stopped after %d messages", jobType, r.Moved),
			fmt.Sprintf("%s の再投入が %d 件で止まりました", jobType, r.Moved))
	}
	return r, nil
}

// unsupported reports whether err says the server does not offer the operation.
func unsupported(err error) bool {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		switch ae.ErrorCode() {
		case "UnsupportedOperation", "AWS.SimpleQueueService.UnsupportedOperation", "InvalidAction",
			"UnknownOperationException", "UnknownOperation", "NotImplemented", "InvalidOperation":
			return true
		}
	}
	return false
}

// resend moves every visible message of from to to: send a copy (keeping a FIFO message's
// group and deduplication id), then delete the original. A copy sent twice (the delete failed)
// is what SQS's at-least-once delivery allows; the worker is idempotent on job_id.
func (c *Console) resend(ctx context.Context, from, to string) (int, error) {
	moved := 0
	for {
		res, err := c.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &from, MaxNumberOfMessages: 10, VisibilityTimeout: 60,
			MessageAttributeNames: []string{"All"},
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameMessageGroupId,
				types.MessageSystemAttributeNameMessageDeduplicationId},
			AttributeNames: []types.QueueAttributeName{"MessageGroupId", "MessageDeduplicationId"}})
		if err != nil {
			return moved, err
		}
		if len(res.Messages) == 0 {
			return moved, nil
		}
		for _, m := range res.Messages {
			in := &sqs.SendMessageInput{QueueUrl: &to, MessageBody: m.Body, MessageAttributes: m.MessageAttributes}
			if isFIFO(to) {
				in.MessageGroupId = awsString(m.Attributes["MessageGroupId"])
				in.MessageDeduplicationId = awsString(m.Attributes["MessageDeduplicationId"])
			}
			if _, err := c.SQS.SendMessage(ctx, in); err != nil {
				return moved, err
			}
			if _, err := c.SQS.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &from, ReceiptHandle: m.ReceiptHandle}); err != nil {
				return moved, err
			}
			moved++
		}
	}
}

// Purge deletes every message of a queue: jobType's queue, or its dead-letter queue when
// deadLetter. It returns the queue's URL.
func (c *Console) Purge(ctx context.Context, jobType string, deadLetter bool) (string, error) {
	url, err := c.QueueURL(jobType)
	if deadLetter {
		url, err = c.deadLetterURL(ctx, jobType)
	}
	if err != nil {
		return "", err
	}
	if _, err := c.SQS.PurgeQueue(ctx, &sqs.PurgeQueueInput{QueueUrl: &url}); err != nil {
		var ae smithy.APIError
		if errors.As(err, &ae) && strings.HasSuffix(ae.ErrorCode(), "PurgeQueueInProgress") {
			return url, job.Wrap(job.E014, err, "the queue "+url+" is already being purged: SQS allows one purge a minute and takes up to a minute to finish").
				WithJa("キュー " + url + " は空にしている途中です。SQS では1分に1回までで、終わるまで最大1分かかります。")
		}
		return url, awsError(err, "the queue "+url+" could not be purged", "キュー "+url+" を空にできませんでした")
	}
	return url, nil
}

func isFIFO(url string) bool { return strings.HasSuffix(url, ".fifo") }

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}
