package llm_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/llm"
)

// Servers that speak the stream loosely: Sova reads what each of them
// means. Each body is written as the server sends it.
func TestStreamsAsServersWriteThem(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		content string
		calls   []llm.ToolCall
		wantErr string
	}{
		{
			name:    "CRLF lines, comments and no space after data:",
			body:    ": keep-alive\r\n\r\ndata:{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\r\n\r\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"},\"finish_reason\":\"stop\"}]}\r\n\r\ndata: [DONE]\r\n\r\n",
			content: "Hello",
		},
		{
			name:    "no [DONE] and no blank line at the end",
			body:    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},\"finish_reason\":\"stop\"}]}",
			content: "Hi",
		},
		{
			name: "name repeated in every piece, arguments as an object, no index",
			body: "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"web_search\",\"arguments\":{\"query\":\"sova\"}}}]}}]}\n\n" +
				"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"function\":{\"name\":\"web_search\",\"arguments\":\"\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n",
			calls: []llm.ToolCall{{ID: "c1", Name: "web_search", Arguments: `{"query":"sova"}`}},
		},
		{
			name: "two calls in pieces by index, the first without an id",
			body: "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"name\":\"fetch\",\"arguments\":\"{\\\"url\\\":\"}},{\"index\":1,\"id\":\"b\",\"function\":{\"name\":\"web_search\",\"arguments\":\"{}\"}}]}}]}\n\n" +
				"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\"https://a.example\\\"}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n",
			calls: []llm.ToolCall{{ID: "call_0", Name: "fetch", Arguments: `{"url":"https://a.example"}`}, {ID: "b", Name: "web_search", Arguments: "{}"}},
		},
		{
			name:    "an error event in the middle",
			body:    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\nevent: error\ndata: {\"error\":{\"message\":\"the model crashed\",\"code\":\"500\"}}\n\n",
			wantErr: "the model crashed",
		},
		{
			name:    "a chunk that is not JSON",
			body:    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\ndata: {oops\n\n",
			wantErr: "malformed",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, tt.body)
			}))
			defer srv.Close()
			c, err := llm.New(llm.Config{BaseURL: srv.URL + "/v1", Model: "m", Timeout: 2 * time.Second, MaxRetries: -1})
			if err != nil {
				t.Fatal(err)
			}
			var streamed strings.Builder
			resp, err := c.Stream(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "q"}}}, func(d string) { streamed.WriteString(d) })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to say %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if resp.Content != tt.content || streamed.String() != tt.content {
				t.Errorf("content %q, streamed %q, want %q", resp.Content, streamed.String(), tt.content)
			}
			if !reflect.DeepEqual(resp.ToolCalls, tt.calls) {
				t.Errorf("tool calls %+v, want %+v", resp.ToolCalls, tt.calls)
			}
		})
	}
}

// The request body is the chat-completions format, sent where the
// configured URL says, query included, with the key as a bearer token.
func TestRequestOnTheWire(t *testing.T) {
	var got map[string]any
	var path, query, auth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path, query, auth = r.URL.Path, r.URL.RawQuery, r.Header.Get("Authorization")
		_ = json.NewDecoder(r.Body).Decode(&got)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"model":"m","choices":[{"index":0,"message":{"content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}`)
	}))
	defer srv.Close()
	c, err := llm.New(llm.Config{BaseURL: srv.URL + "/openai/v1?api-version=2025-01-01", APIKey: "k-1", Model: "m", Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	no := false
	resp, err := c.Complete(context.Background(), llm.Request{
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: "q"},
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "web_search", Arguments: `{"query":"x"}`}}},
			{Role: llm.RoleTool, ToolCallID: "c1", Content: "[]"},
		},
		Tools:             []llm.Tool{{Name: "web_search", Description: "search"}},
		ToolChoice:        "web_search",
		ParallelToolCalls: &no,
	})
	if err != nil {
		t.Fatal(err)
	}
	if path != "/openai/v1/chat/completions" || query != "api-version=2025-01-01" || auth != "Bearer k-1" {
		t.Errorf("sent to %s?%s with %q", path, query, auth)
	}
	if resp.Content != "ok" || resp.Usage.TotalTokens != 4 {
		t.Errorf("response %+v", resp)
	}
	b, _ := json.Marshal(got)
	for _, want := range []string{
		`"parallel_tool_calls":false`,
		`"tool_choice":{"function":{"name":"web_search"},"type":"function"}`,
		`{"role":"assistant","tool_calls":[{"function":{"arguments":"{\"query\":\"x\"}","name":"web_search"},"id":"c1","type":"function"}]}`,
		`{"content":"[]","role":"tool","tool_call_id":"c1"}`,
		`"parameters":{"properties":{},"type":"object"}`,
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("request lacks %s:\n%s", want, b)
		}
	}
	if strings.Contains(string(b), `"stream"`) {
		t.Errorf("a plain completion asked for a stream: %s", b)
	}
}
