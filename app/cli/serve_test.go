package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"jobdesk/app"
	"jobdesk/assets"
	"jobdesk/internal/crashtest"
)

func TestServeUsageErrors(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"serve", "--listen", "0.0.0.0:0"}, ExitUsage, "--allow-remote"},
		{[]string{"serve", "--listen", ":0"}, ExitUsage, "127.0.0.1"},
		{[]string{"serve", "--listen", "192.168.10.20:8083"}, ExitUsage, "loopback"},
		{[]string{"serve", "--listen", "nonsense"}, ExitUsage, "HOST:PORT"},
		{[]string{"serve", "extra"}, ExitUsage, "unexpected argument"},
		{[]string{"serve", "--frobnicate"}, ExitUsage, "not defined"},
	}
	for _, c := range cases {
		code, _, errOut := runCLI(t, append([]string{"--data-dir", dir}, c.args...)...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, errOut, c.code, c.want)
		}
	}
}

// TestServeHelperProcess is not a test: it is the `jobdesk serve` process that startServe
// starts (the test binary run again) on the data folder it was given, with the arguments of
// JOBDESK_SERVE_ARGS, so that a real signal can stop it.
func TestServeHelperProcess(t *testing.T) {
	dir := crashtest.Child(t, "startServe")
	var args []string
	json.Unmarshal([]byte(os.Getenv("JOBDESK_SERVE_ARGS")), &args)
	os.Exit(Main(append([]string{"--data-dir", dir}, args...), os.Stdout, os.Stderr))
}

// TestServeProcess runs `jobdesk serve --listen 127.0.0.1:0` as a process of its own, drives it
// with the real AWS SDK client (the shipped workflows are there; a new state machine runs on
// the in-process engine), then stops it with SIGTERM.
func TestServeProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	dir := t.TempDir()
	srv := startServe(t, dir, nil)
	endpoint, stderr := srv.endpoint, srv.stderr

	key, err := ServeCredentials(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := serveClient(endpoint, key.AccessKeyID, key.SecretAccessKey)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	list, err := c.ListStateMachines(ctx, &sfn.ListStateMachinesInput{})
	if err != nil {
		t.Fatal(err)
	}
	shipped := map[string]bool{}
	for _, sm := range list.StateMachines {
		shipped[*sm.Name] = true
	}
	for _, name := range assets.Workflows() {
		if !shipped[name] {
			t.Errorf("shipped workflow %s is not listed (%v)", name, shipped)
		}
	}
	sm, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("greeting"), RoleArn: aws.String("arn:aws:iam::000000000000:role/r"),
		Definition: aws.String(`{"StartAt":"Hello","States":{"Hello":{"Type":"Pass","Parameters":{"greeting.$":"States.Format('こんにちは、{}さん', $.name)"},"End":true}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.StartSyncExecution(ctx, &sfn.StartSyncExecutionInput{StateMachineArn: sm.StateMachineArn, Input: aws.String(`{"name":"山田"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != types.SyncExecutionStatusSucceeded || *out.Output != `{"greeting":"こんにちは、山田さん"}` {
		t.Fatalf("%s %s %s", out.Status, aws.ToString(out.Output), aws.ToString(out.Cause))
	}
	_, err = c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(strings.Replace(*out.ExecutionArn, *out.Name, "nope", 1))})
	var missing *types.ExecutionDoesNotExist
	if !errors.As(err, &missing) {
		t.Fatalf("typed error: %v", err)
	}

	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-srv.exited:
		if srv.err != nil {
			t.Fatalf("exit: %v; stderr:\n%s", srv.err, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("serve did not stop on SIGTERM; stderr:\n%s", stderr.String())
	}
	for _, want := range []string{"Step Functions API on " + endpoint, "aws stepfunctions list-state-machines --endpoint-url " + endpoint,
		"serve --print-credentials", filepath.Join(dir, app.ServeKeyFile), filepath.Join(dir, app.FoldersFile),
		"AWS_DISABLE_HOST_PREFIX_INJECTION=true", "stopping"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
}

// serveClient is the real AWS SDK Step Functions client for a `jobdesk serve` at endpoint,
// signing with the key pair given.
func serveClient(endpoint, keyID, secret string, optFns ...func(*sfn.Options)) *sfn.Client {
	return sfn.New(sfn.Options{
		Region:       "local",
		Credentials:  credentials.NewStaticCredentialsProvider(keyID, secret, ""),
		BaseEndpoint: aws.String(endpoint),
		Retryer:      aws.NopRetryer{},
	}, func(o *sfn.Options) {
		o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
			return s.Initialize.Add(middleware.InitializeMiddlewareFunc("NoHostPrefix",
				func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
					return next.HandleInitialize(smithyhttp.DisableEndpointHostPrefix(ctx, true), in)
				}), middleware.Before)
		})
	}, func(o *sfn.Options) {
		for _, f := range optFns {
			f(o)
		}
	})
}

// lockedBuffer collects a process's stderr while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
