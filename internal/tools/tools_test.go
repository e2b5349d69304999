package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/event/eventtest"
	"github.com/sova-ai/sova/internal/fetch"
	"github.com/sova-ai/sova/internal/search"
	"github.com/sova-ai/sova/internal/spaces"
	"github.com/sova-ai/sova/internal/tools"
)

// fakeSearch answers every query with n results on example sites, the
// first a blocked one.
type fakeSearch struct {
	mu      sync.Mutex
	queries []search.Query
	fail    error
}

func (f *fakeSearch) Search(_ context.Context, q search.Query) ([]search.Result, error) {
	f.mu.Lock()
	f.queries = append(f.queries, q)
	f.mu.Unlock()
	if f.fail != nil {
		return nil, f.fail
	}
	out := []search.Result{{URL: "https://spam.example.org/x", Title: "Spam", Snippet: "spam"}}
	for i := 1; i <= 6; i++ {
		out = append(out, search.Result{
			URL: fmt.Sprintf("https://site%d.example.com/p", i), Title: fmt.Sprintf("Page %d", i),
			Snippet: fmt.Sprintf("snippet %d about %s", i, q.Text), Provider: "fake", Favicon: "fav", Images: []string{"img"},
		})
	}
	// A duplicate of the first page, as providers return them.
	out = append(out, search.Result{URL: "https://site1.example.com/p/", Title: "Page 1 again"})
	return out, nil
}

// fakeReader serves pages by URL; unknown URLs fail.
type fakeReader struct {
	pages map[string]*fetch.Page
	hits  atomic.Int32
}

func (f *fakeReader) Fetch(_ context.Context, url string) (*fetch.Page, error) {
	f.hits.Add(1)
	if p, ok := f.pages[url]; ok {
		return p, nil
	}
	return nil, errors.New("404 not found")
}

func call(t *testing.T, tool agent.Tool, args string) agent.Output {
	t.Helper()
	out, err := tool.(agent.Runner).Run(t.Context(), json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s(%s): %v", tool.Name(), args, err)
	}
	return out
}

var block = search.BlockList{Domains: []string{"example.org"}}

func TestWebSearchJSON(t *testing.T) {
	fs := &fakeSearch{}
	run := tools.NewRun(tools.Providers{Search: fs}, nil)
	var cited []sova.Source
	cites := tools.NewCitations(func(s sova.Source) { cited = append(cited, s) })
	ws := tools.WebSearch(run, tools.WebSearchOptions{Results: 3, Calls: 2, Language: "ru", BlockList: block, Format: tools.JSON, Cite: cites})
	if ws.Name() != "web_search" || ws.(agent.Titler).Title(json.RawMessage(`{"query":"q"}`)) != "Searching the web for “q”" {
		t.Errorf("name %q", ws.Name())
	}

	out := call(t, ws, `{"query":"  tidal   power "}`)
	var list tools.ResultList
	if err := json.Unmarshal([]byte(out.Text), &list); err != nil {
		t.Fatal(err)
	}
	if list.Query != "tidal power" || len(list.Results) != 3 || out.Summary != "3 results" {
		t.Fatalf("output %s, summary %q", out.Text, out.Summary)
	}
	for i, r := range list.Results {
		if r.Number != i+1 || r.Kind != sova.SourceWeb || strings.Contains(r.Source, "example.org") || r.Query != "tidal power" || r.Content == "" {
			t.Errorf("result %d = %+v", i, r)
		}
	}
	if q := fs.queries[0]; q.Text != "tidal power" || q.MaxResults != 3 || q.Language != "ru" {
		t.Errorf("query sent = %+v", q)
	}
	// Numbers go on across calls; a source seen again keeps its number.
	out = call(t, ws, `{"query":"other"}`)
	_ = json.Unmarshal([]byte(out.Text), &list)
	if list.Results[0].Number != 1 || list.Results[2].Number != 3 {
		t.Errorf("second call numbers %+v", list.Results)
	}
	// The budget is spent: the model is told, the provider not asked.
	out = call(t, ws, `{"query":"third"}`)
	_ = json.Unmarshal([]byte(out.Text), &list)
	if len(fs.queries) != 2 || len(list.Results) != 0 || !strings.Contains(list.Note, "limit of 2 web searches") || out.Summary != list.Note {
		t.Errorf("after the budget: %d queries, output %s", len(fs.queries), out.Text)
	}
	if _, err := ws.(agent.Runner).Run(t.Context(), json.RawMessage(`{"query":" "}`)); err == nil {
		t.Error("an empty query was searched")
	}
	// The citation filter knows the numbered results.
	if got := cites.Write("See [2]."); got != "See [1]." || len(cited) != 1 || cited[0].URL != "https://site2.example.com/p" {
		t.Errorf("cited %q %+v", got, cited)
	}
	// A failing provider fails the call: the loop shows the error.
	fs.fail = errors.New("provider down")
	ws2 := tools.WebSearch(run, tools.WebSearchOptions{Format: tools.JSON})
	if _, err := ws2.(agent.Runner).Run(t.Context(), json.RawMessage(`{"query":"x"}`)); err == nil || !strings.Contains(err.Error(), "provider down") {
		t.Errorf("err = %v", err)
	}
}

func TestWebSearchText(t *testing.T) {
	fs := &fakeSearch{}
	var rec eventtest.Recorder
	run := tools.NewRun(tools.Providers{Search: fs}, &rec)
	run.SetRounds(4) // a resumed run goes on counting
	var found tools.Found
	ws := tools.WebSearch(run, tools.WebSearchOptions{Results: 2, Reformulations: 2, MaxQueryRunes: 20, BlockList: block,
		Format: tools.Text, Found: &found, ReadTool: "scrape_url", DoneTool: "done"})

	out := call(t, ws, `{"query":"first"}`)
	for _, want := range []string{`Results for "first":`, "1. Page 1\n   URL: https://site1.example.com/p\n   snippet 1 about first", "read the most promising pages with scrape_url"} {
		if !strings.Contains(out.Text, want) {
			t.Errorf("output lacks %q:\n%s", want, out.Text)
		}
	}
	if out := call(t, ws, `{"query":"first"}`); !strings.Contains(out.Text, "repeat what you have already seen") || !strings.Contains(out.Text, "(1 reformulations left)") {
		t.Errorf("repeated results: %s", out.Text)
	}
	if out := call(t, ws, `{"query":"a query far longer than twenty characters"}`); !strings.HasPrefix(out.Text, "Error: the query is too long") {
		t.Errorf("long query: %s", out.Text)
	}
	fs.fail = errors.New("provider down")
	if out := call(t, ws, `{"query":"third"}`); !strings.HasPrefix(out.Text, "The search failed: provider down") {
		t.Errorf("failed search: %s", out.Text)
	}
	fs.fail = nil
	if out := call(t, ws, `{"query":"fourth"}`); out.Text != "The limit of 2 reformulations for this task is reached. Read the most promising pages with scrape_url, or call done." {
		t.Errorf("after the limit: %s", out.Text)
	}
	if len(fs.queries) != 3 {
		t.Errorf("%d searches reached the provider, want 1 + 2 reformulations", len(fs.queries))
	}
	if got := found.All(); len(got) != 2 || got[0].Title != "Page 1" {
		t.Errorf("found %+v", got)
	}
	if r, ok := found.Lookup("https://site2.example.com/p/"); !ok || r.Title != "Page 2" {
		t.Errorf("lookup %+v %v", r, ok)
	}

	// Progress: each search a round of query events, its results sources.
	var rounds []int
	for _, ev := range rec.Filter(event.TypeQuery) {
		q := ev.Query
		if q.Status == event.QueryStarted {
			rounds = append(rounds, q.Iteration)
			continue
		}
		if q.Status == event.QueryCompleted && (*q.ResultsCount != 2 || *q.ImagesCount != 2 || q.Provider != "fake") {
			t.Errorf("completed query %+v", q)
		}
	}
	if !slices.Equal(rounds, []int{5, 6, 7}) || run.Rounds() != 7 {
		t.Errorf("rounds %v (run at %d)", rounds, run.Rounds())
	}
	if n := len(rec.Filter(event.TypeSource)); n != 4 {
		t.Errorf("%d source events, want 2 per successful search", n)
	}
}

func TestRetrieve(t *testing.T) {
	reader := &fakeReader{pages: map[string]*fetch.Page{
		"https://site1.example.com/p": {Title: "One", Markdown: "Text of page one.", Chars: 17, Published: "2024-01-02"},
		"https://site2.example.com/p": {Title: "", Markdown: "Text of page two.", Chars: 17},
		"https://empty.example.com/":  {Title: "Empty", Markdown: "  "},
	}}
	var rec eventtest.Recorder
	run := tools.NewRun(tools.Providers{Search: &fakeSearch{}, Reader: reader}, &rec)
	var found tools.Found
	_ = call(t, tools.WebSearch(run, tools.WebSearchOptions{Results: 3, Format: tools.Text, Found: &found, BlockList: block}), `{"query":"q"}`)

	var read []string
	summarised := 0
	rt := tools.Retrieve(run, tools.RetrieveOptions{Name: "scrape_url", MaxURLs: 3, Concurrency: 1, BlockList: block, Found: &found,
		Summarise: func(_ context.Context, title, markdown string) (string, error) {
			summarised++
			if strings.Contains(markdown, "two") {
				return "", errors.New("model down")
			}
			return "Summary of " + title, nil
		},
		OnRead: func(p *tools.Page, summary string) { read = append(read, fmt.Sprintf("%d:%s", p.N, summary)) },
	})
	if rt.Name() != "scrape_url" {
		t.Errorf("name %q", rt.Name())
	}
	if d := rt.Schema().Properties["urls"].Description; d != "page URLs to read, at most 3" {
		t.Errorf("urls description %q", d)
	}
	out := call(t, rt, `{"urls":["https://site1.example.com/p","https://site1.example.com/p/","https://spam.example.org/x","https://site2.example.com/p","https://missing.example.com/","https://site3.example.com/p"]}`)
	parts := strings.Split(out.Text, "\n\n")
	if len(parts) != 3 || !strings.HasSuffix(out.Text, "Only the first 3 URLs were read; ask again for the others if needed.") {
		t.Fatalf("output:\n%s", out.Text)
	}
	if parts[0] != "[1] One\nURL: https://site1.example.com/p\nSummary of One" || parts[1] != "Not read https://spam.example.org/x: the site is on the block list." ||
		!strings.HasPrefix(parts[2], "[2] Page 2\nURL: https://site2.example.com/p\nText of page two.") {
		t.Errorf("parts %q", parts)
	}
	if out.Summary != "Read 2 of 3 pages" || !slices.Equal(read, []string{"1:Summary of One", "2:Text of page two."}) {
		t.Errorf("summary %q, read %v", out.Summary, read)
	}
	p, ok := run.Pages().Get(1)
	if !ok || p.Source.Published != "2024-01-02" || p.Source.Favicon != "fav" || p.Source.Title != "One" || p.Summary != "Summary of One" {
		t.Errorf("page 1 = %+v", p)
	}

	// A single URL where a list is expected; a page read before is not
	// fetched again (another agent's tool), and keeps its number.
	other := tools.Retrieve(run, tools.RetrieveOptions{Found: &found})
	if other.Name() != "retrieve" {
		t.Errorf("default name %q", other.Name())
	}
	hits := reader.hits.Load()
	out = call(t, other, `{"urls":"https://site2.example.com/p"}`)
	if reader.hits.Load() != hits || !strings.HasPrefix(out.Text, "[2] Page 2") {
		t.Errorf("read again: %d fetches, %q", reader.hits.Load()-hits, out.Text)
	}
	out = call(t, other, `{"urls":["https://missing.example.com/","https://empty.example.com/"]}`)
	if !strings.Contains(out.Text, "Could not read https://missing.example.com/: 404 not found") ||
		!strings.Contains(out.Text, "Could not read https://empty.example.com/: no readable text on the page") {
		t.Errorf("failures: %s", out.Text)
	}
	if out := call(t, other, `{"urls":[" "]}`); out.Text != "Error: give at least one URL." {
		t.Errorf("no URL: %q", out.Text)
	}

	// Each page shows as reading → read (or failed) once per run.
	states := map[string][]string{}
	for _, ev := range rec.Filter(event.TypePage) {
		states[ev.Page.URL] = append(states[ev.Page.URL], ev.Page.State)
	}
	if got := states["https://site2.example.com/p"]; !slices.Equal(got, []string{event.PageReading, event.PageRead}) {
		t.Errorf("site2 events %v", got)
	}
	if got := states["https://missing.example.com/"]; !slices.Equal(got, []string{event.PageReading, event.PageFailed}) {
		t.Errorf("missing page events %v", got)
	}
	if _, ok := states["https://spam.example.org/x"]; ok {
		t.Error("a blocked page was read")
	}
}

// docsFake is a document searcher over fixed passages.
type docsFake struct {
	n    atomic.Int32
	fail error
}

func (d *docsFake) Spaces(context.Context, string) ([]sova.Space, error) { return nil, nil }

func (d *docsFake) Search(_ context.Context, user string, ids []string, q string, limit int) ([]spaces.Hit, error) {
	d.n.Add(1)
	if d.fail != nil {
		return nil, d.fail
	}
	var out []spaces.Hit
	for _, id := range ids {
		h := spaces.Hit{URL: "sova://spaces/" + id + "/documents/d#chunk-1", Document: "plan.md", SpaceName: id}
		h.Text = "The budget of " + q + " for " + user
		out = append(out, h)
	}
	return out[:min(len(out), limit)], nil
}

func TestSearchDocuments(t *testing.T) {
	docs := &docsFake{}
	run := tools.NewRun(tools.Providers{Documents: docs}, nil)
	cites := tools.NewCitations(nil)
	sp := []sova.Space{{ID: "s1", Name: "Projects"}, {ID: "s2", Name: "Archive"}}
	sd := tools.SearchDocuments(run, tools.SearchDocumentsOptions{UserID: "ann", Spaces: sp, Results: 5, Calls: 3, Cite: cites})
	if sd.Name() != "search_documents" || !strings.Contains(sd.(agent.Titler).Title(json.RawMessage(`{"query":"budget"}`)), "budget") {
		t.Errorf("tool %s", sd.Name())
	}
	out := call(t, sd, `{"query":"budget","spaces":["archive"]}`)
	var list tools.ResultList
	_ = json.Unmarshal([]byte(out.Text), &list)
	if len(list.Results) != 1 || list.Results[0].Space != "s2" || list.Results[0].Number != 1 || list.Results[0].Kind != sova.SourceDocument ||
		list.Results[0].Content != "The budget of budget for ann" {
		t.Errorf("output %s", out.Text)
	}
	if _, err := sd.(agent.Runner).Run(t.Context(), json.RawMessage(`{"query":"x","spaces":["nope"]}`)); err == nil || !strings.Contains(err.Error(), "the spaces are: Projects, Archive") {
		t.Errorf("unknown space: %v", err)
	}
	out = call(t, sd, `{"query":"all"}`)
	_ = json.Unmarshal([]byte(out.Text), &list)
	// The passage found before keeps its number.
	if len(list.Results) != 2 || list.Results[0].Number != 2 || list.Results[1].Number != 1 {
		t.Errorf("all spaces: %s", out.Text)
	}
	out = call(t, sd, `{"query":"more"}`)
	if !strings.Contains(out.Text, "limit of 3 document searches") || docs.n.Load() != 2 {
		t.Errorf("after the budget: %s (%d searches)", out.Text, docs.n.Load())
	}
	none := tools.SearchDocuments(run, tools.SearchDocumentsOptions{})
	if out := call(t, none, `{"query":"x"}`); !strings.Contains(out.Text, "There are no document spaces.") {
		t.Errorf("no spaces: %s", out.Text)
	}
}

func TestRunWithoutProviders(t *testing.T) {
	run := tools.NewRun(tools.Providers{}, nil)
	if _, err := run.Search(t.Context(), tools.Query{Text: "x", Results: 1}); err == nil {
		t.Error("searched without a provider")
	}
	if _, err := run.Read(t.Context(), "https://a.example/", ""); err == nil {
		t.Error("read without a reader")
	}
}
