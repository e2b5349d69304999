package llm

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/sova-ai/sova/internal/egress"
	"github.com/sova-ai/sova/internal/errtext"
	"github.com/sova-ai/sova/internal/metrics"
)

// Defaults for zero Config fields.
const (
	DefaultTimeout              = 60 * time.Second
	DefaultMaxRetries           = 3
	DefaultMaxStructuredRetries = 3
	DefaultBackoffBase          = 500 * time.Millisecond
	DefaultBackoffMax           = 20 * time.Second
)

// maxRetryAfter is the longest server-requested wait honoured before a
// retry; a longer one is shortened to this.
const maxRetryAfter = 60 * time.Second

// Config configures a Client.
type Config struct {
	// BaseURL is the OpenAI-compatible endpoint, e.g. https://api.openai.com/v1.
	BaseURL string
	APIKey  string
	// Model is the default model; FastModel is used by Fast() (Model when
	// empty); FallbackModel answers when a call fails because the model is
	// overloaded.
	Model         string
	FastModel     string
	FallbackModel string
	// Timeout bounds one attempt of Complete. For Stream it bounds the wait
	// for the first chunk and for each later one, so that long answers from
	// slow models are not cut off. Default 60s.
	Timeout time.Duration
	// MaxRetries is the number of retries after a failed attempt (network
	// error, 429, 5xx). 0 means the default (3); negative means none.
	MaxRetries int
	// MaxStructuredRetries is the number of re-asks after a structured reply
	// that does not validate. 0 means the default (3); negative means none.
	MaxStructuredRetries int
	// MaxTokens caps completion tokens when a Request sets none; 0 = no cap.
	MaxTokens int
	// ToolCalling is how tools reach the model: ToolsAuto (""), native
	// until the endpoint refuses them; ToolsNative; or ToolsPrompt, the
	// tools described in the system prompt and the calls read from the
	// reply's text (textcalls.go).
	ToolCalling string
	HTTPClient  *http.Client
	Logger      *slog.Logger
	// Metrics, when set, counts calls, their time and tokens by model.
	Metrics *metrics.Metrics
	// BackoffBase and BackoffMax shape the exponential backoff with full
	// jitter between retries. Defaults 500ms and 20s.
	BackoffBase time.Duration
	BackoffMax  time.Duration
	// Breaker tunes the circuit breaker of the endpoint (see breaker.go);
	// zero fields take the defaults.
	Breaker egress.BreakerConfig
}

// Client calls an OpenAI-compatible chat-completion endpoint. It is safe
// for concurrent use. Fast returns a view on the same connection pool and
// state with another default model.
type Client struct {
	core  *core
	model string
}

var _ Model = (*Client)(nil)

// core is the state shared by a Client and its views.
type core struct {
	cfg      Config
	log      *slog.Logger
	endpoint string
	breaker  *egress.Breaker

	mu      sync.Mutex
	caps    map[string]modelCaps
	schemas map[schemaKey]*schemaInfo
}

// modelCaps records what an endpoint turned out not to support for a model.
type modelCaps struct {
	format              formatMode
	maxCompletionTokens bool // send max_completion_tokens instead of max_tokens
	toolsInPrompt       bool // the endpoint refused native tools (textcalls.go)
}

// New returns a Client for cfg.
func New(cfg Config) (*Client, error) {
	if strings.TrimSpace(cfg.BaseURL) == "" {
		return nil, errors.New("llm: no model endpoint configured: set SOVA_LLM_BASE_URL (e.g. https://api.openai.com/v1)")
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("llm: model endpoint %q is not an http(s) URL: check SOVA_LLM_BASE_URL", redactURL(cfg.BaseURL))
	}
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, errors.New("llm: no model configured: set SOVA_MODEL")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	switch {
	case cfg.MaxRetries == 0:
		cfg.MaxRetries = DefaultMaxRetries
	case cfg.MaxRetries < 0:
		cfg.MaxRetries = 0
	}
	switch {
	case cfg.MaxStructuredRetries == 0:
		cfg.MaxStructuredRetries = DefaultMaxStructuredRetries
	case cfg.MaxStructuredRetries < 0:
		cfg.MaxStructuredRetries = 0
	}
	if cfg.BackoffBase <= 0 {
		cfg.BackoffBase = DefaultBackoffBase
	}
	if cfg.BackoffMax <= 0 {
		cfg.BackoffMax = DefaultBackoffMax
	}
	if cfg.BackoffMax < cfg.BackoffBase {
		cfg.BackoffMax = cfg.BackoffBase
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.HTTPClient == nil {
		// The endpoint an administrator configured is reachable wherever
		// it is (a model server on loopback is common); redirects pass
		// the egress guard. Attempts are bounded by their contexts.
		cfg.HTTPClient = egress.ServiceClient(-1, cfg.BaseURL)
	}
	k := &core{
		cfg:      cfg,
		log:      log,
		endpoint: redactURL(strings.TrimRight(cfg.BaseURL, "/")),
		breaker:  newBreaker(cfg.Breaker, cfg.MaxRetries),
		caps:     map[string]modelCaps{},
		schemas:  map[schemaKey]*schemaInfo{},
	}
	return &Client{core: k, model: cfg.Model}, nil
}

// redactURL drops credentials and query from a URL for messages.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User = nil
	u.RawQuery = ""
	u.Fragment = ""
	return u.String()
}

// Fast returns a view of the client whose default model is the fast model
// (the main model when none is configured).
func (c *Client) Fast() *Client {
	return &Client{core: c.core, model: cmp.Or(c.core.cfg.FastModel, c.core.cfg.Model)}
}

// chosen is the model the person chose for the run (WithModel), for the
// main view; the fast view keeps its model.
func (c *Client) chosen(ctx context.Context) string {
	if c.model != c.core.cfg.Model {
		return ""
	}
	m, _ := ctx.Value(modelKey{}).(string)
	return m
}

type modelKey struct{}

// WithModel returns a context in which calls through a client's main view
// use model instead of SOVA_MODEL (a person's choice in their settings);
// the fast view and a Request's own Model are unaffected. "" changes
// nothing.
func WithModel(ctx context.Context, model string) context.Context {
	if model == "" {
		return ctx
	}
	return context.WithValue(ctx, modelKey{}, model)
}

// ModelName is the default model of this client (or view).
func (c *Client) ModelName() string { return c.model }

// Complete runs one call and returns the whole response.
func (c *Client) Complete(ctx context.Context, req Request) (*Response, error) {
	return c.run(ctx, req, false, nil)
}

// Stream runs one call, passing each content delta to onText as it arrives.
// Tool calls are rebuilt from their deltas. A failed attempt is retried only
// while nothing has been passed to onText; after that the error is returned.
func (c *Client) Stream(ctx context.Context, req Request, onText func(delta string)) (*Response, error) {
	if onText == nil {
		onText = func(string) {}
	}
	return c.run(ctx, req, true, onText)
}

// ListModels returns the ids the endpoint serves (GET /models), without
// retries; it is meant as a quick reachability and credentials check.
func (c *Client) ListModels(ctx context.Context) ([]string, error) {
	k := c.core
	actx, cancel := context.WithTimeout(ctx, k.cfg.Timeout)
	defer cancel()
	var page modelList
	res, err := k.send(actx, http.MethodGet, "models", nil, "", false)
	if err == nil {
		err = decode(res, &page)
	}
	if err != nil {
		err = k.classify(ctx, actx, "", err)
		k.logFailure(ctx, "", err)
		return nil, err
	}
	ids := make([]string, 0, len(page.Data))
	for _, m := range page.Data {
		ids = append(ids, m.ID)
	}
	return ids, nil
}

// logFailure records a failed call in the log, once, with what its error
// keeps from clients: the endpoint's address and the network error as it
// was. A call stopped by its context did not fail.
func (k *core) logFailure(ctx context.Context, model string, err error) {
	if ctx.Err() != nil {
		return
	}
	k.log.WarnContext(ctx, "model call failed", "model", model, "err", errtext.Detail(err))
}

// call is one logical request: its retries and, on overload, the fallback.
type call struct {
	req       Request
	stream    bool
	onText    func(string)
	delivered bool // content was passed to onText
}

func (c *Client) run(ctx context.Context, req Request, stream bool, onText func(string)) (*Response, error) {
	if len(req.Messages) == 0 {
		return nil, errors.New("llm: request has no messages")
	}
	k := c.core
	model := cmp.Or(req.Model, c.chosen(ctx), c.model)
	// Tools: native, or in the prompt for an endpoint without native tool
	// calling; either way calls a model wrote as text are read from it,
	// and a stream holds back what may be one (textcalls.go).
	tools := req.Tools
	native := len(tools) > 0 && !k.toolsInPrompt(model)
	if len(tools) > 0 && !native {
		req = inPrompt(req)
	}
	var hold *textCallHold
	if stream && len(tools) > 0 && req.ToolChoice != "none" {
		hold = &textCallHold{on: onText}
		onText = hold.write
	}
	cl := &call{req: req, stream: stream, onText: onText}
	start := time.Now()
	resp, err := k.withRetries(ctx, model, cl)
	if err != nil && native && k.cfg.ToolCalling != ToolsNative && !cl.delivered && ctx.Err() == nil && rejectsTools(err) {
		k.switchToPrompt(model)
		cl.req = inPrompt(cl.req)
		resp, err = k.withRetries(ctx, model, cl)
	}
	if err != nil {
		fb := k.cfg.FallbackModel
		if fb == "" || fb == model || cl.delivered || ctx.Err() != nil || !overloadError(err) {
			k.logFailure(ctx, model, err)
			k.cfg.Metrics.ModelCall(model, time.Since(start), 0, 0, true)
			return nil, err
		}
		k.log.WarnContext(ctx, "model overloaded, using fallback model", "model", model, "fallback", fb, "err", errtext.Detail(err))
		var ferr error
		resp, ferr = k.withRetries(ctx, fb, cl)
		if ferr != nil {
			err = fmt.Errorf("%w; fallback model %q also failed: %w", err, fb, ferr)
			k.logFailure(ctx, model, err)
			k.cfg.Metrics.ModelCall(model, time.Since(start), 0, 0, true)
			return nil, err
		}
		model = fb // the fallback answered: its time and tokens are its own
	}
	if len(tools) > 0 && len(resp.ToolCalls) == 0 && req.ToolChoice != "none" {
		if calls, rest := textToolCalls(resp.Content, tools); len(calls) > 0 {
			resp.ToolCalls, resp.Content, resp.FinishReason = calls, rest, "tool_calls"
			if hold != nil {
				hold.passed = hold.all.Len() // the held call is not shown
			}
		}
	}
	if hold != nil {
		hold.release()
	}
	MeterFrom(ctx).Add(resp.Usage)
	k.cfg.Metrics.ModelCall(model, time.Since(start), resp.Usage.PromptTokens, resp.Usage.CompletionTokens, false)
	return resp, nil
}

func (k *core) withRetries(ctx context.Context, model string, cl *call) (*Response, error) {
	adapted := false
	for attempt := 0; ; attempt++ {
		if err := k.breaker.Allow(k.endpoint); err != nil {
			return nil, k.paused(model, err)
		}
		resp, err := k.attempt(ctx, model, cl)
		k.record(ctx, err)
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("model %s: %w", model, err)
		}
		if !adapted && k.adaptTokenParam(model, err) {
			adapted = true
			attempt--
			continue
		}
		if !retryable(err) || cl.delivered || attempt >= k.cfg.MaxRetries {
			return nil, finalError(model, attempt+1, err)
		}
		wait := k.backoff(attempt, err)
		k.log.DebugContext(ctx, "retrying model call", "model", model, "attempt", attempt+1, "wait", wait, "error", err)
		// The wait ends early when the endpoint's breaker opens: the
		// next Allow then fails the call at once.
		if !k.breaker.Sleep(ctx, k.endpoint, wait) && ctx.Err() != nil {
			return nil, fmt.Errorf("model %s: stopped waiting to retry after %w: %w", model, err, context.Cause(ctx))
		}
	}
}

// finalError says how many attempts were made and, unless the error
// names it already, which model was asked.
func finalError(model string, attempts int, err error) error {
	var ae *APIError
	prefix := "model " + model + ": "
	if errors.As(err, &ae) {
		prefix = ""
	}
	if attempts > 1 {
		return fmt.Errorf("%sgiving up after %d attempts: %w", prefix, attempts, err)
	}
	if prefix == "" {
		return err
	}
	return fmt.Errorf("%s%w", prefix, err)
}

// adaptTokenParam switches a model to max_completion_tokens when the
// endpoint rejects max_tokens (OpenAI's reasoning models do).
func (k *core) adaptTokenParam(model string, err error) bool {
	var ae *APIError
	if !errors.As(err, &ae) || ae.StatusCode != http.StatusBadRequest {
		return false
	}
	text := ae.Message + " " + ae.Param
	if !strings.Contains(text, "max_tokens") || !strings.Contains(text, "max_completion_tokens") {
		return false
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	caps := k.caps[model]
	if caps.maxCompletionTokens {
		return false
	}
	caps.maxCompletionTokens = true
	k.caps[model] = caps
	k.log.Info("endpoint wants max_completion_tokens for this model", "model", model)
	return true
}

func (k *core) modelCaps(model string) modelCaps {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.caps[model]
}

func (k *core) attempt(ctx context.Context, model string, cl *call) (*Response, error) {
	params, err := k.params(model, cl.req, cl.stream)
	if err != nil {
		return nil, err
	}
	if !cl.stream {
		actx, cancel := context.WithTimeout(ctx, k.cfg.Timeout)
		defer cancel()
		var comp chatCompletion
		res, err := k.send(actx, http.MethodPost, "chat/completions", params, model, false)
		if err == nil {
			err = decode(res, &comp)
		}
		if err != nil {
			return nil, k.classify(ctx, actx, model, err)
		}
		return k.fromCompletion(model, &comp)
	}

	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The timeout applies to each wait for data, not to the whole stream.
	idle := time.AfterFunc(k.cfg.Timeout, cancel)
	defer idle.Stop()

	var (
		calls       toolCallAssembler
		serverModel string
		usage       Usage
		finish      string
		chunks      int
		refusal     strings.Builder
		contents    strings.Builder
	)
	res, err := k.send(actx, http.MethodPost, "chat/completions", params, model, true)
	if err == nil {
		err = k.events(res.Body, model, func(data []byte) error {
			idle.Reset(k.cfg.Timeout)
			var chunk chatChunk
			if err := json.Unmarshal(data, &chunk); err != nil {
				return err
			}
			chunks++
			serverModel = cmp.Or(chunk.Model, serverModel)
			// Servers differ: OpenAI sends usage once in a final chunk, some
			// send running totals in every chunk. The last one is the total.
			if chunk.Usage != nil {
				if u := toUsage(*chunk.Usage); u != (Usage{}) {
					usage = u
				}
			}
			for _, ch := range chunk.Choices {
				if ch.Index != 0 {
					continue
				}
				if d := ch.Delta.Content; d != "" {
					contents.WriteString(d)
					cl.delivered = true
					cl.onText(d)
				}
				refusal.WriteString(ch.Delta.Refusal)
				calls.add(ch.Delta.ToolCalls)
				if ch.FinishReason != "" {
					finish = ch.FinishReason
				}
			}
			return nil
		})
		_ = res.Body.Close()
	}
	if err == nil {
		err = actx.Err()
	}
	if err != nil {
		err = k.classify(ctx, actx, model, err)
		var te *transportError
		if chunks > 0 && errors.As(err, &te) {
			te.midStream = true
		}
		return nil, err
	}
	if finish == "" {
		detail := "stream ended before the model finished"
		if chunks == 0 {
			detail = "stream ended without any data"
		}
		return nil, &badResponseError{endpoint: k.endpoint, detail: detail}
	}
	resp := &Response{
		Content:      contents.String(),
		FinishReason: finish,
		Model:        model,
		ServerModel:  serverModel,
		Refusal:      refusal.String(),
		Usage:        usage,
		ToolCalls:    toolCalls(calls.calls),
	}
	return resp, nil
}

// classify turns a transport or decoding error into one of this package's
// error types, so that retry decisions and messages are uniform.
func (k *core) classify(parent, actx context.Context, model string, err error) error {
	var ae *APIError
	if errors.As(err, &ae) {
		return err
	}
	if parent.Err() != nil {
		return fmt.Errorf("%w", context.Cause(parent))
	}
	if actx.Err() != nil {
		return &transportError{endpoint: k.endpoint, timeout: k.cfg.Timeout, err: err}
	}
	if isDecodeError(err) {
		return &badResponseError{endpoint: k.endpoint, detail: "malformed JSON", err: err}
	}
	if reason, fix, ok := permanentNetError(err); ok {
		return &transportError{endpoint: k.endpoint, err: err, reason: reason, fix: fix}
	}
	if isNetworkError(err) {
		return &transportError{endpoint: k.endpoint, err: err}
	}
	return err
}

func (k *core) fromCompletion(model string, comp *chatCompletion) (*Response, error) {
	if comp == nil || len(comp.Choices) == 0 {
		return nil, &badResponseError{endpoint: k.endpoint, detail: "completion has no choices"}
	}
	ch := comp.Choices[0]
	for _, c := range comp.Choices {
		if c.Index == 0 {
			ch = c
			break
		}
	}
	return &Response{
		Content:      ch.Message.Content,
		ToolCalls:    toolCalls(ch.Message.ToolCalls),
		FinishReason: ch.FinishReason,
		Model:        model,
		ServerModel:  comp.Model,
		Refusal:      ch.Message.Refusal,
		Usage:        usageOf(comp.Usage),
	}, nil
}

func usageOf(u *wireUsage) Usage {
	if u == nil {
		return Usage{}
	}
	return toUsage(*u)
}

func toUsage(u wireUsage) Usage {
	out := Usage{
		PromptTokens:     int(u.PromptTokens),
		CompletionTokens: int(u.CompletionTokens),
		TotalTokens:      int(u.TotalTokens),
	}
	if out.TotalTokens == 0 {
		out.TotalTokens = out.PromptTokens + out.CompletionTokens
	}
	return out
}

func toolCalls(in []wireToolCall) []ToolCall {
	if len(in) == 0 {
		return nil
	}
	out := make([]ToolCall, 0, len(in))
	for i, tc := range in {
		if tc.Type != "" && tc.Type != "function" {
			continue
		}
		if tc.Function.Name == "" && tc.Function.Arguments == "" {
			continue // a gap left by a sparse index
		}
		id := tc.ID
		if id == "" {
			// Some local servers omit ids; tool results must still refer to one.
			id = fmt.Sprintf("call_%d", i)
		}
		out = append(out, ToolCall{ID: id, Name: tc.Function.Name, Arguments: string(tc.Function.Arguments)})
	}
	return out
}

// params maps a Request onto the request body.
func (k *core) params(model string, req Request, stream bool) (chatRequest, error) {
	p := chatRequest{Model: model, Stream: stream}
	for i, m := range req.Messages {
		mp, err := messageParam(m)
		if err != nil {
			return p, fmt.Errorf("llm: message %d: %w", i, err)
		}
		p.Messages = append(p.Messages, mp)
	}
	for _, t := range req.Tools {
		params := any(t.Parameters)
		if t.Parameters == nil {
			params = map[string]any{"type": "object", "properties": map[string]any{}}
		}
		p.Tools = append(p.Tools, chatTool{Type: "function", Function: toolFunction{Name: t.Name, Description: t.Description, Parameters: params}})
	}
	if len(req.Tools) > 0 && req.ToolChoice != "" {
		switch req.ToolChoice {
		case "auto", "none", "required":
			p.ToolChoice = req.ToolChoice
		default:
			// Any other value names the one function the model must call.
			var named namedToolChoice
			named.Type = "function"
			named.Function.Name = req.ToolChoice
			p.ToolChoice = named
		}
	}
	if len(req.Tools) > 0 && req.ParallelToolCalls != nil {
		p.ParallelToolCalls = req.ParallelToolCalls
	}
	p.Temperature = req.Temperature
	if maxTokens := cmp.Or(req.MaxTokens, k.cfg.MaxTokens); maxTokens > 0 {
		if k.modelCaps(model).maxCompletionTokens {
			p.MaxCompletionTokens = maxTokens
		} else {
			p.MaxTokens = maxTokens
		}
	}
	if rf := req.ResponseFormat; rf != nil {
		switch rf.Type {
		case FormatJSONSchema:
			js := &jsonSchemaSpec{Name: cmp.Or(rf.Name, "response"), Strict: rf.Strict}
			switch {
			case len(rf.RawSchema) > 0:
				js.Schema = rf.RawSchema
			case rf.Schema != nil:
				js.Schema = rf.Schema
			}
			p.ResponseFormat = &responseFormat{Type: FormatJSONSchema, JSONSchema: js}
		case FormatJSONObject:
			p.ResponseFormat = &responseFormat{Type: FormatJSONObject}
		case "", "text":
		default:
			return p, fmt.Errorf("llm: unknown response format %q", rf.Type)
		}
	}
	if stream {
		p.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	return p, nil
}

func messageParam(m Message) (chatMessage, error) {
	text := func(s string) *string { return &s }
	switch m.Role {
	case RoleSystem:
		return chatMessage{Role: RoleSystem, Content: text(m.Content)}, nil
	case RoleUser:
		return chatMessage{Role: RoleUser, Content: text(m.Content), Name: m.Name}, nil
	case RoleAssistant:
		a := chatMessage{Role: RoleAssistant, Name: m.Name}
		if m.Content != "" || len(m.ToolCalls) == 0 {
			a.Content = text(m.Content)
		}
		for _, tc := range m.ToolCalls {
			var c wireToolCall
			c.ID, c.Type = tc.ID, "function"
			c.Function.Name, c.Function.Arguments = tc.Name, arguments(tc.Arguments)
			a.ToolCalls = append(a.ToolCalls, c)
		}
		return a, nil
	case RoleTool:
		if m.ToolCallID == "" {
			return chatMessage{}, errors.New("tool message without tool_call_id")
		}
		return chatMessage{Role: RoleTool, Content: text(m.Content), ToolCallID: m.ToolCallID}, nil
	}
	return chatMessage{}, fmt.Errorf("unknown role %q", m.Role)
}
