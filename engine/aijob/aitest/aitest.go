// Package aitest provides loopback AI servers for tests: an OpenAI-compatible chat-completions
// server and an Amazon Bedrock Converse server, both real net/http servers on 127.0.0.1 that
// speak the real protocols and are scripted per request to answer, throttle (with Retry-After),
// fail, hang, stop heartbeating or return malformed JSON; ThrottleOnce is a service that
// throttles every distinct request once. Requests are recorded with their arrival times, so
// tests can check retries and backoff intervals.
package aitest

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// Call is one request the server received.
type Call struct {
	N          int       // 1-based order of arrival
	At         time.Time // arrival time
	Path       string
	Model      string
	System     string
	Prompt     string          // the user text
	HasImage   bool            // an image part was sent
	SchemaName string          // response_format.json_schema.name (OpenAI) or "" (Bedrock)
	Schema     json.RawMessage // response_format.json_schema.schema
	Body       json.RawMessage // the raw request body
}

// Step is what the server does with one request.
type Step struct {
	// Text is the assistant's reply text (with Status 0 or 200).
	Text string
	// Status is an HTTP error status to answer with (429, 503, 400, 401, …).
	Status int
	// ErrorType is the error's type: OpenAI error code, or Bedrock's X-Amzn-Errortype.
	ErrorType string
	// Message is the error message.
	Message string
	// RetryAfter is sent as the Retry-After header of an error reply (seconds or an HTTP date).
	RetryAfter string
	// Delay is waited before answering (latency).
	Delay time.Duration
	// Hang keeps the request open until the client gives up.
	Hang bool
	// Heartbeats sends the headers, then this many whitespace bytes one HeartbeatEvery apart,
	// then stalls until the client gives up (a reply that stops heartbeating).
	Heartbeats     int
	HeartbeatEvery time.Duration
	// PromptTokens and CompletionTokens are reported as usage (default: len/4 of the texts).
	PromptTokens, CompletionTokens int
}

// Script decides each request's Step.
type Script func(c Call) Step

// Server is a scripted loopback AI server.
type Server struct {
	URL    string // OpenAI: base URL ending in /v1; Bedrock: endpoint URL
	Addr   string
	srv    *http.Server
	ln     net.Listener
	mu     sync.Mutex
	calls  []Call
	script Script
	model  string
	done   chan struct{}
	caps   []string // answered by POST /api/show as Ollama does; nil: no such endpoint (404)
}

// SetCapabilities makes the server answer Ollama's POST /api/show with these model
// capabilities (e.g. "completion", "vision"); nil turns the endpoint off again.
func (s *Server) SetCapabilities(caps []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.caps = caps
}

// Calls returns the requests received so far.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// SetScript replaces the script.
func (s *Server) SetScript(f Script) {
	s.mu.Lock()
	s.script = f
	s.mu.Unlock()
}

// Close stops the server, releasing hung requests.
func (s *Server) Close() {
	select {
	case <-s.done:
	default:
		close(s.done)
	}
	s.srv.Close()
}

func (s *Server) record(c Call) (Call, Step) {
	s.mu.Lock()
	c.N = len(s.calls) + 1
	c.At = time.Now()
	s.calls = append(s.calls, c)
	f := s.script
	s.mu.Unlock()
	if f == nil {
		return c, Step{Text: Answer(c)}
	}
	return c, f(c)
}

func start(t testing.TB, addr string, h func(s *Server) http.Handler, script Script) *Server {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("aitest: listen: %v", err)
	}
	s := &Server{ln: ln, Addr: ln.Addr().String(), script: script, model: "loopback-model", done: make(chan struct{})}
	s.srv = &http.Server{Handler: h(s), ReadHeaderTimeout: 5 * time.Second}
	go s.srv.Serve(ln)
	t.Cleanup(s.Close)
	return s
}

// wait applies a step's delay, hang and heartbeats; it returns false when the client went away.
func (s *Server) wait(w http.ResponseWriter, r *http.Request, st Step) bool {
	if st.Delay > 0 {
		select {
		case <-time.After(st.Delay):
		case <-r.Context().Done():
			return false
		case <-s.done:
			return false
		}
	}
	if st.Hang {
		select {
		case <-r.Context().Done():
		case <-s.done:
		}
		return false
	}
	if st.Heartbeats > 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		fl, _ := w.(http.Flusher)
		for i := 0; i < st.Heartbeats; i++ {
			io.WriteString(w, " ")
			if fl != nil {
				fl.Flush()
			}
			select {
			case <-time.After(st.HeartbeatEvery):
			case <-r.Context().Done():
				return false
			}
		}
		select {
		case <-r.Context().Done():
		case <-s.done:
		}
		return false
	}
	return true
}

func tokens(s string, n int) int {
	if n > 0 {
		return n
	}
	return len(s)/4 + 1
}

// NewOpenAI starts an OpenAI-compatible server (POST /v1/chat/completions, GET /v1/models).
func NewOpenAI(t testing.TB, script Script) *Server { return NewOpenAIAt(t, "", script) }

// NewOpenAIAt starts the OpenAI-compatible server on addr ("host:port"; "" picks a free port).
func NewOpenAIAt(t testing.TB, addr string, script Script) *Server {
	s := start(t, addr, func(s *Server) http.Handler {
		mux := http.NewServeMux()
		mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"object":"list","data":[{"id":%q,"object":"model","owned_by":"aitest"}]}`, s.model)
		})
		mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) { s.openAI(w, r) })
		mux.HandleFunc("POST /api/show", func(w http.ResponseWriter, r *http.Request) {
			s.mu.Lock()
			caps := s.caps
			s.mu.Unlock()
			if caps == nil {
				http.NotFound(w, r)
				return
			}
			var req struct {
				Model string `json:"model"`
			}
			json.NewDecoder(r.Body).Decode(&req)
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{"capabilities": caps,
				"details": map[string]any{"format": "gguf", "family": "test"}, "model_info": map[string]any{}})
		})
		return mux
	}, script)
	s.URL = "http://" + s.Addr + "/v1"
	return s
}

// answer records call c and waits as its step says; a step that fails is answered here, in
// the provider's form (writeErr, with the step's error type or typeOf its status). ok is
// false when the request has been answered or its client is gone.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, c Call, typeOf func(status int) string,
	writeErr func(w http.ResponseWriter, status int, typ, msg string)) (_ Call, _ Step, ok bool) {
	c, st := s.record(c)
	if !s.wait(w, r, st) {
		return c, st, false
	}
	if st.Status != 0 && st.Status != 200 {
		typ := st.ErrorType
		if typ == "" {
			typ = typeOf(st.Status)
		}
		if st.RetryAfter != "" {
			w.Header().Set("Retry-After", st.RetryAfter)
		}
		writeErr(w, st.Status, typ, st.Message)
		return c, st, false
	}
	return c, st, true
}

func (s *Server) openAI(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Model    string `json:"model"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		ResponseFormat *struct {
			Type       string `json:"type"`
			JSONSchema struct {
				Name   string          `json:"name"`
				Schema json.RawMessage `json:"schema"`
			} `json:"json_schema"`
		} `json:"response_format"`
	}
	if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) == 0 {
		writeOpenAIError(w, 400, "invalid_request_error", "could not parse the request body")
		return
	}
	c := Call{Path: r.URL.Path, Model: req.Model, Body: body}
	for _, m := range req.Messages {
		var text string
		if json.Unmarshal(m.Content, &text) != nil {
			var parts []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			}
			json.Unmarshal(m.Content, &parts)
			for _, p := range parts {
				if p.Type == "image_url" {
					c.HasImage = true
				}
				text += p.Text
			}
		}
		if m.Role == "system" {
			c.System = text
		} else {
			c.Prompt = text
		}
	}
	if req.ResponseFormat != nil && req.ResponseFormat.Type == "json_schema" {
		c.SchemaName, c.Schema = req.ResponseFormat.JSONSchema.Name, req.ResponseFormat.JSONSchema.Schema
	}
	c, st, ok := s.answer(w, r, c, http.StatusText, writeOpenAIError)
	if !ok {
		return
	}
	model := req.Model
	if model == "" {
		model = s.model
	}
	resp := map[string]any{
		"id": fmt.Sprintf("chatcmpl-%d", c.N), "object": "chat.completion", "created": time.Now().Unix(), "model": model,
		"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": st.Text}, "finish_reason": "stop"}},
		"usage": map[string]int{"prompt_tokens": tokens(c.Prompt, st.PromptTokens), "completion_tokens": tokens(st.Text, st.CompletionTokens),
			"total_tokens": tokens(c.Prompt, st.PromptTokens) + tokens(st.Text, st.CompletionTokens)},
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

func writeOpenAIError(w http.ResponseWriter, status int, typ, msg string) {
	if msg == "" {
		msg = http.StatusText(status)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": typ}})
}

// NewBedrock starts a Bedrock Runtime server answering POST /model/{modelId}/converse.
func NewBedrock(t testing.TB, script Script) *Server {
	s := start(t, "", func(s *Server) http.Handler {
		mux := http.NewServeMux()
		mux.HandleFunc("POST /model/{model}/converse", func(w http.ResponseWriter, r *http.Request) { s.bedrock(w, r) })
		return mux
	}, script)
	s.URL = "http://" + s.Addr
	return s
}

func (s *Server) bedrock(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Messages []struct {
			Role    string           `json:"role"`
			Content []map[string]any `json:"content"`
		} `json:"messages"`
		System []struct {
			Text string `json:"text"`
		} `json:"system"`
	}
	if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) == 0 {
		writeBedrockError(w, 400, "ValidationException", "Malformed input request")
		return
	}
	c := Call{Path: r.URL.Path, Model: r.PathValue("model"), Body: body}
	for _, sys := range req.System {
		c.System += sys.Text
	}
	for _, m := range req.Messages {
		for _, part := range m.Content {
			if t, ok := part["text"].(string); ok {
				c.Prompt += t
			}
			if _, ok := part["image"]; ok {
				c.HasImage = true
			}
		}
	}
	c.SchemaName = SchemaNameOf(c.System + c.Prompt)
	c, st, ok := s.answer(w, r, c, func(status int) string { return bedrockErrorTypes[status] }, writeBedrockError)
	if !ok {
		return
	}
	in, out := tokens(c.Prompt, st.PromptTokens), tokens(st.Text, st.CompletionTokens)
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"output":     map[string]any{"message": map[string]any{"role": "assistant", "content": []any{map[string]any{"text": st.Text}}}},
		"stopReason": "end_turn",
		"usage":      map[string]int{"inputTokens": in, "outputTokens": out, "totalTokens": in + out},
		"metrics":    map[string]int{"latencyMs": int(st.Delay.Milliseconds())},
	})
}

// bedrockErrorTypes are Bedrock's error types by HTTP status.
var bedrockErrorTypes = map[int]string{429: "ThrottlingException", 503: "ServiceUnavailableException", 400: "ValidationException",
	403: "AccessDeniedException", 500: "InternalServerException"}

func writeBedrockError(w http.ResponseWriter, status int, typ, msg string) {
	if msg == "" {
		msg = http.StatusText(status)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-Errortype", typ+":http://internal.amazon.com/coral/com.amazon.bedrock/")
	w.Header().Set("X-Amzn-Requestid", "aitest")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"message": msg})
}

// ThrottleOnce is a service that throttles every call once: the first arrival of each distinct
// request body is answered 429 (rate_limit_exceeded) with Retry-After: retryAfter ("" sends no
// header), every later arrival of the same body as next says (nil: Answer).
func ThrottleOnce(retryAfter string, next Script) Script {
	var mu sync.Mutex
	seen := map[[32]byte]bool{}
	return func(c Call) Step {
		key := sha256.Sum256(c.Body)
		mu.Lock()
		first := !seen[key]
		seen[key] = true
		mu.Unlock()
		switch {
		case first:
			return Step{Status: http.StatusTooManyRequests, ErrorType: "rate_limit_exceeded", RetryAfter: retryAfter,
				Message: "Rate limit reached; please try again later."}
		case next != nil:
			return next(c)
		}
		return Step{Text: Answer(c)}
	}
}

// SchemaNameOf guesses which job a prompt belongs to (for the Bedrock server, which receives no
// response_format): "subgoals", "actions", "tasks", "caption" or "eligibility".
func SchemaNameOf(text string) string {
	switch {
	case strings.Contains(text, "schema:subgoals"), strings.Contains(text, "8つのサブ目標"):
		return "subgoals"
	case strings.Contains(text, "schema:actions"), strings.Contains(text, "8つのアクション"):
		return "actions"
	case strings.Contains(text, "schema:tasks"), strings.Contains(text, "具体的なタスク"):
		return "tasks"
	case strings.Contains(text, "schema:caption"), strings.Contains(text, "画像"):
		return "caption"
	case strings.Contains(text, "schema:eligibility"), strings.Contains(text, "応募要件"):
		return "eligibility"
	}
	return ""
}

// Answer returns a valid reply for the request's schema: eight sub-goals, eight actions, three
// tasks, a caption or an eligibility JSON, with texts numbered by the call.
func Answer(c Call) string {
	name := c.SchemaName
	if name == "" {
		name = SchemaNameOf(c.System + c.Prompt)
	}
	var v any
	switch name {
	case "subgoals":
		var items []any
		for i := 1; i <= 8; i++ {
			items = append(items, map[string]string{"title": fmt.Sprintf("サブ目標%d", i), "description": fmt.Sprintf("説明%d", i), "background": "背景"})
		}
		v = map[string]any{"subgoals": items}
	case "actions":
		var items []any
		for i := 1; i <= 8; i++ {
			typ := "execution"
			if i%2 == 0 {
				typ = "habit"
			}
			items = append(items, map[string]string{"title": fmt.Sprintf("アクション%d-%d", c.N, i), "description": "説明", "type": typ})
		}
		v = map[string]any{"actions": items}
	case "tasks":
		var items []any
		for i := 1; i <= 3; i++ {
			items = append(items, map[string]any{"title": fmt.Sprintf("タスク%d-%d", c.N, i), "description": "説明", "type": "execution", "estimatedMinutes": 30 * i})
		}
		v = map[string]any{"tasks": items}
	case "caption":
		v = map[string]string{"description": "赤い四角形が描かれた画像です。"}
	case "eligibility":
		v = map[string]any{
			"must":         []any{map[string]string{"key": "company_size", "text": "中小企業であること"}},
			"need_check":   []any{map[string]string{"key": "region", "text": "県内に事業所があること"}},
			"must_not":     []any{map[string]string{"key": "industry", "text": "風俗営業ではないこと"}},
			"risk_flags":   []any{},
			"missing_keys": []string{"subsidy_amount"},
		}
	default:
		v = map[string]string{"error": "unknown schema"}
	}
	b, _ := json.Marshal(v)
	return string(b)
}
