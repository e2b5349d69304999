package llm_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/errtext"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
)

const testKey = "sk-test-secret-key-123"

func newClient(t *testing.T, srv *llmtest.Server, mod ...func(*llm.Config)) *llm.Client {
	t.Helper()
	cfg := llm.Config{
		BaseURL:     srv.URL(),
		APIKey:      testKey,
		Model:       "main-model",
		Timeout:     5 * time.Second,
		BackoffBase: time.Millisecond,
		BackoffMax:  5 * time.Millisecond,
	}
	for _, m := range mod {
		m(&cfg)
	}
	c, err := llm.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

func ask(q string) llm.Request {
	return llm.Request{Messages: []llm.Message{
		{Role: llm.RoleSystem, Content: "You are terse."},
		{Role: llm.RoleUser, Content: q},
	}}
}

func TestNewValidatesConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  llm.Config
		want string
	}{
		{"no base url", llm.Config{Model: "m"}, "SOVA_LLM_BASE_URL"},
		{"not http", llm.Config{BaseURL: "ftp://x/v1", Model: "m"}, "not an http(s) URL"},
		{"no model", llm.Config{BaseURL: "http://x/v1"}, "SOVA_MODEL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := llm.New(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want mention of %q", err, tt.want)
			}
		})
	}
}

func TestFastView(t *testing.T) {
	srv := llmtest.New(t)
	srv.Handle(func(r *llmtest.Request) llmtest.Reply { return llmtest.Text("ok") })
	c := newClient(t, srv, func(c *llm.Config) { c.FastModel = "small-model" })
	if got := c.ModelName(); got != "main-model" {
		t.Errorf("ModelName = %q", got)
	}
	fast := c.Fast()
	if got := fast.ModelName(); got != "small-model" {
		t.Errorf("Fast().ModelName = %q", got)
	}
	resp, err := fast.Complete(context.Background(), ask("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Model != "small-model" || srv.Last().Model != "small-model" {
		t.Errorf("model = %q, request model = %q", resp.Model, srv.Last().Model)
	}
	// Without FastModel the view uses the main model.
	plain := newClient(t, srv)
	if got := plain.Fast().ModelName(); got != "main-model" {
		t.Errorf("Fast without FastModel = %q", got)
	}
}

func TestCompleteMapsRequest(t *testing.T) {
	temp := 0.2
	tool := llm.Tool{Name: "web_search", Description: "Search the web", Parameters: map[string]any{
		"type": "object", "properties": map[string]any{"query": map[string]any{"type": "string"}}, "required": []any{"query"},
	}}
	history := []llm.Message{
		{Role: llm.RoleSystem, Content: "sys"},
		{Role: llm.RoleUser, Content: "find go"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "web_search", Arguments: `{"query":"go"}`}}},
		{Role: llm.RoleTool, ToolCallID: "call_1", Content: "results"},
	}
	tests := []struct {
		name       string
		choice     string
		wantChoice string
	}{
		{"no choice", "", ""},
		{"auto", "auto", "auto"},
		{"none", "none", "none"},
		{"required", "required", "required"},
		{"named", "web_search", "web_search"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Enqueue(llmtest.Reply{
				Content: "Go is a language.",
				Usage:   llmtest.Tokens(10, 5),
				Model:   "main-model-2025-01-01",
			})
			c := newClient(t, srv, func(c *llm.Config) { c.MaxTokens = 321 })
			resp, err := c.Complete(context.Background(), llm.Request{
				Messages: history, Tools: []llm.Tool{tool}, ToolChoice: tt.choice, Temperature: &temp,
			})
			if err != nil {
				t.Fatal(err)
			}
			if resp.Content != "Go is a language." || resp.FinishReason != "stop" {
				t.Errorf("resp = %+v", resp)
			}
			if resp.Model != "main-model" || resp.ServerModel != "main-model-2025-01-01" {
				t.Errorf("Model = %q ServerModel = %q", resp.Model, resp.ServerModel)
			}
			if resp.Usage != (llm.Usage{PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15}) {
				t.Errorf("usage = %+v", resp.Usage)
			}
			r := srv.Last()
			if r.Stream {
				t.Error("Complete sent stream=true")
			}
			if r.APIKey() != testKey {
				t.Errorf("api key = %q", r.APIKey())
			}
			if !r.HasTool("web_search") || r.Tools[0].Parameters["type"] != "object" {
				t.Errorf("tools = %+v", r.Tools)
			}
			if r.ToolChoice != tt.wantChoice {
				t.Errorf("tool_choice = %q, want %q", r.ToolChoice, tt.wantChoice)
			}
			if r.Temperature == nil || *r.Temperature != 0.2 {
				t.Errorf("temperature = %v", r.Temperature)
			}
			if r.MaxTokens != 321 {
				t.Errorf("max tokens = %d", r.MaxTokens)
			}
			if len(r.Messages) != 4 || r.Messages[2].ToolCalls[0].Arguments != `{"query":"go"}` ||
				r.Messages[3].ToolCallID != "call_1" || r.Messages[3].Content != "results" {
				t.Errorf("messages = %+v", r.Messages)
			}
		})
	}
}

func TestCompleteToolCalls(t *testing.T) {
	srv := llmtest.New(t)
	srv.Enqueue(llmtest.Calls(
		llm.ToolCall{ID: "call_a", Name: "web_search", Arguments: `{"query":"a"}`},
		llm.ToolCall{ID: "call_b", Name: "fetch", Arguments: `{"url":"https://x"}`},
	))
	c := newClient(t, srv)
	resp, err := c.Complete(context.Background(), ask("q"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.FinishReason != "tool_calls" || len(resp.ToolCalls) != 2 ||
		resp.ToolCalls[1] != (llm.ToolCall{ID: "call_b", Name: "fetch", Arguments: `{"url":"https://x"}`}) {
		t.Errorf("resp = %+v", resp)
	}
}

func TestStreamReassembles(t *testing.T) {
	long := "Sova streams answers token by token, like this sentence."
	tests := []struct {
		name  string
		reply llmtest.Reply
	}{
		{"text with usage", llmtest.Reply{Content: long, Usage: llmtest.Tokens(12, 30)}},
		{"text without usage", llmtest.Reply{Content: long}},
		{"tool calls", llmtest.Reply{ToolCalls: []llm.ToolCall{
			{ID: "call_1", Name: "web_search", Arguments: `{"query":"weather in Paris today"}`},
			{ID: "call_2", Name: "fetch", Arguments: `{"url":"https://example.com/a/long/path"}`},
		}, Usage: llmtest.Tokens(40, 20)}},
		{"text and tool call", llmtest.Reply{Content: "Let me look.", ToolCalls: []llm.ToolCall{
			{ID: "call_9", Name: "web_search", Arguments: `{"query":"ünïcödé ✓"}`},
		}}},
		{"length finish", llmtest.Reply{Content: long, FinishReason: "length"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Enqueue(tt.reply)
			c := newClient(t, srv)
			var deltas []string
			resp, err := c.Stream(context.Background(), ask("q"), func(d string) { deltas = append(deltas, d) })
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(deltas, ""); got != tt.reply.Content || resp.Content != tt.reply.Content {
				t.Errorf("deltas %q / content %q, want %q", got, resp.Content, tt.reply.Content)
			}
			if tt.reply.Content != "" && len(deltas) < 2 {
				t.Errorf("got %d deltas, want several", len(deltas))
			}
			if len(resp.ToolCalls) != len(tt.reply.ToolCalls) {
				t.Fatalf("tool calls = %+v", resp.ToolCalls)
			}
			for i, tc := range tt.reply.ToolCalls {
				if resp.ToolCalls[i] != tc {
					t.Errorf("tool call %d = %+v, want %+v", i, resp.ToolCalls[i], tc)
				}
			}
			var wantUsage llm.Usage
			if tt.reply.Usage != nil {
				wantUsage = *tt.reply.Usage
			}
			if resp.Usage != wantUsage {
				t.Errorf("usage = %+v, want %+v", resp.Usage, wantUsage)
			}
			wantFinish := tt.reply.FinishReason
			if wantFinish == "" {
				wantFinish = "stop"
				if len(tt.reply.ToolCalls) > 0 {
					wantFinish = "tool_calls"
				}
			}
			if resp.FinishReason != wantFinish {
				t.Errorf("finish = %q, want %q", resp.FinishReason, wantFinish)
			}
			if r := srv.Last(); !r.Stream || !r.IncludeUsage {
				t.Errorf("stream=%v include_usage=%v", r.Stream, r.IncludeUsage)
			}
		})
	}
}

func TestMeterSumsUsageAcrossCalls(t *testing.T) {
	srv := llmtest.New(t)
	srv.Enqueue(
		llmtest.Reply{Content: "a", Usage: llmtest.Tokens(10, 1)},
		llmtest.Reply{Content: "bb", Usage: llmtest.Tokens(20, 2)},
		llmtest.Reply{Content: "ccc"}, // a server that reports no usage
		llmtest.Fail(http.StatusBadRequest, "bad"),
	)
	c := newClient(t, srv)
	var m llm.Meter
	ctx := llm.WithMeter(context.Background(), &m)
	if llm.MeterFrom(ctx) != &m {
		t.Fatal("MeterFrom does not return the meter")
	}
	if _, err := c.Complete(ctx, ask("1")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Stream(ctx, ask("2"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Fast().Complete(ctx, ask("3")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Complete(ctx, ask("4")); err == nil {
		t.Fatal("want error from 400")
	}
	if got, want := m.Total(), (llm.Usage{PromptTokens: 30, CompletionTokens: 3, TotalTokens: 33}); got != want {
		t.Errorf("total = %+v, want %+v", got, want)
	}
	if m.Calls() != 3 {
		t.Errorf("calls = %d, want 3 (failed calls are not counted)", m.Calls())
	}
	// No meter in the context: calls still work.
	srv.Enqueue(llmtest.Reply{Content: "x", Usage: llmtest.Tokens(1, 1)})
	if _, err := c.Complete(context.Background(), ask("5")); err != nil {
		t.Fatal(err)
	}
	if llm.MeterFrom(context.Background()) != nil {
		t.Error("MeterFrom on a bare context is not nil")
	}
}

func TestMeterConcurrent(t *testing.T) {
	var m llm.Meter
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() { m.Add(llm.Usage{PromptTokens: 1, CompletionTokens: 2, TotalTokens: 3}) })
	}
	wg.Wait()
	if m.Total().TotalTokens != 150 || m.Calls() != 50 {
		t.Errorf("total %+v calls %d", m.Total(), m.Calls())
	}
}

func TestRetries(t *testing.T) {
	tests := []struct {
		name      string
		replies   []llmtest.Reply
		wantErr   string // empty: success
		wantCount int
		wantAPI   int // status of the *APIError, 0 for none
	}{
		{"500 then success", []llmtest.Reply{llmtest.Fail(500, "boom"), llmtest.Text("ok")}, "", 2, 0},
		{"502 and 504 then success", []llmtest.Reply{llmtest.Fail(502, ""), llmtest.Fail(504, ""), llmtest.Text("ok")}, "", 3, 0},
		{"400 not retried", []llmtest.Reply{llmtest.Fail(400, "messages must not be empty"), llmtest.Text("unused")}, "answered 400 Bad Request", 1, 400},
		{"404 not retried", []llmtest.Reply{llmtest.FailWith(404, "invalid_request_error", "model_not_found", "The model `x` does not exist"), llmtest.Text("unused")}, "does not serve model", 1, 404},
		{"503 retried", []llmtest.Reply{llmtest.Fail(503, "busy"), llmtest.Text("ok")}, "", 2, 0},
		{"422 not retried", []llmtest.Reply{llmtest.Fail(422, "bad field"), llmtest.Text("unused")}, "422", 1, 422},
		{"malformed 200 retried", []llmtest.Reply{{ErrorBody: `{"id": "x", "choices": [`}, llmtest.Text("ok")}, "", 2, 0},
		{"html 200 retried", []llmtest.Reply{{ErrorBody: `<html>proxy error</html>`}, llmtest.Text("ok")}, "", 2, 0},
		{"dropped connection retried", []llmtest.Reply{{Drop: true}, llmtest.Text("ok")}, "", 2, 0},
		{"200 with error object", []llmtest.Reply{{ErrorBody: `{"object":"error","message":"bad input","type":"BadRequestError","code":400}`}}, "bad input", 1, 400},
		{"5xx exhausts retries", []llmtest.Reply{llmtest.Fail(500, "a"), llmtest.Fail(500, "b"), llmtest.Fail(500, "c"), llmtest.Fail(500, "d"), llmtest.Text("unused")}, "giving up after 4 attempts", 4, 500},
		{"malformed always", []llmtest.Reply{{ErrorBody: "garbage"}, {ErrorBody: "garbage"}, {ErrorBody: "garbage"}, {ErrorBody: "garbage"}}, "invalid response: body is not valid JSON", 4, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Enqueue(tt.replies...)
			c := newClient(t, srv)
			resp, err := c.Complete(context.Background(), ask("q"))
			if srv.Count() != tt.wantCount {
				t.Errorf("requests = %d, want %d", srv.Count(), tt.wantCount)
			}
			if tt.wantErr == "" {
				if err != nil || resp.Content != "ok" {
					t.Fatalf("resp %+v err %v", resp, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			var ae *llm.APIError
			if got := errors.As(err, &ae); got != (tt.wantAPI != 0) || (got && ae.StatusCode != tt.wantAPI) {
				t.Errorf("APIError = %+v (found %v), want status %d", ae, got, tt.wantAPI)
			}
		})
	}
}

func TestRetryAfterHonoured(t *testing.T) {
	srv := llmtest.New(t)
	srv.Enqueue(
		llmtest.Reply{Status: 429, Content: "slow down", RetryAfter: "1"},
		llmtest.Text("ok"),
	)
	// BackoffMax is far below the server's wait: Retry-After still wins.
	c := newClient(t, srv)
	start := time.Now()
	resp, err := c.Complete(context.Background(), ask("q"))
	if err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	if resp.Content != "ok" || srv.Count() != 2 {
		t.Errorf("content %q after %d requests", resp.Content, srv.Count())
	}
	if elapsed < 950*time.Millisecond || elapsed > 5*time.Second {
		t.Errorf("waited %s, want about 1s", elapsed)
	}
}

func TestAttemptTimeoutRetried(t *testing.T) {
	srv := llmtest.New(t)
	srv.Enqueue(llmtest.Reply{Content: "late", Delay: 2 * time.Second}, llmtest.Text("ok"))
	c := newClient(t, srv, func(c *llm.Config) { c.Timeout = 100 * time.Millisecond })
	resp, err := c.Complete(context.Background(), ask("q"))
	if err != nil || resp.Content != "ok" {
		t.Fatalf("resp %+v err %v", resp, err)
	}

	srv.Enqueue(
		llmtest.Reply{Content: "late", Delay: 2 * time.Second},
		llmtest.Reply{Content: "late", Delay: 2 * time.Second},
	)
	c = newClient(t, srv, func(c *llm.Config) { c.Timeout = 50 * time.Millisecond; c.MaxRetries = 1 })
	_, err = c.Complete(context.Background(), ask("q"))
	if err == nil || !strings.Contains(err.Error(), "did not answer within 50ms") {
		t.Fatalf("err = %v", err)
	}
}

func TestNetworkErrorClosedServer(t *testing.T) {
	srv := llmtest.New(t)
	srv.Close()
	c := newClient(t, srv)
	start := time.Now()
	_, err := c.Complete(context.Background(), ask("q"))
	if err == nil {
		t.Fatal("want error")
	}
	// Nothing listens any more: a refused connection is not retried.
	for _, want := range []string{"the model endpoint cannot be reached: connection refused", "SOVA_LLM_BASE_URL"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("err %q lacks %q", err, want)
		}
	}
	if d := errtext.Detail(err); !strings.Contains(d, "endpoint "+srv.URL()) {
		t.Errorf("detail %q lacks the endpoint", d)
	}
	if time.Since(start) > 3*time.Second {
		t.Errorf("took %s", time.Since(start))
	}
}

func TestStreamRetryOnlyBeforeFirstDelta(t *testing.T) {
	tests := []struct {
		name      string
		replies   []llmtest.Reply
		wantErr   bool
		wantCount int
		wantText  string
		errPart   string
	}{
		{"500 before stream", []llmtest.Reply{llmtest.Fail(500, "x"), llmtest.Text("hello there")}, false, 2, "hello there", ""},
		{"dropped before stream", []llmtest.Reply{{Drop: true}, llmtest.Text("hello there")}, false, 2, "hello there", ""},
		{"cut after tool call deltas only", []llmtest.Reply{
			{ToolCalls: []llm.ToolCall{{Name: "f", Arguments: `{"a":1}`}}, BreakAfter: 1},
			llmtest.Text("hello there"),
		}, false, 2, "hello there", ""},
		{"cut mid content", []llmtest.Reply{{Content: "hello there, general", BreakAfter: 2}, llmtest.Text("unused")}, true, 1, "hello th", "broke mid-stream"},
		{"error event after content", []llmtest.Reply{
			{ErrorBody: contentChunk("hel") + "data: " + llmtest.ErrorJSON("server_error", "", "oops") + "\n\n"},
			llmtest.Text("unused"),
		}, true, 1, "hel", "oops"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Enqueue(tt.replies...)
			c := newClient(t, srv)
			var got strings.Builder
			resp, err := c.Stream(context.Background(), ask("q"), func(d string) { got.WriteString(d) })
			if (err != nil) != tt.wantErr || (err != nil && !strings.Contains(err.Error(), tt.errPart)) {
				t.Fatalf("err = %v, wantErr %v (%q)", err, tt.wantErr, tt.errPart)
			}
			if srv.Count() != tt.wantCount {
				t.Errorf("requests = %d, want %d", srv.Count(), tt.wantCount)
			}
			if got.String() != tt.wantText {
				t.Errorf("delivered %q, want %q", got.String(), tt.wantText)
			}
			if err == nil && resp.Content != tt.wantText {
				t.Errorf("content %q", resp.Content)
			}
		})
	}
}

func contentChunk(text string) string {
	return `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"` + text + `"},"finish_reason":null}]}` + "\n\n"
}

func TestStreamErrorEvent(t *testing.T) {
	srv := llmtest.New(t)
	srv.Enqueue(
		llmtest.Reply{ErrorBody: "data: " + llmtest.ErrorJSON("server_error", "", "The server had an error") + "\n\n"},
		llmtest.Text("recovered"),
	)
	c := newClient(t, srv)
	resp, err := c.Stream(context.Background(), ask("q"), nil)
	if err != nil || resp.Content != "recovered" || srv.Count() != 2 {
		t.Fatalf("resp %+v err %v count %d", resp, err, srv.Count())
	}

	srv.Enqueue(llmtest.Reply{ErrorBody: "data: " + llmtest.ErrorJSON("invalid_request_error", "context_length_exceeded", "too long") + "\n\n"})
	_, err = c.Stream(context.Background(), ask("q"), nil)
	var ae *llm.APIError
	if !errors.As(err, &ae) || ae.Code != "context_length_exceeded" || !strings.Contains(err.Error(), "too long") {
		t.Fatalf("err = %v", err)
	}
	if srv.Count() != 3 {
		t.Errorf("invalid request error event was retried: %d requests", srv.Count())
	}
}

func TestStreamTruncatedWithoutFinish(t *testing.T) {
	srv := llmtest.New(t)
	chunk := `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}` + "\n\n"
	srv.Enqueue(llmtest.Reply{ErrorBody: chunk}, llmtest.Reply{ErrorBody: chunk}, llmtest.Text("fine"))
	c := newClient(t, srv)
	resp, err := c.Stream(context.Background(), ask("q"), nil)
	if err != nil || resp.Content != "fine" || srv.Count() != 3 {
		t.Fatalf("resp %+v err %v count %d", resp, err, srv.Count())
	}
}

func TestFallbackOnOverload(t *testing.T) {
	tests := []struct {
		name         string
		fail         llmtest.Reply
		stream       bool
		wantFallback bool
	}{
		{"503", llmtest.Fail(503, "busy"), false, true},
		{"529", llmtest.Fail(529, "overloaded"), false, true},
		{"429", llmtest.Fail(429, "rate limited"), false, true},
		{"500 overloaded type", llmtest.FailWith(500, "overloaded_error", "", "Overloaded"), false, true},
		{"503 streaming", llmtest.Fail(503, "busy"), true, true},
		{"plain 500", llmtest.Fail(500, "bug"), false, false},
		{"400", llmtest.Fail(400, "bad"), false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Handle(func(r *llmtest.Request) llmtest.Reply {
				if r.Model == "main-model" {
					return tt.fail
				}
				return llmtest.Reply{Content: "from " + r.Model, Usage: llmtest.Tokens(3, 4)}
			})
			c := newClient(t, srv, func(c *llm.Config) { c.FallbackModel = "backup-model"; c.MaxRetries = 1 })
			var m llm.Meter
			ctx := llm.WithMeter(context.Background(), &m)
			var resp *llm.Response
			var err error
			if tt.stream {
				resp, err = c.Stream(ctx, ask("q"), nil)
			} else {
				resp, err = c.Complete(ctx, ask("q"))
			}
			var models []string
			for _, r := range srv.Requests() {
				models = append(models, r.Model)
			}
			if !tt.wantFallback {
				if err == nil {
					t.Fatalf("want error, got %+v", resp)
				}
				for _, m := range models {
					if m != "main-model" {
						t.Errorf("fallback used: %v", models)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if resp.Model != "backup-model" || resp.Content != "from backup-model" {
				t.Errorf("resp = %+v", resp)
			}
			if want := "main-model main-model backup-model"; strings.Join(models, " ") != want {
				t.Errorf("models = %v, want %s", models, want)
			}
			if m.Calls() != 1 || m.Total().TotalTokens != 7 {
				t.Errorf("meter %+v / %d calls", m.Total(), m.Calls())
			}
		})
	}
}

func TestFallbackAlsoFails(t *testing.T) {
	srv := llmtest.New(t)
	srv.Handle(func(r *llmtest.Request) llmtest.Reply { return llmtest.Fail(503, "busy "+r.Model) })
	c := newClient(t, srv, func(c *llm.Config) { c.FallbackModel = "backup-model"; c.MaxRetries = -1 })
	_, err := c.Complete(context.Background(), ask("q"))
	if err == nil || !strings.Contains(err.Error(), "busy main-model") || !strings.Contains(err.Error(), `fallback model "backup-model" also failed`) {
		t.Fatalf("err = %v", err)
	}
	if srv.Count() != 2 {
		t.Errorf("requests = %d, want 2 (no retries configured)", srv.Count())
	}
}

func TestCancelStopsBackoff(t *testing.T) {
	srv := llmtest.New(t)
	srv.Handle(func(*llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Status: 500, Content: "down", RetryAfter: "30"}
	})
	c := newClient(t, srv)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err := c.Complete(ctx, ask("q"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("returned after %s, want prompt return", d)
	}
	var ae *llm.APIError
	if !errors.As(err, &ae) || ae.StatusCode != 500 || ae.RetryAfter != 30*time.Second {
		t.Errorf("last error not kept: %v", err)
	}
	if srv.Count() != 1 {
		t.Errorf("requests = %d", srv.Count())
	}
}

func TestCancelDuringStream(t *testing.T) {
	srv := llmtest.New(t)
	srv.Enqueue(llmtest.Reply{Content: "a long answer that takes a while", ChunkDelay: 200 * time.Millisecond})
	c := newClient(t, srv)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	_, err := c.Stream(ctx, ask("q"), func(string) { cancel() })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if time.Since(start) > 2*time.Second {
		t.Errorf("took %s", time.Since(start))
	}
}

func TestAPIErrorMessages(t *testing.T) {
	tests := []struct {
		name       string
		reply      llmtest.Reply
		wantStatus int
		wantType   string
		wantCode   string
		wantParts  []string
	}{
		{
			"401 openai shape echoing the key",
			llmtest.FailWith(401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided: "+testKey+"."),
			401, "invalid_request_error", "invalid_api_key",
			[]string{"model endpoint ", " answered 401 Unauthorized", "Incorrect API key provided: [redacted]", "set SOVA_LLM_API_KEY"},
		},
		{
			"vllm top-level shape",
			llmtest.Reply{Status: 400, ErrorBody: `{"object":"error","message":"maximum context length is 4096","type":"BadRequestError","param":null,"code":400}`},
			400, "BadRequestError", "400",
			[]string{"answered 400 Bad Request", "maximum context length is 4096"},
		},
		{
			"string error",
			llmtest.Reply{Status: 404, ErrorBody: `{"error":"model 'llama9' not found"}`},
			404, "", "",
			[]string{"model 'llama9' not found", `for model "main-model"`},
		},
		{
			"fastapi detail",
			llmtest.Reply{Status: 422, ErrorBody: `{"detail":[{"loc":["body","messages"],"msg":"field required"}]}`},
			422, "", "",
			[]string{"field required"},
		},
		{
			"plain text",
			llmtest.Reply{Status: 403, ErrorBody: "forbidden by policy"},
			403, "", "",
			[]string{"403 Forbidden", ": forbidden by policy"},
		},
		{
			"html page",
			llmtest.Reply{Status: 400, ErrorBody: "<html><body>Bad gateway</body></html>"},
			400, "", "",
			[]string{"answered 400 Bad Request"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Enqueue(tt.reply)
			c := newClient(t, srv)
			_, err := c.Complete(context.Background(), ask("q"))
			var ae *llm.APIError
			if !errors.As(err, &ae) {
				t.Fatalf("err = %v, not an APIError", err)
			}
			if ae.StatusCode != tt.wantStatus || ae.Type != tt.wantType || ae.Code != tt.wantCode {
				t.Errorf("APIError = %+v", ae)
			}
			if ae.Endpoint != srv.URL() {
				t.Errorf("endpoint = %q", ae.Endpoint)
			}
			msg := err.Error()
			for _, p := range tt.wantParts {
				if !strings.Contains(msg, p) {
					t.Errorf("message %q lacks %q", msg, p)
				}
			}
			if strings.Contains(msg, testKey) || strings.Contains(msg, "<html>") {
				t.Errorf("message leaks: %q", msg)
			}
		})
	}
}

func TestBaseURLCredentialsNotInErrors(t *testing.T) {
	srv := llmtest.New(t)
	srv.Close()
	url := strings.Replace(srv.URL(), "http://", "http://user:hunter2@", 1)
	c, err := llm.New(llm.Config{BaseURL: url, Model: "m", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Complete(context.Background(), ask("q"))
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("err = %v", err)
	}
}

func TestMaxCompletionTokensAdaptation(t *testing.T) {
	srv := llmtest.New(t)
	srv.Handle(func(r *llmtest.Request) llmtest.Reply {
		if _, ok := r.Raw["max_tokens"]; ok {
			return llmtest.Reply{Status: 400, ErrorBody: llmtest.ErrorJSON("invalid_request_error", "unsupported_parameter",
				"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.")}
		}
		return llmtest.Text("ok")
	})
	c := newClient(t, srv, func(c *llm.Config) { c.MaxTokens = 100 })
	for range 2 {
		if _, err := c.Complete(context.Background(), ask("q")); err != nil {
			t.Fatal(err)
		}
	}
	if srv.Count() != 3 {
		t.Errorf("requests = %d, want 3 (one rejection, then remembered)", srv.Count())
	}
	if r := srv.Last(); r.Raw["max_completion_tokens"] != float64(100) {
		t.Errorf("last request = %s", r.Body)
	}
}

func TestListModels(t *testing.T) {
	srv := llmtest.New(t)
	srv.SetModels("a", "b")
	c := newClient(t, srv)
	ids, err := c.ListModels(context.Background())
	if err != nil || strings.Join(ids, ",") != "a,b" {
		t.Fatalf("ids %v err %v", ids, err)
	}
	bad := newClient(t, srv, func(c *llm.Config) { c.BaseURL = strings.TrimSuffix(srv.URL(), "/v1") + "/nope" })
	_, err = bad.ListModels(context.Background())
	var ae *llm.APIError
	if !errors.As(err, &ae) || ae.StatusCode != 404 || ae.Code != "unknown_url" {
		t.Fatalf("err = %v", err)
	}
}

func TestRequestValidation(t *testing.T) {
	srv := llmtest.New(t)
	c := newClient(t, srv)
	tests := []struct {
		name string
		req  llm.Request
		want string
	}{
		{"no messages", llm.Request{}, "no messages"},
		{"bad role", llm.Request{Messages: []llm.Message{{Role: "robot", Content: "x"}}}, `unknown role "robot"`},
		{"tool without id", llm.Request{Messages: []llm.Message{{Role: llm.RoleTool, Content: "x"}}}, "tool_call_id"},
		{"bad format", llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}, ResponseFormat: &llm.ResponseFormat{Type: "yaml"}}, "unknown response format"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Complete(context.Background(), tt.req)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
	if srv.Count() != 0 {
		t.Errorf("invalid requests reached the server: %d", srv.Count())
	}
}

// What a failed call's error says reaches clients (the stream's error
// part, the stored message): it names the model endpoint by its role, and
// what failed and why, never its address or the addresses a proxy in
// front of it names. The log gets one line per failed call, with them.
func TestErrorsNameNoAddress(t *testing.T) {
	tests := []struct {
		name  string
		setup func(srv *llmtest.Server) // a closed server: no setup
		want  string
	}{
		{"overloaded", func(srv *llmtest.Server) {
			srv.Enqueue(llmtest.Fail(503, "upstream http://10.20.30.40:8000/v1 is overloaded; vllm-2:8000 too"))
		}, "the model endpoint answered 503 Service Unavailable for model \"main-model\": upstream [address] is overloaded; [address] too — the model is overloaded"},
		{"garbage", func(srv *llmtest.Server) {
			srv.Enqueue(llmtest.Reply{ErrorBody: "<html>proxy 10.20.30.40 says hi</html>"})
		}, "the model endpoint sent an invalid response: body is not valid JSON"},
		{"refused", nil, "the model endpoint cannot be reached: connection refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(t)
			if tt.setup != nil {
				tt.setup(srv)
			} else {
				srv.Close()
			}
			var logs bytes.Buffer
			c := newClient(t, srv, func(cfg *llm.Config) {
				cfg.MaxRetries = -1
				cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			})
			_, err := c.Complete(context.Background(), ask("q"))
			if err == nil {
				t.Fatal("want an error")
			}
			host := strings.TrimPrefix(srv.URL(), "http://")
			host, _, _ = strings.Cut(host, "/")
			msg := err.Error()
			if !strings.Contains(msg, tt.want) {
				t.Errorf("error %q lacks %q", msg, tt.want)
			}
			for _, addr := range []string{host, "127.0.0.1", "10.20.30.40", "vllm-2", "http://"} {
				if strings.Contains(msg, addr) {
					t.Errorf("error %q shows %q", msg, addr)
				}
			}
			out := logs.String()
			if n := strings.Count(out, "model call failed"); n != 1 || strings.Count(out, "\n") != 1 {
				t.Errorf("want one log line for the failure, got:\n%s", out)
			}
			if !strings.Contains(out, srv.URL()) {
				t.Errorf("the log lacks the endpoint %s:\n%s", srv.URL(), out)
			}
			if tt.name == "overloaded" && !strings.Contains(out, "10.20.30.40:8000") {
				t.Errorf("the log lacks the server's own message:\n%s", out)
			}
		})
	}
}

// A person's chosen model (WithModel) replaces the main model, not the
// fast one nor a request's own.
func TestWithModel(t *testing.T) {
	srv := llmtest.New(t)
	srv.Handle(func(r *llmtest.Request) llmtest.Reply { return llmtest.Text("ok") })
	c := newClient(t, srv, func(c *llm.Config) { c.FastModel = "small-model" })
	ctx := llm.WithModel(context.Background(), "chosen-model")
	for _, tc := range []struct {
		name string
		call func() (*llm.Response, error)
		want string
	}{
		{"main", func() (*llm.Response, error) { return c.Complete(ctx, ask("hi")) }, "chosen-model"},
		{"fast", func() (*llm.Response, error) { return c.Fast().Complete(ctx, ask("hi")) }, "small-model"},
		{"request's own", func() (*llm.Response, error) {
			req := ask("hi")
			req.Model = "named-model"
			return c.Complete(ctx, req)
		}, "named-model"},
		{"none chosen", func() (*llm.Response, error) { return c.Complete(llm.WithModel(context.Background(), ""), ask("hi")) }, "main-model"},
	} {
		if _, err := tc.call(); err != nil || srv.Last().Model != tc.want {
			t.Errorf("%s: model %q, %v; want %q", tc.name, srv.Last().Model, err, tc.want)
		}
	}
}
