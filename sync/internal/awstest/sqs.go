package awstest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

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
	cmd       *exec.Cmd
	exited    chan struct{}
	log       *safeBuffer
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
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		if lastErr = srv.start(node, dir); lastErr == nil {
			break
		}
	}
	if lastErr != nil {
		t.Fatalf("local-aws-sqs did not start: %v", lastErr)
	}
	t.Cleanup(srv.stop)
	srv.Client = sqs.NewFromConfig(aws.Config{
		Region:      srv.Region,
		Credentials: credentials.NewStaticCredentialsProvider(srv.AccessKey, srv.SecretKey, ""),
	}, func(o *sqs.Options) { o.BaseEndpoint = aws.String(srv.Endpoint) })
	return srv
}

func (s *SQS) start(node, dir string) error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	s.log = &safeBuffer{}
	cmd := exec.Command(node, "server.js", fmt.Sprint(port))
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = s.log, s.log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(s.log.String(), "ready") {
		select {
		case <-exited:
			return fmt.Errorf("local-aws-sqs exited: %v\n%s", waitErr, s.log)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			<-exited
			return fmt.Errorf("local-aws-sqs did not start on port %d within 15 s\n%s", port, s.log)
		}
	}
	s.cmd, s.exited = cmd, exited
	s.Endpoint = fmt.Sprintf("http://127.0.0.1:%d", port)
	return nil
}

func (s *SQS) stop() {
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(5 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
	}
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
