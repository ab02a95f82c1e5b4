package aifamily

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"jobdesk/engine/aijob"
	"jobdesk/engine/job"
	"jobdesk/sync/bedrock"
)

// SettingsFile is the AI settings file in the data folder.
const SettingsFile = "ai.json"

// Settings is the AI configuration: the settings file ai.json (SettingsFile) in the data folder, then the
// environment (JOBDESK_AI_*), then the command line's --ai-endpoint/--ai-model, each overriding
// the one before.
type Settings struct {
	// Provider is "openai" (a server on the device; the default), "bedrock", or "auto" (the
	// device first, Bedrock when nothing answers on the device).
	Provider string `json:"provider,omitempty"`
	Endpoint string `json:"endpoint,omitempty"` // OpenAI-compatible base URL (…/v1)
	Model    string `json:"model,omitempty"`    // the model on that server
	APIKey   string `json:"api_key,omitempty"`  // only for servers that want one
	// FallbackModel answers ELIGIBILITY_EXTRACT's first fallback level.
	FallbackModel   string `json:"fallback_model,omitempty"`
	BedrockRegion   string `json:"bedrock_region,omitempty"`
	BedrockModel    string `json:"bedrock_model,omitempty"`
	BedrockEndpoint string `json:"bedrock_endpoint,omitempty"`
	BedrockProfile  string `json:"bedrock_profile,omitempty"`
	// Prices by model id, for the cost column of llm_usage.
	Prices map[string]aijob.Price `json:"prices,omitempty"`
	// Configured is true when a person set an AI service up: the settings file exists or an
	// AI environment variable (or --ai-endpoint/--ai-model/--ai-provider) names one. Without
	// it the defaults still point at a server on the device, but nothing says one is there.
	Configured bool `json:"-"`
}

// AI settings' environment variables.
const (
	EnvEndpoint = "JOBDESK_AI_ENDPOINT"
	EnvModel    = "JOBDESK_AI_MODEL"
	EnvProvider = "JOBDESK_AI_PROVIDER"
)

// DefaultModel is asked for when nothing names a model.
const DefaultModel = "llama3.2"

// LoadSettings reads the settings of the data folder and the environment.
func LoadSettings(dataDir string) (Settings, error) {
	var s Settings
	if b, err := os.ReadFile(filepath.Join(dataDir, SettingsFile)); err == nil {
		if err := json.Unmarshal(b, &s); err != nil {
			return s, job.Wrap(job.E014, err, "the AI settings file ai.json is not valid JSON").WithJa("AI 設定ファイル ai.json が正しい JSON ではありません。")
		}
		s.Configured = true
	}
	env := map[string]*string{EnvEndpoint: &s.Endpoint, EnvModel: &s.Model, EnvProvider: &s.Provider,
		"JOBDESK_AI_FALLBACK_MODEL": &s.FallbackModel, "JOBDESK_BEDROCK_REGION": &s.BedrockRegion,
		"JOBDESK_BEDROCK_MODEL": &s.BedrockModel, "JOBDESK_BEDROCK_ENDPOINT": &s.BedrockEndpoint}
	for k, p := range env {
		if v := os.Getenv(k); v != "" {
			*p = v
			s.Configured = true
		}
	}
	if s.Provider == "" {
		s.Provider = "openai"
	}
	if s.Endpoint == "" {
		s.Endpoint = aijob.DefaultEndpoint
	}
	if s.Model == "" {
		s.Model = DefaultModel
	}
	return s, nil
}

// Providers builds the primary and fallback providers of s.
func (s Settings) Providers(ctx context.Context) (aijob.Provider, aijob.Provider, error) {
	local := &aijob.OpenAI{Endpoint: s.Endpoint, ModelID: s.Model, APIKey: s.APIKey}
	var fallback aijob.Provider
	if s.FallbackModel != "" {
		fallback = &aijob.OpenAI{Endpoint: s.Endpoint, ModelID: s.FallbackModel, APIKey: s.APIKey}
	}
	cloud := func() (aijob.Provider, error) {
		return bedrock.New(ctx, bedrock.Options{Region: s.BedrockRegion, ModelID: s.BedrockModel,
			Endpoint: s.BedrockEndpoint, Profile: s.BedrockProfile})
	}
	switch s.Provider {
	case "openai", "local":
		return local, fallback, nil
	case "bedrock":
		p, err := cloud()
		return p, fallback, err
	case "auto":
		p, err := cloud()
		if err != nil {
			return local, fallback, nil
		}
		return aijob.Chain{local, p}, fallback, nil
	}
	return nil, nil, job.Errorf(job.E014, "unknown AI provider %q (openai, bedrock or auto)", s.Provider).
		WithJa(fmt.Sprintf("AI プロバイダー %q は使えません（openai / bedrock / auto）。", s.Provider))
}
