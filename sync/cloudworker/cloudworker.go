// Package cloudworker is JobDesk's cloud worker: the AWS side of the one Lambda binary
// (app/lambda). It builds the one function registry (engine/functions) from the same job
// families the device runs, with their state in S3 instead of SQLite, and serves every Lambda
// function the shipped workflows name from one zip:
//
//   - a workflow invocation (a Step Functions Task's Parameters.Payload) runs the function named
//     by JOBDESK_FUNCTION, else by the Lambda context's function name; the handler's JSON result
//     is the response, and a failure reaches Step Functions as Error = the job.Error's name
//     (what the ASL's Retry and Catch match) and Cause = Lambda's envelope
//     {"errorType": name, "errorMessage": <job.Error as JSON>}, which job.ErrorFromCause reads;
//   - an SQS batch (the queue-driven jobs: ATTACHMENT_CONVERT, ELIGIBILITY_EXTRACT,
//     CAPTION_GENERATION) runs each message's job once (idempotent on job_id), answers with
//     batchItemFailures so a failed message is retried alone, and replies with the job's outcome
//     on the status queue.
//
// Where things go (PREFIX is JOBDESK_PREFIX, e.g. "jobdesk/"):
//
//	s3://BUCKET/PREFIX/results/           job.Info.Output of every invocation: the handlers'
//	                                      work and result files (csv/<execution>/…, convert/…)
//	s3://BUCKET/PREFIX/results/jobs/<job_id>.json   the outcome of a queue job (JobResult)
//	s3://BUCKET/PREFIX/results/jobs/<job_id>.failed.json   its last failed attempt (JobFailure), what
//	                                      the console shows for a dead-lettered message
//	s3://BUCKET/PREFIX/results/docjob-cache/…       document conversions by content (docjob.BlobCache)
//	s3://BUCKET/PREFIX/results/ai/…                 the AI family's goals, usage, notifications, eligibility cache (aiblob)
//
// The context deadline Lambda gives is honoured: the handler's context ends a little before it
// (Margin), so a handler that stops reports its timeout instead of being killed; every object is
// written atomically, so a stopped job leaves nothing half-written.
package cloudworker

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go/middleware"

	"jobdesk/engine/aijob"
	"jobdesk/engine/aijob/aiblob"
	"jobdesk/engine/blob"
	"jobdesk/engine/csvjob"
	"jobdesk/engine/docjob"
	"jobdesk/engine/functions"
	"jobdesk/sync/bedrock"
	"jobdesk/sync/s3blob"
	"jobdesk/sync/sqsqueue"
)

// Environment variables of the deployed functions (assets/deploy/template.yaml).
const (
	EnvFunction       = "JOBDESK_FUNCTION"         // the function to serve
	EnvBucket         = "JOBDESK_BUCKET"           // the stack's bucket
	EnvPrefix         = "JOBDESK_PREFIX"           // the key prefix (inputs/, results/, history/ below it)
	EnvStatusQueueURL = "JOBDESK_STATUS_QUEUE_URL" // where queue jobs report their outcome
	EnvBedrockModel   = "JOBDESK_BEDROCK_MODEL"    // the AI functions' model
	EnvBedrockRegion  = "JOBDESK_BEDROCK_REGION"   // the AI functions' Bedrock region
)

// Config is the worker's configuration, read from the environment.
type Config struct {
	Function       string
	Bucket         string
	Prefix         string
	StatusQueueURL string
	BedrockModel   string
	BedrockRegion  string
}

// ConfigFromEnv reads Config from the environment (see the Env constants).
func ConfigFromEnv() Config {
	return Config{
		Function: os.Getenv(EnvFunction), Bucket: os.Getenv(EnvBucket), Prefix: os.Getenv(EnvPrefix),
		StatusQueueURL: os.Getenv(EnvStatusQueueURL),
		BedrockModel:   os.Getenv(EnvBedrockModel), BedrockRegion: os.Getenv(EnvBedrockRegion),
	}
}

// Results returns the results prefix s3://BUCKET/PREFIX/results/, every invocation's
// job.Info.Output.
func (c Config) Results() string {
	p := strings.Trim(c.Prefix, "/")
	if p != "" {
		p += "/"
	}
	return "s3://" + c.Bucket + "/" + p + "results/"
}

// Worker serves Lambda invocations from the function registry. Build it with New (AWS) or fill
// it directly (tests).
type Worker struct {
	// Functions is the registry the invocations are served from.
	Functions *functions.Registry
	// Function is the function a workflow invocation runs ("": the Lambda context's name).
	Function string
	// Blob reads and writes every object (S3 in the cloud).
	Blob blob.Store
	// Results is every invocation's job.Info.Output (Config.Results).
	Results string
	// Status sends the queue jobs' outcomes to StatusQueueURL (nil or "": no reply unless the
	// message names its own queue and Status is set).
	Status         sqsqueue.API
	StatusQueueURL string
	// Margin is how long before Lambda's deadline a handler's context ends (0: DefaultMargin).
	Margin time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// DefaultMargin is the time a handler is left, before Lambda's own deadline, to report a
// timeout: a tenth of the time left, at most this.
const DefaultMargin = 2 * time.Second

// Registry builds the one function registry of the cloud from the job families the device runs:
// the csv-processor (its state as objects under results, csvjob.BlobStore), the
// document-converter (cached by content under results/docjob-cache) and the AI functions
// (aiblob's state under results/ai, answering through provider; nil provider: no AI functions).
func Registry(b blob.Store, results string, provider aijob.Provider) *functions.Registry {
	reg := functions.New()
	reg.Add(csvjob.NewProcessor(csvjob.NewBlobStore(b), b, results).Functions()...)
	reg.Add(docjob.NewConverter(docjob.BlobCache{Store: b, Prefix: blob.Join(results, "docjob-cache")}, b).Functions()...)
	if provider != nil {
		svc := aijob.NewService(aiblob.New(b, blob.Join(results, "ai")).State(), provider)
		svc.Blobs = b
		reg.Add(svc.Functions()...)
	}
	return reg
}

// APIOptions are added to the AWS configuration New builds, so every client of the worker
// carries them (the tests record each call a function makes with one).
var APIOptions []func(*middleware.Stack) error

// New builds the worker of cfg: the AWS SDK's default configuration (region, credentials and
// endpoints from the environment; AWS_ENDPOINT_URL_S3 also selects path-style addressing, as
// local S3 servers need), S3 through s3blob, the status queue through SQS, and Bedrock Converse
// for the AI functions (JOBDESK_BEDROCK_MODEL in JOBDESK_BEDROCK_REGION, else the function's
// region).
func New(ctx context.Context, cfg Config) (*Worker, error) {
	if cfg.Bucket == "" {
		return nil, fmt.Errorf("cloudworker: %s is not set", EnvBucket)
	}
	awsCfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("cloudworker: AWS configuration: %w", err)
	}
	awsCfg.APIOptions = append(awsCfg.APIOptions, APIOptions...)
	// Only s3:// URIs: a message naming a path of the function's own disk reads nothing.
	store := s3blob.New(s3blob.NewClient(awsCfg, os.Getenv("AWS_ENDPOINT_URL_S3") != ""), s3blob.Options{})
	var provider aijob.Provider
	if strings.HasPrefix(functionName(cfg.Function), "ai-") {
		region := cfg.BedrockRegion
		if region == "" {
			region = awsCfg.Region
		}
		if provider, err = bedrock.New(ctx, bedrock.Options{Region: region, ModelID: cfg.BedrockModel, APIOptions: APIOptions}); err != nil {
			return nil, fmt.Errorf("cloudworker: %w", err)
		}
	}
	results := cfg.Results()
	return &Worker{
		Functions: Registry(store, results, provider), Function: cfg.Function, Blob: store, Results: results,
		Status: sqs.NewFromConfig(awsCfg), StatusQueueURL: cfg.StatusQueueURL,
	}, nil
}
