// Package cloudops is the operations console of JobDesk's cloud backend (the specifications'
// operating procedures, seed 003 §11): send a job message by hand, watch the queues and their
// dead-letter queues, redrive or purge them, list the state machines' executions and redrive the
// failed ones. The command line (`jobdesk cloud`) and, later, the window call the same Console;
// its results are plain JSON-tagged values.
//
// Where the backend is comes from the one cloud.json (sync/cloudconfig: the file, then the
// environment, then flags; written from the stack's outputs by
// cloudconfig.ConfigFromStackOutputs). AWS is reached only through the SDK's default
// configuration (cloudconfig.Config.AWS): credentials from the usual chain or a profile,
// endpoints from the SDK's settings (AWS_ENDPOINT_URL_SQS, AWS_ENDPOINT_URL_SFN, …).
package cloudops

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"jobdesk/engine/blob"
	"jobdesk/engine/job"
	"jobdesk/sync/cloudconfig"
	"jobdesk/sync/s3blob"
	"jobdesk/sync/sqsqueue"
)

// SQSAPI is the part of *sqs.Client the console calls: the queue adapter's (sqsqueue.API), and
// purging and redriving a queue.
type SQSAPI interface {
	sqsqueue.API
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
	Config cloudconfig.Config
	SQS    SQSAPI
	SFN    SFNAPI
	// Blobs reads the worker's failure objects under Config's bucket and prefix
	// (cloudworker.FailureURI), the error of a dead-lettered job message; nil: a dead letter
	// shows only what its message tells.
	Blobs blob.Store
}

// New returns a Console of the backend c names, with clients from the SDK's default
// configuration (c.AWS: c's region and profile when set).
func New(ctx context.Context, c cloudconfig.Config) (*Console, error) {
	cfg, err := c.AWS(ctx)
	if err != nil {
		return nil, err
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
