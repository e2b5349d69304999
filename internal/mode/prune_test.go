package mode

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sova-ai/sova/internal/llm"
)

func conv(n int) []llm.Message {
	var out []llm.Message
	for i := range n {
		role := llm.RoleUser
		if i%2 == 1 {
			role = llm.RoleAssistant
		}
		out = append(out, llm.Message{Role: role, Content: fmt.Sprintf("m%d", i)})
	}
	return out
}

func contents(msgs []llm.Message) string {
	var s []string
	for _, m := range msgs {
		s = append(s, m.Content)
	}
	return strings.Join(s, " ")
}

func TestPruneHistory(t *testing.T) {
	big := strings.Repeat("word ", 30_000) // about 37,500 tokens
	tests := []struct {
		name    string
		history []llm.Message
		opt     PruneOptions
		want    string
	}{
		{"short kept", conv(9), SeedPruning, "m0 m1 m2 m3 m4 m5 m6 m7 m8"},
		{"over 10 with the question: first and last 4", conv(10), SeedPruning, "m0 m7 m8 m9"},
		{"long", conv(30), SeedPruning, "m0 m27 m28 m29"},
		{"zero options prune nothing", conv(12), PruneOptions{}, "m0 m1 m2 m3 m4 m5 m6 m7 m8 m9 m10 m11"},
		{"thought stripped", []llm.Message{{Role: llm.RoleUser, Content: "q"}, {Role: llm.RoleAssistant, Content: "<Thought>let me see</Thought>\nThe answer."}},
			SeedPruning, "q The answer."},
		{"cut-off thought stripped", []llm.Message{{Role: llm.RoleAssistant, Content: "Yes. <think>and then"}}, SeedPruning, "Yes."},
		{"thought kept for a reasoning model", []llm.Message{{Role: llm.RoleAssistant, Content: "<Thought>x</Thought> A"}},
			PruneOptions{Reasoning: true}, "<Thought>x</Thought> A"},
		{"a user's words are never stripped", []llm.Message{{Role: llm.RoleUser, Content: "what does <Thought>x</Thought> mean"}}, SeedPruning,
			"what does <Thought>x</Thought> mean"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]llm.Message(nil), tt.history...)
			got := PruneHistory(tt.history, "question", tt.opt)
			if contents(got) != tt.want {
				t.Errorf("got %q, want %q", contents(got), tt.want)
			}
			if contents(in) != contents(tt.history) {
				t.Error("the input was changed")
			}
		})
	}
	t.Run("over the token budget", func(t *testing.T) {
		h := []llm.Message{{Role: llm.RoleUser, Content: "first"}, {Role: llm.RoleAssistant, Content: big},
			{Role: llm.RoleUser, Content: "second"}, {Role: llm.RoleAssistant, Content: big}, {Role: llm.RoleUser, Content: "third"},
			{Role: llm.RoleAssistant, Content: big}}
		got := PruneHistory(h, "q", SeedPruning)
		if n := EstimateTokens(got); n > 100_000 || got[0].Content != "first" || len(got) < 2 {
			t.Errorf("%d messages, %d tokens, first %q", len(got), n, got[0].Content)
		}
		// One message alone over the budget is clipped.
		got = PruneHistory([]llm.Message{{Role: llm.RoleAssistant, Content: big + big + big}}, "q", SeedPruning)
		if n := EstimateTokens(got); n > 100_000 || len(got) != 1 {
			t.Errorf("clipped: %d messages, %d tokens", len(got), n)
		}
	})
	t.Run("old tool calls", func(t *testing.T) {
		h := []llm.Message{
			{Role: llm.RoleUser, Content: "q1"},
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "1", Name: "web_search", Arguments: `{}`}}},
			{Role: llm.RoleTool, ToolCallID: "1", Content: "results 1"},
			{Role: llm.RoleAssistant, Content: "a1", ToolCalls: []llm.ToolCall{{ID: "2", Name: "web_search"}}},
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "3", Name: "web_search"}}},
			{Role: llm.RoleTool, ToolCallID: "3", Content: "results 3"},
		}
		got := PruneHistory(h, "q", SeedPruning)
		if contents(got) != "q1 a1  results 3" || got[1].ToolCalls != nil || len(got[2].ToolCalls) != 1 {
			t.Errorf("got %+v", got)
		}
	})
}
