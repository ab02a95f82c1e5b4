package dispatch

import (
	"context"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"jobdesk/sync/cloudconfig"
	"jobdesk/sync/s3blob"
	"jobdesk/sync/sfnexec"
)

// CallTimeout bounds one AWS API call (a blackholed connection must not hold a job forever; the
// SDK's retryer tries again within the job's own retries).
const CallTimeout = 30 * time.Second

// HTTPClient is the HTTP client of every AWS client of the dispatcher: connections time out
// instead of hanging on a network that swallows packets.
func HTTPClient(timeout time.Duration) aws.HTTPClient {
	return awshttp.NewBuildableClient().WithTimeout(timeout).WithTransportOptions(func(t *http.Transport) {
		t.MaxIdleConnsPerHost = 64
		t.ResponseHeaderTimeout = timeout
	})
}

// Connect builds the Cloud of c: the SDK's configuration (cloudconfig.Config.AWS), the S3 blob
// store, the Step Functions executor and the SQS client of the queue-driven jobs. It calls no
// AWS API.
func Connect(ctx context.Context, c cloudconfig.Config) (*Cloud, error) {
	cfg, err := c.AWS(ctx)
	if err != nil {
		return nil, err
	}
	return FromConfig(c, cfg), nil
}

// FromConfig is Connect with an aws.Config already loaded.
func FromConfig(c cloudconfig.Config, cfg aws.Config) *Cloud {
	cfg.HTTPClient = HTTPClient(CallTimeout)
	s3c := s3blob.NewClient(cfg, c.PathStyle(cfg, nil))
	exec := sfnexec.New(sfn.NewFromConfig(cfg), sfnexec.Options{StateMachines: c.StateMachines, Profile: c.Profile})
	return &Cloud{Config: c, Blobs: s3blob.New(s3c, s3blob.Options{}), Exec: exec, SQS: sqs.NewFromConfig(cfg)}
}
