package aijob

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync/atomic"
	"time"

	"jobdesk/engine/job"
	"jobdesk/engine/store"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// Migrations is the schema of goals, sub-goals, actions, tasks, model usage, the eligibility
// cache and notifications.
var Migrations = store.Migrations{Name: "aijob", FS: mustSub(migrationFS, "migrations")}

func mustSub(f fs.FS, dir string) fs.FS {
	s, err := fs.Sub(f, dir)
	if err != nil {
		panic(err)
	}
	return s
}

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

// Service runs the family's handlers on one database with one provider.
type Service struct {
	DB       *store.DB
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
	// ExecutionTimeout bounds a whole TASK_GENERATION (seed 001: 900 s).
	ExecutionTimeout time.Duration
	// TaskRetry is GenerateTasks' Retry (seed 001: 2 s × 3, backoff 2).
	TaskRetry RetryPolicy
	// SaveRetry is SaveTasks' Retry (seed 001: 1 s × 3, backoff 2).
	SaveRetry RetryPolicy
	// BatchSize, Batches and PerBatch shape TASK_GENERATION: batches of at most BatchSize
	// actions, Batches batches at once, PerBatch actions at once inside a batch (8, 3, 8).
	BatchSize, Batches, PerBatch int
	// OfflineBackoff is the first wait when the provider is offline; it doubles to OfflineMax.
	OfflineBackoff, OfflineMax time.Duration
	// CacheTTL keeps eligibility results (seed 003: 7 days).
	CacheTTL time.Duration
	// Now is the clock (tests move it).
	Now func() time.Time

	offline atomic.Int32 // consecutive offline deferrals
	// saveHook, when set (tests), runs before each task row is inserted and can fail the save.
	saveHook func(actionID int64, i int) error
}

// NewService returns a Service with the seeds' limits.
func NewService(db *store.DB, p Provider) *Service {
	return &Service{DB: db, Provider: p,
		SubgoalTimeout: 300 * time.Second, CallTimeout: 120 * time.Second, ExecutionTimeout: 900 * time.Second,
		TaskRetry: RetryPolicy{2 * time.Second, 3, 2}, SaveRetry: RetryPolicy{time.Second, 3, 2},
		BatchSize: 8, Batches: 3, PerBatch: 8,
		OfflineBackoff: time.Second, OfflineMax: time.Minute, CacheTTL: 7 * 24 * time.Hour, Now: time.Now}
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

// generate asks p for a reply matching schema and decodes it into out. A reply that is not valid
// JSON for the schema is asked for once more with the validation error in the prompt; a second
// invalid reply fails with E008. Every call's usage is recorded.
func (s *Service) generate(ctx context.Context, p Provider, purpose string, req Request, schema NamedSchema, out any) (Reply, error) {
	req.SchemaName, req.Schema = schema.Name, schema.Raw
	basePrompt := req.Prompt
	var lastErr error
	for attempt := 1; attempt <= 2; attempt++ {
		rep, err := p.Complete(ctx, req)
		s.recordUsage(ctx, purpose, p, req, rep, err)
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

// recordUsage writes one llm_usage row (seed 003's llm_usage) for a call.
func (s *Service) recordUsage(ctx context.Context, purpose string, p Provider, req Request, rep Reply, callErr error) {
	if s.DB == nil {
		return
	}
	owner := s.ownerJob(ctx)
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
	var cost any
	if pr, ok := s.Prices[model]; ok {
		cost = float64(rep.PromptTokens)/1000*pr.InputPer1K + float64(rep.CompletionTokens)/1000*pr.OutputPer1K
	}
	ok := 1
	if callErr != nil {
		ok = 0
	}
	_, _ = s.DB.W.ExecContext(context.WithoutCancel(ctx), `INSERT INTO llm_usage(job_id, purpose, provider, model, prompt_tokens,
		completion_tokens, latency_ms, cost_usd, ok, created_at) VALUES (?,?,?,?,?,?,?,?,?,?)`,
		nullID(owner), purpose, prov, model, rep.PromptTokens, rep.CompletionTokens, rep.Latency.Milliseconds(), cost, ok, s.now().UnixMilli())
}

func nullID(id int64) any {
	if id == 0 {
		return nil
	}
	return id
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

// JobUsage sums the llm_usage rows of job id.
func (s *Service) JobUsage(ctx context.Context, id int64) (Usage, error) {
	var u Usage
	var model *string
	var cost *float64
	err := s.DB.R.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(prompt_tokens),0), COALESCE(SUM(completion_tokens),0),
		COALESCE(SUM(latency_ms),0), SUM(cost_usd), MAX(model) FROM llm_usage WHERE job_id=?`, id).
		Scan(&u.Calls, &u.PromptTokens, &u.CompletionTokens, &u.LatencyMs, &cost, &model)
	if model != nil {
		u.Model = *model
	}
	u.CostUSD = cost
	return u, err
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
	if isAIType(info.Type) || info.ParentID == 0 || s.DB == nil {
		return info.ID
	}
	owner := info.ID
	for id, depth := info.ParentID, 0; id > 0 && depth < 32; depth++ {
		var typ string
		var parent int64
		if err := s.DB.R.QueryRowContext(context.WithoutCancel(ctx), `SELECT type, COALESCE(parent_id,0) FROM jobs WHERE id=?`, id).Scan(&typ, &parent); err != nil {
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
