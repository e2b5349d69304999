package group

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/event/eventtest"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/provider/academic"
	"github.com/sova-ai/sova/internal/provider/xai"
	"github.com/sova-ai/sova/internal/sandbox"
	"github.com/sova-ai/sova/internal/sovatest"
	"github.com/sova-ai/sova/internal/tools"
)

func spec(t *testing.T, id string) Spec {
	t.Helper()
	i := slices.IndexFunc(Groups, func(s Spec) bool { return s.ID == id })
	if i < 0 {
		t.Fatalf("no group %q", id)
	}
	return Groups[i]
}

type testEnv struct {
	model *llmtest.Server
	prov  *sovatest.Providers
	cfg   Config
}

func newTestEnv(t *testing.T) *testEnv {
	prov := sovatest.NewProviders(t)
	return &testEnv{model: llmtest.New(t), prov: prov, cfg: Config{
		Providers: tools.Providers{
			Academic: academic.New(academic.Config{OpenAlexURL: prov.URL + sovatest.OpenAlex, ArxivURL: prov.URL + sovatest.Arxiv, ArxivInterval: -1, RetryBackoff: -1}),
		},
		Temperature: 0.3, HistoryLimit: 4,
		Now: func() time.Time { return time.Date(2026, 5, 4, 9, 0, 0, 0, time.UTC) },
	}}
}

func (e *testEnv) mode(t *testing.T, id string) *Mode {
	t.Helper()
	c, err := llm.New(llm.Config{BaseURL: e.model.URL(), APIKey: "k", Model: "main-model", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return New(spec(t, id), e.cfg, c, nil)
}

func input(q string) mode.Input {
	return mode.Input{UserID: "u", Question: q, Timezone: "Europe/Berlin", Now: time.Date(2026, 5, 4, 9, 0, 0, 0, time.UTC),
		History: []llm.Message{{Role: llm.RoleUser, Content: "earlier"}, {Role: llm.RoleAssistant, Content: "earlier answer"}}}
}

// One round of tools, then the answer (seed 000 §9.3): the second model
// call may not call tools, and calls it makes anyway are not run.
func TestOneToolRoundThenCitedAnswer(t *testing.T) {
	e := newTestEnv(t)
	e.model.Enqueue(
		llmtest.Calls(llm.ToolCall{ID: "a", Name: "academic_search", Arguments: `{"queries":["attention"]}`},
			llm.ToolCall{ID: "b", Name: "datetime", Arguments: `{}`}),
		llmtest.Reply{Content: "Transformers rely on attention [2], as surveyed [1]; made up [7].",
			ToolCalls: []llm.ToolCall{{ID: "c", Name: "academic_search", Arguments: `{"queries":["again"]}`}}},
	)
	var rec eventtest.Recorder
	res, err := e.mode(t, "academic").Run(t.Context(), input("How do transformers use attention?"), &rec)
	if err != nil {
		t.Fatal(err)
	}
	reqs := e.model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls", len(reqs))
	}
	if reqs[0].ToolChoice == "none" || !reqs[0].HasTool("academic_search") || !reqs[0].HasTool("datetime") || reqs[0].HasTool("code_interpreter") {
		t.Errorf("first call: choice %q tools %v", reqs[0].ToolChoice, reqs[0].Tools)
	}
	if reqs[1].ToolChoice != "none" {
		t.Errorf("second call may call tools: %q", reqs[1].ToolChoice)
	}
	if n := len(e.prov.Requests(sovatest.OpenAlex)); n != 1 {
		t.Errorf("OpenAlex asked %d times; the answer's tool call must not run", n)
	}
	// Prompt: the group's instructions, the shared rules, history, question.
	sys := reqs[0].System()
	for _, want := range []string{"academic research assistant", "Tools: academic_search, datetime.", "Cite each factual sentence",
		"Current date: Monday, 4 May 2026 (time zone: Europe/Berlin)", "Answer in English"} {
		if !strings.Contains(sys, want) {
			t.Errorf("system prompt lacks %q:\n%s", want, sys)
		}
	}
	if len(reqs[0].Messages) != 4 || reqs[0].LastUser() != "How do transformers use attention?" {
		t.Errorf("messages: %+v", reqs[0].Messages)
	}
	// The answer's citations are checked and renumbered by first use.
	if res.Text != "Transformers rely on attention [1], as surveyed [2]; made up ." || rec.Text() != res.Text {
		t.Errorf("text %q (streamed %q)", res.Text, rec.Text())
	}
	if len(res.Sources) != 2 || res.Sources[0].Number != 1 || res.Sources[0].URL != "https://arxiv.org/abs/1706.03762" {
		t.Errorf("sources %+v", res.Sources)
	}
	if len(rec.Filter(event.TypeToolCall)) != 2 || len(rec.Filter(event.TypeToolResult)) != 2 || len(rec.Filter(event.TypeQuery)) != 2 {
		t.Errorf("events: %d calls, %d results, %d queries", len(rec.Filter(event.TypeToolCall)), len(rec.Filter(event.TypeToolResult)), len(rec.Filter(event.TypeQuery)))
	}
	var r record
	if err := json.Unmarshal(res.Steps, &r); err != nil || r.Group != "academic" || len(r.ToolCalls) != 2 || len(r.Steps) != 2 {
		t.Errorf("stored steps %s (%v)", res.Steps, err)
	}
}

// Without XAI_API_KEY the x group has no tool: the run says so and the
// model is told which setting enables it.
func TestWithdrawnTool(t *testing.T) {
	e := newTestEnv(t)
	e.model.Enqueue(llmtest.Text("X search is off here; set XAI_API_KEY."))
	m := e.mode(t, "x")
	var rec eventtest.Recorder
	res, err := m.Run(t.Context(), input("What do people say about Go on X?"), &rec)
	if err != nil {
		t.Fatal(err)
	}
	st := rec.Filter(event.TypeStatus)
	if len(st) != 1 || st[0].Status.Stage != "tools" || st[0].Status.Message != "x_search is not available: needs XAI_API_KEY" ||
		!strings.HasPrefix(st[0].Status.Detail, "XAI_API_KEY") {
		t.Errorf("status events: %+v", st)
	}
	req := e.model.Last()
	if len(req.Tools) != 0 || !strings.Contains(req.System(), "- x_search: needs XAI_API_KEY. Setting XAI_API_KEY on the server enables it.") {
		t.Errorf("request: tools %v\n%s", req.Tools, req.System())
	}
	var r record
	_ = json.Unmarshal(res.Steps, &r)
	if len(r.Withdrawn) != 1 || r.Withdrawn[0].Name != "x_search" {
		t.Errorf("stored: %s", res.Steps)
	}
	if ts := m.Tools(); len(ts) != 1 || ts[0].Available {
		t.Errorf("Tools() = %+v", ts)
	}

	// With a client the tool is offered.
	e.cfg.Providers.X = xai.New(xai.Config{APIKey: "k", URL: e.prov.URL + sovatest.XAI})
	if ts := e.mode(t, "x").Tools(); len(ts) != 1 || !ts[0].Available || ts[0].Provider != "xai" {
		t.Errorf("Tools() with a key = %+v", ts)
	}
}

// The table: every tool a group lists is built here; the groups the issue
// asks for are there.
func TestTable(t *testing.T) {
	var ids []string
	for _, g := range Groups {
		ids = append(ids, g.ID)
		if g.Description == "" || g.Instructions == "" || g.Working == "" || len(g.Tools) == 0 {
			t.Errorf("group %s incomplete", g.ID)
		}
		for _, name := range g.Tools {
			if _, ok := builders[name]; !ok {
				t.Errorf("group %s lists %s, which is not built", g.ID, name)
			}
		}
	}
	if !slices.Equal(ids, []string{"web", "academic", "youtube", "reddit", "code", "x", "stocks", "crypto", "memory", "connectors"}) || !Known(Fallback) || Known("chat") {
		t.Errorf("groups %v", ids)
	}
	// web reports every tool of the seed's list; without keys the flight
	// and film tools are withdrawn, naming the key that enables them.
	m := New(spec(t, "web"), Config{Providers: tools.Providers{}}, nil, nil)
	var names []string
	for _, s := range m.Tools() {
		names = append(names, s.Name)
		if (s.Name == "track_flight" || s.Name == "movie_or_tv_search") && (s.Available || !strings.HasPrefix(s.Reason, "needs ")) {
			t.Errorf("%s without a key: %+v", s.Name, s)
		}
	}
	if !slices.Equal(names, []string{"web_search", "code_interpreter", "get_weather_data", "retrieve", "text_translate", "nearby_places_search",
		"track_flight", "movie_or_tv_search", "datetime"}) {
		t.Errorf("web tools %v", names)
	}
}

// code_interpreter runs the model's Python in the sandbox, in the web and
// academic groups.
func TestCodeInterpreter(t *testing.T) {
	sb, err := sandbox.New(t.Context(), sandbox.Config{})
	if errors.Is(err, sandbox.ErrUnavailable) {
		t.Skipf("no sandbox here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"web", "academic"} {
		t.Run(id, func(t *testing.T) {
			e := newTestEnv(t)
			e.cfg.Providers.Sandbox = sb
			e.model.Enqueue(
				llmtest.Calls(llm.ToolCall{ID: "a", Name: "code_interpreter", Arguments: `{"title":"Multiply","code":"print(6*7)"}`}),
				llmtest.Text("It is 42."),
			)
			m := e.mode(t, id)
			if ts := m.Tools(); !slices.ContainsFunc(ts, func(s mode.ToolStatus) bool { return s.Name == "code_interpreter" && s.Available }) {
				t.Fatalf("Tools() = %+v", ts)
			}
			var rec eventtest.Recorder
			res, err := m.Run(t.Context(), input("What is 6 times 7?"), &rec)
			if err != nil {
				t.Fatal(err)
			}
			results := rec.Filter(event.TypeToolResult)
			if len(results) != 1 {
				t.Fatalf("%d tool results", len(results))
			}
			var out tools.CodeResult
			if err := json.Unmarshal(results[0].ToolResult.Output, &out); err != nil || out.Status != "completed" || strings.TrimSpace(out.Result.Stdout) != "42" {
				t.Errorf("code result %+v (%v)", out, err)
			}
			var toolMsg string
			for _, m := range e.model.Requests()[1].Messages {
				if m.Role == llm.RoleTool {
					toolMsg = m.Content
				}
			}
			if !strings.Contains(toolMsg, `"output":"42"`) || res.Text != "It is 42." {
				t.Errorf("the model read %q; answer %q", toolMsg, res.Text)
			}
		})
	}
}

// Without a sandbox code_interpreter is withdrawn with the reason.
func TestCodeInterpreterWithdrawn(t *testing.T) {
	e := newTestEnv(t)
	e.cfg.Providers.SandboxErr = &sandbox.UnavailableError{Reason: "bubblewrap is not installed"}
	e.model.Enqueue(llmtest.Text("I cannot run code here."))
	var rec eventtest.Recorder
	if _, err := e.mode(t, "academic").Run(t.Context(), input("What is 6 times 7?"), &rec); err != nil {
		t.Fatal(err)
	}
	if e.model.Requests()[0].HasTool("code_interpreter") {
		t.Error("code_interpreter offered without a sandbox")
	}
	i := slices.IndexFunc(e.mode(t, "academic").Tools(), func(s mode.ToolStatus) bool { return s.Name == "code_interpreter" })
	if i < 0 {
		t.Fatal("code_interpreter not reported")
	}
	if st := e.mode(t, "academic").Tools()[i]; st.Available || !strings.Contains(st.Reason, "bubblewrap is not installed") || st.Settings[0] != "SOVA_SANDBOX_ENABLED" {
		t.Errorf("status %+v", st)
	}
	if !strings.Contains(e.model.Requests()[0].System(), "code_interpreter: the code sandbox cannot run on this server") {
		t.Errorf("system prompt: %s", e.model.Requests()[0].System())
	}
}
