package extreme

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/event/eventtest"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/search"
	"github.com/sova-ai/sova/internal/sovatest"
)

// TestExtremeReadsEveryResult: with the defaults, every kept result of a
// search is read (seed 000 §2.2), not only the first few, and the agent
// is asked for one tool call per reply (seed 000 §7.4).
func TestExtremeReadsEveryResult(t *testing.T) {
	arts := sovatest.DefaultArticles()
	site := sovatest.NewSite(t, arts)
	e := newEnv(t)
	e.sx = sovatest.NewSearXNG(t, site, arts)
	e.prov.Search = search.NewChain(search.NewSearXNG(e.sx.URL, nil))
	c, err := llm.New(llm.Config{BaseURL: e.model.URL(), APIKey: "k", Model: "main-model", FastModel: "fast-model", MaxRetries: -1, BackoffBase: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	m := New(Config{Providers: e.prov, Results: len(arts)}, c, c.Fast())
	var rec eventtest.Recorder
	if _, err := m.Run(t.Context(), mode.Input{Question: "Compare GDP growth decade by decade since the 1930s", RunID: "r", Now: time.Now()}, &rec); err != nil {
		t.Fatal(err)
	}
	for _, a := range arts {
		if site.Hits("/a/"+a.Slug) == 0 {
			t.Errorf("%s was not read", a.Slug)
		}
	}
	agentAsks := 0
	for _, r := range e.model.Requests() {
		if r.HasTool(WebSearchName) {
			agentAsks++
			if v, ok := r.Raw["parallel_tool_calls"]; !ok || v != false {
				t.Errorf("request %d: parallel_tool_calls = %v (sent %v), want false", r.Index, v, ok)
			}
		}
	}
	if agentAsks == 0 {
		t.Fatal("the agent was never offered webSearch")
	}
}

// TestWebSearchDomainFilters: includeDomains takes host names only (a
// phrase is left out, the model told), and a filter that empties the
// search is dropped and the search run again (the model told).
func TestWebSearchDomainFilters(t *testing.T) {
	tests := []struct {
		name      string
		domains   string
		wantNote  string
		wantTries int
	}{
		{name: "a phrase", domains: `["state of the union"]`, wantNote: `\"state of the union\"] is not one and was left out`, wantTries: 1},
		{name: "a filter that empties the search", domains: `["nowhere.example"]`, wantNote: "no result came from nowhere.example", wantTries: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			var (
				mu     sync.Mutex
				result string
			)
			e.model.Handle(func(r *llmtest.Request) llmtest.Reply {
				if strings.Contains(r.System(), "You are Sova's research agent") && r.ToolChoice != "none" {
					for _, m := range r.Messages {
						if m.Role == llm.RoleTool {
							mu.Lock()
							result = m.Content
							mu.Unlock()
							return llmtest.Text("Done.")
						}
					}
					return llmtest.Calls(llm.ToolCall{ID: "c1", Name: WebSearchName,
						Arguments: `{"query":"state of the union economy 1936","includeDomains":` + tc.domains + `}`})
				}
				return e.model.Respond(r)
			})
			if _, _, err := e.run(t, mode.Input{Question: "What did the 1936 State of the Union say about the economy?"}); err != nil {
				t.Fatal(err)
			}
			qs := e.sx.Queries()
			if len(qs) != tc.wantTries {
				t.Errorf("searches %q, want %d", qs, tc.wantTries)
			}
			for _, q := range qs {
				if strings.Contains(q, "site:state") {
					t.Errorf("a phrase became a site filter: %q", q)
				}
			}
			if !strings.Contains(result, tc.wantNote) || !strings.Contains(result, `"url":"http`) {
				t.Errorf("tool result %q, want results and the note %q", result, tc.wantNote)
			}
		})
	}
}

// TestExtremeThatFoundNothingSaysSo: with the search down, the answer,
// its report and so its PDF start with the unverified note, the run's
// status says so, the model is told there is nothing to cite, and the
// report lists no sources.
func TestExtremeThatFoundNothingSaysSo(t *testing.T) {
	e := newEnv(t)
	e.sx.Fail.Store(503)
	ws := newMemFiles()
	res, rec, err := e.run(t, mode.Input{Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	note := mode.UnverifiedNote(mode.LanguageOf(mode.Input{Question: "Compare GDP growth"}), true)
	if !strings.HasPrefix(res.Text, note) || len(res.Sources) != 0 {
		t.Errorf("answer %q with %d sources, want the note first and no source", res.Text, len(res.Sources))
	}
	report, _ := ws.Read(t.Context(), fileReport)
	if !strings.Contains(report, note) || strings.Contains(report, "## Sources") {
		t.Errorf("report %q, want the note and no sources", report)
	}
	unverified := false
	for _, ev := range rec.Filter(event.TypeStatus) {
		unverified = unverified || ev.Status.Stage == mode.StageUnverified
	}
	if !unverified {
		t.Error("no unverified status")
	}
	if last := e.model.Last(); !strings.Contains(last.LastUser(), "no source could be read") {
		t.Errorf("the answer's model was not told: %q", last.LastUser())
	}
}
