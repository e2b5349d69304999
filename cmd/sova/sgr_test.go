package main

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/sova-ai/sova/internal/llm/llmtest"
)

// scriptAgentSteps makes the model answer the sgr agent's NextStep
// requests with replies[step-1]; other requests go to the sovatest model.
func scriptAgentSteps(w *world, replies ...string) {
	stepRe := regexp.MustCompile(`Step (\d+) of \d+\.`)
	w.model.Handle(func(r *llmtest.Request) llmtest.Reply {
		if r.SchemaName() != "NextStep" {
			return w.model.Respond(r)
		}
		m := stepRe.FindStringSubmatch(r.System())
		step, _ := strconv.Atoi(m[1])
		if step < 1 || step > len(replies) {
			return llmtest.Fail(400, "no reply for step "+m[1])
		}
		return llmtest.Reply{Content: replies[step-1], Usage: llmtest.Tokens(100, 20)}
	})
}

func agentStep(tool string, args map[string]any) string {
	args["tool"], args["reasoning"] = tool, "next"
	b, _ := json.Marshal(map[string]any{
		"reasoning_steps": []string{"a", "b"}, "current_situation": "doing " + tool, "plan_status": "ok",
		"enough_data": false, "remaining_steps": []string{tool}, "task_completed": false, "function": args,
	})
	return string(b)
}

// sova ask --mode sgr_agent: the questions, the hint to answer them, and
// the report (with its own list of sources, printed once) after the answer.
func TestAskAgent(t *testing.T) {
	w := newWorld(t)
	scriptAgentSteps(w,
		agentStep("clarification", map[string]any{"unclear_terms": []string{"x"}, "assumptions": []string{"a", "b"}, "questions": []string{"Which country?"}}),
		agentStep("web_search", map[string]any{"query": "Roosevelt economy", "max_results": 3}),
		agentStep("extract_page_content", map[string]any{"urls": []string{w.site.URL + "/a/fdr-fireside"}}),
		agentStep("create_report", map[string]any{"title": "Roosevelt and the banks", "user_request_language_reference": "q",
			"content": "Roosevelt explained the bank holiday by radio [1].", "confidence": "high"}),
		agentStep("final_answer", map[string]any{"completed_steps": []string{"done"}, "answer": "Done [1].", "status": "completed"}),
	)
	stdout, stderr, err := w.sova(t, "ask", "--mode", "sgr_agent", "How did Roosevelt talk about the banks?")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if !strings.Contains(stdout, "1. Which country?") || !strings.Contains(stderr, "⚙ Asking 1 clarifying questions") {
		t.Fatalf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
	hint := regexp.MustCompile(`sova ask (--chat \S+ --mode sgr_agent)`).FindStringSubmatch(stderr)
	if hint == nil {
		t.Fatalf("no hint to answer in:\n%s", stderr)
	}
	args := append([]string{"ask"}, strings.Fields(hint[1])...)
	stdout, stderr, err = w.sova(t, append(args, "The US")...)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	for _, want := range []string{`⚙ Searching the web for "Roosevelt economy"`, "  ✓ web_search: Found 3 results", "⚙ Reading " + w.site.URL + "/a/fdr-fireside"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("progress lacks %q:\n%s", want, stderr)
		}
	}
	if !strings.HasPrefix(stdout, "# Roosevelt and the banks\n\nRoosevelt explained the bank holiday by radio [1].\n\n## Sources\n\n1. [Roosevelt's first fireside chat on banking]") {
		t.Errorf("report:\n%s", stdout)
	}
	if strings.Count(stdout, w.site.URL+"/a/fdr-fireside") != 1 {
		t.Errorf("the sources are listed more than once:\n%s", stdout)
	}
}
