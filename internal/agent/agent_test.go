package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
)

// searchTool records its calls and answers with the query.
type searchTool struct {
	mu    sync.Mutex
	calls []string
	fail  error
}

type searchArgs struct {
	Query string `json:"query"`
	Limit int    `json:"limit,omitempty"`
}

func (s *searchTool) Name() string        { return "search" }
func (s *searchTool) Description() string { return "Searches the documents." }
func (s *searchTool) Schema() *jsonschema.Schema {
	sch, err := jsonschema.For[searchArgs](nil)
	if err != nil {
		panic(err)
	}
	return sch
}

func (s *searchTool) Call(_ context.Context, raw json.RawMessage) (string, error) {
	var a searchArgs
	if err := json.Unmarshal(raw, &a); err != nil {
		return "", err
	}
	s.mu.Lock()
	s.calls = append(s.calls, a.Query)
	s.mu.Unlock()
	if s.fail != nil {
		return "", s.fail
	}
	return `{"results":[{"title":"found ` + a.Query + `"}]}`, nil
}

func (s *searchTool) queries() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.calls...)
}

func newClient(t *testing.T, srv *llmtest.Server) *llm.Client {
	t.Helper()
	c, err := llm.New(llm.Config{BaseURL: srv.URL(), Model: "m", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func call(id, name, args string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: name, Arguments: args}
}

func TestLoopCallsToolsAndAnswers(t *testing.T) {
	srv := llmtest.New(t)
	srv.Enqueue(
		llmtest.Reply{ToolCalls: []llm.ToolCall{call("c1", "search", `{"query":"alpha"}`), call("c2", "search", `{"query":"beta"}`)}, Usage: llmtest.Tokens(10, 5)},
		llmtest.Reply{Content: "The answer [1].", Usage: llmtest.Tokens(20, 7)},
	)
	tool := &searchTool{}
	var (
		mu              sync.Mutex
		streamed        strings.Builder
		called, results []string
	)
	out, err := agent.Run(t.Context(), agent.Config{
		Model: newClient(t, srv), Tools: []agent.Tool{tool}, MaxSteps: 5,
		OnText:       func(d string) { streamed.WriteString(d) },
		OnToolCall:   func(c agent.Call) { mu.Lock(); called = append(called, c.ID); mu.Unlock() },
		OnToolResult: func(r agent.Result) { mu.Lock(); results = append(results, r.CallID); mu.Unlock() },
	}, []llm.Message{{Role: llm.RoleSystem, Content: "sys"}, {Role: llm.RoleUser, Content: "q"}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Text != "The answer [1]." || streamed.String() != out.Text {
		t.Errorf("text = %q, streamed %q", out.Text, streamed.String())
	}
	if len(out.Steps) != 2 || len(out.Calls()) != 2 || len(out.Results()) != 2 {
		t.Fatalf("steps = %+v", out.Steps)
	}
	if out.Usage.TotalTokens != 42 {
		t.Errorf("usage = %+v, want 42 tokens in all", out.Usage)
	}
	if len(called) != 2 || len(results) != 2 {
		t.Errorf("events: calls %v results %v", called, results)
	}
	if q := tool.queries(); len(q) != 2 {
		t.Errorf("tool ran for %v", q)
	}
	// The second request carries the assistant's calls and both results,
	// in call order.
	second := srv.Requests()[1]
	var toolMsgs []llm.Message
	for _, m := range second.Messages {
		if m.Role == llm.RoleTool {
			toolMsgs = append(toolMsgs, m)
		}
	}
	if len(toolMsgs) != 2 || toolMsgs[0].ToolCallID != "c1" || toolMsgs[1].ToolCallID != "c2" ||
		!strings.Contains(toolMsgs[0].Content, "found alpha") || !strings.Contains(toolMsgs[1].Content, "found beta") {
		t.Errorf("tool messages = %+v", toolMsgs)
	}
	if !second.HasTool("search") || second.ToolChoice == "none" {
		t.Errorf("second request: tools %v, choice %q", second.Tools, second.ToolChoice)
	}
}

func TestRepairMalformedArguments(t *testing.T) {
	tests := []struct {
		name       string
		args       string
		repair     string // the repair model's reply
		wantQuery  string
		wantError  string // in the tool message when repair fails
		repairCall bool
	}{
		{name: "valid", args: `{"query":"ok"}`, wantQuery: "ok"},
		{name: "array instead of string", args: `{"query":["war","poverty"]}`, repair: "```json\n{\"query\":\"war poverty\"}\n```", wantQuery: "war poverty", repairCall: true},
		{name: "broken JSON", args: `{"query": "unterminated", "limit": }`, repair: `{"query":"unterminated"}`, wantQuery: "unterminated", repairCall: true},
		{name: "missing required", args: `{"limit":3}`, repair: `{"query":"something","limit":3}`, wantQuery: "something", repairCall: true},
		{name: "repair fails", args: `{"query":{"text":7}}`, repair: `still not json`, wantError: "invalid arguments for search", repairCall: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.New(t)
			var repairs int
			var mu sync.Mutex
			srv.Handle(func(r *llmtest.Request) llmtest.Reply {
				switch {
				case strings.Contains(r.System(), "fix malformed tool calls"):
					mu.Lock()
					repairs++
					mu.Unlock()
					if !strings.Contains(r.LastUser(), tc.args) || !strings.Contains(r.LastUser(), `"query"`) {
						t.Errorf("repair prompt lacks the call or the schema: %s", r.LastUser())
					}
					return llmtest.Text(tc.repair)
				case r.Index == 0:
					return llmtest.Calls(call("c1", "search", tc.args))
				default:
					return llmtest.Text("done")
				}
			})
			tool := &searchTool{}
			var got agent.Call
			out, err := agent.Run(t.Context(), agent.Config{
				Model: newClient(t, srv), Tools: []agent.Tool{tool},
				OnToolCall: func(c agent.Call) { got = c },
			}, []llm.Message{{Role: llm.RoleUser, Content: "q"}})
			if err != nil {
				t.Fatal(err)
			}
			if (repairs > 0) != tc.repairCall {
				t.Errorf("repair requests = %d, want repair %v", repairs, tc.repairCall)
			}
			if tc.wantError != "" {
				res := out.Results()
				if len(res) != 1 || !strings.Contains(res[0].Error, tc.wantError) || len(tool.queries()) != 0 {
					t.Fatalf("results = %+v, tool calls %v", res, tool.queries())
				}
				last := srv.Last()
				if m := last.Messages[len(last.Messages)-1]; m.Role != llm.RoleTool || !strings.HasPrefix(m.Content, "Error: invalid arguments") {
					t.Errorf("the model was not told: %+v", m)
				}
				if got.RawArgs != tc.args {
					t.Errorf("raw args = %q, want %q kept", got.RawArgs, tc.args)
				}
				return
			}
			if q := tool.queries(); len(q) != 1 || q[0] != tc.wantQuery {
				t.Errorf("tool ran with %v, want %q", q, tc.wantQuery)
			}
			if got.Repaired != tc.repairCall || (tc.repairCall && got.RawArgs != tc.args) {
				t.Errorf("call = %+v", got)
			}
		})
	}
}

func TestLastStepAllowsNoTools(t *testing.T) {
	srv := llmtest.New(t)
	srv.Handle(func(r *llmtest.Request) llmtest.Reply {
		if r.ToolChoice == "none" {
			return llmtest.Text("final answer")
		}
		return llmtest.Calls(call("c", "search", `{"query":"again"}`))
	})
	tool := &searchTool{}
	out, err := agent.Run(t.Context(), agent.Config{Model: newClient(t, srv), Tools: []agent.Tool{tool}, MaxSteps: 3},
		[]llm.Message{{Role: llm.RoleUser, Content: "q"}})
	if err != nil {
		t.Fatal(err)
	}
	if srv.Count() != 3 || len(out.Steps) != 3 || out.Text != "final answer" {
		t.Errorf("%d requests, %d steps, text %q", srv.Count(), len(out.Steps), out.Text)
	}
	if len(tool.queries()) != 2 {
		t.Errorf("tool ran %d times, want 2", len(tool.queries()))
	}
	if reqs := srv.Requests(); reqs[2].ToolChoice != "none" || !reqs[2].HasTool("search") {
		t.Errorf("last request: choice %q, tools %v", reqs[2].ToolChoice, reqs[2].Tools)
	}
}

func TestToolFailuresGoBackToTheModel(t *testing.T) {
	srv := llmtest.New(t)
	srv.Enqueue(
		llmtest.Calls(call("a", "search", `{"query":"x"}`), call("b", "nope", `{}`)),
		llmtest.Text("sorry"),
	)
	tool := &searchTool{fail: errors.New("index unavailable")}
	out, err := agent.Run(t.Context(), agent.Config{Model: newClient(t, srv), Tools: []agent.Tool{tool}},
		[]llm.Message{{Role: llm.RoleUser, Content: "q"}})
	if err != nil {
		t.Fatal(err)
	}
	res := out.Results()
	if len(res) != 2 || res[0].Error != "index unavailable" || !strings.Contains(res[1].Error, `no tool named "nope"`) {
		t.Fatalf("results = %+v", res)
	}
	var contents []string
	for _, m := range srv.Last().Messages {
		if m.Role == llm.RoleTool {
			contents = append(contents, m.Content)
		}
	}
	if len(contents) != 2 || contents[0] != "Error: index unavailable" || !strings.Contains(contents[1], "the tools are: search") {
		t.Errorf("tool messages = %q", contents)
	}
}

func TestModelErrorKeepsStepsSoFar(t *testing.T) {
	srv := llmtest.New(t)
	srv.Enqueue(llmtest.Calls(call("a", "search", `{"query":"x"}`)), llmtest.Fail(400, "bad request"))
	out, err := agent.Run(t.Context(), agent.Config{Model: newClient(t, srv), Tools: []agent.Tool{&searchTool{}}},
		[]llm.Message{{Role: llm.RoleUser, Content: "q"}})
	if err == nil || !strings.Contains(err.Error(), "step 2") {
		t.Fatalf("err = %v, want a step 2 failure", err)
	}
	if out == nil || len(out.Steps) != 1 || len(out.Results()) != 1 {
		t.Errorf("outcome = %+v", out)
	}
}

func TestCancellation(t *testing.T) {
	srv := llmtest.New(t)
	ctx, cancel := context.WithCancel(t.Context())
	blocking := &blockingTool{started: make(chan struct{})}
	srv.Enqueue(llmtest.Calls(call("a", "wait", `{}`)))
	go func() { <-blocking.started; cancel() }()
	_, err := agent.Run(ctx, agent.Config{Model: newClient(t, srv), Tools: []agent.Tool{blocking}},
		[]llm.Message{{Role: llm.RoleUser, Content: "q"}})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if srv.Count() != 1 {
		t.Errorf("%d requests after cancellation, want 1", srv.Count())
	}
}

type blockingTool struct{ started chan struct{} }

func (b *blockingTool) Name() string               { return "wait" }
func (b *blockingTool) Description() string        { return "Waits." }
func (b *blockingTool) Schema() *jsonschema.Schema { return &jsonschema.Schema{Type: "object"} }
func (b *blockingTool) Call(ctx context.Context, _ json.RawMessage) (string, error) {
	close(b.started)
	<-ctx.Done()
	return "", ctx.Err()
}

func TestDuplicateToolNames(t *testing.T) {
	srv := llmtest.New(t)
	_, err := agent.Run(t.Context(), agent.Config{Model: newClient(t, srv), Tools: []agent.Tool{&searchTool{}, &searchTool{}}},
		[]llm.Message{{Role: llm.RoleUser, Content: "q"}})
	if err == nil || srv.Count() != 0 {
		t.Errorf("err = %v after %d requests, want a refusal before any", err, srv.Count())
	}
}
