package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"jobdesk/app/aifamily"
	"jobdesk/engine/aijob"
	"jobdesk/engine/job"
)

// This file is the window's AI page behind ai.json: it reads the file alone (not the
// environment or the defaults LoadAISettings adds, so saving never writes them into the file),
// writes it back with the same keys, keeping the ones the page does not show (prices, an API
// key), and sends one tiny request to say what answered. The AI family builds its providers when
// JobDesk starts, so a saved change applies to jobs from the next start.

// AISettings is the AI configuration behind ai.json (aifamily.Settings).
type AISettings = aifamily.Settings

// AISettingsFile is the AI settings' file name in the data folder.
const AISettingsFile = "ai.json"

// LoadAISettingsFile reads ai.json alone; a missing file is empty settings.
func LoadAISettingsFile(dataDir string) (AISettings, error) {
	var s AISettings
	b, err := os.ReadFile(filepath.Join(dataDir, AISettingsFile))
	if os.IsNotExist(err) {
		return s, nil
	}
	if err == nil {
		err = json.Unmarshal(b, &s)
	}
	if err != nil {
		return AISettings{}, job.Wrap(job.E014, err, "the AI settings file ai.json is not valid JSON").WithJa("AI 設定ファイル ai.json が正しい JSON ではありません。")
	}
	return s, nil
}

// SaveAISettings checks s's provider and writes it to dataDir/ai.json with the keys
// LoadAISettings reads. Keys the file has and s leaves out (unknown to this version) are kept.
func SaveAISettings(dataDir string, s AISettings) error {
	switch s.Provider {
	case "", "openai", "local", "bedrock", "auto":
	default:
		return job.Errorf(job.E014, "unknown AI provider %q (openai, bedrock or auto)", s.Provider).
			WithJa("AI プロバイダーは openai / bedrock / auto のいずれかです。")
	}
	file := filepath.Join(dataDir, AISettingsFile)
	merged := map[string]json.RawMessage{}
	if b, err := os.ReadFile(file); err == nil {
		_ = json.Unmarshal(b, &merged) // a broken file is replaced
	}
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	var mine map[string]json.RawMessage
	if err := json.Unmarshal(b, &mine); err != nil {
		return err
	}
	for _, k := range aiSettingsKeys {
		delete(merged, k)
	}
	for k, v := range mine {
		merged[k] = v
	}
	out, err := marshalIndent(merged)
	if err != nil {
		return err
	}
	return writeFileAtomic(file, out)
}

// aiSettingsKeys are ai.json's keys that AISettings owns.
var aiSettingsKeys = []string{"provider", "endpoint", "model", "api_key", "fallback_model", "bedrock_region",
	"bedrock_model", "bedrock_endpoint", "bedrock_profile", "prices"}

// AITestResult is what answered a connection test.
type AITestResult struct {
	Provider string        // "openai", "bedrock"
	Model    string        // the model that answered
	Latency  time.Duration // the round trip
	Reply    string        // the start of its answer
}

// TestAIConnection sends one tiny request to the provider s describes (with the defaults
// LoadAISettings fills in) and returns what answered, or the provider's coded error.
func TestAIConnection(ctx context.Context, s AISettings) (AITestResult, error) {
	if s.Provider == "" {
		s.Provider = "openai"
	}
	if s.Endpoint == "" {
		s.Endpoint = aijob.DefaultEndpoint
	}
	if s.Model == "" {
		s.Model = aifamily.DefaultModel
	}
	p, _, err := s.Providers(ctx)
	if err != nil {
		return AITestResult{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	start := time.Now()
	rep, err := p.Complete(ctx, aijob.Request{Prompt: "Reply with OK.", MaxTokens: 8})
	if err != nil {
		return AITestResult{}, aiTestError(err, s)
	}
	r := AITestResult{Provider: rep.Provider, Model: rep.Model, Latency: rep.Latency, Reply: rep.Text}
	if r.Latency == 0 {
		r.Latency = time.Since(start)
	}
	if r.Provider == "" {
		r.Provider = p.Name()
	}
	if r.Model == "" {
		r.Model = p.Model()
	}
	if len([]rune(r.Reply)) > 80 {
		r.Reply = string([]rune(r.Reply)[:80]) + "…"
	}
	return r, nil
}

// aiTestError is a failed connection test as people read it: when nothing answered, which
// address did not (E001), else the provider's coded error, never "internal error".
func aiTestError(err error, s AISettings) error {
	var pe *aijob.ProviderError
	if !errors.As(err, &pe) {
		return err
	}
	if pe.Kind != aijob.KindOffline {
		return pe.JobError()
	}
	addr := s.Endpoint
	if s.Provider == "bedrock" {
		addr = "Amazon Bedrock (" + s.BedrockRegion + ")"
		if s.BedrockEndpoint != "" {
			addr = s.BedrockEndpoint
		}
	}
	return job.Wrap(job.E001, err, fmt.Sprintf("nothing answered at %s: is the AI server running there, and is the address right?", addr)).
		WithJa(fmt.Sprintf("%s から応答がありません。AI サーバーが起動しているか、アドレスが正しいか確認してください。", addr))
}
