package cloudworker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/aws/aws-lambda-go/lambda/messages"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"jobdesk/engine/functions"
	"jobdesk/engine/job"
)

// functionName is the function to serve: configured, else the Lambda function's own name.
func functionName(configured string) string {
	if configured != "" {
		return configured
	}
	return lambdacontext.FunctionName
}

func (w *Worker) now() time.Time {
	if w.Now != nil {
		return w.Now()
	}
	return time.Now()
}

// Invoke serves one Lambda invocation (it makes Worker a lambda.Handler): an SQS event is a
// batch of queue jobs (see HandleSQS), anything else a workflow invocation of the worker's
// function whose payload is the handler's input.
func (w *Worker) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	if isSQSEvent(payload) {
		return w.handleSQSPayload(ctx, payload)
	}
	name := functionName(w.Function)
	f, ok := w.Functions.Get(name)
	if !ok {
		return nil, invokeError(job.Errorf(job.E014, "this worker serves no function named %q (known: %v)", name, w.Functions.Names()).
			WithJa(fmt.Sprintf("関数 %q はこのワーカーにありません。", name)).Permanent())
	}
	info := job.Info{ID: JobNumber(requestID(ctx)), Type: "lambda:" + name, Name: name, Attempt: 1, MaxAttempts: 1, Output: w.Results}
	out, _, err := w.run(ctx, f, info, payload)
	if err != nil {
		return nil, invokeError(err)
	}
	return out, nil
}

// run runs f's handler on input with info in its context, ending the context Margin before
// Lambda's deadline. A partial success is a success with its result (partial true: Step
// Functions has no third outcome); a context that ended is a timeout (E011, States.Timeout).
func (w *Worker) run(ctx context.Context, f functions.Function, info job.Info, input []byte) (out json.RawMessage, partial bool, err error) {
	if d, ok := ctx.Deadline(); ok {
		margin := w.Margin
		if margin <= 0 {
			margin = min(DefaultMargin, time.Until(d)/10)
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-margin))
		defer cancel()
	}
	ctx = job.WithInfo(ctx, info)
	out, err = safeCall(ctx, f.Handler, input)
	if err == nil {
		return out, false, nil
	}
	var p *job.PartialResult
	if errors.As(err, &p) {
		return p.Result, true, nil
	}
	if ctx.Err() != nil && job.AsError(err).Code != job.E011 {
		return nil, false, job.Wrap(job.E011, err, "the function "+f.Name+" did not finish before its deadline").
			WithJa("関数 " + f.Name + " が制限時間内に終わりませんでした。").WithName("States.Timeout").Transient()
	}
	var deferred *job.DeferredError
	if errors.As(err, &deferred) {
		// On the device a deferred job waits for its provider; in the cloud the provider is a
		// service that should answer, so the attempt fails retryably.
		return nil, false, job.Errorf(job.E001, "%s", deferred.Message).Transient()
	}
	return nil, false, err
}

// safeCall runs h, turning a panic into E016 (the device's queue does the same).
func safeCall(ctx context.Context, h job.Handler, input []byte) (out json.RawMessage, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = job.Errorf(job.E016, "the handler panicked: %v", p).Permanent()
		}
	}()
	return h(ctx, input, job.Discard)
}

// invokeError is the error the Lambda runtime reports for err: errorType the job.Error's Step
// Functions name, errorMessage its JSON (job.Error.CauseJSON). The runtime library passes a
// messages.InvokeResponse_Error value through unchanged (a pointer would be renamed after its
// Go type).
func invokeError(err error) error {
	e := job.AsError(err)
	return messages.InvokeResponse_Error{Type: e.ErrorName(), Message: e.CauseJSON()}
}

// requestID is the invocation's request id ("" outside Lambda).
func requestID(ctx context.Context) string {
	if lc, ok := lambdacontext.FromContext(ctx); ok {
		return lc.AwsRequestID
	}
	return ""
}

// JobNumber maps a cloud job's id (a UUID, a request id) to the int64 a job.Info carries: the positive
// 63-bit FNV-1a hash, 0 for "".
func JobNumber(s string) int64 {
	if s == "" {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(s))
	id := int64(h.Sum64() >> 1)
	if id == 0 {
		id = 1
	}
	return id
}

// isSQSEvent reports whether payload is an SQS event: {"Records":[{…"eventSource":"aws:sqs"…}]}.
func isSQSEvent(payload []byte) bool {
	if !bytes.Contains(payload, []byte(`"aws:sqs"`)) {
		return false
	}
	var probe struct {
		Records []struct {
			EventSource string `json:"eventSource"`
		} `json:"Records"`
	}
	return json.Unmarshal(payload, &probe) == nil && len(probe.Records) > 0 && probe.Records[0].EventSource == "aws:sqs"
}
