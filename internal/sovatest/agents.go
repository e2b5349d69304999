package sovatest

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
)

// articleRE finds the Site's article links in a request.
var articleRE = regexp.MustCompile(`https?://127\.0\.0\.1:\d+/a/[a-z0-9-]+`)

// sgrNext is an sgr_agent step (its NextStep schema) choosing tool with
// args.
func sgrNext(tool string, args map[string]any) string {
	fn := map[string]any{"tool": tool, "reasoning": "the next move of the plan"}
	for k, v := range args {
		fn[k] = v
	}
	return mustJSON(map[string]any{
		"reasoning_steps":   []string{"Look at what is known.", "Pick the tool that adds most."},
		"current_situation": "working on " + tool,
		"plan_status":       "on track",
		"enough_data":       tool == "create_report" || tool == "final_answer",
		"remaining_steps":   []string{"then " + tool},
		"task_completed":    tool == "final_answer",
		"function":          fn,
	})
}

// sgr answers the steps of sgr_agent (its NextStep structured output),
// reading the state from the step's prompt: a plan, a web search, the
// pages found read, a report citing [1] and [2], the final answer. It
// reports false for requests of other modes.
func (m *Model) sgr(r *llmtest.Request) (llmtest.Reply, bool) {
	sys := r.System()
	// Once the endpoint has refused json_schema the step comes as JSON
	// mode or plain text, without the schema's name.
	if r.SchemaName() != "NextStep" && !strings.Contains(sys, "Tools available at this step:") {
		return llmtest.Reply{}, false
	}
	usage := llmtest.Tokens(400, 80)
	reply := func(tool string, args map[string]any) (llmtest.Reply, bool) {
		return llmtest.Reply{Content: sgrNext(tool, args), Usage: usage}, true
	}
	var seen []string
	for _, u := range articleRE.FindAllString(string(r.Body), -1) {
		if !slices.Contains(seen, u) {
			seen = append(seen, u)
		}
	}
	switch {
	case strings.Contains(sys, "A report titled"):
		return reply("final_answer", map[string]any{"completed_steps": []string{"searched", "read", "reported"},
			"answer": "The report above answers the question [1].", "status": "completed"})
	case strings.Contains(sys, "Pages read (cite only these numbers):"):
		return reply("create_report", map[string]any{"title": "Presidents and the economy in the 1930s", "user_request_language_reference": r.LastUser(),
			"content":    "Presidents first called the slump a passing storm [1] and then set out to repair the banks [2]. An invented claim [9].",
			"confidence": "high"})
	case len(seen) > 0:
		return reply("extract_page_content", map[string]any{"urls": seen[:min(3, len(seen))]})
	case strings.Contains(sys, "Current plan"):
		return reply("web_search", map[string]any{"query": "presidents economy 1930s speeches", "max_results": 5})
	}
	return reply("generate_plan", map[string]any{"research_goal": "How presidents described the economy",
		"planned_steps": []string{"search", "read", "write"}, "search_strategies": []string{"speeches", "fireside chats"}})
}

// docs answers the docs mode's agent (recognised by its system prompt):
// search_documents with the question first, then an answer citing the
// first passage. It reports false for requests of other modes.
func (m *Model) docs(r *llmtest.Request) (llmtest.Reply, bool) {
	if !strings.Contains(r.System(), "answers questions from the person's own documents") {
		return llmtest.Reply{}, false
	}
	for _, msg := range r.Messages {
		if msg.Role == llm.RoleTool {
			return llmtest.Reply{Content: "The documents answer it: the figure is in the first passage [1]. An invented claim [9].", Usage: llmtest.Tokens(600, 40)}, true
		}
	}
	q := r.LastUser()
	if _, rest, ok := strings.Cut(q, "Question: "); ok {
		q, _, _ = strings.Cut(rest, "\n")
	}
	return llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: fmt.Sprintf("call_d%d", r.Index), Name: "search_documents",
		Arguments: mustJSON(map[string]any{"query": q})}}, Usage: llmtest.Tokens(300, 20)}, true
}
