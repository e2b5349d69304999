package research

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/event/eventtest"
	"github.com/sova-ai/sova/internal/fetch"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
	"github.com/sova-ai/sova/internal/mode"
	searchmode "github.com/sova-ai/sova/internal/mode/search"
	"github.com/sova-ai/sova/internal/search"
	"github.com/sova-ai/sova/internal/sovatest"
)

// script is a model that plays every role of the pipeline the way a
// capable model would, recognising the step from the schema name, the
// tools offered and the system prompt. Knobs change one behaviour.
type script struct {
	t     *testing.T
	model *sovatest.Model // the search pipeline's steps (initial deep search)

	// Knobs, set before the run.
	clarify        bool          // ask clarifying questions
	tasksPerAgent  int           // plan tasks per agent (default 1)
	supervisorIdle bool          // the supervisor never calls a tool
	supervisorTodo bool          // the first review creates a todo for agent_2
	finishOn       int           // the supervisor decides finish on this call (0: never)
	replanOn       int           // the supervisor decides replan on this call (0: never)
	agentNeverDone bool          // agents keep searching and never call done
	shortReports   int           // the first N reports are too short
	agentLatency   time.Duration // added to every agent step, to see overlap
	emptyDraft     bool          // the supervisor writes nothing to the draft
	failPlan       bool          // the model cannot write a research plan
	failReport     bool          // the model cannot write a structured report
	sloppyClosed   bool          // closed values written loosely ("Complex."), a note's relevance first in Russian

	mu       sync.Mutex
	inFlight int
	peak     int
	counts   map[string]int
	reqs     []*llmtest.Request
	steps    map[string]int // agent id + task → model calls
	seq      atomic.Int64
}

func newScript(t *testing.T) *script {
	sc := &script{t: t, model: sovatest.NewModel(t), tasksPerAgent: 1, supervisorTodo: true, counts: map[string]int{}, steps: map[string]int{}}
	sc.model.Handle(sc.respond)
	return sc
}

func (sc *script) count(kind string) int {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return sc.counts[kind]
}

func (sc *script) requests(kind string) []*llmtest.Request {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	var out []*llmtest.Request
	for _, r := range sc.reqs {
		if kindOf(r) == kind {
			out = append(out, r)
		}
	}
	return out
}

func kindOf(r *llmtest.Request) string {
	switch {
	case r.SchemaName() != "":
		return r.SchemaName()
	case r.HasTool("make_final_decision"):
		return "supervisor"
	case r.HasTool("web_search"):
		return "agent"
	case strings.Contains(r.System(), "condense a web page"):
		return "summary"
	}
	return "search-pipeline"
}

func (sc *script) respond(r *llmtest.Request) llmtest.Reply {
	kind := kindOf(r)
	sc.mu.Lock()
	sc.counts[kind]++
	sc.reqs = append(sc.reqs, r)
	sc.mu.Unlock()
	usage := llmtest.Tokens(200, 50)
	reply := func(v any) llmtest.Reply { return llmtest.Reply{Content: mustJSON(v), Usage: usage} }
	switch kind {
	case "ClarificationCheck":
		if sc.clarify {
			qs := []string{"Which country do you mean?", "Which years matter most?"}
			if strings.Contains(r.System(), "Russian") {
				qs = []string{"Какую страну вы имеете в виду?", "Какие годы важнее всего?"}
			}
			return reply(map[string]any{"needs_clarification": true, "reason": "scope is open", "questions": qs})
		}
		return reply(map[string]any{"needs_clarification": false, "reason": "clear", "questions": []string{}})
	case "QueryAnalysis":
		complexity := "complex"
		if sc.sloppyClosed {
			complexity = " Complex."
		}
		return reply(map[string]any{"query_type": "historical", "complexity": complexity, "key_aspects": []string{"banking", "unemployment", "recovery"}, "strategy": "primary sources", "constraints": []string{"1930s"}})
	case "ResearchPlan":
		if sc.failPlan {
			return llmtest.Fail(400, "the plan is beyond me")
		}
		n := 4 * sc.tasksPerAgent
		var tasks []map[string]any
		for i := 1; i <= n; i++ {
			tasks = append(tasks, map[string]any{"title": fmt.Sprintf("Task %d", i), "objective": fmt.Sprintf("Find facts for aspect %d", i)})
		}
		return reply(map[string]any{"goal": "Explain the 1930s economy", "themes": []any{
			map[string]any{"title": "Economy", "description": "how it changed", "tasks": tasks},
		}})
	case "AgentTeam":
		var agents []any
		for i := 1; i <= 4; i++ {
			var todos []any
			for j := 0; j < sc.tasksPerAgent; j++ {
				k := (i-1)*sc.tasksPerAgent + j + 1
				todos = append(todos, map[string]any{"title": fmt.Sprintf("Task %d", k), "objective": fmt.Sprintf("Find facts for aspect %d", k)})
			}
			agents = append(agents, map[string]any{"specialisation": fmt.Sprintf("Specialist %d", i), "style": "careful", "source_preferences": "archives", "todos": todos})
		}
		return reply(map[string]any{"agents": agents})
	case "AgentReflection":
		return reply(map[string]any{"assessment": "results are partly relevant", "on_track": false, "next_approach": "search for primary documents", "needs_help": true, "help_request": "which years to focus on"})
	case "AgentNote":
		note := sc.note(r)
		if sc.sloppyClosed {
			note["relevance"] = "высокая"
			if strings.Contains(r.LastUser(), "could not be used") {
				note["relevance"] = "HIGH"
			}
		}
		return reply(note)
	case "FinalReport":
		if sc.failReport {
			return llmtest.Fail(400, "the report is beyond me")
		}
		sc.mu.Lock()
		short := sc.counts["FinalReport"] <= sc.shortReports
		sc.mu.Unlock()
		return reply(finalReport(short, strings.Contains(r.System(), "Russian")))
	case "summary":
		return llmtest.Reply{Content: "Summary: " + firstLineAfter(r.LastUser(), "Page content:"), Usage: usage}
	case "agent":
		return sc.agent(r)
	case "supervisor":
		return sc.supervisor(r)
	}
	return sc.model.Respond(r)
}

var (
	agentIDRE = regexp.MustCompile(`You are (agent_\d+)`)
	taskRE    = regexp.MustCompile(`Your current task: (.+)`)
	urlRE     = regexp.MustCompile(`URL: (\S+)`)
	readRE    = regexp.MustCompile(`(?m)^\[(\d+)\] .+ — (\S+)$`)
	callRE    = regexp.MustCompile(`supervisor call (\d+) of`)
)

func (sc *script) agent(r *llmtest.Request) llmtest.Reply {
	id := agentIDRE.FindStringSubmatch(r.System())[1]
	task := taskRE.FindStringSubmatch(r.Messages[1].Content)[1]
	sc.mu.Lock()
	sc.steps[id+"/"+task]++
	sc.inFlight++
	sc.peak = max(sc.peak, sc.inFlight)
	sc.mu.Unlock()
	// Sleeping in the handler keeps the request in flight, so overlapping
	// agents show up in inFlight.
	time.Sleep(sc.agentLatency)
	sc.mu.Lock()
	sc.inFlight--
	sc.mu.Unlock()

	calls := 0
	lastTool := ""
	for _, m := range r.Messages {
		if m.Role == llm.RoleAssistant && len(m.ToolCalls) > 0 {
			calls++
		}
		if m.Role == llm.RoleTool {
			lastTool = m.Content
		}
	}
	call := func(name string, args any) llmtest.Reply {
		return llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: fmt.Sprintf("call_%d", sc.seq.Add(1)), Name: name, Arguments: mustJSON(args)}}, Usage: llmtest.Tokens(300, 30)}
	}
	if sc.agentNeverDone {
		return call("web_search", map[string]any{"query": fmt.Sprintf("%s attempt %d", task, calls+1)})
	}
	switch calls {
	case 0:
		return call("web_search", map[string]any{"query": task + " economy 1930s"})
	case 1:
		var urls []string
		for _, m := range urlRE.FindAllStringSubmatch(lastTool, 2) {
			urls = append(urls, m[1])
		}
		return call("scrape_url", map[string]any{"urls": urls})
	}
	return call("done", map[string]any{})
}

// note cites the pages read (and a page that was not, [99], which must
// not survive) and lists an unread URL among its sources.
func (sc *script) note(r *llmtest.Request) map[string]any {
	user := r.LastUser()
	var cites []string
	var urls []string
	for _, m := range readRE.FindAllStringSubmatch(user, -1) {
		cites = append(cites, "["+m[1]+"]")
		urls = append(urls, m[2])
	}
	task := "a task"
	if m := regexp.MustCompile(`Task: (.+?) —`).FindStringSubmatch(user); m != nil {
		task = m[1]
	}
	return map[string]any{
		"title":     "Findings on " + task,
		"findings":  fmt.Sprintf("Roosevelt reopened sound banks after the holiday %s. Unemployment peaked in 1932 %s [99].\nPublished: 2024-01-01\nhttps://tracker.example/x", strings.Join(cites, ""), strings.Join(cites, "")),
		"key_facts": []string{"Banks reopened in March 1933 " + strings.Join(cites, "")},
		"sources":   append(urls, "https://unread.example/never"),
		"relevance": "high",
	}
}

func (sc *script) supervisor(r *llmtest.Request) llmtest.Reply {
	if sc.supervisorIdle {
		return llmtest.Reply{Content: "I have reviewed the findings.", Usage: llmtest.Tokens(400, 20)}
	}
	call := 1
	if m := callRE.FindStringSubmatch(r.System()); m != nil {
		fmt.Sscan(m[1], &call)
	}
	rounds := 0
	for _, m := range r.Messages {
		if m.Role == llm.RoleAssistant {
			rounds++
		}
	}
	calls := func(cs ...llm.ToolCall) llmtest.Reply {
		for i := range cs {
			cs[i].ID = fmt.Sprintf("sv_%d", sc.seq.Add(1))
		}
		return llmtest.Reply{ToolCalls: cs, Usage: llmtest.Tokens(500, 80)}
	}
	tc := func(name string, args any) llm.ToolCall { return llm.ToolCall{Name: name, Arguments: mustJSON(args)} }
	switch rounds {
	case 0:
		cs := []llm.ToolCall{
			tc("write_supervisor_note", map[string]any{"note": fmt.Sprintf("Call %d: findings are solid.", call)}),
			tc("write_main_document", map[string]any{"section_title": fmt.Sprintf("Insight %d", call), "content": "Banks reopened in 1933 [1]."}),
		}
		if !sc.emptyDraft {
			cs = append(cs, tc("write_draft_report", map[string]any{"content": draftSection(call), "mode": "append"}))
		}
		return calls(cs...)
	case 1:
		if call == 1 && sc.supervisorTodo {
			return calls(tc("create_agent_todo", map[string]any{"agent_id": "agent_2", "title": "Deepen banking", "objective": "Find deposit figures", "reasoning": "superficial"}),
				tc("review_agent_progress", map[string]any{"agent_id": "agent_2"}))
		}
		return calls(tc("read_draft_report", map[string]any{}))
	}
	decision := "continue"
	switch call {
	case sc.finishOn:
		decision = "finish"
	case sc.replanOn:
		decision = "replan"
	}
	return calls(tc("make_final_decision", map[string]any{"decision": decision, "reason": "coverage check"}))
}

func draftSection(call int) string {
	return fmt.Sprintf("## Part %d\n\n", call) + strings.Repeat(fmt.Sprintf("In review %d the team confirmed that banks reopened after the 1933 holiday [1] and that recovery followed [2]. ", call), 4)
}

func finalReport(short, russian bool) map[string]any {
	para := "Roosevelt's banking policy restored confidence in 1933 [1], while unemployment fell slowly from its 1932 peak [2]; an unverified claim stays out [99]. "
	if russian {
		para = "Политика Рузвельта восстановила доверие к банкам в 1933 году [1], а безработица медленно снижалась после пика 1932 года [2]. "
	}
	n := 6
	if short {
		n = 1
	}
	body := strings.Repeat(para, n)
	title := "The economy of the 1930s"
	secTitles := []string{"Banking", "Unemployment", "Recovery"}
	if russian {
		title = "Экономика 1930-х годов"
		secTitles = []string{"Банки", "Безработица", "Восстановление"}
	}
	var secs []any
	for _, st := range secTitles {
		secs = append(secs, map[string]any{"title": st, "content": "## Inner heading\n\n" + body})
	}
	return map[string]any{"title": title, "executive_summary": body, "sections": secs, "conclusion": body,
		"sources": []string{"https://unread.example/never"}}
}

func firstLineAfter(s, after string) string {
	if _, rest, ok := strings.Cut(s, after); ok {
		s = rest
	}
	s = strings.TrimSpace(s)
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// env is a complete test world: the scripted model, SearXNG, the site,
// and the mode wired to them with the real deep_search pipeline.
type env struct {
	sc   *script
	site *sovatest.Site
	sx   *sovatest.SearXNG
	cfg  Config
	// initial turns the initial deep search on.
	initial bool
}

func newEnv(t *testing.T) *env {
	arts := sovatest.DefaultArticles()
	site := sovatest.NewSite(t, arts)
	return &env{
		sc: newScript(t), site: site, sx: sovatest.NewSearXNG(t, site, arts),
		cfg: Config{
			NumAgents: 4, MaxSupervisorCalls: 6, AgentMaxSteps: 5, SupervisorMaxIterations: 10, MaxIterations: 15,
			RunDeepSearchFirst: true, ClarifyingQuestions: true, MaxResults: 4, ScrapeMaxURLs: 2, Concurrency: 4,
		},
		initial: true,
	}
}

func (e *env) mode(t *testing.T) *Research {
	c, err := llm.New(llm.Config{
		BaseURL: e.sc.model.URL(), APIKey: "k", Model: "main-model", FastModel: "fast-model",
		MaxRetries: 1, MaxStructuredRetries: 1, BackoffBase: time.Millisecond, BackoffMax: 5 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	chain := search.NewChain(search.NewSearXNG(e.sx.URL, nil))
	reader := fetch.New(fetch.Config{AllowHosts: []string{"127.0.0.1"}})
	var searcher Searcher
	if e.initial {
		searcher = searchmode.New(searchmode.Config{
			ID: "deep_search", Queries: 2, Iterations: 2, MaxResults: 4, RerankTopK: 3, ScrapeTopN: 2,
			Concurrency: 4, AnswerWords: "800-1200", HistoryLimit: 10,
		}, c, c.Fast(), chain, reader)
	}
	return New(e.cfg, c, c.Fast(), chain, reader, searcher)
}

// run runs the mode to its result, failing the test on error.
func (e *env) run(t *testing.T, in mode.Input) (*mode.Result, *eventtest.Recorder) {
	t.Helper()
	var rec eventtest.Recorder
	if in.Now.IsZero() {
		in.Now = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := e.mode(t).Run(ctx, in, &rec)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return res, &rec
}

// dataEvents returns the values of the data events with this name.
func dataEvents[T any](t *testing.T, rec *eventtest.Recorder, name string) []T {
	t.Helper()
	var out []T
	for _, e := range rec.Filter(event.TypeData) {
		if e.Data.Name != name {
			continue
		}
		var v T
		if err := json.Unmarshal(e.Data.Value, &v); err != nil {
			t.Fatalf("data-%s value %s: %v", name, e.Data.Value, err)
		}
		out = append(out, v)
	}
	return out
}
