package awstest

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// SQS is a running SQS server: local-aws-sqs (npm, pinned in sqsserver/package-lock.json),
// which speaks the JSON protocol the SDK uses.
type SQS struct {
	Endpoint  string // http://127.0.0.1:PORT
	AccessKey string
	SecretKey string
	Region    string
	Client    *sqs.Client
	log       *Log // what the server printed
}

// sqsServerDir is the folder of server.js and its node_modules.
func sqsServerDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "sqsserver")
}

// StartSQS starts local-aws-sqs on a free port of 127.0.0.1 and returns it with a client; it
// stops when the test ends. The test fails when node or the package is missing (`make test`
// installs it: scripts/test-servers.sh runs npm ci in sqsserver/).
func StartSQS(t testing.TB) *SQS {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed: local-aws-sqs needs it (run `make test`)")
	}
	dir := sqsServerDir()
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "local-aws-sqs")); err != nil {
		t.Fatalf("local-aws-sqs is not installed in %s: run `make test` (scripts/test-servers.sh runs npm ci there)", dir)
	}
	srv := &SQS{AccessKey: "jobdesk-test", SecretKey: "jobdesk-test-secret", Region: Region}
	p, addr := startServer(t, "local-aws-sqs", func(addr string) *exec.Cmd {
		_, port, _ := net.SplitHostPort(addr)
		cmd := exec.Command(node, "server.js", port)
		cmd.Dir = dir
		return cmd
	}, func(string) func(*Process) bool {
		return func(p *Process) bool { return strings.Contains(p.Log.String(), "ready") }
	})
	srv.log, srv.Endpoint = p.Log, "http://"+addr
	srv.Client = sqs.NewFromConfig(aws.Config{
		Region:      srv.Region,
		Credentials: credentials.NewStaticCredentialsProvider(srv.AccessKey, srv.SecretKey, ""),
	}, func(o *sqs.Options) { o.BaseEndpoint = aws.String(srv.Endpoint) })
	return srv
}

// CreateQueue creates a standard queue and returns its URL, failing the test on error.
func (s *SQS) CreateQueue(t testing.TB, name string) string {
	t.Helper()
	out, err := s.Client.CreateQueue(context.Background(), &sqs.CreateQueueInput{QueueName: aws.String(name)})
	if err != nil {
		t.Fatalf("create queue %s: %v\n%s", name, err, s.log)
	}
	return aws.ToString(out.QueueUrl)
}

// Env returns the environment for an outside SDK client: credentials, region and
// AWS_ENDPOINT_URL_SQS.
func (s *SQS) Env() []string {
	return []string{
		"AWS_ACCESS_KEY_ID=" + s.AccessKey, "AWS_SECRET_ACCESS_KEY=" + s.SecretKey,
		"AWS_REGION=" + s.Region, "AWS_DEFAULT_REGION=" + s.Region,
		"AWS_ENDPOINT_URL_SQS=" + s.Endpoint,
	}
}
