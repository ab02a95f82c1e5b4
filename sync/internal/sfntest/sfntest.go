// Package sfntest runs JobDesk's own Step Functions stand-in (engine/flow behind
// engine/flow/sfnapi, what `jobdesk serve` runs) on 127.0.0.1 over its own data folder, for the
// tests of sync/: the real SDK client talks to it over HTTP, as to AWS.
package sfntest

import (
	"context"
	"jobdesk/assets"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"jobdesk/engine/flow"
	"jobdesk/engine/flow/sfnapi"
	"jobdesk/engine/functions"
	"jobdesk/engine/queue"
	"jobdesk/engine/store"
)

// Server is a running stand-in.
type Server struct {
	Endpoint string // http://127.0.0.1:PORT
	Engine   *flow.Engine
	Queue    *queue.Queue
	Client   *sfn.Client
	Dir      string
	// requests counts the API calls answered, by operation ("StartExecution").
	requests map[string]*atomic.Int64
}

// Operations counted by Count.
var counted = []string{"StartExecution", "DescribeExecution", "StopExecution", "RedriveExecution", "ListMapRuns",
	"DescribeMapRun", "GetExecutionHistory", "ListExecutions"}

// Start runs the engine with fns over a new data folder and serves it on 127.0.0.1; both stop
// when the test ends. Each workflow in machines (name → ASL) is created as a state machine.
func Start(t testing.TB, fns *functions.Registry, machines map[string]string) *Server {
	t.Helper()
	return StartWith(t, flow.Options{Functions: fns}, machines)
}

// StartWith is Start with the engine's options: a stand-in whose ItemReader and ResultWriter
// reach S3 has Blobs (a blob.Mux with an "s3" store) and Buckets.
func StartWith(t testing.TB, o flow.Options, machines map[string]string) *Server {
	t.Helper()
	dir := t.TempDir()
	db, err := store.OpenDir(dir, queue.Migrations, flow.Migrations)
	if err != nil {
		t.Fatal(err)
	}
	q, err := queue.Open(db, queue.Options{DataDir: dir, WatchInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if o.Region == "" {
		o.Region = Region
	}
	eng, err := flow.New(db, q, o)
	if err != nil {
		t.Fatal(err)
	}
	for name, def := range machines {
		// As the deploy template's DefinitionSubstitutions would, with this stand-in's ARNs.
		sub, err := assets.Substitute([]byte(def), assets.DeviceSubstitutions(o.Region, "000000000000"))
		if err != nil {
			t.Fatalf("workflow %s: %v", name, err)
		}
		if _, err := eng.PutStateMachine(context.Background(), name, string(sub)); err != nil {
			t.Fatal(err)
		}
	}
	w := queue.NewWorker(q, queue.WorkerOptions{Workers: 4, CancelGrace: 200 * time.Millisecond})
	eng.Attach(w)
	ctx, cancel := context.WithCancel(context.Background())
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Endpoint: "http://" + ln.Addr().String(), Engine: eng, Queue: q, Dir: dir, requests: map[string]*atomic.Int64{}}
	for _, op := range counted {
		s.requests[op] = new(atomic.Int64)
	}
	api := sfnapi.New(eng, sfnapi.Options{Logf: t.Logf, Region: o.Region, Credentials: []sfnapi.Credentials{Key}})
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c := s.requests[trimTarget(r.Header.Get("X-Amz-Target"))]; c != nil {
			c.Add(1)
		}
		api.ServeHTTP(w, r)
	})}
	go hs.Serve(ln)
	t.Cleanup(func() {
		hs.Close()
		cancel()
		w.Stop()
		eng.Close()
		q.Close()
		db.Close()
	})
	s.Client = NewClient(s.Endpoint)
	return s
}

func trimTarget(t string) string {
	const p = "AWSStepFunctions."
	if len(t) > len(p) && t[:len(p)] == p {
		return t[len(p):]
	}
	return t
}

// Count returns how many calls of op the server answered.
func (s *Server) Count(op string) int64 {
	if c := s.requests[op]; c != nil {
		return c.Load()
	}
	return 0
}

// StateMachineARN is the ARN of workflow name on this server.
func (s *Server) StateMachineARN(name string) string { return s.Engine.StateMachineARN(name) }

// Region is the stand-in's region; Key the key pair it accepts signatures of (NewClient signs
// with it; the AWS CLI takes it from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY).
const Region = "us-east-1"

var Key = sfnapi.Credentials{AccessKeyID: "jobdesk-test", SecretAccessKey: "jobdesk-test-secret"}

// NewClient returns a Step Functions client of the real SDK for endpoint, with test credentials.
func NewClient(endpoint string, optFns ...func(*sfn.Options)) *sfn.Client {
	return sfn.New(sfn.Options{
		Region:       Region,
		BaseEndpoint: aws.String(endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider(Key.AccessKeyID, Key.SecretAccessKey, ""),
	}, optFns...)
}
