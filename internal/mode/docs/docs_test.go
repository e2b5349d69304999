package docs

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/event/eventtest"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/search"
	"github.com/sova-ai/sova/internal/sovatest"
	"github.com/sova-ai/sova/internal/spaces"
	"github.com/sova-ai/sova/internal/tools"
)

const docsUser = "local" // the user of sovatest.Projects

// docsEnv is a real document space (SQLite and the Bleve index in a
// temporary directory), a scripted model and a fake SearXNG.
type docsEnv struct {
	spaces *spaces.Service
	space  *sova.Space
	model  *llmtest.Server
	sx     *sovatest.SearXNG
	cfg    Config
}

func newDocsEnv(t *testing.T) *docsEnv {
	t.Helper()
	svc, sp := sovatest.Projects(t)
	arts := sovatest.DefaultArticles()
	site := sovatest.NewSite(t, arts)
	return &docsEnv{
		spaces: svc, space: sp, model: llmtest.New(t), sx: sovatest.NewSearXNG(t, site, arts),
		cfg: Config{MaxDocQueries: 3, MaxWebQueries: 2, DocResults: 5, WebResults: 3, MaxSteps: 10, Temperature: 0.6, HistoryLimit: 10, UserName: "Anna"},
	}
}

func (e *docsEnv) mode(t *testing.T, docs tools.DocumentSearcher) *Mode {
	t.Helper()
	c, err := llm.New(llm.Config{BaseURL: e.model.URL(), APIKey: "k", Model: "main-model", FastModel: "fast-model", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	if docs == nil {
		docs = e.spaces
	}
	return New(e.cfg, c, c.Fast(), docs, search.NewChain(search.NewSearXNG(e.sx.URL, nil)))
}

func (e *docsEnv) input(q string) mode.Input {
	return mode.Input{UserID: docsUser, Question: q, Timezone: "Europe/Moscow", Now: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)}
}

func toolCall(id, name, args string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: name, Arguments: args}
}

func TestDocsAnswersFromDocuments(t *testing.T) {
	e := newDocsEnv(t)
	e.model.Enqueue(
		llmtest.Reply{ToolCalls: []llm.ToolCall{toolCall("c1", "search_documents", `{"query":"Vostok budget"}`)}, Usage: llmtest.Tokens(100, 10)},
		llmtest.Reply{Content: "The Vostok budget is five million roubles [1], approved in March [1]. Unsupported [4].", Usage: llmtest.Tokens(300, 30)},
	)
	var rec eventtest.Recorder
	res, err := e.mode(t, nil).Run(t.Context(), e.input("What is the Vostok budget?"), &rec)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "The Vostok budget is five million roubles [1], approved in March [1]. Unsupported ." || rec.Text() != res.Text {
		t.Errorf("text = %q (streamed %q)", res.Text, rec.Text())
	}
	if len(res.Sources) != 1 || res.Sources[0].Kind != sova.SourceDocument || res.Sources[0].Number != 1 ||
		!strings.HasPrefix(res.Sources[0].URL, "sova://spaces/"+e.space.ID+"/documents/") || !strings.Contains(res.Sources[0].Title, "vostok.md") {
		t.Errorf("sources = %+v", res.Sources)
	}

	// The prompts of seed 003.
	first := e.model.Requests()[0]
	sys, user := first.System(), first.LastUser()
	for _, want := range []string{"Search strategy", "search_documents", "Cite each factual sentence", "Answer in English"} {
		if !strings.Contains(sys, want) {
			t.Errorf("system prompt lacks %q:\n%s", want, sys)
		}
	}
	for _, want := range []string{"Name: Anna", "Time zone: Europe/Moscow", `"Projects": 2 files — project plans and budgets`, "Question: What is the Vostok budget?"} {
		if !strings.Contains(user, want) {
			t.Errorf("user prompt lacks %q:\n%s", want, user)
		}
	}
	if first.Temperature == nil || *first.Temperature != 0.6 || !first.HasTool("search_documents") || first.HasTool("web_search") {
		t.Errorf("request: temperature %v, tools %v", first.Temperature, first.Tools)
	}

	// The tool result the model saw is JSON with numbered passages.
	var toolMsg llm.Message
	for _, m := range e.model.Requests()[1].Messages {
		if m.Role == llm.RoleTool {
			toolMsg = m
		}
	}
	// It is marked as data, and the system prompt says what that means.
	const open, closing = "<untrusted-data source=\"search_documents\">\n", "\n</untrusted-data>"
	if !strings.HasPrefix(toolMsg.Content, open) || !strings.HasSuffix(toolMsg.Content, closing) || !strings.Contains(first.System(), agent.UntrustedRule) {
		t.Errorf("tool result not marked as data: %s\nsystem: %s", toolMsg.Content, first.System())
	}
	var out tools.ResultList
	inner := strings.TrimSuffix(strings.TrimPrefix(toolMsg.Content, open), closing)
	if err := json.Unmarshal([]byte(inner), &out); err != nil || len(out.Results) == 0 ||
		out.Results[0].Number != 1 || out.Results[0].Document != "vostok.md" || !strings.Contains(out.Results[0].Content, "five million") {
		t.Errorf("tool result = %s (%v)", toolMsg.Content, err)
	}

	// Tool events, with unique IDs.
	calls, results := rec.Filter(event.TypeToolCall), rec.Filter(event.TypeToolResult)
	if len(calls) != 1 || len(results) != 1 || calls[0].ToolCall.ID != results[0].ToolResult.ID ||
		calls[0].ToolCall.Name != "search_documents" || !strings.Contains(calls[0].ToolCall.Title, "Vostok budget") {
		t.Errorf("tool events: %+v / %+v", calls, results)
	}

	// What is stored: steps, calls, results and the sources parsed from them.
	var steps docsSteps
	if err := json.Unmarshal(res.Steps, &steps); err != nil {
		t.Fatal(err)
	}
	if len(steps.Steps) != 2 || len(steps.ToolCalls) != 1 || len(steps.ToolResults) != 1 || len(steps.Sources) < 1 ||
		steps.Sources[0].Kind != sova.SourceDocument || steps.Usage.TotalTokens != 440 || len(steps.Spaces) != 1 {
		t.Errorf("steps = %+v", steps)
	}
}

func TestDocsWithWebSearchCitesBothKinds(t *testing.T) {
	e := newDocsEnv(t)
	e.model.Handle(func(r *llmtest.Request) llmtest.Reply {
		if r.Index == 0 {
			return llmtest.Calls(
				toolCall("a", "search_documents", `{"query":"Vostok budget"}`),
				toolCall("b", "web_search", `{"query":"economy 1930s"}`),
			)
		}
		// Results are numbered across the tools, in the order they come
		// back (the two calls run in parallel).
		return llmtest.Text("From the documents and the web [1][2][3][4][5][6].")
	})
	web := true
	in := e.input("Compare the budget with the 1930s")
	in.WebSearch = &web
	res, err := e.mode(t, nil).Run(t.Context(), in, event.Discard)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, s := range res.Sources {
		kinds[s.Kind]++
	}
	if len(res.Sources) < 4 || kinds[sova.SourceDocument] == 0 || kinds[sova.SourceWeb] != 3 {
		t.Errorf("sources = %+v", res.Sources)
	}
	// The web results are cited from their search snippets, never read:
	// they say so. Passages of documents are the text itself.
	for _, s := range res.Sources {
		if s.SnippetOnly != (s.Kind == sova.SourceWeb) {
			t.Errorf("source %d (%s, %s): snippetOnly %v", s.Number, s.Kind, s.URL, s.SnippetOnly)
		}
	}
	if q := e.sx.Queries(); len(q) != 1 || q[0] != "economy 1930s" {
		t.Errorf("web queries = %q", q)
	}
	if !e.model.Requests()[0].HasTool("web_search") {
		t.Error("web_search not offered")
	}
}

// countingSearcher counts searches and can fail them.
type countingSearcher struct {
	tools.DocumentSearcher
	n    atomic.Int32
	fail error
}

func (c *countingSearcher) Search(ctx context.Context, userID string, ids []string, q string, limit int) ([]spaces.Hit, error) {
	c.n.Add(1)
	if c.fail != nil {
		return nil, c.fail
	}
	return c.DocumentSearcher.Search(ctx, userID, ids, q, limit)
}

func TestDocsLimitsSearches(t *testing.T) {
	e := newDocsEnv(t)
	e.cfg.MaxDocQueries = 1
	e.cfg.MaxSteps = 4
	e.model.Handle(func(r *llmtest.Request) llmtest.Reply {
		if r.ToolChoice == "none" {
			return llmtest.Text("Done.")
		}
		return llmtest.Calls(toolCall("c", "search_documents", `{"query":"budget"}`))
	})
	cs := &countingSearcher{DocumentSearcher: e.spaces}
	res, err := e.mode(t, cs).Run(t.Context(), e.input("budget?"), event.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cs.n.Load() != 1 {
		t.Errorf("searched %d times, want 1 (SOVA_DOCS_MAX_DOC_QUERIES)", cs.n.Load())
	}
	if e.model.Count() != 4 || res.Text != "Done." {
		t.Errorf("%d model calls, text %q; want 4 (SOVA_DOCS_MAX_STEPS) ending without tools", e.model.Count(), res.Text)
	}
	last := e.model.Last()
	if m := last.Messages[len(last.Messages)-1]; m.Role != llm.RoleTool || !strings.Contains(m.Content, "limit of 1 document searches") {
		t.Errorf("the model was not told about the limit: %+v", m)
	}
}

// TestDocsSurvivesFailingTools: a tool that fails returns text that is not
// JSON; the run still answers and records the failure.
func TestDocsSurvivesFailingTools(t *testing.T) {
	e := newDocsEnv(t)
	e.model.Enqueue(
		llmtest.Calls(toolCall("c1", "search_documents", `{"query":"budget"}`), toolCall("c2", "search_documents", `{"query":{"text":7}}`)),
		llmtest.Text("not json"), // the repair of c2's arguments fails
		llmtest.Text("I could not search the documents."),
	)
	cs := &countingSearcher{DocumentSearcher: e.spaces, fail: errors.New("index unavailable")}
	res, err := e.mode(t, cs).Run(t.Context(), e.input("budget?"), event.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var steps docsSteps
	if err := json.Unmarshal(res.Steps, &steps); err != nil {
		t.Fatal(err)
	}
	if len(steps.ToolResults) != 2 || steps.ToolResults[0].Error != "index unavailable" || !strings.Contains(steps.ToolResults[1].Error, "invalid arguments") {
		t.Errorf("tool results = %+v", steps.ToolResults)
	}
	// Nothing was found: the answer says so first.
	note := mode.UnverifiedNote(mode.LanguageOf(e.input("budget?")), false)
	if len(steps.Sources) != 0 || res.Text != note+"I could not search the documents." {
		t.Errorf("sources %+v, text %q", steps.Sources, res.Text)
	}
}

func TestDocsWithoutSpacesOrWeb(t *testing.T) {
	e := newDocsEnv(t)
	if err := e.spaces.DeleteSpace(t.Context(), docsUser, e.space.ID); err != nil {
		t.Fatal(err)
	}
	_, err := e.mode(t, nil).Run(t.Context(), e.input("anything?"), event.Discard)
	if err == nil || !strings.Contains(err.Error(), "no document spaces") || e.model.Count() != 0 {
		t.Errorf("err = %v after %d model calls", err, e.model.Count())
	}
	in := e.input("anything?")
	in.Spaces = []string{"not-a-space"}
	if _, err := e.mode(t, nil).Run(t.Context(), in, event.Discard); err == nil {
		t.Error("an unknown space was accepted")
	}
}

func TestParseSources(t *testing.T) {
	good := `{"query":"q","results":[{"title":"T","content":"C","source":"sova://spaces/s/documents/d#chunk-1","query":"q","kind":"document"}]}`
	tests := []struct {
		name   string
		output string
		want   int
	}{
		{"results", good, 1},
		{"wrapped in output", `{"output":` + good + `}`, 1},
		{"JSON in a string", mustJSONString(good), 1},
		{"output holding a string", `{"output":` + mustJSONString(good) + `}`, 1},
		{"url instead of source", `{"results":[{"title":"T","url":"https://x.example"}]}`, 1},
		{"not JSON", `Error: index unavailable`, 0},
		{"truncated JSON", good[:40], 0},
		{"results not an array", `{"results":{"title":"T"}}`, 0},
		{"entries not objects", `{"results":["a",1,null]}`, 0},
		{"empty entries skipped", `{"results":[{},{"title":"T"}]}`, 1},
		{"wrong field types", `{"results":[{"title":5,"content":["x"],"source":"s"}]}`, 1},
		{"array at the top", `[1,2,3]`, 0},
		{"empty", ``, 0},
		{"deep nesting stops", strings.Repeat(`{"output":`, 10) + good + strings.Repeat(`}`, 10), 0},
	}
	for _, tc := range tests {
		got := ParseSources([]string{tc.output})
		if len(got) != tc.want {
			t.Errorf("%s: %d sources %+v, want %d", tc.name, len(got), got, tc.want)
		}
	}
	all := ParseSources([]string{good, "garbage", good})
	if len(all) != 2 || all[0].Source != "sova://spaces/s/documents/d#chunk-1" || all[0].Title != "T" || all[0].Query != "q" {
		t.Errorf("mixed = %+v", all)
	}
	if got := ParseSources(nil); got == nil {
		t.Error("nil result")
	}
}

func mustJSONString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
