// Package cloudstatus answers "can JobDesk use its cloud now?" for `jobdesk cloud status` and
// the window's connection test: whether cloud.json is complete, the identity in use (STS
// GetCallerIdentity), and whether each configured service answers (S3 HeadBucket, Step Functions
// DescribeStateMachine for every configured state machine, Bedrock GetFoundationModelAvailability
// of the stack's model in its region). Each probe is one cheap read call; none changes anything.
package cloudstatus

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"jobdesk/engine/job"
	"jobdesk/sync/awserr"
	"jobdesk/sync/cloudconfig"
	"jobdesk/sync/dispatch"
	"jobdesk/sync/s3blob"
)

// Probe is one service's answer.
type Probe struct {
	Service   string `json:"service"`  // "STS", "S3", "Step Functions"
	Resource  string `json:"resource"` // the bucket, state machine ARN, …
	Reachable bool   `json:"reachable"`
	Error     string `json:"error,omitempty"`    // for people, English
	ErrorJa   string `json:"error_ja,omitempty"` // for people, Japanese
	Millis    int64  `json:"ms"`
}

// Report is the whole answer.
type Report struct {
	Configured bool    `json:"configured"`
	Missing    string  `json:"missing,omitempty"` // what cloud.json still needs
	Region     string  `json:"region,omitempty"`
	Profile    string  `json:"profile,omitempty"`
	Account    string  `json:"account,omitempty"`
	Identity   string  `json:"identity,omitempty"` // the caller's ARN
	Online     bool    `json:"online"`             // every probe answered
	Probes     []Probe `json:"probes"`
}

// Timeout bounds each probe.
const Timeout = 10 * time.Second

// Check probes the cloud of c. It returns an error only when the AWS settings cannot be loaded.
func Check(ctx context.Context, c cloudconfig.Config) (Report, error) {
	r := Report{Configured: c.Configured(), Missing: c.Missing(), Profile: c.Profile}
	cfg, err := c.AWS(ctx)
	if err != nil {
		return r, err
	}
	cfg.HTTPClient = dispatch.HTTPClient(Timeout)
	cfg.RetryMaxAttempts = 1
	r.Region = cfg.Region
	probe := func(service, resource, perm string, call func(context.Context) error) {
		ctx, cancel := context.WithTimeout(ctx, Timeout)
		defer cancel()
		start := time.Now()
		err := call(ctx)
		p := Probe{Service: service, Resource: resource, Reachable: err == nil, Millis: time.Since(start).Milliseconds()}
		if err != nil {
			e := job.AsError(awserr.Classify(err, awserr.Where{Service: service, Resource: resource, Profile: c.Profile, Permissions: perm}))
			p.Error, p.ErrorJa = e.Message, e.MessageJa
			// A service that answered with a refusal is reachable; only no answer is not.
			p.Reachable = !awserr.Unreachable(err) && !errorsIsTimeout(ctx)
		}
		r.Probes = append(r.Probes, p)
	}
	probe("STS", "GetCallerIdentity", "sts:GetCallerIdentity", func(ctx context.Context) error {
		out, err := sts.NewFromConfig(cfg).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
		if err == nil {
			r.Account, r.Identity = aws.ToString(out.Account), aws.ToString(out.Arn)
		}
		return err
	})
	if c.Bucket != "" {
		client := s3blob.NewClient(cfg, c.PathStyle(cfg, nil))
		probe("S3", c.Bucket, "s3:ListBucket", func(ctx context.Context) error {
			_, err := client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(c.Bucket)})
			return err
		})
	}
	if c.BedrockModel != "" {
		region := c.BedrockRegion
		if region == "" {
			region = cfg.Region
		}
		probe("Bedrock", c.BedrockModel+" ("+region+")", "bedrock:GetFoundationModelAvailability", func(ctx context.Context) error {
			return checkModel(ctx, cfg, dispatch.HTTPClient(Timeout), region, c.BedrockModel)
		})
	}
	if len(c.StateMachines) > 0 {
		client := sfn.NewFromConfig(cfg)
		for _, wf := range c.Workflows() {
			arn := c.StateMachines[wf]
			probe("Step Functions", arn, "states:DescribeStateMachine", func(ctx context.Context) error {
				_, err := client.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: aws.String(arn)})
				return err
			})
		}
	}
	r.Online = true
	for _, p := range r.Probes {
		if p.Error != "" {
			r.Online = false
		}
	}
	return r, nil
}

func errorsIsTimeout(ctx context.Context) bool { return ctx.Err() != nil }
