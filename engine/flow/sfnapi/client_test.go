package sfnapi_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"jobdesk/engine/flow/sfnapi"
)

// serve runs srv on a fresh 127.0.0.1 port until the test ends and returns its base URL.
func serve(t testing.TB, srv *sfnapi.Server) string {
	t.Helper()
	ln, err := sfnapi.Listen("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("Serve did not return after its context ended")
		}
	})
	return "http://" + ln.Addr().String()
}

// withoutHostPrefix stops the SDK from sending StartSyncExecution to "sync-" + host, which
// does not resolve for 127.0.0.1.
func withoutHostPrefix(o *sfn.Options) {
	o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("JobDeskNoHostPrefix",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				return next.HandleInitialize(smithyhttp.DisableEndpointHostPrefix(ctx, true), in)
			}), middleware.Before)
	})
}

// testKey is the key pair the tests' servers accept and their clients sign with.
var testKey = sfnapi.Credentials{AccessKeyID: "AKIDLOCALTEST0000000", SecretAccessKey: "local-secret"}

// newServer is sfnapi.New accepting testKey when o names no key pair.
func newServer(b sfnapi.Backend, o sfnapi.Options) *sfnapi.Server {
	if o.Credentials == nil {
		o.Credentials = []sfnapi.Credentials{testKey}
	}
	return sfnapi.New(b, o)
}

// client is the real AWS SDK Step Functions client aimed at url, as a user would configure
// it: static credentials (testKey), no retries, so errors show as they are.
func client(url string, opts ...func(*sfn.Options)) *sfn.Client {
	o := sfn.Options{
		Region:       "local",
		Credentials:  credentials.NewStaticCredentialsProvider(testKey.AccessKeyID, testKey.SecretAccessKey, ""),
		BaseEndpoint: aws.String(url),
		Retryer:      aws.NopRetryer{},
		HTTPClient:   &http.Client{Timeout: 2 * time.Minute},
	}
	return sfn.New(o, append([]func(*sfn.Options){withoutHostPrefix}, opts...)...)
}

// sign signs req with SigV4 for Step Functions in region "local" at t, as the SDK does.
func sign(t testing.TB, req *http.Request, body []byte, key sfnapi.Credentials, at time.Time) {
	t.Helper()
	sum := sha256.Sum256(body)
	err := v4.NewSigner().SignHTTP(context.Background(), aws.Credentials{AccessKeyID: key.AccessKeyID, SecretAccessKey: key.SecretAccessKey},
		req, hex.EncodeToString(sum[:]), "states", "local", at)
	if err != nil {
		t.Fatal(err)
	}
}

// dialAny makes every connection go to addr whatever the host, to check that the SDK's
// "sync-" host prefix reaches the server too.
func dialAny(addr string) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	return &http.Client{Transport: tr, Timeout: time.Minute}
}
