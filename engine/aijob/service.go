package aijob

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"jobdesk/engine/blob"
	"jobdesk/engine/job"
)

// Job types of the family.
const (
	TypeSubgoals    = "SUBGOAL_GENERATION"
	TypeActions     = "ACTION_GENERATION"
	TypeTasks       = "TASK_GENERATION"
	TypeCaption     = "CAPTION_GENERATION"
	TypeEligibility = "ELIGIBILITY_EXTRACT"
)

// Types lists the family's job types.
var Types = []string{TypeSubgoals, TypeActions, TypeTasks, TypeCaption, TypeEligibility}

// OfflineMessage is what an AI job shows while it waits for a provider.
const OfflineMessage = "AI provider offline"

// Price is what a model costs per thousand tokens, in US dollars.
type Price struct {
	InputPer1K  float64 `json:"input_per_1k"`
	OutputPer1K float64 `json:"output_per_1k"`
}

// RetryPolicy is a Step Functions Retrier: wait Interval, then Interval×Backoff, … for at most
// MaxAttempts retries.
type RetryPolicy struct {
	Interval    time.Duration
	MaxAttempts int
	Backoff     float64
}

// Delay returns the wait before retry n (1-based).
func (p RetryPolicy) Delay(n int) time.Duration {
	d := float64(p.Interval)
	for i := 1; i < n; i++ {
		d *= p.Backoff
	}
	return time.Duration(d)
}

// Service runs the family's handlers with one provider, keeping their state in State.
type Service struct {
	State
	// Blobs reads the files the handlers are given (images, Markdown) by URI; nil: the local
	// disk (blob.Local).
	Blobs    blob.Store
	Provider Provider
	// Fallback answers ELIGIBILITY_EXTRACT's first fallback level (seed 003: another model);
	// nil: the same provider again.
	Fallback Provider
	// Prices by model; a model without a price records no cost.
	Prices map[string]Price
	// SubgoalTimeout bounds SUBGOAL_GENERATION's generation (seed 000: 300 s).
	SubgoalTimeout time.Duration
	// CallTimeout bounds one GenerateTasks call (seed 001: 120 s).
	CallTimeout time.Duration
	// CallRetry is every provider call's own retry of throttling, an unavailable service or a
	// broken connection (Retrying): up to 4 retries, each after the server's Retry-After, else
	// after 1 s, 2 s, 4 s, 8 s. MaxAttempts 0 leaves retrying to the caller (a workflow's
	// Retry).
	CallRetry RetryPolicy
	// BatchSize shapes TASK_GENERATION: batches of at most BatchSize actions (8); the
	// task-generation workflow runs 3 batches at once and 8 actions at once inside a batch.
	BatchSize int
	// OfflineBackoff is the first wait when the provider is offline; it doubles to OfflineMax.
	OfflineBackoff, OfflineMax time.Duration
	// CacheTTL keeps eligibility results (seed 003: 7 days).
	CacheTTL time.Duration
	// Now is the clock (tests move it).
	Now func() time.Time

	offline atomic.Int32 // consecutive offline deferrals
}

// NewService returns a Service with the seeds' limits, keeping its state in st.
func NewService(st State, p Provider) *Service {
	return &Service{State: st, Provider: p,
		SubgoalTimeout: 300 * time.Second, CallTimeout: 120 * time.Second,
		CallRetry: RetryPolicy{time.Second, 4, 2}, BatchSize: 8,
		OfflineBackoff: time.Second, OfflineMax: time.Minute, CacheTTL: 7 * 24 * time.Hour, Now: time.Now}
}

func (s *Service) blobs() blob.Store {
	if s.Blobs != nil {
		return s.Blobs
	}
	return blob.Local{}
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// deferOffline turns an offline provider into a deferral with a growing delay.
func (s *Service) deferOffline(err error) error {
	if !IsOffline(err) {
		return err
	}
	n := s.offline.Add(1)
	d := s.OfflineBackoff
	if d <= 0 {
		d = time.Second
	}
	for i := int32(1); i < n && d < s.OfflineMax; i++ {
		d *= 2
	}
	if s.OfflineMax > 0 && d > s.OfflineMax {
		d = s.OfflineMax
	}
	return job.Defer(d, OfflineMessage)
}

// ErrInvalidReply is the name of the error of a reply that failed its schema twice.
const ErrInvalidReply = "InvalidModelReply"

// generate asks p for a reply matching schema and decodes it into out. Each call retries by
// itself (CallRetry). A reply that is not valid JSON for the schema is asked for once more with
// the validation error in the prompt; a second invalid reply fails with E008. Every call's usage
// is recorded, each try of it included.
func (s *Service) generate(ctx context.Context, p Provider, purpose string, req Request, schema NamedSchema, out any) (Reply, error) {
	req.SchemaName, req.Schema = schema.Name, schema.Raw
	basePrompt := req.Prompt
	var lastErr error
	call := Retrying{Provider: p, Policy: s.CallRetry, OnAttempt: func(rep Reply, err error) {
		s.recordUsage(ctx, purpose, p, req, rep, err)
	}}
	for attempt := 1; attempt <= 2; attempt++ {
		rep, err := call.Complete(ctx, req)
		if err != nil {
			var pe *ProviderError
			if errors.As(err, &pe) {
				if pe.Kind == KindOffline {
					return rep, err
				}
				return rep, pe.JobError()
			}
			return rep, job.Wrap(job.E007, err, "the AI call failed").WithJa("AIの呼び出しに失敗しました。")
		}
		s.offline.Store(0)
		body := ExtractJSON(rep.Text)
		if _, verr := schema.ValidateJSON(body); verr != nil {
			lastErr = verr
			req.Prompt = basePrompt + "\n\nYour previous reply was rejected: " + verr.Error() +
				"\nReply again with only JSON that matches the schema exactly.\n前回の応答はスキーマに合いませんでした。スキーマに正確に従う JSON のみで答えてください。"
			continue
		}
		if err := json.Unmarshal(body, out); err != nil {
			lastErr = err
			continue
		}
		return rep, nil
	}
	return Reply{}, job.Wrap(job.E008, lastErr, "the AI reply did not match the expected format twice").
		WithJa("AIの応答が2回続けて想定した形式になりませんでした。").WithName(ErrInvalidReply)
}

// ExtractJSON returns the JSON object in a model's text: the text itself, or the inside of a
// ```json fence, or the span from the first { to the last }.
func ExtractJSON(text string) []byte {
	t := strings.TrimSpace(text)
	if strings.HasPrefix(t, "```") {
		t = strings.TrimPrefix(t, "```json")
		t = strings.TrimPrefix(t, "```")
		if i := strings.LastIndex(t, "```"); i >= 0 {
			t = t[:i]
		}
		t = strings.TrimSpace(t)
	}
	if json.Valid([]byte(t)) {
		return []byte(t)
	}
	if i, j := strings.IndexByte(t, '{'), strings.LastIndexByte(t, '}'); i >= 0 && j > i && json.Valid([]byte(t[i:j+1])) {
		return []byte(t[i : j+1])
	}
	return []byte(t)
}

// recordUsage records a call's usage (seed 003's llm_usage).
func (s *Service) recordUsage(ctx context.Context, purpose string, p Provider, req Request, rep Reply, callErr error) {
	if s.Usage == nil {
		return
	}
	model := rep.Model
	if model == "" {
		model = req.Model
	}
	if model == "" {
		model = p.Model()
	}
	prov := rep.Provider
	if prov == "" {
		prov = p.Name()
	}
	var cost *float64
	if pr, ok := s.Prices[model]; ok {
		c := float64(rep.PromptTokens)/1000*pr.InputPer1K + float64(rep.CompletionTokens)/1000*pr.OutputPer1K
		cost = &c
	}
	_ = s.Usage.RecordUsage(context.WithoutCancel(ctx), UsageRecord{JobID: s.ownerJob(ctx), Purpose: purpose, Provider: prov,
		Model: model, PromptTokens: rep.PromptTokens, CompletionTokens: rep.CompletionTokens, Latency: rep.Latency,
		CostUSD: cost, OK: callErr == nil, At: s.now()})
}

// Usage is the summed model usage of one job.
type Usage struct {
	Model            string   `json:"model"`
	Calls            int      `json:"calls"`
	PromptTokens     int      `json:"prompt_tokens"`
	CompletionTokens int      `json:"completion_tokens"`
	LatencyMs        int64    `json:"latency_ms"`
	CostUSD          *float64 `json:"cost_usd,omitempty"`
}

// JobUsage sums the model usage recorded for job id.
func (s *Service) JobUsage(ctx context.Context, id int64) (Usage, error) {
	if s.Usage == nil {
		return Usage{}, nil
	}
	return s.Usage.JobUsage(ctx, id)
}

func dbErr(err error, what string) error {
	if err == nil {
		return nil
	}
	var je *job.Error
	if errors.As(err, &je) {
		return err
	}
	return job.Wrap(job.E009, err, "could not save "+what).WithJa("データベースに保存できませんでした（" + what + "）。").WithName("DatabaseConnectionError")
}

func badInput(format string, a ...any) *job.Error {
	return job.Errorf(job.E014, format, a...).WithJa("入力が正しくありません: " + fmt.Sprintf(format, a...)).WithName("ValidationError")
}

func decodeInput(input json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(input))
	if err := dec.Decode(v); err != nil {
		return badInput("the job input is not valid: %v", err)
	}
	return nil
}

// isAIType reports whether typ is one of the family's job types (a job a person asked for).
func isAIType(typ string) bool {
	for _, t := range Types {
		if t == typ {
			return true
		}
	}
	return false
}

// ownerJob returns the id of the AI job (one of Types) that the running handler works for: the
// job itself when it is one, otherwise its nearest ancestor by parent_id that is (a workflow's
// Lambda function job → its flow execution job → the user's SUBGOAL_GENERATION job, say). Rows
// the handler writes (sub-goals, actions, tasks, llm_usage, notifications) link to that job. It
// returns the job itself when no ancestor is an AI job, and 0 outside a job.
func (s *Service) ownerJob(ctx context.Context) int64 {
	info, ok := job.InfoFrom(ctx)
	if !ok || info.ID == 0 {
		return 0
	}
	if isAIType(info.Type) || info.ParentID == 0 || s.Jobs == nil {
		return info.ID
	}
	owner := info.ID
	for id, depth := info.ParentID, 0; id > 0 && depth < 32; depth++ {
		typ, parent, err := s.Jobs.JobParent(context.WithoutCancel(ctx), id)
		if err != nil {
			break
		}
		if isAIType(typ) {
			owner = id
			break
		}
		id = parent
	}
	return owner
}
