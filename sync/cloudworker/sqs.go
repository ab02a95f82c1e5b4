package cloudworker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"jobdesk/engine/aijob"
	"jobdesk/engine/blob"
	"jobdesk/engine/docjob"
	"jobdesk/engine/job"
	"jobdesk/engine/queueport"
	"jobdesk/sync/sqsqueue"
)

// QueueJobs maps the job types the worker takes from SQS to the function that runs them
// (assets/deploy/template.yaml's event source mappings).
var QueueJobs = map[string]string{
	"ATTACHMENT_CONVERT":  docjob.FunctionName,
	"ELIGIBILITY_EXTRACT": aijob.FnEligibility,
	"CAPTION_GENERATION":  aijob.FnCaption,
}

// MaxReceives is the queues' maxReceiveCount: a message failing its MaxReceives-th receive goes
// to the dead-letter queue, so its job is FAILED rather than RETRYING.
const MaxReceives = 3

// Common is the seeds' common fields of a queue job's message (seed 003 §8-1), which its status
// reply repeats.
type Common struct {
	JobType       string  `json:"job_type"`
	JobID         string  `json:"job_id"`
	TriggeredAt   string  `json:"triggered_at,omitempty"`
	TriggeredBy   string  `json:"triggered_by,omitempty"`
	UserID        *string `json:"user_id,omitempty"`
	CorrelationID string  `json:"correlation_id,omitempty"`
	RetryCount    int     `json:"retry_count"`
}

// Message is a queue job's message body: the seeds' common fields (seed 003 §8-1), the job's
// own fields, and what JobDesk adds. The handler's input is Input when present, else the body
// itself with "path" taken from s3_path when it has none (ATTACHMENT_CONVERT's s3_path is the
// file; a key without s3:// is in the worker's bucket).
type Message struct {
	Common
	// StatusQueueURL is where the outcome goes; "": the worker's (JOBDESK_STATUS_QUEUE_URL).
	StatusQueueURL string `json:"status_queue_url,omitempty"`
	// Input is the handler's input, when the message carries it whole.
	Input  json.RawMessage `json:"input,omitempty"`
	Path   string          `json:"path,omitempty"`
	S3Path string          `json:"s3_path,omitempty"`
}

// Statuses of a status reply (seed 003 §8-2).
const (
	StatusDone     = "DONE"
	StatusPartial  = "PARTIAL"
	StatusFailed   = "FAILED"
	StatusRetrying = "RETRYING"
)

// JobResult is the outcome object of a queue job that finished (results/jobs/<job_id>.json):
// its presence is what makes a redelivered message change nothing.
type JobResult struct {
	JobID         string          `json:"job_id"`
	JobType       string          `json:"job_type"`
	CorrelationID string          `json:"correlation_id,omitempty"`
	Status        string          `json:"status"` // DONE or PARTIAL
	Result        json.RawMessage `json:"result"`
	FinishedAt    time.Time       `json:"finished_at"`
}

// StatusReply is what the worker sends to the status queue for a queue job: the message's
// common fields, the outcome, and the result (DONE, PARTIAL) or the coded error (FAILED,
// RETRYING: the message will be received again). Source tells it from the EventBridge events
// the same queue carries.
type StatusReply struct {
	Source string `json:"source"` // "jobdesk.worker"
	Common
	Status string          `json:"status"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *job.Error      `json:"error,omitempty"`
	At     time.Time       `json:"at"`
}

// ReplySource is StatusReply.Source.
const ReplySource = "jobdesk.worker"

var jobIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)

// ResultURI is the outcome object of job id.
func (w *Worker) ResultURI(id string) string { return blob.Join(w.Results, "jobs", id+".json") }

// JobFailure is the last failed attempt of a queue job (FailureURI), written at every failure:
// when SQS dead-letters the message, which carries no error of its own, the operations console
// (sync/cloudops) reads why from here (ReadFailure).
type JobFailure struct {
	JobID         string     `json:"job_id"`
	JobType       string     `json:"job_type"`
	CorrelationID string     `json:"correlation_id,omitempty"`
	Status        string     `json:"status"`        // RETRYING or FAILED, as in the reply
	ReceiveCount  int        `json:"receive_count"` // the attempt that failed
	Error         *job.Error `json:"error"`
	At            time.Time  `json:"at"`
}

// FailureURI is the failure object of job id under results (Config.Results).
func FailureURI(results, id string) string { return blob.Join(results, "jobs", id+".failed.json") }

// ReadFailure returns the last failure of job id under results; nil when it has none.
func ReadFailure(ctx context.Context, b blob.Store, results, id string) (*JobFailure, error) {
	if !jobIDPattern.MatchString(id) {
		return nil, nil
	}
	raw, err := blob.ReadAll(ctx, b, FailureURI(results, id))
	if errors.Is(err, blob.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var f JobFailure
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, err
	}
	return &f, nil
}

func (w *Worker) handleSQSPayload(ctx context.Context, payload []byte) ([]byte, error) {
	var ev events.SQSEvent
	if err := json.Unmarshal(payload, &ev); err != nil {
		return nil, invokeError(job.Wrap(job.E014, err, "the SQS event is not valid").Permanent())
	}
	return json.Marshal(w.HandleSQS(ctx, ev))
}

// HandleSQS runs each message's job in turn and returns the messages that failed, for SQS to
// deliver again (the others are deleted). A message whose job already finished (its JobResult
// exists) is not run again: only its reply is sent again, in case the first one was lost.
func (w *Worker) HandleSQS(ctx context.Context, ev events.SQSEvent) events.SQSEventResponse {
	resp := events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{}}
	for _, rec := range ev.Records {
		if err := w.handleMessage(ctx, rec); err != nil {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: rec.MessageId})
		}
	}
	return resp
}

// handleMessage runs one message; an error leaves it on the queue.
func (w *Worker) handleMessage(ctx context.Context, rec events.SQSMessage) error {
	if ctx.Err() != nil {
		return ctx.Err() // no time left: the message comes back
	}
	receives, _ := strconv.Atoi(rec.Attributes["ApproximateReceiveCount"])
	var m Message
	if err := json.Unmarshal([]byte(rec.Body), &m); err != nil {
		return fmt.Errorf("message %s: not JSON: %w", rec.MessageId, err)
	}
	if !jobIDPattern.MatchString(m.JobID) {
		return fmt.Errorf("message %s: job_id %q is not an id", rec.MessageId, m.JobID)
	}
	reply := StatusReply{Source: ReplySource, Common: m.Common}

	if done, err := w.finished(ctx, m.JobID); err != nil {
		return err
	} else if done != nil {
		reply.Status, reply.Result = done.Status, done.Result
		return w.reply(ctx, m, receives, reply)
	}

	out, partial, err := w.runMessage(ctx, m, rec.Body, receives)
	if err != nil {
		e := job.AsError(err)
		reply.Error, reply.Status = e, StatusRetrying
		if !e.Retryable || receives >= MaxReceives {
			reply.Status = StatusFailed
		}
		f := JobFailure{JobID: m.JobID, JobType: m.JobType, CorrelationID: m.CorrelationID, Status: reply.Status,
			ReceiveCount: receives, Error: e, At: w.now().UTC()}
		return errors.Join(err, w.writeFailure(ctx, f), w.reply(ctx, m, receives, reply))
	}
	res := JobResult{JobID: m.JobID, JobType: m.JobType, CorrelationID: m.CorrelationID, Status: StatusDone, Result: out, FinishedAt: w.now().UTC()}
	if partial {
		res.Status = StatusPartial
	}
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	if err := blob.WriteAll(ctx, w.Blob, w.ResultURI(m.JobID), b); err != nil {
		return err
	}
	reply.Status, reply.Result = res.Status, out
	return w.reply(ctx, m, receives, reply)
}

// finished returns the stored outcome of job id, nil when it has none.
func (w *Worker) finished(ctx context.Context, id string) (*JobResult, error) {
	b, err := blob.ReadAll(ctx, w.Blob, w.ResultURI(id))
	if errors.Is(err, blob.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r JobResult
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, nil // unreadable: run the job again and replace it
	}
	return &r, nil
}

// runMessage runs m's job through its function.
func (w *Worker) runMessage(ctx context.Context, m Message, body string, receives int) (json.RawMessage, bool, error) {
	name, ok := QueueJobs[m.JobType]
	if !ok {
		return nil, false, job.Errorf(job.E014, "unknown queue job type %q", m.JobType).
			WithJa(fmt.Sprintf("キューのジョブ種別 %q は扱えません。", m.JobType)).Permanent()
	}
	f, ok := w.Functions.Get(name)
	if !ok {
		return nil, false, job.Errorf(job.E014, "this worker does not serve %s (%s)", m.JobType, name).
			WithJa(fmt.Sprintf("このワーカーは %s を扱いません。", m.JobType)).Permanent()
	}
	input, err := w.messageInput(m, body)
	if err != nil {
		return nil, false, err
	}
	info := job.Info{ID: JobNumber(m.JobID), Type: m.JobType, Name: m.JobID, Attempt: max(receives, 1), MaxAttempts: MaxReceives, Output: w.Results}
	return w.run(ctx, f, info, input)
}

// messageInput is the handler input of m (see Message).
func (w *Worker) messageInput(m Message, body string) (json.RawMessage, error) {
	if len(m.Input) > 0 {
		return m.Input, nil
	}
	if m.Path != "" || m.S3Path == "" {
		return json.RawMessage(body), nil
	}
	var fields map[string]any
	if err := json.Unmarshal([]byte(body), &fields); err != nil {
		return nil, job.Wrap(job.E014, err, "the message is not a JSON object").Permanent()
	}
	fields["path"] = w.objectURI(m.S3Path)
	return json.Marshal(fields)
}

// objectURI turns a key of the worker's bucket into its s3:// URI; URIs stay as they are.
func (w *Worker) objectURI(p string) string {
	if strings.Contains(p, "://") {
		return p
	}
	bucket := strings.TrimPrefix(w.Results, "s3://")
	if i := strings.IndexByte(bucket, '/'); i >= 0 {
		bucket = bucket[:i]
	}
	return "s3://" + bucket + "/" + strings.TrimPrefix(p, "/")
}

// writeFailure stores f (FailureURI), even when the handler used up the invocation's time.
func (w *Worker) writeFailure(ctx context.Context, f JobFailure) error {
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	return blob.WriteAll(wctx, w.Blob, FailureURI(w.Results, f.JobID), b)
}

// reply sends r to m's status queue, if there is one, through the queue port's SQS adapter: on a
// FIFO status queue the job's replies keep their order (one message group per job) and the same
// reply sent twice (a redelivered finished job's) counts once.
func (w *Worker) reply(ctx context.Context, m Message, receives int, r StatusReply) error {
	url := m.StatusQueueURL
	if url == "" {
		url = w.StatusQueueURL
	}
	if url == "" || w.Status == nil {
		return nil
	}
	r.At = w.now().UTC()
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	// A finished job's reply is the same at every delivery; a failed attempt's is its own.
	dedup := m.JobID + "\x00" + r.Status
	if r.Status == StatusRetrying || r.Status == StatusFailed {
		dedup += fmt.Sprintf("\x00%d", receives)
	}
	sum := sha256.Sum256([]byte(dedup))
	// The reply goes out even when the handler used up the invocation's time: it is short.
	sendCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	out := queueport.Outgoing{Body: string(b), GroupID: m.JobID, DedupID: hex.EncodeToString(sum[:])}
	if _, err := sqsqueue.New(w.Status, url).Send(sendCtx, out); err != nil {
		return fmt.Errorf("status reply for job %s: %w", m.JobID, err)
	}
	return nil
}
