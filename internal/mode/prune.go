package mode

import (
	"regexp"
	"strings"

	"github.com/sova-ai/sova/internal/llm"
)

// PruneOptions set how a chat's history is cut before a mode sees it
// (seed 000 §7.3). The zero value prunes nothing.
type PruneOptions struct {
	// MaxMessages: a conversation (history and question) longer than this
	// keeps its first message and the last Keep (10 and 4 in the seed).
	MaxMessages, Keep int
	// TokenBudget: a conversation estimated over it is cut the same way,
	// and further (older messages dropped, then long ones clipped) until
	// it fits (100,000 in the seed).
	TokenBudget int
	// ToolCallsKept: tool calls and results are dropped from all but the
	// last this many messages (2 in the seed; 0 keeps them all).
	ToolCallsKept int
	// Reasoning is set when the model reasons on its own: the
	// <Thought>…</Thought> of earlier answers are kept for it, and
	// stripped for any other model.
	Reasoning bool
}

// SeedPruning are seed 000 §7.3's numbers.
var SeedPruning = PruneOptions{MaxMessages: 10, Keep: 4, TokenBudget: 100_000, ToolCallsKept: 2}

// thought matches a thinking block an earlier answer kept, closed or cut
// off at the end.
var thought = regexp.MustCompile(`(?is)<(thought|think)>.*?(</(thought|think)>|\z)`)

// EstimateTokens is a rough count of the tokens of messages: a token is
// about four characters of text.
func EstimateTokens(msgs []llm.Message) int {
	n := 0
	for _, m := range msgs {
		n += 4 + len([]rune(m.Content))/4
		for _, c := range m.ToolCalls {
			n += (len(c.Name) + len(c.Arguments)) / 4
		}
	}
	return n
}

// PruneHistory returns the history a mode gets for question: thinking
// blocks stripped for a model that does not reason, old tool calls
// dropped, and a long or large conversation cut to its first message and
// its last ones (the question among them). The input is not changed.
func PruneHistory(history []llm.Message, question string, o PruneOptions) []llm.Message {
	out := make([]llm.Message, 0, len(history))
	for _, m := range history {
		if !o.Reasoning && m.Role == llm.RoleAssistant && thought.MatchString(m.Content) {
			m.Content = strings.TrimSpace(thought.ReplaceAllString(m.Content, ""))
		}
		out = append(out, m)
	}
	if o.ToolCallsKept > 0 {
		out = pruneToolCalls(out, o.ToolCallsKept)
	}
	q := llm.Message{Role: llm.RoleUser, Content: question}
	tokens := func() int { return EstimateTokens(out) + EstimateTokens([]llm.Message{q}) }
	over := func() bool { return o.TokenBudget > 0 && tokens() > o.TokenBudget }
	if o.Keep > 0 && len(out) > 1 && (o.MaxMessages > 0 && len(out)+1 > o.MaxMessages || over()) {
		// The first message and the last Keep of the conversation; the
		// question is the last of those.
		keep := min(o.Keep-1, len(out)-1)
		out = append([]llm.Message{out[0]}, out[len(out)-keep:]...)
	}
	// Aggressive: older messages go (the first stays, it names the
	// subject), then what is left is clipped evenly.
	for over() && len(out) > 1 {
		out = append(out[:1], out[2:]...)
	}
	if over() && len(out) > 0 {
		share := max(o.TokenBudget-EstimateTokens([]llm.Message{q}), 0) * 4 / len(out)
		for i := range out {
			out[i].Content = Clip(out[i].Content, share)
		}
	}
	return out
}

// pruneToolCalls drops tool results and assistant tool calls from all but
// the last keep messages, and assistant messages left empty.
func pruneToolCalls(msgs []llm.Message, keep int) []llm.Message {
	cut := len(msgs) - keep
	out := make([]llm.Message, 0, len(msgs))
	for i, m := range msgs {
		if i >= cut {
			out = append(out, m)
			continue
		}
		if m.Role == llm.RoleTool {
			continue
		}
		if len(m.ToolCalls) > 0 {
			m.ToolCalls = nil
			if strings.TrimSpace(m.Content) == "" {
				continue
			}
		}
		out = append(out, m)
	}
	return out
}
