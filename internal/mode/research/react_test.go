package research

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
)

func TestLoop(t *testing.T) {
	call := func(name, args string) llmtest.Reply {
		return llmtest.Calls(llm.ToolCall{Name: name, Arguments: args})
	}
	tests := []struct {
		name     string
		replies  []llmtest.Reply
		maxSteps int
		maxIdle  int
		end      string
		steps    int
		// results the model saw, in order
		results []string
	}{
		{
			name:     "tool then stop tool",
			replies:  []llmtest.Reply{call("echo", `{"urls":["a","b"]}`), call("stop", `{}`)},
			maxSteps: 5, maxIdle: 1, end: endTool, steps: 2,
			results: []string{"a,b", "stopped"},
		},
		{
			name:     "a single string where a list is expected",
			replies:  []llmtest.Reply{call("echo", `{"urls":"only"}`), call("stop", ``)},
			maxSteps: 5, maxIdle: 1, end: endTool, steps: 2,
			results: []string{"only", "stopped"},
		},
		{
			name:     "unknown tool and broken JSON are told to the model",
			replies:  []llmtest.Reply{call("nope", `{}`), call("echo", `{"urls":[`), call("stop", `{}`)},
			maxSteps: 5, maxIdle: 1, end: endTool, steps: 3,
			results: []string{`there is no tool "nope"`, "not valid JSON", "stopped"},
		},
		{
			name:     "step limit",
			replies:  []llmtest.Reply{call("echo", `{"urls":["1"]}`), call("echo", `{"urls":["2"]}`)},
			maxSteps: 2, maxIdle: 1, end: endSteps, steps: 2,
			results: []string{"1", "2"},
		},
		{
			name:     "idle twice ends after a nudge",
			replies:  []llmtest.Reply{llmtest.Text("thinking"), llmtest.Text("still thinking")},
			maxSteps: 10, maxIdle: 2, end: endIdle, steps: 2,
		},
		{
			name:     "idle once, then back to tools",
			replies:  []llmtest.Reply{llmtest.Text("hm"), call("stop", `{}`)},
			maxSteps: 10, maxIdle: 2, end: endTool, steps: 2,
			results: []string{"stopped"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Enqueue(tt.replies...)
			c, err := llm.New(llm.Config{BaseURL: srv.URL(), Model: "m", MaxRetries: -1, BackoffBase: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			l := &loop{
				client:   c,
				messages: []llm.Message{{Role: llm.RoleSystem, Content: "s"}, {Role: llm.RoleUser, Content: "u"}},
				maxSteps: tt.maxSteps, maxIdle: tt.maxIdle, nudge: "use a tool",
				tools: []tool{
					{def: llm.Tool{Name: "echo", Parameters: object(map[string]any{"urls": map[string]any{"type": "array"}}, "urls")},
						run: noStop(func(_ context.Context, raw json.RawMessage) (string, error) {
							var a struct {
								URLs stringList `json:"urls"`
							}
							if msg := decodeArgs(raw, &a); msg != "" {
								return msg, nil
							}
							return strings.Join(a.URLs, ","), nil
						})},
					{def: llm.Tool{Name: "stop", Parameters: object(map[string]any{})},
						run: func(context.Context, json.RawMessage) (string, bool, error) { return "stopped", true, nil }},
				},
			}
			res, err := l.run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if res.end != tt.end || res.steps != tt.steps {
				t.Errorf("end %q after %d steps, want %q after %d", res.end, res.steps, tt.end, tt.steps)
			}
			var got []string
			for _, m := range res.messages {
				if m.Role == llm.RoleTool {
					got = append(got, m.Content)
				}
			}
			if len(got) != len(tt.results) {
				t.Fatalf("tool results %q, want %d", got, len(tt.results))
			}
			for i, want := range tt.results {
				if !strings.Contains(got[i], want) {
					t.Errorf("result %d = %q, want it to contain %q", i, got[i], want)
				}
			}
			if tt.end == endIdle {
				if last := srv.Last(); last.LastUser() != "use a tool" {
					t.Errorf("the nudge was not sent; last user message %q", last.LastUser())
				}
			}
			if srv.Count() != tt.steps {
				t.Errorf("%d model calls, want %d", srv.Count(), tt.steps)
			}
		})
	}
}
