package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/event/eventtest"
	"github.com/sova-ai/sova/internal/fetch"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
	"github.com/sova-ai/sova/internal/provider/academic"
	"github.com/sova-ai/sova/internal/provider/reddit"
	"github.com/sova-ai/sova/internal/provider/xai"
	"github.com/sova-ai/sova/internal/provider/youtube"
	"github.com/sova-ai/sova/internal/search"
	"github.com/sova-ai/sova/internal/sovatest"
	"github.com/sova-ai/sova/internal/tools"
)

// groupProviders are real provider clients pointed at the fakes.
func groupProviders(p *sovatest.Providers) tools.Providers {
	return tools.Providers{
		Academic: academic.New(academic.Config{OpenAlexURL: p.URL + sovatest.OpenAlex, ArxivURL: p.URL + sovatest.Arxiv, ArxivInterval: -1, RetryBackoff: -1}),
		YouTube:  youtube.New(youtube.Config{InvidiousURL: p.URL + sovatest.Invidious, RetryBackoff: -1}),
		Reddit:   reddit.New(reddit.Config{RedditURL: p.URL + sovatest.Reddit, RetryBackoff: -1}),
		X:        xai.New(xai.Config{APIKey: "xai-key", URL: p.URL + sovatest.XAI, RetryBackoff: -1}),
	}
}

// queryEvents returns the data-query_completion events as "status query
// index/total round".
func queryEvents(rec *eventtest.Recorder) []event.Query {
	var out []event.Query
	for _, e := range rec.Filter(event.TypeQuery) {
		out = append(out, *e.Query)
	}
	return out
}

func TestAcademicSearchTool(t *testing.T) {
	prov := sovatest.NewProviders(t)
	var rec eventtest.Recorder
	run := tools.NewRun(groupProviders(prov), &rec)
	cites := tools.NewCitations(nil)
	tool := tools.AcademicSearch(run, tools.AcademicOptions{Cite: cites, SummaryRunes: 80})
	if tool.Name() != "academic_search" {
		t.Fatal(tool.Name())
	}
	// The schema bounds the queries to 1–5.
	b, _ := json.Marshal(tool.Schema())
	if !strings.Contains(string(b), `"maxItems":5`) || !strings.Contains(string(b), `"minItems":1`) {
		t.Errorf("schema: %s", b)
	}
	out := call(t, tool, `{"queries":["transformers","attention"],"maxResults":[2]}`)
	var res tools.AcademicResult
	if err := json.Unmarshal([]byte(out.Text), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Searches) != 2 || len(res.Searches[0].Results) != 2 || len(res.Searches[1].Results) < 3 {
		t.Fatalf("searches: %s", out.Text)
	}
	// Numbers are shared across queries: the same paper keeps its number.
	first := res.Searches[0].Results[0]
	if first.Number != 1 || first.URL == "" || len([]rune(first.Summary)) > 81 {
		t.Errorf("first paper: %+v", first)
	}
	for _, p := range res.Searches[1].Results {
		if p.URL == first.URL && p.Number != 1 {
			t.Errorf("paper renumbered: %+v", p)
		}
	}
	if !strings.HasSuffix(out.Summary, "for 2 queries") {
		t.Errorf("summary %q", out.Summary)
	}
	// Two requests per query (OpenAlex and arXiv), the limits passed on.
	oa := prov.Requests(sovatest.OpenAlex)
	if len(oa) != 2 || len(prov.Requests(sovatest.Arxiv)) != 2 {
		t.Errorf("requests: %d OpenAlex, %d arXiv", len(oa), len(prov.Requests(sovatest.Arxiv)))
	}
	// Each query started and completed in one round of two.
	qs := queryEvents(&rec)
	if len(qs) != 4 {
		t.Fatalf("query events: %+v", qs)
	}
	for _, q := range qs {
		if q.Total != 2 || q.Iteration != 1 || (q.Status == "completed") != (q.ResultsCount != nil) {
			t.Errorf("query event %+v", q)
		}
	}

	// Every query failing fails the call.
	prov.Fail(sovatest.OpenAlex, sovatest.ProviderReply{Status: 500})
	prov.Fail(sovatest.Arxiv, sovatest.ProviderReply{Status: 500})
	if _, err := tool.(agent.Runner).Run(t.Context(), json.RawMessage(`{"queries":["x"]}`)); err == nil || !strings.Contains(err.Error(), "HTTP 500") {
		t.Errorf("err = %v", err)
	}
	if _, err := tools.AcademicSearch(tools.NewRun(tools.Providers{}, nil), tools.AcademicOptions{}).(agent.Runner).Run(t.Context(), json.RawMessage(`{"queries":["x"]}`)); err == nil {
		t.Error("no provider, no error")
	}
}

func TestYouTubeSearchTool(t *testing.T) {
	prov := sovatest.NewProviders(t)
	var rec eventtest.Recorder
	cites := tools.NewCitations(nil)
	tool := tools.YouTubeSearch(tools.NewRun(groupProviders(prov), &rec), tools.YouTubeOptions{Cite: cites, Language: "en", Results: 5})
	out := call(t, tool, `{"query":"  go   concurrency "}`)
	// The model reads numbered videos with timestamped transcripts.
	for _, want := range []string{"[1] Google I/O 2012 - Go Concurrency Patterns — Google for Developers, 2012-07-02, 51:27",
		"ID: f6kdp27TYZs", "URL: https://www.youtube.com/watch?v=f6kdp27TYZs", "Transcript:\n[00:00] Hello, I'm Rob Pike.", "[01:05] Don't communicate", "[2] "} {
		if !strings.Contains(out.Text, want) {
			t.Errorf("model text lacks %q:\n%s", want, out.Text)
		}
	}
	// The UI gets the videos with each segment's link.
	var res tools.YouTubeResult
	if err := json.Unmarshal(out.Data, &res); err != nil {
		t.Fatal(err)
	}
	if res.Query != "go concurrency" || len(res.Videos) != 2 || res.Videos[0].Number != 1 ||
		res.Videos[0].Transcript[1].URL != "https://www.youtube.com/watch?v=f6kdp27TYZs&t=65s" || out.Summary != "2 videos" {
		t.Errorf("data: %s", out.Data)
	}
	if r := prov.Requests(sovatest.Invidious)[0]; r.Query.Get("q") != "go concurrency" {
		t.Errorf("search request %+v", r)
	}
	if qs := queryEvents(&rec); len(qs) != 2 || qs[1].Status != "completed" || *qs[1].ResultsCount != 2 {
		t.Errorf("query events %+v", qs)
	}
}

func TestRedditSearchTool(t *testing.T) {
	prov := sovatest.NewProviders(t)
	tool := tools.RedditSearch(tools.NewRun(groupProviders(prov), nil), tools.RedditOptions{Cite: tools.NewCitations(nil)})
	b, _ := json.Marshal(tool.Schema())
	if !strings.Contains(string(b), `"enum":["day","week","month","year","all"]`) {
		t.Errorf("schema: %s", b)
	}
	out := call(t, tool, `{"queries":["best orm","https://www.reddit.com/r/golang/comments/1d2k7fz/x/"],"timeRange":["year"]}`)
	var res tools.RedditResult
	if err := json.Unmarshal([]byte(out.Text), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Searches) != 2 || res.Searches[0].TimeRange != "year" || res.Searches[1].TimeRange != "week" {
		t.Fatalf("searches: %s", out.Text)
	}
	// The post URL read the post with its comments; it keeps the number
	// it got in the first search.
	post := res.Searches[1].Results[0]
	if len(post.Comments) == 0 || !post.IsRedditPost || post.Number != res.Searches[0].Results[0].Number {
		t.Errorf("post: %+v", post)
	}
	paths := []string{}
	for _, r := range prov.Requests(sovatest.Reddit) {
		paths = append(paths, r.Path)
	}
	slices.Sort(paths)
	if !slices.Equal(paths, []string{"/comments/1d2k7fz.json", "/search.json"}) {
		t.Errorf("requests: %v", paths)
	}
	if _, err := tool.(agent.Runner).Run(t.Context(), json.RawMessage(`{"queries":["q"],"timeRange":["decade"]}`)); err == nil {
		t.Error("an unknown time range was searched")
	}
}

func TestXSearchTool(t *testing.T) {
	prov := sovatest.NewProviders(t)
	now := func() time.Time { return time.Date(2024, 6, 30, 12, 0, 0, 0, time.UTC) }
	tool := tools.XSearch(tools.NewRun(groupProviders(prov), nil), tools.XSearchOptions{Cite: tools.NewCitations(nil), Now: now})
	out := call(t, tool, `{"queries":["iterators"],"excludeXHandles":["@SpamBot"],"postFavoritesCount":10}`)
	var res tools.XSearchResult
	if err := json.Unmarshal([]byte(out.Text), &res); err != nil {
		t.Fatal(err)
	}
	// Fifteen days back by default, handles without "@" and in lower case.
	if res.DateRange.FromDate != "2024-06-15" || res.DateRange.ToDate != "2024-06-30" || !slices.Equal(res.Handles.Excluded, []string{"spambot"}) {
		t.Errorf("result: %s", out.Text)
	}
	s := res.Searches[0]
	if len(s.Sources) != 2 || s.Sources[0].Number != 1 || s.Sources[1].Title != "@rob_pike on X" || s.Sources[1].Text != sovatest.XPostTexts[1] ||
		len(s.Citations) != 2 || s.Content == "" {
		t.Errorf("search: %+v", s)
	}
	// The handles are the x_search tool's filter; the least likes, which
	// the tool has no filter for, are asked in the instructions.
	var body struct {
		Instructions string
		Tools        []map[string]any
	}
	_ = json.Unmarshal(prov.Requests(sovatest.XAI)[0].Body, &body)
	if len(body.Tools) != 1 || body.Tools[0]["type"] != "x_search" || body.Tools[0]["excluded_x_handles"].([]any)[0] != "spambot" ||
		!strings.Contains(body.Instructions, "at least 10 likes") {
		t.Errorf("request: %+v", body)
	}
	for _, bad := range []string{
		`{"queries":["q"],"includeXHandles":["a"],"excludeXHandles":["b"]}`,
		`{"queries":["q"],"startDate":"June"}`,
		`{"queries":[]}`,
	} {
		if _, err := tool.(agent.Runner).Run(t.Context(), json.RawMessage(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
	if _, err := tools.XSearch(tools.NewRun(tools.Providers{}, nil), tools.XSearchOptions{}).(agent.Runner).Run(t.Context(), json.RawMessage(`{"queries":["q"]}`)); err == nil || !strings.Contains(err.Error(), "XAI_API_KEY") {
		t.Errorf("without a client: %v", err)
	}
}

// docsSearch answers with a blog post, a GitHub page and a documentation
// page, in that order.
type docsSearch struct{ queries []search.Query }

func (d *docsSearch) Search(_ context.Context, q search.Query) ([]search.Result, error) {
	d.queries = append(d.queries, q)
	return []search.Result{
		{URL: "https://blog.example.com/iterators", Title: "My take on iterators", Snippet: "blog"},
		{URL: "https://github.com/golang/go/issues/61405", Title: "range over func", Snippet: "issue"},
		{URL: "https://pkg.go.dev/iter", Title: "iter", Snippet: "docs"},
	}, nil
}

func TestCodeContextTool(t *testing.T) {
	ds := &docsSearch{}
	reader := &fakeReader{pages: map[string]*fetch.Page{
		"https://pkg.go.dev/iter":                   {Title: "iter package", Markdown: "# iter\n\nfunc Seq"},
		"https://github.com/golang/go/issues/61405": {Title: "issue", Markdown: "proposal text"},
	}}
	var rec eventtest.Recorder
	tool := tools.CodeContext(tools.NewRun(tools.Providers{Search: ds, Reader: reader}, &rec), tools.CodeContextOptions{Cite: tools.NewCitations(nil), Read: 2})
	out := call(t, tool, `{"query":"go iter package"}`)
	var res tools.CodeContextResult
	if err := json.Unmarshal([]byte(out.Text), &res); err != nil {
		t.Fatal(err)
	}
	// Documentation first, then code hosts, then the rest; the first two
	// read in full.
	got := []string{}
	for _, r := range res.Results {
		got = append(got, r.URL)
	}
	if !slices.Equal(got, []string{"https://pkg.go.dev/iter", "https://github.com/golang/go/issues/61405", "https://blog.example.com/iterators"}) {
		t.Fatalf("order: %v", got)
	}
	if !res.Results[0].Docs || res.Results[0].Content != "# iter\n\nfunc Seq" || res.Results[1].Content != "proposal text" || res.Results[2].Content != "blog" ||
		res.Results[0].Number != 1 || ds.queries[0].MaxResults != 10 {
		t.Errorf("results: %+v", res.Results)
	}
	if len(rec.Filter(event.TypePage)) != 4 || len(rec.Filter(event.TypeQuery)) != 2 {
		t.Errorf("events: %d page, %d query", len(rec.Filter(event.TypePage)), len(rec.Filter(event.TypeQuery)))
	}
	for u, want := range map[string]bool{
		"https://docs.python.org/3/library/asyncio.html": true, "https://requests.readthedocs.io/en/latest/": true,
		"https://example.com/docs/api": true, "https://developer.mozilla.org/en-US/": true, "https://medium.com/x": false,
	} {
		if tools.IsDocsSite(u) != want {
			t.Errorf("IsDocsSite(%s) = %v", u, !want)
		}
	}
}

// imageSearch is fakeSearch with an image search, as SearXNG and Tavily
// have: each query's images, or a failure.
type imageSearch struct {
	fakeSearch
	mu      sync.Mutex
	queries []search.Query
	fail    error
}

func (f *imageSearch) SearchImages(_ context.Context, q search.Query) ([]search.Image, error) {
	f.mu.Lock()
	f.queries = append(f.queries, q)
	f.mu.Unlock()
	if f.fail != nil {
		return nil, f.fail
	}
	return []search.Image{
		{URL: "https://img.example.com/" + q.Text + "-1.jpg", Thumbnail: "https://img.example.com/t1.jpg", Description: "first " + q.Text, Source: "https://site9.example.com/"},
		{URL: "img", Description: "the same as a result's"},
	}, nil
}

// The web group's web_search searches each query's images in parallel
// with its results when the provider can (000 §3.1); a failed image search
// leaves the results alone.
func TestMultiWebSearchImages(t *testing.T) {
	is := &imageSearch{}
	tool := tools.MultiWebSearch(tools.NewRun(tools.Providers{Search: is}, nil), tools.MultiWebSearchOptions{Language: "en"})
	out := call(t, tool, `{"queries":["a","b"]}`)
	var res tools.MultiWebSearchResult
	if err := json.Unmarshal([]byte(out.Text), &res); err != nil {
		t.Fatal(err)
	}
	for _, s := range res.Searches {
		imgs := s.Images
		if len(imgs) != 2 || imgs[0].URL != "https://img.example.com/"+s.Query+"-1.jpg" || imgs[0].Thumbnail == "" || imgs[0].Source == "" ||
			imgs[1].URL != "img" || imgs[1].Description != "the same as a result's" || len(s.Results) != 7 {
			t.Errorf("query %s: images %+v, %d results", s.Query, imgs, len(s.Results))
		}
	}
	if len(is.queries) != 2 || is.queries[0].MaxResults != 4 || is.queries[0].Language != "en" {
		t.Errorf("image queries %+v", is.queries)
	}
	is.fail = errors.New("images down")
	out = call(t, tool, `{"queries":["a"]}`)
	res = tools.MultiWebSearchResult{}
	_ = json.Unmarshal([]byte(out.Text), &res)
	if s := res.Searches[0]; s.Error != "" || len(s.Results) != 7 || len(s.Images) != 1 || s.Images[0].URL != "img" {
		t.Errorf("with the image search down: %+v", s)
	}
	// Images: -1 turns the image search off.
	is.queries = nil
	call(t, tools.MultiWebSearch(tools.NewRun(tools.Providers{Search: is}, nil), tools.MultiWebSearchOptions{Images: -1}), `{"queries":["a"]}`)
	if len(is.queries) != 0 {
		t.Errorf("image search asked with Images -1: %+v", is.queries)
	}
}

func TestMultiWebSearchTool(t *testing.T) {
	fs := &fakeSearch{}
	var rec eventtest.Recorder
	var cited []sova.Source
	cites := tools.NewCitations(func(s sova.Source) { cited = append(cited, s) })
	tool := tools.MultiWebSearch(tools.NewRun(tools.Providers{Search: fs}, &rec), tools.MultiWebSearchOptions{Cite: cites, BlockList: block, Language: "en"})
	out := call(t, tool, `{"queries":["a","b","c"],"maxResults":[2,50],"topics":["general","news"]}`)
	var res tools.MultiWebSearchResult
	if err := json.Unmarshal([]byte(out.Text), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Searches) != 3 || len(res.Searches[0].Results) != 2 || len(res.Searches[2].Results) != 6 || len(res.Searches[0].Images) != 1 {
		t.Fatalf("output: %s", out.Text)
	}
	for _, s := range res.Searches {
		for _, r := range s.Results {
			if strings.Contains(r.URL, "example.org") || r.Number == 0 {
				t.Errorf("result %+v", r)
			}
		}
	}
	byText := map[string]search.Query{}
	for _, q := range fs.queries {
		byText[q.Text] = q
	}
	if byText["a"].MaxResults != 2 || byText["b"].MaxResults != 20 || byText["b"].TimeRange != "week" || byText["c"].TimeRange != "" || byText["c"].Language != "en" {
		t.Errorf("queries sent: %+v", fs.queries)
	}
	if qs := queryEvents(&rec); len(qs) != 6 || qs[0].Total != 3 {
		t.Errorf("query events: %+v", qs)
	}
	if got := cites.Write("x [3]"); got != "x [1]" || cited[0].URL != "https://site3.example.com/p" {
		t.Errorf("cite: %q %+v", got, cited)
	}
	fs.fail = errors.New("down")
	if _, err := tool.(agent.Runner).Run(t.Context(), json.RawMessage(`{"queries":["x"]}`)); err == nil || !strings.Contains(err.Error(), "down") {
		t.Errorf("err = %v", err)
	}
}

func TestDatetimeTool(t *testing.T) {
	now := func() time.Time { return time.Date(2026, 3, 1, 21, 30, 0, 0, time.UTC) }
	out := call(t, tools.Datetime(tools.DatetimeOptions{Timezone: "Europe/Moscow", Now: now}), `{}`)
	var r tools.DatetimeResult
	_ = json.Unmarshal([]byte(out.Text), &r)
	if r.Timestamp != "2026-03-02T00:30:00+03:00" || r.Date != "Monday, 2 March 2026" || r.Timezone != "Europe/Moscow" {
		t.Errorf("datetime = %+v", r)
	}
	out = call(t, tools.Datetime(tools.DatetimeOptions{Timezone: "Mars/Olympus", Now: now}), `{}`)
	if !strings.Contains(out.Text, `"timezone":"UTC"`) {
		t.Errorf("unknown zone: %s", out.Text)
	}
}

func TestTextTranslateTool(t *testing.T) {
	model := llmtest.New(t)
	model.Enqueue(llmtest.Text("  Привет, мир  "))
	c, err := llm.New(llm.Config{BaseURL: model.URL(), APIKey: "k", Model: "m", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	out := call(t, tools.TextTranslate(tools.NewRun(tools.Providers{Model: c}, nil)), `{"text":"Hello, world","to":"Russian"}`)
	var r tools.TextTranslateResult
	_ = json.Unmarshal([]byte(out.Text), &r)
	if r.TranslatedText != "Привет, мир" || r.To != "Russian" {
		t.Errorf("translation %+v", r)
	}
	if req := model.Last(); !strings.Contains(req.System(), "into Russian") || req.LastUser() != "Hello, world" {
		t.Errorf("request: %s / %s", req.System(), req.LastUser())
	}
}

func TestToolStatus(t *testing.T) {
	var none tools.Providers
	for _, name := range []string{"web_search", "retrieve", "text_translate", "academic_search", "youtube_search", "reddit_search", "code_context", "x_search"} {
		s, ok := none.Status(name)
		if !ok || s.Available || !strings.HasPrefix(s.Reason, "needs ") && s.Reason != "not configured" {
			t.Errorf("%s without providers: %+v", name, s)
		}
	}
	if s, _ := none.Status("x_search"); s.Reason != "needs XAI_API_KEY" {
		t.Errorf("x_search: %+v", s)
	}
	if s, ok := none.Status("datetime"); !ok || !s.Available {
		t.Errorf("datetime: %+v", s)
	}
	if s, ok := none.Status("code_interpreter"); !ok || s.Available || !strings.HasPrefix(s.Reason, "the code sandbox cannot run on this server") {
		t.Errorf("code_interpreter without a sandbox: %+v", s)
	}
	if _, ok := none.Status("no_such_tool"); ok {
		t.Error("a tool this build lacks has a status")
	}
	prov := sovatest.NewProviders(t)
	p := groupProviders(prov)
	p.Search = &fakeSearch{}
	for name, provider := range map[string]string{
		"academic_search": "openalex+arxiv", "youtube_search": "invidious", "reddit_search": "reddit", "x_search": "xai",
	} {
		if s, _ := p.Status(name); !s.Available || s.Provider != provider || s.Reason != "" {
			t.Errorf("%s: %+v", name, s)
		}
	}
	if s, _ := p.Status("code_context"); !s.Available || !strings.Contains(s.Note, "TAVILY_API_KEY") {
		t.Errorf("code_context: %+v", s)
	}
}

// retrieve in a run with citations numbers pages as the search tools do.
func TestRetrieveCitations(t *testing.T) {
	reader := &fakeReader{pages: map[string]*fetch.Page{"https://site2.example.com/p": {Title: "Two", Markdown: "text two"}}}
	run := tools.NewRun(tools.Providers{Search: &fakeSearch{}, Reader: reader}, nil)
	cites := tools.NewCitations(nil)
	call(t, tools.MultiWebSearch(run, tools.MultiWebSearchOptions{Cite: cites, BlockList: block}), `{"queries":["q"]}`)
	out := call(t, tools.Retrieve(run, tools.RetrieveOptions{Cite: cites}), `{"urls":["https://site2.example.com/p"]}`)
	if !strings.HasPrefix(out.Text, "[2] Two") {
		t.Errorf("retrieve: %s", out.Text)
	}
}
