package aijob

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// DefaultEndpoint is where Ollama (and most local servers, with their port) answer.
const DefaultEndpoint = "http://127.0.0.1:11434/v1"

// OpenAI is a client of any OpenAI-compatible chat-completions server (Ollama, llama.cpp server,
// LM Studio, vLLM). Every request carries the job's JSON schema as response_format, which these
// servers enforce while sampling.
type OpenAI struct {
	Endpoint string       // base URL up to /v1; empty: DefaultEndpoint
	ModelID  string       // the model to ask
	APIKey   string       // sent as a bearer token when set (local servers need none)
	HTTP     *http.Client // nil: a client with keep-alive and no overall timeout (ctx bounds calls)
	// Heartbeat is how long a reply may stall once the server has started answering (headers
	// received, body arriving) before the call fails with States.HeartbeatTimeout. 0: 60 s.
	Heartbeat time.Duration

	visionMu sync.Mutex
	vision   map[string]bool // model → reads images, as Ollama's /api/show told
}

var defaultHTTP = &http.Client{Transport: &http.Transport{
	Proxy:               nil,
	DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
	MaxIdleConnsPerHost: 64,
	IdleConnTimeout:     90 * time.Second,
}}

// Name is "openai".
func (o *OpenAI) Name() string { return "openai" }

// Model returns the configured model.
func (o *OpenAI) Model() string { return o.ModelID }

type oaMessage struct {
	Role    string `json:"role"`
	Content any    `json:"content"`
}

type oaRequest struct {
	Model          string      `json:"model"`
	Messages       []oaMessage `json:"messages"`
	ResponseFormat any         `json:"response_format,omitempty"`
	Stream         bool        `json:"stream"`
	Temperature    float64     `json:"temperature"`
	MaxTokens      int         `json:"max_tokens,omitempty"`
}

type oaResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Error *oaError `json:"error"`
}

type oaError struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    any    `json:"code"`
}

// ChatBody returns the chat-completions request body for req (exported for tests and the
// documentation of what goes on the wire).
func (o *OpenAI) ChatBody(req Request) ([]byte, error) {
	model := req.Model
	if model == "" {
		model = o.ModelID
	}
	var msgs []oaMessage
	if req.System != "" {
		msgs = append(msgs, oaMessage{"system", req.System})
	}
	if len(req.Image) > 0 {
		mime := req.ImageMIME
		if mime == "" {
			mime = "image/png"
		}
		msgs = append(msgs, oaMessage{"user", []map[string]any{
			{"type": "text", "text": req.Prompt},
			{"type": "image_url", "image_url": map[string]string{"url": "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(req.Image)}},
		}})
	} else {
		msgs = append(msgs, oaMessage{"user", req.Prompt})
	}
	body := oaRequest{Model: model, Messages: msgs, Temperature: 0.2, MaxTokens: req.MaxTokens}
	if len(req.Schema) > 0 {
		name := req.SchemaName
		if name == "" {
			name = "reply"
		}
		body.ResponseFormat = map[string]any{"type": "json_schema",
			"json_schema": map[string]any{"name": name, "schema": req.Schema, "strict": true}}
	}
	return json.Marshal(body)
}

// Complete posts req to {Endpoint}/chat/completions.
func (o *OpenAI) Complete(ctx context.Context, req Request) (Reply, error) {
	body, err := o.ChatBody(req)
	if err != nil {
		return Reply{}, &ProviderError{Kind: KindBadRequest, Message: err.Error(), Err: err}
	}
	endpoint := strings.TrimRight(o.Endpoint, "/")
	if endpoint == "" {
		endpoint = DefaultEndpoint
	}
	if len(req.Image) > 0 {
		model := req.Model
		if model == "" {
			model = o.ModelID
		}
		if !o.readsImages(ctx, endpoint, model) {
			return Reply{}, &ProviderError{Kind: KindNoVision, Message: "model " + model + " has no vision capability"}
		}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return Reply{}, &ProviderError{Kind: KindBadRequest, Message: "bad endpoint " + endpoint, Err: err}
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	if o.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+o.APIKey)
	}
	client := o.HTTP
	if client == nil {
		client = defaultHTTP
	}
	start := time.Now()
	resp, err := client.Do(hreq)
	if err != nil {
		return Reply{}, transportError(ctx, err)
	}
	defer resp.Body.Close()
	hb := o.Heartbeat
	if hb <= 0 {
		hb = 60 * time.Second
	}
	raw, err := io.ReadAll(io.LimitReader(newIdleReader(resp.Body, hb, cancel), 32<<20))
	if err != nil {
		return Reply{}, transportError(ctx, err)
	}
	if resp.StatusCode/100 != 2 {
		e := httpError(resp.StatusCode, raw, len(req.Image) > 0)
		e.RetryAfter = retryAfter(resp.Header, time.Now())
		return Reply{}, e
	}
	var r oaResponse
	if err := json.Unmarshal(raw, &r); err != nil || len(r.Choices) == 0 {
		return Reply{}, &ProviderError{Kind: KindUnavailable, Status: resp.StatusCode,
			Message: "the server's reply is not a chat completion: " + snippet(raw)}
	}
	model := r.Model
	if model == "" {
		model = o.ModelID
	}
	return Reply{Text: r.Choices[0].Message.Content, Model: model, Provider: o.Name(),
		PromptTokens: r.Usage.PromptTokens, CompletionTokens: r.Usage.CompletionTokens, Latency: time.Since(start)}, nil
}

// readsImages asks an Ollama server (POST /api/show beside /v1) whether model lists the
// "vision" capability: Ollama would otherwise drop the image and describe nothing. Servers
// without that endpoint, or that do not list capabilities, are given the image and answer for
// themselves (an error there is classified by httpError). Answers are kept per model.
func (o *OpenAI) readsImages(ctx context.Context, endpoint, model string) bool {
	o.visionMu.Lock()
	v, known := o.vision[model]
	o.visionMu.Unlock()
	if known {
		return v
	}
	root, ok := strings.CutSuffix(endpoint, "/v1")
	if !ok {
		return true
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	body, _ := json.Marshal(map[string]string{"model": model})
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, root+"/api/show", bytes.NewReader(body))
	if err != nil {
		return true
	}
	hreq.Header.Set("Content-Type", "application/json")
	client := o.HTTP
	if client == nil {
		client = defaultHTTP
	}
	resp, err := client.Do(hreq)
	if err != nil {
		return true // the chat call that follows reports an unreachable server properly
	}
	defer resp.Body.Close()
	var show struct {
		Capabilities []string `json:"capabilities"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(io.LimitReader(resp.Body, 8<<20)).Decode(&show) != nil || show.Capabilities == nil {
		return true
	}
	v = false
	for _, c := range show.Capabilities {
		v = v || c == "vision"
	}
	o.visionMu.Lock()
	if o.vision == nil {
		o.vision = map[string]bool{}
	}
	o.vision[model] = v
	o.visionMu.Unlock()
	return v
}

// errHeartbeat is the cause set when a reply stalls.
var errHeartbeat = errors.New("the reply stopped arriving")

// transportError classifies a failure below HTTP: nothing listening (offline), a stalled reply
// (heartbeat), a deadline (timeout), or a broken connection (network).
func transportError(ctx context.Context, err error) *ProviderError {
	switch {
	case errors.Is(context.Cause(ctx), errHeartbeat):
		return &ProviderError{Kind: KindHeartbeat, Message: errHeartbeat.Error(), Err: err}
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded):
		return &ProviderError{Kind: KindTimeout, Message: "no reply before the time limit", Err: err}
	case errors.Is(err, context.Canceled):
		return &ProviderError{Kind: KindNetwork, Message: "the call was cancelled", Err: err}
	case IsDialError(err):
		return &ProviderError{Kind: KindOffline, Message: "AI provider offline: " + err.Error(), Err: err}
	}
	return &ProviderError{Kind: KindNetwork, Message: err.Error(), Err: err}
}

// IsDialError reports whether err says that nothing could be connected to (refused, no route,
// unknown host): the provider is offline rather than failing.
func IsDialError(err error) bool {
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH) {
		return true
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns)
}

// httpError classifies an HTTP error reply of an OpenAI-compatible server.
func httpError(status int, raw []byte, hadImage bool) *ProviderError {
	var r oaResponse
	msg := snippet(raw)
	code := ""
	if json.Unmarshal(raw, &r) == nil && r.Error != nil {
		msg = r.Error.Message
		code = strings.ToLower(fmt.Sprint(r.Error.Code) + " " + r.Error.Type)
	}
	e := &ProviderError{Status: status, Message: msg}
	lower := strings.ToLower(msg)
	switch {
	case strings.Contains(code, "insufficient_quota") || strings.Contains(lower, "quota"):
		e.Kind = KindQuota
	case hadImage && status != http.StatusTooManyRequests && (strings.Contains(lower, "image") || strings.Contains(lower, "vision") || strings.Contains(lower, "multimodal")):
		// Ollama answers 500 "this model is missing data required for image input".
		e.Kind = KindNoVision
	case status == http.StatusTooManyRequests:
		e.Kind = KindThrottled
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		e.Kind = KindAuth
	case status >= 500 || status == http.StatusRequestTimeout:
		e.Kind = KindUnavailable
	default:
		e.Kind = KindBadRequest
	}
	return e
}

// retryAfter reads how long the server asks the client to wait: Retry-After in seconds or as an
// HTTP date (RFC 9110), or the Retry-After-Ms some OpenAI-compatible services send. nil: it did
// not say (or said nothing readable); a date in the past is no wait.
func retryAfter(h http.Header, now time.Time) *time.Duration {
	var d time.Duration
	if ms, err := strconv.ParseFloat(strings.TrimSpace(h.Get("Retry-After-Ms")), 64); err == nil && ms >= 0 && ms <= float64(24*time.Hour/time.Millisecond) {
		d = time.Duration(ms * float64(time.Millisecond))
		return &d
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return nil
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return nil
		}
		d = time.Duration(min(secs, int64(24*time.Hour/time.Second))) * time.Second
		return &d
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return nil
	}
	d = max(t.Sub(now), 0)
	return &d
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// idleReader cancels the call when no byte has arrived for d: the heartbeat of a reply in
// progress (servers keep long replies alive with whitespace, which JSON ignores).
type idleReader struct {
	r      io.Reader
	d      time.Duration
	mu     sync.Mutex
	timer  *time.Timer
	cancel context.CancelCauseFunc
}

func newIdleReader(r io.Reader, d time.Duration, cancel context.CancelCauseFunc) *idleReader {
	ir := &idleReader{r: r, d: d, cancel: cancel}
	ir.timer = time.AfterFunc(d, func() { cancel(errHeartbeat) })
	return ir
}

// Read reads and restarts the heartbeat timer on every byte that arrives.
func (ir *idleReader) Read(p []byte) (int, error) {
	n, err := ir.r.Read(p)
	if n > 0 {
		ir.mu.Lock()
		ir.timer.Reset(ir.d)
		ir.mu.Unlock()
	}
	if err != nil {
		ir.timer.Stop()
	}
	return n, err
}
