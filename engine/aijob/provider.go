package aijob

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"jobdesk/engine/job"
)

// Request is one generation request: a system and a user prompt, the JSON schema the reply must
// satisfy (sent as response_format where the protocol has it), and optionally one image.
type Request struct {
	Model      string          // empty: the provider's configured model
	System     string          // instructions
	Prompt     string          // the user message
	SchemaName string          // a short name for the schema (response_format.json_schema.name)
	Schema     json.RawMessage // the JSON schema of the reply
	Image      []byte          // an image to read (CAPTION_GENERATION), or nil
	ImageMIME  string          // image/png or image/jpeg
	MaxTokens  int             // 0: the provider's default
}

// Reply is a provider's answer and what it cost.
type Reply struct {
	Text             string        // the assistant's text (JSON, when the schema was honoured)
	Model            string        // the model that answered
	Provider         string        // the provider's name ("openai", "bedrock")
	PromptTokens     int           // input tokens
	CompletionTokens int           // output tokens
	Latency          time.Duration // wall time of the call
}

// Provider is a chat model JobDesk can ask. Implementations return a *ProviderError for every
// failure so that the job's retry policy can tell throttling from a bad request.
type Provider interface {
	// Name names the provider in usage records ("openai", "bedrock").
	Name() string
	// Model is the model used when a Request names none.
	Model() string
	// Complete sends req and returns the reply.
	Complete(ctx context.Context, req Request) (Reply, error)
}

// Kind classifies a provider failure.
type Kind string

// Failure kinds. The first four can be retried; Offline defers the job instead of failing it.
const (
	KindThrottled   Kind = "ThrottlingException"           // 429, rate limit: retry with backoff
	KindUnavailable Kind = "ServiceUnavailableException"   // 5xx: retry with backoff
	KindNetwork     Kind = "NetworkError"                  // connection broke mid-call: retry
	KindTimeout     Kind = "States.Timeout"                // the call exceeded its time limit
	KindHeartbeat   Kind = "States.HeartbeatTimeout"       // the reply stopped arriving mid-way
	KindOffline     Kind = "ProviderOffline"               // nothing listens: wait for it
	KindQuota       Kind = "ServiceQuotaExceededException" // quota exceeded: fail at once
	KindAuth        Kind = "AccessDeniedException"         // authentication or permission: fail at once
	KindBadRequest  Kind = "ValidationException"           // the request was refused: fail at once
	KindNoVision    Kind = "ModelCannotReadImages"         // the model takes no images: fail at once
)

// ProviderError is a failed provider call.
type ProviderError struct {
	Kind    Kind
	Status  int    // HTTP status, 0 when none
	Message string // the provider's own words
	Err     error
	// RetryAfter is how long the service asked the caller to wait (HTTP Retry-After); nil when
	// it did not say.
	RetryAfter *time.Duration
	// Attempts is how many calls were made when the call's own retries (Retrying) gave up: the
	// failure is then final. 0: one call, whose retrying is left to the caller.
	Attempts int
}

// Error prints the kind and the provider's message.
func (e *ProviderError) Error() string {
	s := string(e.Kind)
	if e.Status != 0 {
		s += fmt.Sprintf(" (HTTP %d)", e.Status)
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Unwrap returns the cause.
func (e *ProviderError) Unwrap() error { return e.Err }

// Retryable reports whether trying again can help: not once the call's own retries gave up.
func (e *ProviderError) Retryable() bool {
	if e.Attempts > 0 {
		return false
	}
	switch e.Kind {
	case KindThrottled, KindUnavailable, KindNetwork, KindTimeout, KindHeartbeat:
		return true
	}
	return false
}

// busy reports whether the failure is one that a call retries by itself (Retrying): throttling,
// an unavailable service, a broken connection.
func (k Kind) busy() bool {
	return k == KindThrottled || k == KindUnavailable || k == KindNetwork
}

// IsOffline reports whether err says no provider could be reached at all.
func IsOffline(err error) bool {
	var pe *ProviderError
	return errors.As(err, &pe) && pe.Kind == KindOffline
}

// JobError turns a provider failure into the coded error a job records. The error name is the
// kind, so a workflow's Retry can match ThrottlingException or States.Timeout by name. Its words
// match its retryable flag: a failure that will be retried says so; a final one (the call's own
// retries gave up) says after how many tries, and what to do, and is not retryable.
func (e *ProviderError) JobError() *job.Error {
	var je *job.Error
	switch {
	case e.Kind == KindThrottled && e.Attempts > 0:
		je = job.Wrap(job.E002, e, fmt.Sprintf("the AI service is busy (rate limit): no answer after %s; wait a few minutes, then retry the job", tries(e.Attempts))).
			WithJa(fmt.Sprintf("AIサービスが混み合っています（レート制限）。%d 回試しましたが応答がありませんでした。数分待ってからジョブを再試行してください。", e.Attempts))
	case e.Kind.busy() && e.Attempts > 0:
		je = job.Wrap(job.E001, e, fmt.Sprintf("could not reach the AI service after %s; check that it is running, then retry the job", tries(e.Attempts))).
			WithJa(fmt.Sprintf("AIサービスに %d 回接続を試みましたが、応答がありませんでした。サービスが動いているか確認してから、ジョブを再試行してください。", e.Attempts))
	case e.Kind == KindThrottled:
		je = job.Wrap(job.E002, e, "the AI service is busy (rate limit); it will be tried again shortly").WithJa("AIサービスが混み合っています（レート制限）。しばらくして再試行します。")
	default:
		je = e.singleCallError()
	}
	je.Retryable = e.Retryable()
	return je.WithName(string(e.Kind))
}

// tries is "1 try" or "n tries".
func tries(n int) string {
	if n == 1 {
		return "1 try"
	}
	return fmt.Sprintf("%d tries", n)
}

// singleCallError words the other failures, whose messages promise nothing about retrying.
func (e *ProviderError) singleCallError() *job.Error {
	var je *job.Error
	switch e.Kind {
	case KindUnavailable, KindNetwork, KindOffline:
		je = job.Wrap(job.E001, e, "could not reach the AI service").WithJa("AIサービスに接続できませんでした。")
	case KindTimeout:
		je = job.Wrap(job.E011, e, "the AI service took too long to answer").WithJa("AIサービスの応答に時間がかかりすぎました。")
	case KindHeartbeat:
		je = job.Wrap(job.E011, e, "the AI service stopped answering mid-reply").WithJa("AIサービスの応答が途中で止まりました。")
	case KindQuota:
		je = job.Wrap(job.E007, e, "the AI service quota is exhausted").WithJa("AIサービスの利用上限に達しました。").Permanent()
	case KindAuth:
		je = job.Wrap(job.E007, e, "the AI service refused the credentials").WithJa("AIサービスの認証に失敗しました。設定を確認してください。").Permanent()
	case KindNoVision:
		je = job.Wrap(job.E007, e, "this model cannot read images; choose a vision-capable model").WithJa("このモデルは画像を読み取れません。画像に対応したモデルを選んでください。").Permanent()
	default:
		je = job.Wrap(job.E007, e, "the AI model refused the request").WithJa("AIモデルがリクエストを受け付けませんでした。").Permanent()
	}
	return je
}

// Chain asks its providers in order and moves to the next only when one is offline: the model
// on the device first, the cloud when the device has none running.
type Chain []Provider

// Name names the first provider.
func (c Chain) Name() string {
	if len(c) == 0 {
		return "none"
	}
	return c[0].Name()
}

// Model is the first provider's model.
func (c Chain) Model() string {
	if len(c) == 0 {
		return ""
	}
	return c[0].Model()
}

// Complete tries each provider until one is reachable.
func (c Chain) Complete(ctx context.Context, req Request) (Reply, error) {
	err := error(&ProviderError{Kind: KindOffline, Message: "no AI provider is configured"})
	for _, p := range c {
		var r Reply
		r, err = p.Complete(ctx, req)
		if err == nil || !IsOffline(err) {
			return r, err
		}
	}
	return Reply{}, err
}
