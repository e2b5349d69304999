package group

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/academic"
	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/event/eventtest"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/sovatest"
	"github.com/sova-ai/sova/internal/tools"
	"github.com/sova-ai/sova/internal/xai"
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

// The table: every tool a group lists is built here or is a named hook;
// the groups the issue asks for are there.
func TestTable(t *testing.T) {
	hooks := []string{CodeInterpreter, GetWeatherData, NearbyPlacesSearch, TrackFlight, MovieOrTVSearch}
	var ids []string
	for _, g := range Groups {
		ids = append(ids, g.ID)
		if g.Description == "" || g.Instructions == "" || g.Working == "" || len(g.Tools) == 0 {
			t.Errorf("group %s incomplete", g.ID)
		}
		for _, name := range g.Tools {
			if _, ok := builders[name]; !ok && !slices.Contains(hooks, name) {
				t.Errorf("group %s lists %s, which is neither built nor a hook", g.ID, name)
			}
		}
	}
	if !slices.Equal(ids, []string{"web", "academic", "youtube", "reddit", "code", "x"}) || !Known(Fallback) || Known("chat") {
		t.Errorf("groups %v", ids)
	}
	// Hooks are skipped quietly: web offers what this build has.
	m := New(spec(t, "web"), Config{Providers: tools.Providers{}}, nil, nil)
	var names []string
	for _, s := range m.Tools() {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, []string{"web_search", "retrieve", "text_translate", "datetime"}) {
		t.Errorf("web tools %v", names)
	}
}
