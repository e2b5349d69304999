package llmtest_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
)

func post(t *testing.T, url, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer k1")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = res.Body.Close() })
	return res
}

// sseEvents reads the data lines of an SSE body.
func sseEvents(t *testing.T, r io.Reader) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, data)
		}
	}
	return out
}

func TestStreamWireFormat(t *testing.T) {
	srv := llmtest.New(t)
	srv.Enqueue(llmtest.Reply{
		Content:   "Hello, world!",
		ToolCalls: []llm.ToolCall{{ID: "call_x", Name: "search", Arguments: `{"query":"go"}`}},
		Usage:     llmtest.Tokens(5, 7),
	})
	res := post(t, srv.URL()+"/chat/completions",
		`{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`)
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("content type %q", ct)
	}
	events := sseEvents(t, res.Body)
	if events[len(events)-1] != "[DONE]" {
		t.Fatalf("last event %q", events[len(events)-1])
	}
	type chunk struct {
		Object  string `json:"object"`
		Model   string `json:"model"`
		Choices []struct {
			Delta struct {
				Role      string  `json:"role"`
				Content   *string `json:"content"`
				ToolCalls []struct {
					Index    int    `json:"index"`
					ID       string `json:"id"`
					Type     string `json:"type"`
					Function struct {
						Name      string `json:"name"`
						Arguments string `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"delta"`
			FinishReason *string `json:"finish_reason"`
		} `json:"choices"`
		Usage *llm.Usage `json:"usage"`
	}
	var chunks []chunk
	for _, e := range events[:len(events)-1] {
		var c chunk
		if err := json.Unmarshal([]byte(e), &c); err != nil {
			t.Fatalf("chunk %q: %v", e, err)
		}
		if c.Object != "chat.completion.chunk" || c.Model != "m" {
			t.Errorf("chunk header %+v", c)
		}
		chunks = append(chunks, c)
	}
	if chunks[0].Choices[0].Delta.Role != "assistant" {
		t.Errorf("first chunk has no role: %+v", chunks[0])
	}
	var content, args strings.Builder
	contentChunks, argChunks := 0, 0
	var finish string
	for _, c := range chunks {
		for _, ch := range c.Choices {
			if ch.Delta.Content != nil && *ch.Delta.Content != "" {
				content.WriteString(*ch.Delta.Content)
				contentChunks++
			}
			for _, tc := range ch.Delta.ToolCalls {
				if tc.ID != "" && (tc.ID != "call_x" || tc.Type != "function" || tc.Function.Name != "search" || tc.Function.Arguments != "") {
					t.Errorf("tool call header %+v", tc)
				}
				if tc.Function.Arguments != "" {
					args.WriteString(tc.Function.Arguments)
					argChunks++
				}
			}
			if ch.FinishReason != nil {
				finish = *ch.FinishReason
			}
		}
	}
	if content.String() != "Hello, world!" || contentChunks < 2 {
		t.Errorf("content %q in %d chunks", content.String(), contentChunks)
	}
	if args.String() != `{"query":"go"}` || argChunks < 2 {
		t.Errorf("arguments %q in %d chunks", args.String(), argChunks)
	}
	if finish != "tool_calls" {
		t.Errorf("finish %q", finish)
	}
	last := chunks[len(chunks)-1]
	if len(last.Choices) != 0 || last.Usage == nil || last.Usage.TotalTokens != 12 {
		t.Errorf("usage chunk %+v", last)
	}
	for _, c := range chunks[:len(chunks)-1] {
		if c.Usage != nil {
			t.Errorf("usage before the final chunk: %+v", c)
		}
	}

	r := srv.Last()
	if !r.Stream || !r.IncludeUsage || r.LastUser() != "hi" || r.APIKey() != "k1" || r.Index != 0 {
		t.Errorf("request %+v", r)
	}
}

func TestStreamWithoutUsageOption(t *testing.T) {
	srv := llmtest.New(t)
	srv.Enqueue(llmtest.Reply{Content: "hi", Usage: llmtest.Tokens(1, 1)})
	res := post(t, srv.URL()+"/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"x"}]}`)
	body, _ := io.ReadAll(res.Body)
	if strings.Contains(string(body), "usage") {
		t.Errorf("usage sent without include_usage: %s", body)
	}
}

func TestCompletionWireFormat(t *testing.T) {
	srv := llmtest.New(t)
	srv.Handle(func(r *llmtest.Request) llmtest.Reply {
		return llmtest.Reply{
			ToolCalls: []llm.ToolCall{{Name: "search", Arguments: "{}"}},
			Usage:     llmtest.Tokens(3, 4),
			Model:     "m-2025",
		}
	})
	res := post(t, srv.URL()+"/chat/completions", `{
		"model":"m","temperature":0.5,"max_completion_tokens":99,"tool_choice":{"type":"function","function":{"name":"search"}},
		"response_format":{"type":"json_schema","json_schema":{"name":"out","strict":true,"schema":{"type":"object"}}},
		"tools":[{"type":"function","function":{"name":"search","description":"d","parameters":{"type":"object"}}}],
		"messages":[
			{"role":"system","content":"s1"},
			{"role":"system","content":[{"type":"text","text":"s2"}]},
			{"role":"user","content":"u1"},
			{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"search","arguments":"{}"}}]},
			{"role":"tool","tool_call_id":"c1","content":"r"},
			{"role":"user","content":"u2"}
		]}`)
	var out struct {
		Object  string `json:"object"`
		Model   string `json:"model"`
		Choices []struct {
			Message struct {
				Role      string  `json:"role"`
				Content   *string `json:"content"`
				ToolCalls []struct {
					ID string `json:"id"`
				} `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage llm.Usage `json:"usage"`
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	ch := out.Choices[0]
	if out.Object != "chat.completion" || out.Model != "m-2025" || ch.Message.Content != nil ||
		ch.Message.ToolCalls[0].ID == "" || ch.FinishReason != "tool_calls" || out.Usage.TotalTokens != 7 {
		t.Errorf("completion %+v", out)
	}
	r := srv.Last()
	if r.System() != "s1\n\ns2" || r.LastUser() != "u2" || !r.HasTool("search") || r.HasTool("fetch") ||
		r.ToolChoice != "search" || r.SchemaName() != "out" || r.Format() != llm.FormatJSONSchema ||
		r.Schema()["type"] != "object" || !r.ResponseFormat.Strict || *r.Temperature != 0.5 || r.MaxTokens != 99 {
		t.Errorf("decoded request %+v", r)
	}
	if tc := r.Messages[3].ToolCalls; len(tc) != 1 || tc[0].ID != "c1" || r.Messages[4].ToolCallID != "c1" {
		t.Errorf("messages %+v", r.Messages)
	}
}

func TestErrorsAndRoutes(t *testing.T) {
	srv := llmtest.New(t)
	srv.Enqueue(llmtest.Reply{Status: 429, Content: "slow down", RetryAfter: "3"})
	res := post(t, srv.URL()+"/chat/completions", `{"model":"m","messages":[]}`)
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 429 || res.Header.Get("Retry-After") != "3" ||
		!strings.Contains(string(body), `"message":"slow down"`) || !strings.Contains(string(body), `"type":"rate_limit_exceeded"`) {
		t.Errorf("429: %d %v %s", res.StatusCode, res.Header, body)
	}

	res = post(t, srv.URL()+"/audio/speech", `{}`)
	body, _ = io.ReadAll(res.Body)
	if res.StatusCode != 404 || !strings.Contains(string(body), `"code":"unknown_url"`) {
		t.Errorf("unknown path: %d %s", res.StatusCode, body)
	}

	res = post(t, srv.URL()+"/embeddings", `{"model":"e","input":[1,2,3]}`)
	body, _ = io.ReadAll(res.Body)
	if res.StatusCode != 400 || !strings.Contains(string(body), `"type":"invalid_request_error"`) {
		t.Errorf("embeddings of tokens: %d %s", res.StatusCode, body)
	}
	res = post(t, srv.URL()+"/embeddings", `{"model":"e","input":"one string"}`)
	body, _ = io.ReadAll(res.Body)
	if res.StatusCode != 200 || !strings.Contains(string(body), `"object":"embedding"`) || !strings.Contains(string(body), `"prompt_tokens":2`) {
		t.Errorf("embeddings of a string: %d %s", res.StatusCode, body)
	}

	res = post(t, srv.URL()+"/chat/completions", `{not json`)
	if res.StatusCode != 400 {
		t.Errorf("bad body: %d", res.StatusCode)
	}

	srv.SetModels("x", "y")
	gres, err := http.Get(srv.URL() + "/models")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = gres.Body.Close() }()
	var list struct {
		Object string `json:"object"`
		Data   []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(gres.Body).Decode(&list); err != nil || list.Object != "list" || len(list.Data) != 2 || list.Data[1].ID != "y" {
		t.Errorf("models %+v err %v", list, err)
	}
	if srv.Count() != 1 {
		t.Errorf("Count = %d, want only decodable chat requests", srv.Count())
	}
}

func TestQueueBeforeHandlerAndConcurrency(t *testing.T) {
	srv := llmtest.New(t)
	srv.Handle(func(r *llmtest.Request) llmtest.Reply { return llmtest.Text("handler") })
	srv.Enqueue(llmtest.Text("queued"))
	var wg sync.WaitGroup
	results := make([]string, 8)
	for i := range results {
		wg.Go(func() {
			res := post(t, srv.URL()+"/chat/completions", `{"model":"m","messages":[{"role":"user","content":"x"}]}`)
			var out struct {
				Choices []struct {
					Message struct {
						Content string `json:"content"`
					} `json:"message"`
				} `json:"choices"`
			}
			_ = json.NewDecoder(res.Body).Decode(&out)
			results[i] = out.Choices[0].Message.Content
		})
	}
	wg.Wait()
	queued := 0
	for _, r := range results {
		if r == "queued" {
			queued++
		}
	}
	if queued != 1 || srv.Count() != 8 || len(srv.Requests()) != 8 || srv.Pending() != 0 {
		t.Errorf("results %v count %d", results, srv.Count())
	}
}

func TestDelayStopsWhenClientLeaves(t *testing.T) {
	srv := llmtest.New(t)
	srv.Enqueue(llmtest.Reply{Content: "late", Delay: time.Minute})
	client := &http.Client{Timeout: 100 * time.Millisecond}
	start := time.Now()
	_, err := client.Post(srv.URL()+"/chat/completions", "application/json",
		strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"x"}]}`))
	if err == nil {
		t.Fatal("want timeout")
	}
	srv.Close() // waits for the handler; it must not sit out the whole delay
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("server held on for %s", d)
	}
}

func TestRequireKey(t *testing.T) {
	srv := llmtest.New(t)
	srv.RequireKey("right")
	get := func(key string) int {
		req, _ := http.NewRequest(http.MethodGet, srv.URL()+"/models", nil)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		_ = res.Body.Close()
		if res.StatusCode == 401 && !strings.Contains(string(body), `"code":"invalid_api_key"`) {
			t.Errorf("401 body %s", body)
		}
		return res.StatusCode
	}
	if a, b, c := get(""), get("wrong"), get("right"); a != 401 || b != 401 || c != 200 {
		t.Errorf("statuses without, with a wrong and with the right key: %d %d %d", a, b, c)
	}
	res := post(t, srv.URL()+"/chat/completions", `{"model":"m","messages":[{"role":"user","content":"q"}]}`)
	if res.StatusCode != 401 || srv.Count() != 0 {
		t.Errorf("chat without the key: %d, %d requests recorded", res.StatusCode, srv.Count())
	}
	srv.RequireKey("")
	if get("") != 200 {
		t.Error("RequireKey(\"\") still refuses")
	}
}
