// Package cloudops is the operations console of JobDesk's cloud backend (the specifications'
// operating procedures, seed 003 §11): send a job message by hand, watch the queues and their
// dead-letter queues, redrive or purge them, list the state machines' executions and redrive the
// failed ones, and write cloud.json from the stack's outputs. The command line (`jobdesk cloud`)
// and, later, the window call the same Console; its results are plain JSON-tagged values.
//
// AWS is reached only through the SDK's default configuration (config.LoadDefaultConfig):
// credentials from the usual chain or a profile, endpoints from the SDK's settings
// (AWS_ENDPOINT_URL_SQS, AWS_ENDPOINT_URL_SFN, …).
package cloudops

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"jobdesk/engine/blob"
	"jobdesk/engine/job"
	"jobdesk/sync/s3blob"
)

// SQSAPI is the part of *sqs.Client the console calls.
type SQSAPI interface {
	SendMessage(context.Context, *sqs.SendMessageInput, ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
	ReceiveMessage(context.Context, *sqs.ReceiveMessageInput, ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	ChangeMessageVisibility(context.Context, *sqs.ChangeMessageVisibilityInput, ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error)
	DeleteMessage(context.Context, *sqs.DeleteMessageInput, ...func(*sqs.Options)) (*sqs.DeleteMessageOutput, error)
	GetQueueAttributes(context.Context, *sqs.GetQueueAttributesInput, ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error)
	GetQueueUrl(context.Context, *sqs.GetQueueUrlInput, ...func(*sqs.Options)) (*sqs.GetQueueUrlOutput, error)
	PurgeQueue(context.Context, *sqs.PurgeQueueInput, ...func(*sqs.Options)) (*sqs.PurgeQueueOutput, error)
	StartMessageMoveTask(context.Context, *sqs.StartMessageMoveTaskInput, ...func(*sqs.Options)) (*sqs.StartMessageMoveTaskOutput, error)
}

// SFNAPI is the part of *sfn.Client the console calls.
type SFNAPI interface {
	ListExecutions(context.Context, *sfn.ListExecutionsInput, ...func(*sfn.Options)) (*sfn.ListExecutionsOutput, error)
	RedriveExecution(context.Context, *sfn.RedriveExecutionInput, ...func(*sfn.Options)) (*sfn.RedriveExecutionOutput, error)
}

// Console operates one deployed backend.
type Console struct {
	Config Config
	SQS    SQSAPI
	SFN    SFNAPI
	// Blobs reads the worker's failure objects under Config's bucket and prefix
	// (cloudworker.FailureURI), the error of a dead-lettered job message; nil: a dead letter
	// shows only what its message tells.
	Blobs blob.Store
}

// Options choose the backend and how to reach it.
type Options struct {
	// Config is cloud.json (ReadConfig); Region and Profile below override its own.
	Config  Config
	Region  string
	Profile string
}

// New returns a Console with clients from the SDK's default configuration.
func New(ctx context.Context, o Options) (*Console, error) {
	c := o.Config
	if o.Region != "" {
		c.Region = o.Region
	}
	if o.Profile != "" {
		c.Profile = o.Profile
	}
	var opts []func(*awsconfig.LoadOptions) error
	if c.Region != "" {
		opts = append(opts, awsconfig.WithRegion(c.Region))
	}
	if c.Profile != "" {
		opts = append(opts, awsconfig.WithSharedConfigProfile(c.Profile))
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, job.Wrap(job.E014, err, "the AWS configuration cannot be loaded").WithJa("AWS の設定を読み込めません。")
	}
	if cfg.Region == "" {
		return nil, job.Errorf(job.E014, "no AWS region: set it in cloud.json, with --region or AWS_REGION").
			WithJa("AWS のリージョンがありません。cloud.json、--region または AWS_REGION で指定してください。")
	}
	c.Region = cfg.Region
	con := &Console{Config: c, SQS: sqs.NewFromConfig(cfg), SFN: sfn.NewFromConfig(cfg)}
	if c.Bucket != "" {
		con.Blobs = s3blob.New(s3blob.NewClient(cfg, os.Getenv("AWS_ENDPOINT_URL_S3") != ""), s3blob.Options{})
	}
	return con, nil
}

// QueueURL returns the queue of jobType from the configuration.
func (c *Console) QueueURL(jobType string) (string, error) {
	if u := c.Config.Queues[jobType]; u != "" {
		return u, nil
	}
	return "", c.unknownQueue(jobType)
}

func (c *Console) unknownQueue(name string) error {
	var known []string
	for t := range c.Config.Queues {
		known = append(known, t)
	}
	list := strings.Join(sortedCopy(known), ", ")
	if list == "" {
		list = "none"
	}
	return job.Errorf(job.E014, "cloud.json names no queue %q (its queues: %s)", name, list).
		WithJa(fmt.Sprintf("cloud.json にキュー %q がありません（キュー: %s）。", name, list))
}

// awsString is aws.String for a string field that may be empty (then nil).
func awsString(s string) *string {
	if s == "" {
		return nil
	}
	return aws.String(s)
}
