package app

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"jobdesk/engine/aijob/aitest"
)

// TestSaveAISettingsKeepsKeys: SaveAISettings writes the keys LoadAISettings reads and keeps
// those the window does not show; a connection test reaches the configured server once.
func TestSaveAISettingsKeepsKeys(t *testing.T) {
	dir := t.TempDir()
	hand := `{"model":"m1","api_key":"k","future_key":42}`
	if err := os.WriteFile(filepath.Join(dir, "ai.json"), []byte(hand), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := LoadAISettingsFile(dir)
	if err != nil || s.Model != "m1" || s.Endpoint != "" {
		t.Fatalf("file settings = %+v, %v", s, err)
	}
	s.Provider, s.BedrockModel = "auto", "b1"
	if err := SaveAISettings(dir, s); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "ai.json"))
	var m map[string]any
	json.Unmarshal(b, &m)
	if m["future_key"] != float64(42) || m["api_key"] != "k" || m["provider"] != "auto" || m["bedrock_model"] != "b1" {
		t.Fatalf("ai.json = %s", b)
	}
	if err := SaveAISettings(dir, AISettings{Provider: "nope"}); err == nil {
		t.Fatal("an unknown provider was saved")
	}
	srv := aitest.NewOpenAI(t, nil)
	r, err := TestAIConnection(context.Background(), AISettings{Endpoint: srv.URL, Model: "tiny"})
	if err != nil || r.Model == "" || len(srv.Calls()) != 1 {
		t.Fatalf("connection test = %+v, %v (%d calls)", r, err, len(srv.Calls()))
	}
}
