// Package awstest starts independent AWS-compatible servers on 127.0.0.1 for the tests of sync/,
// so the real AWS SDK talks to a real server rather than to a fake written alongside the code it
// tests. `make test` installs the servers (scripts/test-servers.sh); a test whose server is
// missing fails and says so.
package awstest

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Region is the region every test server is started in.
const Region = "us-east-1"

// S3 is a running S3 server (versitygw) with one empty bucket.
type S3 struct {
	Endpoint  string // http://127.0.0.1:PORT
	AccessKey string
	SecretKey string
	Region    string
	Bucket    string
	Dir       string     // the folder the gateway stores buckets in
	Client    *s3.Client // path-style client with the server's credentials
	Config    aws.Config // region and credentials, no endpoint (set BaseEndpoint on the client)
	log       *Log       // what the server printed
}

// Find returns the path of a test tool: in PATH, else in $(go env GOPATH)/bin.
func Find(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	gopath := os.Getenv("GOPATH")
	if gopath == "" {
		if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
			gopath = strings.TrimSpace(string(out))
		}
	}
	for _, dir := range filepath.SplitList(gopath) {
		p := filepath.Join(dir, "bin", name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s is not installed: run `make test` (scripts/test-servers.sh installs it)", name)
}

// StartS3 starts versitygw on a free port of 127.0.0.1 over a temporary folder, creates a bucket
// and returns the server; it stops when the test ends. The test fails when versitygw is missing.
func StartS3(t testing.TB) *S3 {
	t.Helper()
	bin, err := Find("versitygw")
	if err != nil {
		t.Fatal(err)
	}
	srv := &S3{AccessKey: "jobdesk-test", SecretKey: "jobdesk-test-secret", Region: Region, Bucket: "jobdesk-test", Dir: t.TempDir()}
	p, addr := startServer(t, "versitygw", func(addr string) *exec.Cmd {
		return exec.Command(bin, "--access", srv.AccessKey, "--secret", srv.SecretKey, "--region", srv.Region,
			"--port", addr, "--quiet", "posix", srv.Dir)
	}, Listening)
	srv.log, srv.Endpoint = p.Log, "http://"+addr
	srv.Config = aws.Config{
		Region:      srv.Region,
		Credentials: credentials.NewStaticCredentialsProvider(srv.AccessKey, srv.SecretKey, ""),
	}
	srv.Client = srv.NewClient(nil)
	// The bucket is the test's setting, not a call of the code under test: made by a client
	// without S3ClientOptions.
	setup := s3.NewFromConfig(srv.Config, func(o *s3.Options) { o.BaseEndpoint = aws.String(srv.Endpoint); o.UsePathStyle = true })
	if _, err := setup.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: &srv.Bucket}); err != nil {
		t.Fatalf("create bucket on versitygw: %v\n%s", err, srv.log)
	}
	return srv
}

// S3ClientOptions are applied to every client NewClient returns (srv.Client included), after its
// own: a test package records the calls its S3 clients make with one (Recorder.Option).
var S3ClientOptions []func(*s3.Options)

// NewClient returns a new path-style client of the server; httpClient nil means the SDK's.
func (s *S3) NewClient(httpClient aws.HTTPClient, optFns ...func(*s3.Options)) *s3.Client {
	optFns = append(optFns, S3ClientOptions...)
	return s3.NewFromConfig(s.Config, append([]func(*s3.Options){func(o *s3.Options) {
		o.BaseEndpoint = aws.String(s.Endpoint)
		o.UsePathStyle = true
		if httpClient != nil {
			o.HTTPClient = httpClient
		}
	}}, optFns...)...)
}

// Env returns the environment for an outside client (the AWS CLI, or config.LoadDefaultConfig):
// the server's credentials, region and AWS_ENDPOINT_URL_S3. The AWS CLI ignores the endpoint
// variable; give it --endpoint-url.
func (s *S3) Env() []string {
	return []string{
		"AWS_ACCESS_KEY_ID=" + s.AccessKey, "AWS_SECRET_ACCESS_KEY=" + s.SecretKey,
		"AWS_REGION=" + s.Region, "AWS_DEFAULT_REGION=" + s.Region,
		"AWS_ENDPOINT_URL_S3=" + s.Endpoint,
	}
}

// AWSCLI returns the path of Debian's AWS CLI v2 (/usr/bin/aws; a pip-installed v1 may come
// first on PATH), failing the test when it is missing.
func AWSCLI(t testing.TB) string {
	t.Helper()
	const p = "/usr/bin/aws"
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s is missing: run `make test` (it installs Debian's awscli package)", p)
	}
	return p
}

// RunAWS runs the AWS CLI against the server and returns its standard output; it fails the test
// when the CLI fails.
func (s *S3) RunAWS(t testing.TB, args ...string) string {
	t.Helper()
	cmd := exec.Command(AWSCLI(t), append([]string{"--endpoint-url", s.Endpoint}, args...)...)
	cmd.Env = append(append(os.Environ(), "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_PAGER="), s.Env()...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("aws %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

// Counter is an HTTP client for the SDK that counts the S3 requests it sends by operation.
type Counter struct {
	next aws.HTTPClient
	mu   sync.Mutex
	ops  map[string]int
}

// NewCounter returns a Counter over the SDK's default HTTP client.
func NewCounter() *Counter {
	return &Counter{next: awshttp.NewBuildableClient(), ops: map[string]int{}}
}

// Do counts and sends r.
func (c *Counter) Do(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.ops[Operation(r)]++
	c.mu.Unlock()
	return c.next.Do(r)
}

// Count returns how many requests of op (see Operation) were sent.
func (c *Counter) Count(op string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ops[op]
}

// Reset forgets the counts.
func (c *Counter) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ops = map[string]int{}
}

// Operation names the S3 operation of a path-style object request: PutObject, UploadPart,
// CreateMultipartUpload, CompleteMultipartUpload, ListParts, ListMultipartUploads, HeadObject,
// GetObject, DeleteObject, ListObjectsV2, AbortMultipartUpload, or METHOD for anything else.
func Operation(r *http.Request) string {
	q := r.URL.Query()
	switch r.Method {
	case http.MethodPut:
		if q.Has("partNumber") {
			return "UploadPart"
		}
		return "PutObject"
	case http.MethodPost:
		if q.Has("uploads") {
			return "CreateMultipartUpload"
		}
		if q.Has("uploadId") {
			return "CompleteMultipartUpload"
		}
	case http.MethodGet:
		switch {
		case q.Has("uploadId"):
			return "ListParts"
		case q.Has("uploads"):
			return "ListMultipartUploads"
		case q.Get("list-type") == "2":
			return "ListObjectsV2"
		}
		return "GetObject"
	case http.MethodHead:
		return "HeadObject"
	case http.MethodDelete:
		if q.Has("uploadId") {
			return "AbortMultipartUpload"
		}
		return "DeleteObject"
	}
	return r.Method
}
