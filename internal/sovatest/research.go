package sovatest

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
	"github.com/sova-ai/sova/internal/tools"
)

var (
	teamSizeRE   = regexp.MustCompile(`team of exactly (\d+) researcher agents`)
	planSizeRE   = regexp.MustCompile(`Write about (\d+) tasks`)
	scrapeURLRE  = regexp.MustCompile(`URL: (\S+)`)
	readPageRE   = regexp.MustCompile(`(?m)^\[(\d+)\] .+ — (\S+)$`)
	noteTaskRE   = regexp.MustCompile(`Task: (.+?) —`)
	agentTaskRE  = regexp.MustCompile(`Your current task: (.+)`)
	svCallRE     = regexp.MustCompile(`supervisor call (\d+) of`)
	russianAskRE = regexp.MustCompile(`\bRussian\b`)
)

// research answers the deep_research mode's steps: no clarifying
// questions, a plan of two tasks per agent, agents that search, read two
// pages and finish, a supervisor that writes the draft and lets the
// research continue, and a long cited report. It reports false for
// requests of other modes.
func (m *Model) research(r *llmtest.Request) (llmtest.Reply, bool) {
	usage := llmtest.Tokens(150, 40)
	obj := func(v any) (llmtest.Reply, bool) { return llmtest.Reply{Content: mustJSON(v), Usage: usage}, true }
	seq := 0
	call := func(name string, args any) llm.ToolCall {
		seq++
		return llm.ToolCall{ID: fmt.Sprintf("call_r%d_%d", r.Index, seq), Name: name, Arguments: mustJSON(args)}
	}
	sys := r.System()
	switch {
	case r.SchemaName() == "ClarificationCheck":
		return obj(map[string]any{"needs_clarification": false, "reason": "the request is clear", "questions": []string{}})
	case r.SchemaName() == "QueryAnalysis":
		return obj(map[string]any{"query_type": "historical", "complexity": "complex", "key_aspects": []string{"banking", "unemployment", "recovery"}, "strategy": "speeches and statistics", "constraints": []string{"1930s"}})
	case r.SchemaName() == "ResearchPlan":
		n := 4
		if m := planSizeRE.FindStringSubmatch(sys); m != nil {
			n, _ = strconv.Atoi(m[1])
		}
		var tasks []any
		for i := 1; i <= n; i++ {
			tasks = append(tasks, map[string]any{"title": fmt.Sprintf("Aspect %d", i), "objective": fmt.Sprintf("Facts on aspect %d of the economy", i)})
		}
		return obj(map[string]any{"goal": "How the economy of the 1930s was described", "themes": []any{
			map[string]any{"title": "Economy", "description": "speeches and figures", "tasks": tasks},
		}})
	case r.SchemaName() == "AgentTeam":
		n := 4
		if m := teamSizeRE.FindStringSubmatch(sys); m != nil {
			n, _ = strconv.Atoi(m[1])
		}
		var agents []any
		for i := 1; i <= n; i++ {
			agents = append(agents, map[string]any{"specialisation": fmt.Sprintf("Analyst %d", i), "style": "careful", "source_preferences": "archives", "todos": []any{}})
		}
		return obj(map[string]any{"agents": agents})
	case r.SchemaName() == "AgentReflection":
		return obj(map[string]any{"assessment": "on track", "on_track": true, "next_approach": "read the pages", "needs_help": false, "help_request": ""})
	case r.SchemaName() == "AgentNote":
		user := r.LastUser()
		var cites []string
		var urls []string
		for _, p := range readPageRE.FindAllStringSubmatch(user, -1) {
			cites = append(cites, "["+p[1]+"]")
			urls = append(urls, p[2])
		}
		task := "the task"
		if t := noteTaskRE.FindStringSubmatch(user); t != nil {
			task = t[1]
		}
		return obj(map[string]any{"title": "Findings on " + task, "findings": "Roosevelt reopened sound banks in 1933 " + strings.Join(cites, "") + ".",
			"key_facts": []string{"Deposits returned within weeks " + strings.Join(cites, "")}, "sources": urls, "relevance": "high"})
	case r.SchemaName() == "FinalReport":
		para := "Roosevelt described the economy as a system to repair [1], while Hoover had promised that prosperity was near [2]. "
		title := "The economy in presidential speeches of the 1930s"
		if russianAskRE.MatchString(sys) {
			para = "Рузвельт описывал экономику как систему, которую нужно починить [1], а Гувер обещал скорое процветание [2]. "
			title = "Экономика в речах президентов 1930-х годов"
		}
		body := strings.Repeat(para, 5)
		return obj(map[string]any{"title": title, "executive_summary": body, "conclusion": body, "sources": []string{},
			"sections": []any{map[string]any{"title": "Banking", "content": body}, map[string]any{"title": "Unemployment", "content": body}, map[string]any{"title": "Recovery", "content": body}}})
	case strings.Contains(sys, "condense a web page"):
		return llmtest.Reply{Content: "Summary: " + firstLine(r.LastUser(), "Page content:"), Usage: usage}, true
	case r.HasTool("scrape_url") && r.HasTool("done") && strings.Contains(sys, "researcher agent in a research team"):
		calls, last := 0, ""
		for _, msg := range r.Messages {
			if msg.Role == llm.RoleAssistant && len(msg.ToolCalls) > 0 {
				calls++
			}
			if msg.Role == llm.RoleTool {
				last = msg.Content
			}
		}
		task := "economy 1930s"
		if len(r.Messages) > 1 {
			if t := agentTaskRE.FindStringSubmatch(r.Messages[1].Content); t != nil {
				task = t[1] + " economy 1930s"
			}
		}
		switch calls {
		case 0:
			return llmtest.Reply{ToolCalls: []llm.ToolCall{call(tools.WebSearchName, map[string]any{"query": task})}, Usage: usage}, true
		case 1:
			var urls []string
			for _, u := range scrapeURLRE.FindAllStringSubmatch(last, 2) {
				urls = append(urls, u[1])
			}
			return llmtest.Reply{ToolCalls: []llm.ToolCall{call("scrape_url", map[string]any{"urls": urls})}, Usage: usage}, true
		}
		return llmtest.Reply{ToolCalls: []llm.ToolCall{call("done", map[string]any{})}, Usage: usage}, true
	case r.HasTool("make_final_decision") && r.HasTool("create_agent_todo"):
		rounds := 0
		for _, msg := range r.Messages {
			if msg.Role == llm.RoleAssistant {
				rounds++
			}
		}
		n := "1"
		if c := svCallRE.FindStringSubmatch(sys); c != nil {
			n = c[1]
		}
		if rounds == 0 {
			return llmtest.Reply{ToolCalls: []llm.ToolCall{
				call("write_main_document", map[string]any{"section_title": "Insight " + n, "content": "Banks reopened in 1933 [1]."}),
				call("write_draft_report", map[string]any{"mode": "append", "content": "## Review " + n + "\n\n" + strings.Repeat("The team found that banks reopened after the 1933 holiday [1] and recovery followed [2]. ", 4)}),
			}, Usage: usage}, true
		}
		return llmtest.Reply{ToolCalls: []llm.ToolCall{call("make_final_decision", map[string]any{"decision": "continue", "reason": "todos remain"})}, Usage: usage}, true
	}
	return llmtest.Reply{}, false
}
