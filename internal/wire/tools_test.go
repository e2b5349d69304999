package wire

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/event"
)

func evToolCall(id, name, input, title string) event.Event {
	return event.Event{Type: event.TypeToolCall, Time: t0(), ToolCall: &event.ToolCall{ID: id, Name: name, Input: json.RawMessage(input), Title: title}}
}

func evToolResult(id, name, text, output, errText string) event.Event {
	tr := &event.ToolResult{ID: id, Name: name, Text: text, Error: errText}
	if output != "" {
		tr.Output = json.RawMessage(output)
	}
	return event.Event{Type: event.TypeToolResult, Time: t0(), ToolResult: tr}
}

// agentRun is an agent's run: reasoning and a search as tool calls, a
// failed page read, then the answer.
func agentRun() []event.Event {
	return []event.Event{
		{Type: event.TypeStart, Time: t0(), Start: &event.Start{RunID: "agent_1", Mode: "sgr_agent"}},
		evToolCall("call_1_reasoning", "reasoning", `{"current_situation":"nothing known yet"}`, "Step 1 of 6"),
		evToolResult("call_1_reasoning", "reasoning", "", `{"next":"web_search"}`, ""),
		evToolCall("call_1_web_search", "web_search", `{"query":"go generics"}`, `Searching the web for "go generics"`),
		evToolResult("call_1_web_search", "web_search", "Found 2 results:\n1. Tutorial — https://go.dev/doc/tutorial/generics", `{"results":2}`, ""),
		evToolCall("call_2_extract_page_content", "extract_page_content", `{"urls":["https://example.com/x"]}`, ""),
		evToolResult("call_2_extract_page_content", "extract_page_content", "", "", "403 Forbidden"),
		evText("Go has generics [1]."),
		evFinish(event.FinishStop, sova.Usage{InputTokens: 10, OutputTokens: 5, TotalTokens: 15}, srcGo()),
	}
}

func TestChunkStreamToolEvents(t *testing.T) {
	const (
		head = `{"id":"chatcmpl-run_1","object":"chat.completion.chunk","created":1700000000,"model":"run_1","choices":`
		role = head + `[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`
		stop = head + `[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]}`
	)
	content := func(s string) string {
		return head + `[{"index":0,"delta":{"content":` + s + `},"logprobs":null,"finish_reason":null}]}`
	}
	call := func(s string) string {
		return head + `[{"index":0,"delta":{"tool_calls":[` + s + `]},"logprobs":null,"finish_reason":null}]}`
	}
	want := frames(role,
		call(`{"index":0,"id":"call_1_reasoning","type":"function","function":{"name":"reasoning","arguments":"{\"current_situation\":\"nothing known yet\"}"}}`),
		call(`{"index":1,"id":"call_1_web_search","type":"function","function":{"name":"web_search","arguments":"{\"query\":\"go generics\"}"}}`),
		content(`"Found 2 results:\n1. Tutorial — https://go.dev/doc/tutorial/generics\n\n"`),
		call(`{"index":2,"id":"call_2_extract_page_content","type":"function","function":{"name":"extract_page_content","arguments":"{\"urls\":[\"https://example.com/x\"]}"}}`),
		content(`"Tool extract_page_content failed: 403 Forbidden\n\n"`),
		content(`"Go has generics [1]."`),
		stop, "[DONE]")
	if got := encodeChunks(t, false, agentRun()); got != want {
		t.Errorf("frames differ\n got:\n%s\nwant:\n%s", got, want)
	}

	t.Run("a call without input sends {}", func(t *testing.T) {
		got := encodeChunks(t, false, []event.Event{evToolCall("c", "final_answer", "", "")})
		if !strings.Contains(got, `"function":{"name":"final_answer","arguments":"{}"}`) {
			t.Errorf("got %s", got)
		}
	})
	t.Run("invalid tool events are refused and write nothing", func(t *testing.T) {
		var b strings.Builder
		s := NewChunkStream(&b, nil, "id", "m", time.Unix(0, 0), false)
		for _, e := range []event.Event{
			{Type: event.TypeToolCall},
			{Type: event.TypeToolResult},
			evToolCall("", "web_search", "{}", ""),
			evToolCall("c", "", "{}", ""),
		} {
			if err := s.Emit(e); !errors.Is(err, ErrInvalidEvent) {
				t.Errorf("Emit(%+v) = %v, want ErrInvalidEvent", e, err)
			}
		}
		if b.Len() != 0 {
			t.Errorf("wrote %q", b.String())
		}
	})
}

// TestChunkStreamToolCallsDecode reassembles the stream the way OpenAI
// clients accumulate it: tool calls by index, content concatenated.
func TestChunkStreamToolCallsDecode(t *testing.T) {
	out := encodeChunks(t, false, agentRun())
	type acc struct{ id, name, args string }
	calls := map[int]*acc{}
	var content strings.Builder
	for _, f := range strings.Split(strings.TrimSuffix(out, "\n\n"), "\n\n") {
		body := strings.TrimPrefix(f, "data: ")
		if body == "[DONE]" {
			break
		}
		var c ChatCompletionChunk
		if err := json.Unmarshal([]byte(body), &c); err != nil {
			t.Fatal(err)
		}
		for _, ch := range c.Choices {
			if ch.Delta.Content != nil {
				content.WriteString(*ch.Delta.Content)
			}
			for _, tc := range ch.Delta.ToolCalls {
				a := calls[tc.Index]
				if a == nil {
					a = &acc{}
					calls[tc.Index] = a
				}
				a.id += tc.ID
				a.name += tc.Function.Name
				a.args += tc.Function.Arguments
			}
		}
	}
	if len(calls) != 3 || calls[1].name != "web_search" || calls[1].id != "call_1_web_search" || !json.Valid([]byte(calls[2].args)) {
		t.Errorf("calls: %+v %+v %+v", calls[0], calls[1], calls[2])
	}
	if !strings.HasSuffix(content.String(), "\n\nGo has generics [1].") {
		t.Errorf("the answer must come last, in its own paragraph: %q", content.String())
	}
}

func TestUIStreamToolEvents(t *testing.T) {
	got := encodeUI(t, agentRun())
	for _, want := range []string{
		`{"type":"tool-input-available","toolCallId":"call_1_reasoning","toolName":"reasoning","input":{"current_situation":"nothing known yet"},"providerExecuted":true,"title":"Step 1 of 6"}`,
		`{"type":"tool-output-available","toolCallId":"call_1_reasoning","output":{"next":"web_search"},"providerExecuted":true}`,
		`{"type":"tool-output-available","toolCallId":"call_1_web_search","output":{"results":2},"providerExecuted":true}`,
		`{"type":"tool-input-available","toolCallId":"call_2_extract_page_content","toolName":"extract_page_content","input":{"urls":["https://example.com/x"]},"providerExecuted":true}`,
		`{"type":"tool-output-error","toolCallId":"call_2_extract_page_content","errorText":"403 Forbidden","providerExecuted":true}`,
	} {
		if !strings.Contains(got, "data: "+want+"\n\n") {
			t.Errorf("missing frame %s in\n%s", want, got)
		}
	}

	t.Run("text output when there is no structured output", func(t *testing.T) {
		got := encodeUI(t, []event.Event{evToolCall("c", "final_answer", "", ""), evToolResult("c", "final_answer", "done", "", "")})
		want := frames(`{"type":"tool-input-available","toolCallId":"c","toolName":"final_answer","input":{},"providerExecuted":true}`,
			`{"type":"tool-output-available","toolCallId":"c","output":"done","providerExecuted":true}`, "[DONE]")
		if got != want {
			t.Errorf("got\n%s\nwant\n%s", got, want)
		}
	})
	t.Run("a result for a call never sent is invalid", func(t *testing.T) {
		var b strings.Builder
		s := NewUIStream(&b, nil)
		if err := s.Emit(evToolResult("nope", "web_search", "x", "", "")); !errors.Is(err, ErrInvalidEvent) {
			t.Errorf("Emit = %v, want ErrInvalidEvent", err)
		}
		if b.Len() != 0 {
			t.Errorf("wrote %q", b.String())
		}
	})
}

// TestUIStreamToolsWithAISDK: the AI SDK builds tool parts that end in
// their final states, and never tries to run Sova's tools itself.
func TestUIStreamToolsWithAISDK(t *testing.T) {
	sum, stderr, err := runValidator(t, encodeUI(t, agentRun()), "-")
	if err != nil {
		t.Fatalf("validator rejected the stream: %v\n%s", err, stderr)
	}
	want := []validatorTool{
		{Type: "tool-reasoning", State: "output-available", ToolCallID: "call_1_reasoning"},
		{Type: "tool-web_search", State: "output-available", ToolCallID: "call_1_web_search"},
		{Type: "tool-extract_page_content", State: "output-error", ToolCallID: "call_2_extract_page_content"},
	}
	if !reflect.DeepEqual(sum.Tools, want) {
		t.Errorf("tool parts = %+v, want %+v", sum.Tools, want)
	}
	if sum.Text != "Go has generics [1]." || sum.SourceURLs != 1 {
		t.Errorf("summary %+v", sum)
	}
}

func TestTerminalToolEvents(t *testing.T) {
	var b strings.Builder
	term := NewTerminal(&b, false)
	for _, e := range agentRun() {
		if err := term.Emit(e); err != nil {
			t.Fatal(err)
		}
	}
	want := `● sgr_agent
⚙ Step 1 of 6
⚙ Searching the web for "go generics"
  ✓ web_search: Found 2 results:
⚙ extract_page_content {"urls":["https://example.com/x"]}
  ✗ extract_page_content: 403 Forbidden
✓ Done in 4.2s · 15 tokens (10 in, 5 out)
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestNDJSONToolEvents(t *testing.T) {
	var b strings.Builder
	n := NewNDJSON(&b, nil)
	for _, e := range agentRun() {
		if err := n.Emit(e); err != nil {
			t.Fatal(err)
		}
	}
	var got []event.Event
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		var e event.Event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		got = append(got, e)
	}
	if !reflect.DeepEqual(got, agentRun()) {
		t.Errorf("round trip differs:\n got %+v\nwant %+v", got, agentRun())
	}
	if !strings.Contains(b.String(), `"toolCall":{"id":"call_1_web_search","name":"web_search","input":{"query":"go generics"}`) {
		t.Errorf("tool call not encoded as documented: %s", b.String())
	}
}
