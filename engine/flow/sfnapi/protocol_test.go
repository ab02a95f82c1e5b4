package sfnapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/aws/smithy-go"

	"jobdesk/engine/flow"
	"jobdesk/engine/flow/sfnapi"
	"jobdesk/engine/job"
)

// post sends one raw AWS JSON 1.0 request and returns the status, headers and decoded body.
func post(t *testing.T, url, host, target, body string) (int, http.Header, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if host != "" {
		req.Host = host
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	if target != "" {
		req.Header.Set("X-Amz-Target", target)
	}
	sign(t, req, []byte(body), testKey, time.Now())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: the answer is not JSON: %q", target, b)
	}
	return resp.StatusCode, resp.Header, m
}

func TestRawProtocol(t *testing.T) {
	d := newDouble()
	url := serve(t, newServer(d, sfnapi.Options{}))
	port := url[strings.LastIndexByte(url, ':')+1:]
	big := `{"name":"` + strings.Repeat("x", 3<<20) + `"}`
	cases := []struct {
		name, host, target, body string
		status                   int
		typ                      string
	}{
		{"list", "", "AWSStepFunctions.ListStateMachines", `{}`, 200, ""},
		{"empty body", "", "AWSStepFunctions.ListStateMachines", ``, 200, ""},
		{"localhost host", "localhost:" + port, "AWSStepFunctions.ListStateMachines", `{}`, 200, ""},
		{"sync host prefix", "sync-127.0.0.1:" + port, "AWSStepFunctions.ListStateMachines", `{}`, 200, ""},
		{"ipv6 loopback host", "[::1]:" + port, "AWSStepFunctions.ListStateMachines", `{}`, 200, ""},
		{"rebinding host", "evil.example.com:" + port, "AWSStepFunctions.ListStateMachines", `{}`, 403, "AccessDeniedException"},
		{"lan host", "192.168.1.20:" + port, "AWSStepFunctions.ListStateMachines", `{}`, 403, "AccessDeniedException"},
		{"no target", "", "", `{}`, 400, "UnknownOperationException"},
		{"unknown op", "", "AWSStepFunctions.LaunchRocket", `{}`, 400, "UnknownOperationException"},
		{"other service", "", "AmazonSQS.ListQueues", `{}`, 400, "UnknownOperationException"},
		{"bad json", "", "AWSStepFunctions.ListStateMachines", `{"maxResults":`, 400, "SerializationException"},
		{"wrong type", "", "AWSStepFunctions.ListStateMachines", `{"maxResults":"ten"}`, 400, "SerializationException"},
		{"too big", "", "AWSStepFunctions.CreateActivity", big, 400, "ValidationException"},
		{"max results range", "", "AWSStepFunctions.ListStateMachines", `{"maxResults":1001}`, 400, "ValidationException"},
		{"bad arn", "", "AWSStepFunctions.DescribeStateMachine", `{"stateMachineArn":"nope"}`, 400, "InvalidArn"},
		{"arn of another kind", "", "AWSStepFunctions.DescribeExecution", `{"executionArn":"arn:aws:states:local:000000000000:stateMachine:x"}`, 400, "InvalidArn"},
		{"missing arn", "", "AWSStepFunctions.DescribeExecution", `{}`, 400, "ValidationException"},
		{"missing role", "", "AWSStepFunctions.CreateStateMachine", `{"name":"a","definition":"{}"}`, 400, "ValidationException"},
		{"bad name", "", "AWSStepFunctions.CreateStateMachine", `{"name":"a b","definition":"{}","roleArn":"r"}`, 400, "InvalidName"},
		{"express", "", "AWSStepFunctions.CreateStateMachine", `{"name":"a","definition":"{}","roleArn":"r","type":"EXPRESS"}`, 400, "StateMachineTypeNotSupported"},
		{"bad type", "", "AWSStepFunctions.CreateStateMachine", `{"name":"a","definition":"{}","roleArn":"r","type":"FAST"}`, 400, "ValidationException"},
		{"bad input", "", "AWSStepFunctions.StartExecution", `{"stateMachineArn":"arn:aws:states:local:000000000000:stateMachine:a","input":"{"}`, 400, "InvalidExecutionInput"},
		{"bad status filter", "", "AWSStepFunctions.ListExecutions", `{"stateMachineArn":"arn:aws:states:local:000000000000:stateMachine:a","statusFilter":"DONE"}`, 400, "ValidationException"},
		{"bad map run arn", "", "AWSStepFunctions.ListExecutions", `{"mapRunArn":"arn:aws:states:local:000000000000:execution:a:b"}`, 400, "InvalidArn"},
		{"both scopes", "", "AWSStepFunctions.ListExecutions", `{"mapRunArn":"arn:aws:states:local:000000000000:mapRun:a/b:c","stateMachineArn":"arn:aws:states:local:000000000000:stateMachine:a"}`, 400, "ValidationException"},
		{"bad redrive filter", "", "AWSStepFunctions.ListExecutions", `{"stateMachineArn":"arn:aws:states:local:000000000000:stateMachine:a","redriveFilter":"SOME"}`, 400, "ValidationException"},
		{"bad included data", "", "AWSStepFunctions.DescribeExecution", `{"executionArn":"arn:aws:states:local:000000000000:execution:a:b","includedData":"SOME"}`, 400, "ValidationException"},
		{"bad severity", "", "AWSStepFunctions.ValidateStateMachineDefinition", `{"definition":"{}","severity":"INFO"}`, 400, "ValidationException"},
		{"long worker name", "", "AWSStepFunctions.GetActivityTask", `{"activityArn":"arn:aws:states:local:000000000000:activity:a","workerName":"` + strings.Repeat("w", 81) + `"}`, 400, "ValidationException"},
		{"bad output", "", "AWSStepFunctions.SendTaskSuccess", `{"taskToken":"t","output":"not json"}`, 400, "InvalidOutput"},
		{"missing output", "", "AWSStepFunctions.SendTaskSuccess", `{"taskToken":"t"}`, 400, "ValidationException"},
		{"long error name", "", "AWSStepFunctions.SendTaskFailure", `{"taskToken":"t","error":"` + strings.Repeat("e", 257) + `"}`, 400, "ValidationException"},
		{"update nothing", "", "AWSStepFunctions.UpdateStateMachine", `{"stateMachineArn":"arn:aws:states:local:000000000000:stateMachine:a"}`, 400, "MissingRequiredParameter"},
		{"bad page token", "", "AWSStepFunctions.ListStateMachines", `{"nextToken":"!!"}`, 400, "InvalidToken"},
		{"delete missing", "", "AWSStepFunctions.DeleteStateMachine", `{"stateMachineArn":"arn:aws:states:local:000000000000:stateMachine:gone"}`, 200, ""},
		{"engine error maps", "", "AWSStepFunctions.DescribeStateMachine", `{"stateMachineArn":"arn:aws:states:local:000000000000:stateMachine:gone"}`, 400, "StateMachineDoesNotExist"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, h, m := post(t, url, c.host, c.target, c.body)
			if status != c.status {
				t.Fatalf("status %d, want %d: %v", status, c.status, m)
			}
			if h.Get("Content-Type") != "application/x-amz-json-1.0" || len(h.Get("X-Amzn-RequestId")) != 36 {
				t.Errorf("headers %v", h)
			}
			if c.typ == "" {
				if _, ok := m["__type"]; ok {
					t.Errorf("a success with __type: %v", m)
				}
				return
			}
			if m["__type"] != c.typ || h.Get("X-Amzn-ErrorType") != c.typ {
				t.Errorf("__type %v (header %q), want %s", m["__type"], h.Get("X-Amzn-ErrorType"), c.typ)
			}
			if msg, _ := m["message"].(string); msg == "" {
				t.Errorf("no message: %v", m)
			}
		})
	}
	// Requests refused by the protocol checks never reached the engine.
	for _, c := range d.Calls() {
		if c != "ListStateMachines" && c != "DescribeStateMachine" && c != "DeleteStateMachine" {
			t.Errorf("the engine was asked %s", c)
		}
	}

	// GET is refused with Allow: POST.
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 405 || resp.Header.Get("Allow") != "POST" {
		t.Errorf("GET: %d %v", resp.StatusCode, resp.Header)
	}
}

func TestPanicAndInternalErrorsAre500(t *testing.T) {
	d := newDouble()
	var mu sync.Mutex
	var logged []string
	logf := func(format string, args ...any) {
		mu.Lock()
		logged = append(logged, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	url := serve(t, newServer(d, sfnapi.Options{Logf: logf}))
	c := client(url)
	ctx := context.Background()

	d.panicOn = "ListStateMachines"
	_, err := c.ListStateMachines(ctx, &sfn.ListStateMachinesInput{})
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != "InternalServerError" {
		t.Fatalf("panic: %v", err)
	}
	var re *awshttp.ResponseError
	if !errors.As(err, &re) || re.HTTPStatusCode() != 500 {
		t.Fatalf("panic: not a 500: %v", err)
	}
	d.panicOn = ""

	d.fail = errors.New("database disk image is malformed")
	_, err = c.ListStateMachines(ctx, &sfn.ListStateMachinesInput{})
	if !errors.As(err, &ae) || ae.ErrorCode() != "InternalServerError" || !strings.Contains(ae.ErrorMessage(), "malformed") {
		t.Fatalf("internal: %v", err)
	}
	// A coded bad request from the engine is the caller's fault: ValidationException.
	d.fail = job.Errorf(job.E014, "unknown option").WithJa("オプションが正しくありません。")
	_, err = c.ListStateMachines(ctx, &sfn.ListStateMachinesInput{})
	if !errors.As(err, &ae) || ae.ErrorCode() != "ValidationException" {
		t.Fatalf("E014: %v", err)
	}
	d.fail = nil

	// The server still answers.
	if _, err := c.ListStateMachines(ctx, &sfn.ListStateMachinesInput{}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(logged) != 2 || !strings.Contains(logged[0], "panic") || !strings.Contains(logged[1], "malformed") {
		t.Errorf("logged %q", logged)
	}
}

func TestTypedErrorsThroughTheSDK(t *testing.T) {
	d := newDouble()
	c := client(serve(t, newServer(d, sfnapi.Options{})))
	ctx := context.Background()
	smARN := "arn:aws:states:local:000000000000:stateMachine:nosuch"
	cases := []struct {
		name string
		call func() error
		want any
	}{
		{"InvalidArn", func() error {
			_, err := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String("arn:aws:s3:::bucket")})
			return err
		}, new(*types.InvalidArn)},
		{"InvalidName", func() error {
			_, err := c.CreateActivity(ctx, &sfn.CreateActivityInput{Name: aws.String("請求書/処理")})
			return err
		}, new(*types.InvalidName)},
		{"InvalidExecutionInput", func() error {
			_, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smARN), Input: aws.String(`{"a":`)})
			return err
		}, new(*types.InvalidExecutionInput)},
		{"InvalidOutput", func() error {
			_, err := c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String("t"), Output: aws.String("{")})
			return err
		}, new(*types.InvalidOutput)},
		{"StateMachineTypeNotSupported", func() error {
			_, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("x"), Definition: aws.String("{}"), RoleArn: aws.String("r"), Type: types.StateMachineTypeExpress})
			return err
		}, new(*types.StateMachineTypeNotSupported)},
		{"StateMachineDoesNotExist", func() error {
			_, err := c.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: aws.String(smARN)})
			return err
		}, new(*types.StateMachineDoesNotExist)},
		{"StateMachineAlreadyExists", func() error {
			in := &sfn.CreateStateMachineInput{Name: aws.String("twice"), Definition: aws.String("{}"), RoleArn: aws.String("r")}
			if _, err := c.CreateStateMachine(ctx, in); err != nil {
				return err
			}
			_, err := c.CreateStateMachine(ctx, in)
			return err
		}, new(*types.StateMachineAlreadyExists)},
		{"ValidationException", func() error {
			_, err := c.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(smARN), MaxResults: 5000})
			return err
		}, new(*types.ValidationException)},
		{"InvalidToken", func() error {
			_, err := c.ListStateMachines(ctx, &sfn.ListStateMachinesInput{NextToken: aws.String("c2ZuYXBpMQBvdGhlcgA")})
			return err
		}, new(*types.InvalidToken)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if err == nil || !errors.As(err, tc.want) {
				t.Fatalf("got %v, want %s", err, tc.name)
			}
		})
	}
}

func TestListStateMachinesPages(t *testing.T) {
	d := newDouble()
	c := client(serve(t, newServer(d, sfnapi.Options{})))
	ctx := context.Background()
	var want []string
	for i := range 7 {
		name := fmt.Sprintf("machine-%02d", (i*5)%7)
		want = append(want, name)
		if _, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String(name), Definition: aws.String("{}"), RoleArn: aws.String("arn:aws:iam::000000000000:role/r")}); err != nil {
			t.Fatal(err)
		}
	}
	sort.Strings(want)
	var got []string
	pages := 0
	p := sfn.NewListStateMachinesPaginator(c, &sfn.ListStateMachinesInput{MaxResults: 3})
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, sm := range out.StateMachines {
			got = append(got, *sm.Name)
			if sm.Type != types.StateMachineTypeStandard || sm.CreationDate == nil || time.Since(*sm.CreationDate) > time.Minute {
				t.Errorf("%+v", sm)
			}
		}
	}
	if pages != 3 || strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("%d pages: %v, want %v", pages, got, want)
	}

	// A machine deleted between pages does not disturb the order of the rest.
	first, err := c.ListStateMachines(ctx, &sfn.ListStateMachinesInput{MaxResults: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeleteStateMachine(ctx, &sfn.DeleteStateMachineInput{StateMachineArn: first.StateMachines[1].StateMachineArn}); err != nil {
		t.Fatal(err)
	}
	rest, err := c.ListStateMachines(ctx, &sfn.ListStateMachinesInput{NextToken: first.NextToken})
	if err != nil {
		t.Fatal(err)
	}
	if len(rest.StateMachines) != 5 || *rest.StateMachines[0].Name != want[2] || rest.NextToken != nil {
		t.Fatalf("after delete: %d, first %s", len(rest.StateMachines), *rest.StateMachines[0].Name)
	}
}

func TestActivityPollEndsEmpty(t *testing.T) {
	d := newDouble()
	c := client(serve(t, newServer(d, sfnapi.Options{PollTimeout: 150 * time.Millisecond})))
	out, err := c.GetActivityTask(context.Background(), &sfn.GetActivityTaskInput{
		ActivityArn: aws.String("arn:aws:states:local:000000000000:activity:nobody"), WorkerName: aws.String("w1")})
	if err != nil {
		t.Fatal(err)
	}
	if out.TaskToken != nil || out.Input != nil {
		t.Fatalf("%+v", out)
	}
}

// TestSyncHostPrefix keeps the SDK's "sync-" host prefix on (as with an AWS endpoint) and sends
// the connection to the server anyway: the server accepts the prefixed loopback host.
func TestSyncHostPrefix(t *testing.T) {
	d := newDouble()
	url := serve(t, newServer(d, sfnapi.Options{}))
	var seenHost string
	var mu sync.Mutex
	hc := dialAny(strings.TrimPrefix(url, "http://"))
	rt := hc.Transport
	hc.Transport = roundTripFunc(func(r *http.Request) (*http.Response, error) {
		mu.Lock()
		seenHost = r.URL.Host
		mu.Unlock()
		return rt.RoundTrip(r)
	})
	c := sfn.New(sfn.Options{Region: "local", BaseEndpoint: aws.String(url), Retryer: aws.NopRetryer{}, HTTPClient: hc,
		Credentials: credentials.NewStaticCredentialsProvider(testKey.AccessKeyID, testKey.SecretAccessKey, "")})
	_, err := c.StartSyncExecution(context.Background(), &sfn.StartSyncExecutionInput{StateMachineArn: aws.String("arn:aws:states:local:000000000000:stateMachine:m")})
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != "ValidationException" || !strings.Contains(ae.ErrorMessage(), "StartSyncExecution") {
		t.Fatalf("%v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.HasPrefix(seenHost, "sync-127.0.0.1:") {
		t.Fatalf("the SDK sent to %q", seenHost)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestListenRefusesRemote(t *testing.T) {
	cases := []struct {
		addr        string
		allowRemote bool
		ok          bool
	}{
		{"127.0.0.1:0", false, true},
		{"localhost:0", false, true},
		{"127.0.0.2:0", false, true},
		{"0.0.0.0:0", false, false},
		{":0", false, false},
		{"192.168.1.10:0", false, false},
		{"example.com:0", false, false},
		{"no-port", false, false},
		{"0.0.0.0:0", true, true},
	}
	for _, c := range cases {
		ln, err := sfnapi.Listen(c.addr, c.allowRemote)
		if ln != nil {
			ln.Close()
		}
		if (err == nil) != c.ok {
			t.Errorf("Listen(%q, %v): %v", c.addr, c.allowRemote, err)
			continue
		}
		if err != nil {
			je := job.AsError(err)
			if je.Code != job.E014 || je.MessageJa == "" {
				t.Errorf("Listen(%q): %#v", c.addr, je)
			}
		}
	}
}

// FuzzServeHTTP sends arbitrary bodies to every operation: the server answers JSON, never a
// 500 and never a panic.
func FuzzServeHTTP(f *testing.F) {
	ops := sfnapi.Operations()
	sort.Strings(ops)
	f.Add(uint8(0), []byte(`{}`))
	f.Add(uint8(3), []byte(`{"stateMachineArn":"arn:aws:states:local:000000000000:stateMachine:a","input":"{}"}`))
	f.Add(uint8(7), []byte(`{"maxResults":-1,"nextToken":"c2ZuYXBpMQ"}`))
	f.Add(uint8(11), []byte(`{"name":"\u0000","definition":"{\"StartAt\":1}"}`))
	f.Add(uint8(13), []byte(`[1,2,3]`))
	f.Add(uint8(5), []byte(`{"taskToken":"x","output":"\"\ud800\""}`))
	validate := func(def []byte) []flow.Diagnostic {
		if !json.Valid(def) {
			return []flow.Diagnostic{{Code: "INVALID_JSON_DESCRIPTION", Message: "not JSON", Severity: "ERROR"}}
		}
		return nil
	}
	srv := newServer(newDouble(), sfnapi.Options{PollTimeout: time.Millisecond, Validate: validate, Logf: func(string, ...any) {}})
	f.Fuzz(func(t *testing.T, op uint8, body []byte) {
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8083/", bytes.NewReader(body))
		req.Header.Set("X-Amz-Target", "AWSStepFunctions."+ops[int(op)%len(ops)])
		sign(t, req, body, testKey, time.Now())
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, req)
		if w.Code >= 500 {
			t.Fatalf("%s %q: %d %s", ops[int(op)%len(ops)], body, w.Code, w.Body)
		}
		if !json.Valid(w.Body.Bytes()) {
			t.Fatalf("not JSON: %q", w.Body)
		}
	})
}

// TestOperations checks that the server answers exactly the operations the issue lists.
func TestOperations(t *testing.T) {
	want := strings.Fields(`CreateStateMachine UpdateStateMachine DescribeStateMachine ListStateMachines
		DeleteStateMachine StartExecution StartSyncExecution DescribeExecution StopExecution RedriveExecution
		ListExecutions GetExecutionHistory DescribeMapRun ListMapRuns CreateActivity DeleteActivity
		GetActivityTask SendTaskSuccess SendTaskFailure SendTaskHeartbeat ValidateStateMachineDefinition TestState`)
	got := sfnapi.Operations()
	sort.Strings(want)
	sort.Strings(got)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("operations %v\nwant %v", got, want)
	}
}

// TestErrorWording: a value of the wrong type is answered in AWS's SerializationException
// wording (no Go types), and JSON nested too deeply is called that, not invalid.
func TestErrorWording(t *testing.T) {
	url := serve(t, newServer(newDouble(), sfnapi.Options{}))
	deep := strings.Repeat("[", 10001) + strings.Repeat("]", 10001)
	deepInput, _ := json.Marshal(deep)
	cases := []struct {
		target, body, typ, msg string
	}{
		{"ListStateMachines", `{"maxResults":"ten"}`, "SerializationException", "STRING_VALUE can not be converted to an Integer"},
		{"CreateActivity", `{"name":5}`, "SerializationException", "NUMBER_VALUE can not be converted to a String"},
		{"CreateActivity", `{"name":{"a":1}}`, "SerializationException", "Start of structure or map found where not expected."},
		{"ListStateMachines", `[1,2]`, "SerializationException", "Start of list found where not expected"},
		{"ListStateMachines", `{"x":` + deep + `}`, "SerializationException", "nested too deeply"},
		{"StartExecution", `{"stateMachineArn":"arn:aws:states:local:000000000000:stateMachine:a","input":` + string(deepInput) + `}`,
			"InvalidExecutionInput", "the execution input is nested too deeply"},
	}
	for _, c := range cases {
		status, _, m := post(t, url, "", "AWSStepFunctions."+c.target, c.body)
		msg, _ := m["message"].(string)
		if status != 400 || m["__type"] != c.typ || !strings.Contains(msg, c.msg) || strings.Contains(msg, " was expected") {
			t.Errorf("%s %.60s: %d %v, want %s %q", c.target, c.body, status, m, c.typ, c.msg)
		}
	}
}
