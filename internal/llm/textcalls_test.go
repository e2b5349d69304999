package llm_test

import (
	"strings"
	"testing"

	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
)

var searchTools = []llm.Tool{{Name: "web_search", Description: "Search the web.", Parameters: map[string]any{"type": "object",
	"properties": map[string]any{"query": map[string]any{"type": "string"}}, "required": []any{"query"}}}}

// TestToolCallsWrittenAsText: an endpoint whose chat template's parser
// failed passes calls on as text, with no tool_calls field; they are
// recognised in every common format and run like native ones, and the
// stream does not show them as part of the answer.
func TestToolCallsWrittenAsText(t *testing.T) {
	tests := []struct {
		name, content, wantArgs, wantRest string
		calls                             int
	}{
		{name: "hermes tag", content: "<tool_call>\n{\"name\": \"web_search\", \"arguments\": {\"query\": \"tides\"}}\n</tool_call>", calls: 1, wantArgs: `{"query":"tides"}`},
		{name: "two tags, prose before", content: "Let me look.\n<tool_call>{\"name\":\"web_search\",\"arguments\":{\"query\":\"a\"}}</tool_call>\n<tool_call>{\"name\":\"web_search\",\"arguments\":{\"query\":\"b\"}}</tool_call>", calls: 2, wantArgs: `{"query":"a"}`, wantRest: "Let me look."},
		{name: "tag cut off", content: `<tool_call>{"name": "web_search", "arguments": {"query": "tides"`, calls: 1, wantArgs: `{"query":"tides"}`},
		{name: "mistral", content: `[TOOL_CALLS][{"name": "web_search", "arguments": {"query": "tides"}}]`, calls: 1, wantArgs: `{"query":"tides"}`},
		{name: "mistral args", content: `[TOOL_CALLS]web_search[ARGS]{"query": "tides"}`, calls: 1, wantArgs: `{"query":"tides"}`},
		{name: "llama function tag", content: `<function=web_search>{"query": "tides"}</function>`, calls: 1, wantArgs: `{"query":"tides"}`},
		{name: "bare object", content: `{"name": "web_search", "parameters": {"query": "tides"}}`, calls: 1, wantArgs: `{"query":"tides"}`},
		{name: "fenced object, arguments as a string", content: "```json\n{\"name\": \"web_search\", \"arguments\": \"{\\\"query\\\": \\\"tides\\\"}\"}\n```", calls: 1, wantArgs: `{"query": "tides"}`},
		{name: "prose, then a fenced call", content: "Let me check.\n```json\n{\"name\": \"web_search\", \"arguments\": {\"query\": \"tides\"}}\n```\n", calls: 1, wantArgs: `{"query":"tides"}`, wantRest: "Let me check."},
		{name: "prose, then a fenced call cut off", content: "Let me check.\n```\n{\"name\": \"web_search\", \"arguments\": {\"query\": \"tides\"", calls: 1, wantArgs: `{"query":"tides"}`, wantRest: "Let me check."},
		{name: "code in an answer", content: "Print it:\n```go\nfmt.Println(\"tides\")\n```\nThat is all [1].", wantRest: "Print it:\n```go\nfmt.Println(\"tides\")\n```\nThat is all [1]."},
		{name: "JSON example in an answer", content: "The config is:\n```json\n{\"name\": \"tides\", \"level\": 2}\n```", wantRest: "The config is:\n```json\n{\"name\": \"tides\", \"level\": 2}\n```"},
		{name: "two code blocks, then a call", content: "First:\n```sh\nls\n```\nThen:\n```json\n[{\"name\": \"web_search\", \"arguments\": {\"query\": \"tides\"}}]\n```", calls: 1, wantArgs: `{"query":"tides"}`, wantRest: "First:\n```sh\nls\n```\nThen:"},
		{name: "unknown tool is an answer", content: `{"name": "rm_rf", "arguments": {}}`, wantRest: `{"name": "rm_rf", "arguments": {}}`},
		{name: "JSON answer", content: `{"capital": "Canberra"}`, wantRest: `{"capital": "Canberra"}`},
		{name: "prose", content: "The tide rises twice a day [1].", wantRest: "The tide rises twice a day [1]."},
	}
	for _, tc := range tests {
		for _, stream := range []bool{false, true} {
			t.Run(tc.name+map[bool]string{false: "", true: " streamed"}[stream], func(t *testing.T) {
				srv := llmtest.New(t)
				srv.Enqueue(llmtest.Text(tc.content))
				c := newClient(t, srv)
				var streamed strings.Builder
				req := llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "q"}}, Tools: searchTools}
				var resp *llm.Response
				var err error
				if stream {
					resp, err = c.Stream(t.Context(), req, func(d string) { streamed.WriteString(d) })
				} else {
					resp, err = c.Complete(t.Context(), req)
				}
				if err != nil {
					t.Fatal(err)
				}
				if len(resp.ToolCalls) != tc.calls {
					t.Fatalf("calls %+v, want %d", resp.ToolCalls, tc.calls)
				}
				if tc.calls > 0 && (resp.ToolCalls[0].Name != "web_search" || resp.ToolCalls[0].Arguments != tc.wantArgs || resp.ToolCalls[0].ID == "") {
					t.Errorf("call %+v, want arguments %s", resp.ToolCalls[0], tc.wantArgs)
				}
				if strings.TrimSpace(resp.Content) != tc.wantRest {
					t.Errorf("content %q, want %q", resp.Content, tc.wantRest)
				}
				if stream && strings.TrimSpace(streamed.String()) != tc.wantRest {
					t.Errorf("streamed %q, want %q", streamed.String(), tc.wantRest)
				}
			})
		}
	}
}

// TestPromptToolCalling: an endpoint that refuses native tools (Ollama's
// 400) switches the model to tools described in the prompt, at once and
// for later calls; earlier calls and results travel as text.
func TestPromptToolCalling(t *testing.T) {
	srv := llmtest.New(t)
	srv.Handle(func(r *llmtest.Request) llmtest.Reply {
		if len(r.Tools) > 0 {
			return llmtest.Fail(400, "registry.ollama.ai/library/gemma:2b does not support tools")
		}
		if !strings.Contains(r.System(), "# Tools") || !strings.Contains(r.System(), "web_search") {
			t.Errorf("system prompt without the tools: %q", r.System())
		}
		if strings.Contains(r.LastUser(), "Result of the tool web_search") {
			return llmtest.Text("Tides follow the moon.")
		}
		return llmtest.Text(`<tool_call>{"name": "web_search", "arguments": {"query": "tides"}}</tool_call>`)
	})
	c := newClient(t, srv)
	msgs := []llm.Message{{Role: llm.RoleSystem, Content: "You are Sova."}, {Role: llm.RoleUser, Content: "Why are there tides?"}}
	resp, err := c.Complete(t.Context(), llm.Request{Messages: msgs, Tools: searchTools})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Arguments != `{"query":"tides"}` {
		t.Fatalf("calls %+v", resp.ToolCalls)
	}
	msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, ToolCalls: resp.ToolCalls},
		llm.Message{Role: llm.RoleTool, ToolCallID: resp.ToolCalls[0].ID, Name: "web_search", Content: "[1] the moon pulls the sea"})
	resp, err = c.Complete(t.Context(), llm.Request{Messages: msgs, Tools: searchTools})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "Tides follow the moon." {
		t.Errorf("answer %q", resp.Content)
	}
	if n := srv.Count(); n != 3 {
		t.Errorf("%d requests, want 3: one refused, then the prompt for both calls", n)
	}
	last := srv.Last()
	for _, m := range last.Messages {
		if m.Role == llm.RoleTool || len(m.ToolCalls) > 0 {
			t.Errorf("a native tool message was sent in prompt mode: %+v", m)
		}
	}
}

// TestPromptToolCallingSetting: SOVA_LLM_TOOL_CALLING=prompt sends no
// tools field from the first call.
func TestPromptToolCallingSetting(t *testing.T) {
	srv := llmtest.New(t)
	srv.Enqueue(llmtest.Text("[TOOL_CALLS][{\"name\":\"web_search\",\"arguments\":{\"query\":\"x\"}}]"))
	c, err := llm.New(llm.Config{BaseURL: srv.URL(), Model: "m", MaxRetries: -1, ToolCalling: llm.ToolsPrompt})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Complete(t.Context(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "q"}}, Tools: searchTools, ToolChoice: "auto"})
	if err != nil {
		t.Fatal(err)
	}
	if r := srv.Last(); len(r.Tools) > 0 || r.ToolChoice != "" || !strings.Contains(r.System(), "<tool_call>") {
		t.Errorf("request: tools %v, choice %q, system %q", r.Tools, r.ToolChoice, r.System())
	}
	if len(resp.ToolCalls) != 1 {
		t.Errorf("calls %+v", resp.ToolCalls)
	}
}

// TestStreamedAnswerOpeningWithACitationIsNotHeld: an answer that opens
// with "[1]" streams as it comes; only what may be a call waits.
func TestStreamedAnswerOpeningWithACitationIsNotHeld(t *testing.T) {
	srv := llmtest.New(t)
	srv.Enqueue(llmtest.Reply{Content: "[1] says the tide rises twice a day.", ChunkDelay: 0})
	c := newClient(t, srv)
	var deltas []string
	resp, err := c.Stream(t.Context(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "q"}}, Tools: searchTools},
		func(d string) { deltas = append(deltas, d) })
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != 0 || strings.Join(deltas, "") != resp.Content {
		t.Fatalf("calls %+v, streamed %q", resp.ToolCalls, deltas)
	}
	if len(deltas) < 2 {
		t.Errorf("the answer came in %d piece(s): it was held back", len(deltas))
	}
}

// TestStreamedCodeIsNotHeld: a code fence in an answer waits only until
// its first line shows it is not a call, then streams as it comes.
func TestStreamedCodeIsNotHeld(t *testing.T) {
	srv := llmtest.New(t)
	code := strings.Repeat("fmt.Println(\"the tide rises\")\n", 20)
	srv.Enqueue(llmtest.Text("Print it:\n```go\n" + code + "```\nThat is all [1]."))
	c := newClient(t, srv)
	var deltas []string
	resp, err := c.Stream(t.Context(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "q"}}, Tools: searchTools},
		func(d string) { deltas = append(deltas, d) })
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != 0 || strings.Join(deltas, "") != resp.Content {
		t.Fatalf("calls %+v, streamed %q", resp.ToolCalls, deltas)
	}
	// Deltas that end inside the code: one alone would mean it was held.
	start := strings.Index(resp.Content, "fmt")
	end := start + len(code)
	withCode, at := 0, 0
	for _, d := range deltas {
		at += len(d)
		if at > start && at < end {
			withCode++
		}
	}
	if withCode < 3 {
		t.Errorf("the code came in %d piece(s) of %d: it was held back", withCode, len(deltas))
	}
}
