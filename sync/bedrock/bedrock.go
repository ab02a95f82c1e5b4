// Package bedrock is JobDesk's Amazon Bedrock provider: it implements aijob.Provider with the
// Converse API of aws-sdk-go-v2/service/bedrockruntime. It lives under sync/, the only place
// that imports AWS; aijob does not import it, the app wires it in. Credentials come from the
// AWS default chain (environment, shared profiles, SSO); JobDesk never stores them.
package bedrock

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"

	"jobdesk/engine/aijob"
)

// DefaultModel is the model used when none is configured.
const DefaultModel = "anthropic.claude-3-haiku-20240307-v1:0"

// Options configure the provider.
type Options struct {
	Region   string // AWS region; empty: the default chain's region, else us-east-1
	ModelID  string // Bedrock model id or inference profile; empty: DefaultModel
	Endpoint string // a custom endpoint URL (tests, VPC endpoints); empty: AWS's
	Profile  string // a shared-config profile; empty: the default chain
	// StructuredOutput sends the schema as Converse's outputConfig.textFormat (JSON schema),
	// which the newer models enforce; the schema is always in the system prompt as well.
	StructuredOutput bool
	HTTPClient       *http.Client // nil: the SDK's
	// APIOptions are added to the client's (the Lambda worker passes its own, which its tests
	// record calls with).
	APIOptions []func(*middleware.Stack) error
}

// Provider asks a Bedrock model through Converse.
type Provider struct {
	client *bedrockruntime.Client
	opts   Options
}

// New loads the AWS default configuration and returns the provider. The SDK's own retries are
// turned off: JobDesk's retry policy (seed 000: 3 attempts, 1 s → 2 s → 4 s) decides.
func New(ctx context.Context, o Options) (*Provider, error) {
	var lo []func(*config.LoadOptions) error
	if o.Region != "" {
		lo = append(lo, config.WithRegion(o.Region))
	}
	if o.Profile != "" {
		lo = append(lo, config.WithSharedConfigProfile(o.Profile))
	}
	cfg, err := config.LoadDefaultConfig(ctx, lo...)
	if err != nil {
		return nil, fmt.Errorf("bedrock: AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	if o.ModelID == "" {
		o.ModelID = DefaultModel
	}
	client := bedrockruntime.NewFromConfig(cfg, func(bo *bedrockruntime.Options) {
		bo.RetryMaxAttempts = 1
		bo.APIOptions = append(bo.APIOptions, o.APIOptions...)
		if o.Endpoint != "" {
			bo.BaseEndpoint = aws.String(o.Endpoint)
		}
		if o.HTTPClient != nil {
			bo.HTTPClient = o.HTTPClient
		}
	})
	return &Provider{client: client, opts: o}, nil
}

// Name is "bedrock".
func (p *Provider) Name() string { return "bedrock" }

// Model returns the configured model id.
func (p *Provider) Model() string { return p.opts.ModelID }

// Complete sends one Converse request.
func (p *Provider) Complete(ctx context.Context, req aijob.Request) (aijob.Reply, error) {
	model := req.Model
	if model == "" {
		model = p.opts.ModelID
	}
	system := req.System
	if len(req.Schema) > 0 {
		system += "\n\nReply with only one JSON object, no prose, matching this JSON schema (" + req.SchemaName + "):\n" + string(req.Schema)
	}
	content := []types.ContentBlock{&types.ContentBlockMemberText{Value: req.Prompt}}
	if len(req.Image) > 0 {
		format := types.ImageFormatPng
		if req.ImageMIME == "image/jpeg" {
			format = types.ImageFormatJpeg
		}
		content = append(content, &types.ContentBlockMemberImage{Value: types.ImageBlock{Format: format,
			Source: &types.ImageSourceMemberBytes{Value: req.Image}}})
	}
	in := &bedrockruntime.ConverseInput{
		ModelId:         aws.String(model),
		System:          []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: system}},
		Messages:        []types.Message{{Role: types.ConversationRoleUser, Content: content}},
		InferenceConfig: &types.InferenceConfiguration{Temperature: aws.Float32(0.2)},
	}
	if req.MaxTokens > 0 {
		in.InferenceConfig.MaxTokens = aws.Int32(int32(req.MaxTokens))
	}
	if p.opts.StructuredOutput && len(req.Schema) > 0 {
		in.OutputConfig = &types.OutputConfig{TextFormat: &types.OutputFormat{Type: types.OutputFormatTypeJsonSchema,
			Structure: &types.OutputFormatStructureMemberJsonSchema{Value: types.JsonSchemaDefinition{
				Name: aws.String(req.SchemaName), Schema: aws.String(string(req.Schema))}}}}
	}
	start := time.Now()
	out, err := p.client.Converse(ctx, in)
	if err != nil {
		return aijob.Reply{}, classify(ctx, err, len(req.Image) > 0)
	}
	rep := aijob.Reply{Model: model, Provider: p.Name(), Latency: time.Since(start)}
	if msg, ok := out.Output.(*types.ConverseOutputMemberMessage); ok {
		for _, c := range msg.Value.Content {
			if t, ok := c.(*types.ContentBlockMemberText); ok {
				rep.Text += t.Value
			}
		}
	}
	if out.Usage != nil {
		rep.PromptTokens = int(aws.ToInt32(out.Usage.InputTokens))
		rep.CompletionTokens = int(aws.ToInt32(out.Usage.OutputTokens))
	}
	return rep, nil
}

// classify maps a Converse failure to aijob's kinds.
func classify(ctx context.Context, err error, hadImage bool) *aijob.ProviderError {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		pe := &aijob.ProviderError{Message: ae.ErrorCode() + ": " + ae.ErrorMessage(), Err: err}
		var re interface{ HTTPStatusCode() int }
		if errors.As(err, &re) {
			pe.Status = re.HTTPStatusCode()
		}
		lower := strings.ToLower(ae.ErrorMessage())
		switch ae.ErrorCode() {
		case "ThrottlingException", "TooManyRequestsException":
			pe.Kind = aijob.KindThrottled
		case "ServiceUnavailableException", "InternalServerException", "ModelNotReadyException":
			pe.Kind = aijob.KindUnavailable
		case "ModelTimeoutException":
			pe.Kind = aijob.KindTimeout
		case "ServiceQuotaExceededException":
			pe.Kind = aijob.KindQuota
		case "AccessDeniedException", "UnrecognizedClientException", "ExpiredTokenException", "InvalidSignatureException":
			pe.Kind = aijob.KindAuth
		default:
			switch {
			case hadImage && (strings.Contains(lower, "image") || strings.Contains(lower, "vision")):
				pe.Kind = aijob.KindNoVision
			case pe.Status == 429:
				pe.Kind = aijob.KindThrottled
			case pe.Status >= 500:
				pe.Kind = aijob.KindUnavailable
			default:
				pe.Kind = aijob.KindBadRequest
			}
		}
		return pe
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded):
		return &aijob.ProviderError{Kind: aijob.KindTimeout, Message: "no reply before the time limit", Err: err}
	case aijob.IsDialError(err):
		return &aijob.ProviderError{Kind: aijob.KindOffline, Message: "AI provider offline: " + err.Error(), Err: err}
	}
	var ce interface{ Error() string }
	if errors.As(err, &ce) && strings.Contains(strings.ToLower(err.Error()), "credential") {
		return &aijob.ProviderError{Kind: aijob.KindAuth, Message: "no AWS credentials: " + err.Error(), Err: err}
	}
	return &aijob.ProviderError{Kind: aijob.KindNetwork, Message: err.Error(), Err: err}
}

var _ aijob.Provider = (*Provider)(nil)
