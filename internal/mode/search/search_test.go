package search

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/event/eventtest"
	"github.com/sova-ai/sova/internal/fetch"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/search"
	"github.com/sova-ai/sova/internal/sovatest"
)

type searchEnv struct {
	model *sovatest.Model
	site  *sovatest.Site
	sx    *sovatest.SearXNG
	cfg   Config
}

func newSearchEnv(t *testing.T) *searchEnv { return newSearchEnvTB(t) }

func newSearchEnvTB(t testing.TB) *searchEnv {
	t.Helper()
	arts := sovatest.DefaultArticles()
	site := sovatest.NewSite(t, arts)
	return &searchEnv{
		model: sovatest.NewModel(t),
		site:  site,
		sx:    sovatest.NewSearXNG(t, site, arts),
		cfg: Config{
			ID: "search", Queries: 3, Iterations: 2, MaxResults: 8, RerankTopK: 6, ScrapeTopN: 4,
			Concurrency: 4, AnswerWords: "400-600", HistoryLimit: 10,
		},
	}
}

func (e *searchEnv) client(t testing.TB) *llm.Client {
	t.Helper()
	c, err := llm.New(llm.Config{
		BaseURL: e.model.URL(), APIKey: "k", Model: "main-model", FastModel: "fast-model",
		MaxRetries: 2, BackoffBase: time.Millisecond, BackoffMax: 5 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (e *searchEnv) mode(t testing.TB, providers ...search.Provider) *Mode {
	t.Helper()
	if len(providers) == 0 {
		providers = []search.Provider{search.NewSearXNG(e.sx.URL, nil)}
	}
	c := e.client(t)
	return New(e.cfg, c, c.Fast(), search.NewChain(providers...), fetch.New(fetch.Config{AllowHosts: []string{"127.0.0.1"}}))
}

func (e *searchEnv) run(t *testing.T, m *Mode, question string) (*mode.Result, *eventtest.Recorder) {
	t.Helper()
	var rec eventtest.Recorder
	res, err := m.Run(context.Background(), mode.Input{Question: question, Now: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)}, &rec)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return res, &rec
}

func TestSearchPipeline(t *testing.T) {
	e := newSearchEnv(t)
	// A result from a blocked domain and one with a blocked keyword must
	// never be read or cited.
	e.sx.Extra = []map[string]any{
		{"url": "https://spam.example.org/economy-1930s", "title": "Economy 1930s presidents economy", "content": "economy 1930s presidents economy"},
		{"url": e.site.URL + "/a/casino", "title": "Casino bonus economy 1930s", "content": "economy 1930s presidents"},
	}
	e.cfg.BlockList = search.BlockList{Domains: []string{"example.org"}, Keywords: []string{"casino"}}
	res, rec := e.run(t, e.mode(t), "How did presidents describe the economy in the 1930s?")

	// Queries: 3 first, then 2 follow-ups in the second (last) iteration.
	queries := e.sx.Queries()
	if len(queries) != 5 {
		t.Fatalf("searched %d queries, want 5: %q", len(queries), queries)
	}
	var started, completed int
	iterations := map[int]bool{}
	for _, ev := range rec.Filter(event.TypeQuery) {
		iterations[ev.Query.Iteration] = true
		switch ev.Query.Status {
		case event.QueryStarted:
			started++
		case event.QueryCompleted:
			completed++
			if *ev.Query.ResultsCount != 8 {
				t.Errorf("query %q: %d results, want 8 (SOVA_DEEP_SEARCH_MAX_RESULTS)", ev.Query.Query, *ev.Query.ResultsCount)
			}
		}
	}
	if started != 5 || completed != 5 || len(iterations) != 2 {
		t.Errorf("query events: %d started, %d completed, iterations %v", started, completed, iterations)
	}

	// Rewrite reported with the rewritten text.
	var rewritten string
	for _, ev := range rec.Filter(event.TypeStatus) {
		if ev.Status.Stage == "rewrite" && ev.Status.Detail != "" && strings.HasSuffix(ev.Status.Detail, "(rewritten)") {
			rewritten = ev.Status.Detail
		}
	}
	if rewritten == "" {
		t.Error("no rewrite status with the rewritten query")
	}

	// Exactly ScrapeTopN pages read, each once, none blocked.
	var read []string
	for _, ev := range rec.Filter(event.TypePage) {
		if ev.Page.State == event.PageRead {
			read = append(read, ev.Page.URL)
		}
		if strings.Contains(ev.Page.URL, "spam.example") || strings.Contains(ev.Page.URL, "casino") {
			t.Errorf("blocked result was read: %s", ev.Page.URL)
		}
	}
	if len(read) != 4 {
		t.Fatalf("read %d pages, want 4: %v", len(read), read)
	}
	for _, u := range read {
		if h := e.site.Hits(strings.TrimPrefix(u, e.site.URL)); h != 1 {
			t.Errorf("%s fetched %d times, want once", u, h)
		}
	}

	// Citations: [9] removed, [2] [1] [3] renumbered by first use.
	if strings.Contains(res.Text, "[9]") || strings.Contains(res.Text, "[4]") {
		t.Errorf("answer keeps a marker for an unread page: %q", res.Text)
	}
	if !strings.Contains(res.Text, "passing storm [1]") || !strings.Contains(res.Text, "system to repair [2]") {
		t.Errorf("markers not renumbered by first use: %q", res.Text)
	}
	if len(res.Sources) != 3 {
		t.Fatalf("sources = %d, want the 3 cited: %+v", len(res.Sources), res.Sources)
	}
	for i, s := range res.Sources {
		if s.Number != i+1 || !slices.Contains(read, s.URL) {
			t.Errorf("source %d = %+v: not numbered in order or not a read page", i, s)
		}
		if !strings.Contains(res.Text, fmt.Sprintf("[%d]", s.Number)) {
			t.Errorf("source [%d] listed but not cited", s.Number)
		}
	}
	if rec.Text() != res.Text {
		t.Errorf("streamed text differs from the result:\n%q\n%q", rec.Text(), res.Text)
	}
	// The synthesis prompt saw page summaries (from the fetched text).
	var synth *llmtest.Request
	for _, r := range e.model.Requests() {
		if strings.Contains(r.System(), "answers from web sources") {
			synth = r
		}
	}
	if synth == nil || !strings.Contains(synth.LastUser(), "Summary: ") || synth.Model != "main-model" {
		t.Fatalf("synthesis request wrong: %+v", synth)
	}
	if !strings.Contains(synth.System(), "400-600 words") || !strings.Contains(synth.System(), "in English") {
		t.Errorf("synthesis prompt lacks length or language: %s", synth.System())
	}
	// Boilerplate never reaches the model.
	for _, r := range e.model.Requests() {
		if strings.Contains(r.LastUser(), "Accept all cookies") || strings.Contains(r.LastUser(), "window.tracker") {
			t.Errorf("boilerplate reached the model: %q", r.LastUser())
		}
	}
	var steps searchSteps
	if err := json.Unmarshal(res.Steps, &steps); err != nil || len(steps.Iterations) != 2 || len(steps.Pages) != 4 {
		t.Errorf("steps = %s (%v)", res.Steps, err)
	}
}

func TestSearchAnswersInRussian(t *testing.T) {
	e := newSearchEnv(t)
	_, _ = e.run(t, e.mode(t), "Как президенты описывали экономику в 1930-х годах?")
	for _, r := range e.model.Requests() {
		if strings.Contains(r.System(), "answers from web sources") && !strings.Contains(r.System(), "in Russian") {
			t.Errorf("synthesis prompt does not ask for Russian: %s", r.System())
		}
	}
}

func TestSearchReplacesUnreadablePages(t *testing.T) {
	e := newSearchEnv(t)
	arts := sovatest.DefaultArticles()
	// Two of the results point at pages that 404.
	e.sx.Extra = []map[string]any{
		{"url": e.site.URL + "/a/missing-1", "title": "economy 1930s presidents describe economy", "content": "presidents describe the economy 1930s economy"},
		{"url": e.site.URL + "/a/missing-2", "title": "presidents economy 1930s describe", "content": "economy presidents 1930s describe economy"},
	}
	_ = arts
	_, rec := e.run(t, e.mode(t), "How did presidents describe the economy in the 1930s?")
	var read, failed int
	for _, ev := range rec.Filter(event.TypePage) {
		switch ev.Page.State {
		case event.PageRead:
			read++
		case event.PageFailed:
			failed++
		}
	}
	if read != 4 {
		t.Errorf("read %d pages, want 4 even though %d failed", read, failed)
	}
}

func TestSearchFallsBackToNextProvider(t *testing.T) {
	e := newSearchEnv(t)
	broken := sovatest.NewSearXNG(t, e.site, sovatest.DefaultArticles())
	broken.Fail.Store(http.StatusForbidden)
	res, rec := e.run(t, e.mode(t, search.NewSearXNG(broken.URL, nil), search.NewSearXNG(e.sx.URL, nil)), "economy in the 1930s")
	if len(res.Sources) == 0 {
		t.Fatal("no sources after failover")
	}
	var failover bool
	for _, ev := range rec.Filter(event.TypeStatus) {
		if strings.Contains(ev.Status.Message, "failed; trying") {
			failover = true
			if !strings.Contains(ev.Status.Detail, "json") {
				t.Errorf("failover detail should explain the JSON format: %q", ev.Status.Detail)
			}
		}
	}
	if !failover {
		t.Error("no failover status event")
	}
}

func TestSearchRetriesModelErrors(t *testing.T) {
	e := newSearchEnv(t)
	var calls atomic.Int64
	e.model.Handle(func(r *llmtest.Request) llmtest.Reply {
		// Every step's first attempt fails with 500 or 429.
		switch calls.Add(1) {
		case 1:
			return llmtest.Fail(500, "upstream exploded")
		case 2:
			return llmtest.Reply{Status: 429, Content: "slow down", RetryAfter: "0"}
		}
		return e.model.Respond(r)
	})
	res, rec := e.run(t, e.mode(t), "economy in the 1930s")
	if res.Text == "" || calls.Load() < 3 {
		t.Fatalf("no answer after retries (calls %d)", calls.Load())
	}
	// The failures were retried, not worked around: the first three
	// requests are the same rewrite, and its answer was used.
	reqs := e.model.Requests()
	for i := range 3 {
		if !strings.Contains(reqs[i].System(), "one precise, self-contained web search request") {
			t.Errorf("request %d is not the rewrite: %s", i+1, reqs[i].System())
		}
	}
	var rewritten bool
	for _, ev := range rec.Filter(event.TypeStatus) {
		if strings.Contains(ev.Status.Message, "Could not") {
			t.Errorf("a step failed instead of being retried: %s (%s)", ev.Status.Message, ev.Status.Detail)
		}
		if ev.Status.Stage == "rewrite" && strings.HasSuffix(ev.Status.Detail, "(rewritten)") {
			rewritten = true
		}
	}
	if !rewritten {
		t.Error("the rewrite's answer was not used")
	}
}

func TestSearchReportsSearchFailure(t *testing.T) {
	e := newSearchEnv(t)
	e.sx.Fail.Store(http.StatusForbidden)
	var rec eventtest.Recorder
	_, err := e.mode(t).Run(context.Background(), mode.Input{Question: "economy"}, &rec)
	if err == nil || !strings.Contains(err.Error(), "json") {
		t.Fatalf("err = %v, want the SearXNG JSON-format explanation", err)
	}
}

func TestSearchStopsWhenCancelled(t *testing.T) {
	e := newSearchEnv(t)
	e.site.SetDelay(5 * time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	var rec eventtest.Recorder
	done := make(chan error, 1)
	go func() {
		_, err := e.mode(t).Run(ctx, mode.Input{Question: "economy"}, &rec)
		done <- err
	}()
	time.Sleep(300 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("cancelled run returned no error")
		}
	case <-time.After(3 * time.Second):
		t.Fatal("run did not stop after cancel")
	}
}

// When no page can be read, the answer cites the search engine's
// snippets: its sources say so (snippetOnly), so that no one takes them
// for pages the run read. Pages read are not marked.
func TestSearchMarksSnippetOnlySources(t *testing.T) {
	e := newSearchEnv(t)
	c := e.client(t)
	// The guard refuses the test site's loopback address: nothing is read.
	unreadable := New(e.cfg, c, c.Fast(), search.NewChain(search.NewSearXNG(e.sx.URL, nil)), fetch.New(fetch.Config{}))
	res, rec := e.run(t, unreadable, "How did presidents describe the economy in the 1930s?")
	if len(res.Sources) == 0 {
		t.Fatal("no sources cited")
	}
	for _, s := range res.Sources {
		if !s.SnippetOnly {
			t.Errorf("source %d (%s) is not marked snippet-only, though no page was read", s.Number, s.URL)
		}
	}
	for _, ev := range rec.Filter(event.TypeSource) {
		if ev.Source.Number > 0 && !ev.Source.SnippetOnly {
			t.Errorf("cited source event %d is not marked snippet-only", ev.Source.Number)
		}
	}
	// The answer says so first, and so does a status.
	unverified := false
	for _, ev := range rec.Filter(event.TypeStatus) {
		unverified = unverified || ev.Status.Stage == mode.StageUnverified
	}
	if !strings.HasPrefix(res.Text, mode.SnippetsNote(mode.LanguageOf(mode.Input{Question: "How did presidents"}))) || !unverified {
		t.Errorf("answer %q (unverified status %v): want the snippets note first", res.Text, unverified)
	}

	res, _ = e.run(t, e.mode(t), "How did presidents describe the economy in the 1930s?")
	if strings.HasPrefix(res.Text, "> **") {
		t.Errorf("an answer from pages read has a note: %q", res.Text)
	}
	if len(res.Sources) == 0 {
		t.Fatal("no sources cited")
	}
	for _, s := range res.Sources {
		if s.SnippetOnly {
			t.Errorf("source %d (%s) was read but is marked snippet-only", s.Number, s.URL)
		}
	}
}

// A result whose page answers only after 30 s must not hold the answer:
// once the first page is read, pages still loading after ReadGrace are
// given up and said to be, and the run answers from the pages it read.
func TestSearchDoesNotWaitForASlowPage(t *testing.T) {
	e := newSearchEnv(t)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(30 * time.Second):
		case <-r.Context().Done():
			return
		}
		fmt.Fprint(w, "<html><body><p>too late</p></body></html>")
	}))
	t.Cleanup(slow.Close)
	// Ranked first: every word of the question, twice.
	e.sx.Extra = []map[string]any{{"url": slow.URL + "/slow", "title": "presidents describe the economy 1930s presidents economy",
		"content": "how presidents describe the economy in the 1930s economy presidents describe"}}
	e.cfg.ReadGrace = 300 * time.Millisecond
	start := time.Now()
	res, rec := e.run(t, e.mode(t), "How did presidents describe the economy in the 1930s?")
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("the run took %s: it waited for the slow page", took)
	}
	var read int
	var skipped bool
	for _, ev := range rec.Filter(event.TypePage) {
		switch {
		case ev.Page.State == event.PageRead:
			read++
		case ev.Page.State == event.PageFailed && strings.HasPrefix(ev.Page.URL, slow.URL):
			skipped = strings.Contains(ev.Page.Error, "still loading")
		}
	}
	if read == 0 || !skipped {
		t.Errorf("read %d pages, slow page skipped and said so: %v", read, skipped)
	}
	if strings.TrimSpace(res.Text) == "" || len(res.Sources) == 0 {
		t.Errorf("no cited answer from the pages read: %q, %d sources", res.Text, len(res.Sources))
	}
	var said bool
	for _, ev := range rec.Filter(event.TypeStatus) {
		said = said || strings.Contains(ev.Status.Message, "slow page")
	}
	if !said {
		t.Error("the run did not say it answered without the slow page")
	}
}

// slowQuery is a provider whose queries after the first of each
// iteration's batch hang, as a search engine that stops answering.
type slowQuery struct {
	search.Provider
	seen atomic.Int64
}

func (s *slowQuery) Search(ctx context.Context, q search.Query) ([]search.Result, error) {
	if s.seen.Add(1)%3 == 0 { // one query of every three hangs
		select {
		case <-time.After(30 * time.Second):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return s.Provider.Search(ctx, q)
}

func TestSearchDoesNotWaitForASlowQuery(t *testing.T) {
	e := newSearchEnv(t)
	e.cfg.ReadGrace = 300 * time.Millisecond
	start := time.Now()
	res, rec := e.run(t, e.mode(t, &slowQuery{Provider: search.NewSearXNG(e.sx.URL, nil)}), "How did presidents describe the economy in the 1930s?")
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("the run took %s: it waited for the slow query", took)
	}
	var skipped int
	for _, ev := range rec.Filter(event.TypeQuery) {
		if ev.Query.Status == event.QueryError && strings.Contains(ev.Query.Error, "still searching") {
			skipped++
		}
	}
	if skipped == 0 {
		t.Error("no query said it was given up for being slow")
	}
	if strings.TrimSpace(res.Text) == "" || len(res.Sources) == 0 {
		t.Errorf("no cited answer from the queries that answered: %q, %d sources", res.Text, len(res.Sources))
	}
}
