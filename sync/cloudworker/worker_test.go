package cloudworker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambda/messages"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"jobdesk/engine/aijob/aitest"
	"jobdesk/engine/blob"
	"jobdesk/engine/csvjob"
	"jobdesk/engine/csvjob/csvtest"
	"jobdesk/engine/job"
	"jobdesk/sync/cloudworker"
	"jobdesk/sync/internal/awstest"
)

const prefix = "jobdesk/"

// cloud is one test's AWS: versitygw as S3, local-aws-sqs with a status queue, optionally a
// loopback Bedrock, and the environment a deployed function sees.
type cloud struct {
	s3        *awstest.S3
	sqs       *awstest.SQS
	statusURL string
	bedrock   *aitest.Server
	env       []string
}

func startCloud(t testing.TB, bedrock aitest.Script) *cloud {
	t.Helper()
	c := &cloud{s3: awstest.StartS3(t), sqs: awstest.StartSQS(t)}
	c.statusURL = c.sqs.CreateQueue(t, "status-queue")
	c.env = append(append(c.s3.Env(), c.sqs.Env()[4]), // AWS_ENDPOINT_URL_SQS
		"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null",
		cloudworker.EnvBucket+"="+c.s3.Bucket, cloudworker.EnvPrefix+"="+prefix,
		cloudworker.EnvStatusQueueURL+"="+c.statusURL, cloudworker.EnvBedrockModel+"=anthropic.claude-test")
	if bedrock != nil {
		c.bedrock = aitest.NewBedrock(t, bedrock)
		c.env = append(c.env, "AWS_ENDPOINT_URL_BEDROCK_RUNTIME="+c.bedrock.URL)
	}
	return c
}

// worker builds the worker of function the way the bootstrap does, from the environment.
func (c *cloud) worker(t testing.TB, function string) *cloudworker.Worker {
	t.Helper()
	for _, kv := range c.env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	t.Setenv(cloudworker.EnvFunction, function)
	w, err := cloudworker.New(context.Background(), cloudworker.ConfigFromEnv())
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func (c *cloud) put(t testing.TB, key string, data []byte) string {
	t.Helper()
	if _, err := c.s3.Client.PutObject(context.Background(), &s3.PutObjectInput{Bucket: &c.s3.Bucket, Key: &key, Body: bytes.NewReader(data)}); err != nil {
		t.Fatal(err)
	}
	return "s3://" + c.s3.Bucket + "/" + key
}

func (c *cloud) get(t testing.TB, key string) ([]byte, bool) {
	t.Helper()
	out, err := c.s3.Client.GetObject(context.Background(), &s3.GetObjectInput{Bucket: &c.s3.Bucket, Key: &key})
	if err != nil {
		return nil, false
	}
	defer out.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(out.Body)
	return b.Bytes(), true
}

func (c *cloud) keys(t testing.TB, under string) []string {
	t.Helper()
	out, err := c.s3.Client.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: &c.s3.Bucket, Prefix: &under})
	if err != nil {
		t.Fatal(err)
	}
	var ks []string
	for _, o := range out.Contents {
		ks = append(ks, aws.ToString(o.Key))
	}
	return ks
}

// replies receives every status reply waiting on the status queue.
func (c *cloud) replies(t *testing.T) []cloudworker.StatusReply {
	t.Helper()
	var out []cloudworker.StatusReply
	for {
		r, err := c.sqs.Client.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: &c.statusURL, MaxNumberOfMessages: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Messages) == 0 {
			return out
		}
		for _, m := range r.Messages {
			var rep cloudworker.StatusReply
			if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &rep); err != nil {
				t.Fatalf("reply %s: %v", aws.ToString(m.Body), err)
			}
			out = append(out, rep)
			c.sqs.Client.DeleteMessage(context.Background(), &sqs.DeleteMessageInput{QueueUrl: &c.statusURL, ReceiptHandle: m.ReceiptHandle})
		}
	}
}

// invoke calls the worker through the Lambda library's handler with a Lambda context, as the
// runtime does.
func invoke(ctx context.Context, w *cloudworker.Worker, payload any) ([]byte, error) {
	b, err := json.Marshal(payload)
	if err != nil {
		return nil, err
	}
	ctx = lambdacontext.NewContext(ctx, &lambdacontext.LambdaContext{AwsRequestID: fmt.Sprintf("req-%d", time.Now().UnixNano())})
	return lambda.NewHandler(w).Invoke(ctx, b)
}

// codedError reads the error a failed invocation reports as Step Functions would see it:
// Error = errorType, Cause = the envelope.
func codedError(t *testing.T, err error) (string, *job.Error) {
	t.Helper()
	var ie messages.InvokeResponse_Error
	if !errors.As(err, &ie) {
		t.Fatalf("error %T %v is not a Lambda invoke error", err, err)
	}
	cause, _ := json.Marshal(map[string]string{"errorType": ie.Type, "errorMessage": ie.Message})
	e, ok := job.ErrorFromCause(ie.Type, string(cause))
	if !ok {
		t.Fatalf("no coded error in %s", cause)
	}
	return ie.Type, e
}

// runCSV runs the csv-processing workflow's Tasks through the worker as Step Functions would:
// validation, the Distributed Map's batches of 2 chunks (each with its audit record) at once,
// aggregation. It returns the summary.
func runCSV(t testing.TB, c *cloud, w *cloudworker.Worker, key, execution string) csvjob.Summary {
	ctx := context.Background()
	out, err := invoke(ctx, w, map[string]any{"eventType": csvjob.EventValidation, "bucket": c.s3.Bucket, "key": key, "executionId": execution})
	if err != nil {
		t.Fatalf("validation: %v", err)
	}
	var v csvjob.Validation
	if err := json.Unmarshal(out, &v); err != nil || !v.IsValid {
		t.Fatalf("validation %s: %v", out, err)
	}
	manifest, ok := c.get(t, v.Manifest.Key)
	if !ok || v.Manifest.Bucket != c.s3.Bucket {
		t.Fatalf("no manifest at %+v", v.Manifest)
	}
	var chunks []csvjob.Chunk
	if err := json.Unmarshal(manifest, &chunks); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(chunks))
	sem := make(chan struct{}, 8)
	for i := 0; i < len(chunks); i += 2 {
		items := chunks[i:min(i+2, len(chunks))]
		wg.Add(1)
		sem <- struct{}{}
		go func(batch int) {
			defer func() { <-sem; wg.Done() }()
			res, err := invoke(ctx, w, map[string]any{"eventType": csvjob.EventChunk, "items": items, "executionId": execution, "bucket": c.s3.Bucket, "key": key})
			if err == nil {
				_, err = invoke(ctx, w, map[string]any{"eventType": csvjob.EventAudit, "logType": "SUCCESS", "executionId": execution,
					"processResult": json.RawMessage(res), "itemIndex": batch})
			}
			errs <- err
		}(i / 2)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("chunk batch: %v", err)
		}
	}
	out, err = invoke(ctx, w, map[string]any{"eventType": csvjob.EventAggregation, "executionId": execution})
	if err != nil {
		t.Fatalf("aggregation: %v", err)
	}
	var s csvjob.Summary
	if err := json.Unmarshal(out, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestCSVWorkflowThroughTheWorker(t *testing.T) {
	c := startCloud(t, nil)
	w := c.worker(t, csvjob.FunctionName)
	key := prefix + "inputs/user-log.csv"
	c.put(t, key, csvtest.BigUserLog(20_000, 500, csvjob.EncUTF8))
	s := runCSV(t, c, w, key, "user-log-120000")
	if s.Status != csvjob.StatusSuccess || s.TotalRows != 20_000 || s.Users != 500 {
		t.Fatalf("summary %+v", s)
	}
	dir := prefix + "results/csv/user-log-120000/"
	users, ok := c.get(t, dir+csvjob.UsersFile)
	if !ok || !bytes.Contains(users, []byte(`"table":"csv_users"`)) {
		t.Fatalf("no users object under %s: %v", dir, c.keys(t, dir))
	}
	if _, ok := c.get(t, dir+csvjob.SummaryFile); !ok {
		t.Fatalf("no summary object under %s: %v", dir, c.keys(t, dir))
	}
	// An outside client sees the same objects.
	if ls := c.s3.RunAWS(t, "s3", "ls", "s3://"+c.s3.Bucket+"/"+dir); !strings.Contains(ls, csvjob.UsersFile) || !strings.Contains(ls, csvjob.SummaryFile) {
		t.Fatalf("aws s3 ls:\n%s", ls)
	}
}

func TestHandlerErrorReachesStepFunctionsCoded(t *testing.T) {
	c := startCloud(t, nil)
	w := c.worker(t, csvjob.FunctionName)
	_, err := invoke(context.Background(), w, map[string]any{"eventType": csvjob.EventValidation, "executionId": "no-file"})
	name, e := codedError(t, err)
	if name != "ValidationError" || e.Code != job.E014 || e.MessageJa == "" || e.Retryable {
		t.Fatalf("Error %q, cause %+v", name, e)
	}
	// A function the worker does not serve.
	w.Function = "no-such-function"
	_, err = invoke(context.Background(), w, map[string]any{})
	if name, e := codedError(t, err); name != "States.TaskFailed" || e.Code != job.E014 {
		t.Fatalf("Error %q, cause %+v", name, e)
	}
}

// sqsEvent is a batch as Lambda's event source mapping delivers it.
func sqsEvent(receives int, bodies ...string) events.SQSEvent {
	var ev events.SQSEvent
	for i, b := range bodies {
		ev.Records = append(ev.Records, events.SQSMessage{MessageId: fmt.Sprintf("msg-%d", i), Body: b, EventSource: "aws:sqs",
			Attributes: map[string]string{"ApproximateReceiveCount": fmt.Sprint(receives)}})
	}
	return ev
}

func convertMessage(jobID, s3Path string) string {
	b, _ := json.Marshal(map[string]any{"job_type": "ATTACHMENT_CONVERT", "job_id": jobID, "attachment_id": "att-" + jobID,
		"subsidy_id": "S-1", "file_type": "TXT", "s3_path": s3Path, "triggered_at": "2026-11-24T10:00:00Z",
		"triggered_by": "USER", "correlation_id": "corr-" + jobID, "retry_count": 0})
	return string(b)
}

func TestSQSBatchFailsOnlyTheBadMessageAndRunsEachJobOnce(t *testing.T) {
	c := startCloud(t, nil)
	w := c.worker(t, "document-converter")
	c.put(t, prefix+"inputs/a.txt", []byte("申請書の記入例です。\n"))
	c.put(t, prefix+"inputs/b.csv", []byte("名前,金額\n補助金,100\n"))
	ev := sqsEvent(1, convertMessage("job-a", prefix+"inputs/a.txt"), convertMessage("job-bad", prefix+"inputs/missing.pdf"),
		convertMessage("job-b", "s3://"+c.s3.Bucket+"/"+prefix+"inputs/b.csv"))

	run := func(receives int) events.SQSEventResponse {
		for i := range ev.Records {
			ev.Records[i].Attributes["ApproximateReceiveCount"] = fmt.Sprint(receives)
		}
		out, err := invoke(context.Background(), w, ev)
		if err != nil {
			t.Fatal(err)
		}
		var resp events.SQSEventResponse
		if err := json.Unmarshal(out, &resp); err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := run(1)
	if len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "msg-1" {
		t.Fatalf("batchItemFailures %+v", resp.BatchItemFailures)
	}
	first := map[string][]byte{}
	for _, id := range []string{"job-a", "job-b"} {
		b, ok := c.get(t, prefix+"results/jobs/"+id+".json")
		if !ok {
			t.Fatalf("no result object for %s: %v", id, c.keys(t, prefix+"results/"))
		}
		var r cloudworker.JobResult
		if json.Unmarshal(b, &r) != nil || r.Status != cloudworker.StatusDone || !bytes.Contains(r.Result, []byte(`"status":"ready"`)) {
			t.Fatalf("%s: %s", id, b)
		}
		first[id] = b
	}
	if _, ok := c.get(t, prefix+"results/jobs/job-bad.json"); ok {
		t.Fatal("the failed job has a result object")
	}
	statuses := map[string]string{}
	for _, r := range c.replies(t) {
		statuses[r.JobID] = r.Status
		if r.Source != cloudworker.ReplySource || r.CorrelationID != "corr-"+r.JobID || r.TriggeredBy != "USER" {
			t.Fatalf("reply %+v", r)
		}
		if r.JobID == "job-bad" && (r.Error == nil || r.Error.Code != job.E014) {
			t.Fatalf("failure reply %+v", r)
		}
	}
	if want := map[string]string{"job-a": "DONE", "job-b": "DONE", "job-bad": "FAILED"}; fmt.Sprint(statuses) != fmt.Sprint(want) {
		t.Fatalf("replies %v, want %v", statuses, want)
	}

	// The whole batch delivered again: the finished jobs do not run again (their objects are
	// the very same bytes), the bad one fails again.
	resp = run(2)
	if len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "msg-1" {
		t.Fatalf("redelivery: batchItemFailures %+v", resp.BatchItemFailures)
	}
	for id, b := range first {
		if again, _ := c.get(t, prefix+"results/jobs/"+id+".json"); !bytes.Equal(again, b) {
			t.Fatalf("%s was written again:\n%s\n%s", id, b, again)
		}
	}
	if n := len(c.replies(t)); n != 3 {
		t.Fatalf("%d replies to the redelivered batch, want 3 (the outcomes again)", n)
	}
}

func TestEligibilityFromTheQueueWithBedrock(t *testing.T) {
	reply := `{"must":[{"key":"target_business","text":"中小企業であること","source":"対象者"}],"need_check":[],"must_not":[],"risk_flags":[],` +
		`"missing_keys":["company_size","region","industry","application_period","subsidy_amount","eligible_expenses"]}`
	c := startCloud(t, func(aitest.Call) aitest.Step { return aitest.Step{Text: reply} })
	w := c.worker(t, "ai-eligibility-extract")
	c.put(t, prefix+"results/convert/koubo.md", []byte("# 公募要領\n\n## 対象者\n中小企業であること。\n"))
	body, _ := json.Marshal(map[string]any{"job_type": "ELIGIBILITY_EXTRACT", "job_id": "elig-1", "subsidy_id": "S-1",
		"attachment_ids": []string{"att-1"}, "s3_path": prefix + "results/convert/koubo.md", "retry_count": 0})
	out, err := invoke(context.Background(), w, sqsEvent(1, string(body)))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out, []byte(`"batchItemFailures":[]`)) {
		t.Fatalf("response %s", out)
	}
	rs := c.replies(t)
	if len(rs) != 1 || rs[0].Status != cloudworker.StatusDone || !bytes.Contains(rs[0].Result, []byte(`"must_count":1`)) {
		t.Fatalf("replies %+v (%s)", rs, rs[0].Result)
	}
	if calls := c.bedrock.Calls(); len(calls) != 1 || calls[0].Path != "/model/anthropic.claude-test/converse" {
		t.Fatalf("bedrock calls %+v", calls)
	}
	if ks := c.keys(t, prefix+"results/ai/"); len(ks) < 2 { // the usage record and the cache entry
		t.Fatalf("AI state objects: %v", ks)
	}
}

func TestDeadlineStopsTheHandlerAndWritesNothing(t *testing.T) {
	c := startCloud(t, func(aitest.Call) aitest.Step { return aitest.Step{Hang: true} })
	w := c.worker(t, "ai-eligibility-extract")
	path := c.put(t, prefix+"inputs/koubo.md", []byte("# 公募要領\n"))
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	deadline, _ := ctx.Deadline()
	_, err := invoke(ctx, w, map[string]any{"path": path})
	if time.Now().After(deadline) {
		t.Fatalf("the worker answered after Lambda's deadline")
	}
	name, e := codedError(t, err)
	if name != "States.Timeout" || e.Code != job.E011 || !e.Retryable {
		t.Fatalf("Error %q, cause %+v", name, e)
	}
	if ks := c.keys(t, prefix+"results/ai/eligibility/"); len(ks) != 0 {
		t.Fatalf("a stopped extraction left %v", ks)
	}
	var _ blob.Store = w.Blob
}

// BenchmarkCSV1MThroughLambdaHandlers: the 1M-row user log (12.6 MB, 50k users) through the
// csv-processor as Step Functions calls it (validation, batches of 2 chunks with their audit
// records, 8 at once, aggregation), every object in versitygw. Compare per row with the device's
// whole job (engine/csvjob/csvsqlite BenchmarkWholeJob).
func BenchmarkCSV1MThroughLambdaHandlers(b *testing.B) {
	const rows, users = 1_000_000, 50_000
	c := startCloud(b, nil)
	w := c.worker(b, csvjob.FunctionName)
	key := prefix + "inputs/user-log-1m.csv"
	c.put(b, key, csvtest.BigUserLog(rows, users, csvjob.EncUTF8))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s := runCSV(b, c, w, key, fmt.Sprintf("user-log-1m-%d", i))
		if s.Status != csvjob.StatusSuccess || s.TotalRows != rows || s.Users != users {
			b.Fatalf("summary %+v", s)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/rows, "ns/row")
}

// A goal generation in the cloud: the goal and its sub-goals are objects under results/ai.
func TestSubgoalGenerationKeepsTheGoalInS3(t *testing.T) {
	c := startCloud(t, func(call aitest.Call) aitest.Step {
		return aitest.Step{Text: aitest.Answer(aitest.Call{SchemaName: "subgoals"})}
	})
	w := c.worker(t, "ai-subgoal-generation")
	out, err := invoke(context.Background(), w, map[string]any{"title": "TOEIC 900点", "deadline": "2027-03-31"})
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		GoalID   int64             `json:"goal_id"`
		Subgoals []json.RawMessage `json:"subgoals"`
	}
	if json.Unmarshal(out, &res) != nil || res.GoalID == 0 || len(res.Subgoals) != 8 {
		t.Fatalf("result %s", out)
	}
	goal := fmt.Sprintf("%sresults/ai/goals/%d/", prefix, res.GoalID)
	if ks := c.keys(t, goal); len(ks) != 2 {
		t.Fatalf("goal objects %v", ks)
	}
}
