// Package search is the web search pipeline of seed 001 §2 and §3, the
// modes search and deep_search (the same pipeline with more iterations and
// a longer answer), optionally reading the person's document spaces beside
// the web (documents.go).
package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sova-ai/sova"

	"golang.org/x/sync/errgroup"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/cite"
	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/fetch"
	"github.com/sova-ai/sova/internal/lang"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/rank"
	"github.com/sova-ai/sova/internal/search"
	"github.com/sova-ai/sova/internal/tools"
)

// Config holds the tuning of seed 001 §2 (SearchTuning): every value
// is a setting with the seed's default.
type Config struct {
	ID          string // "search" or "deep_search"
	Description string
	Queries     int // SOVA_DEEP_SEARCH_QUERIES (3)
	Iterations  int // SOVA_SPEED_MAX_ITERATIONS (2) / SOVA_BALANCED_MAX_ITERATIONS (6)
	MaxResults  int // SOVA_DEEP_SEARCH_MAX_RESULTS (8)
	RerankTopK  int // SOVA_DEEP_SEARCH_RERANK_TOP_K (6) / SOVA_BALANCED_RERANK_TOP_K (12)
	ScrapeTopN  int // SOVA_DEEP_SEARCH_SCRAPE_TOP_N (4) / SOVA_BALANCED_SCRAPE_TOP_N (8)
	Concurrency int // SOVA_SEARCH_CONCURRENCY: parallel queries and page reads
	// ReadGrace (SOVA_READ_GRACE, 2s) is how long the run waits for the
	// pages still loading once its first page is read: a slow page does
	// not hold the answer; 0 waits for every page (up to SOVA_FETCH_TIMEOUT).
	// Queries of an iteration get the same grace after the first answers.
	ReadGrace   time.Duration
	AnswerWords string // "400-600" for search, "800-1200" for deep_search
	BlockList   search.BlockList
	// Reranker orders the results; nil means lexical BM25. With
	// SOVA_EMBED_MODEL set it is a rank.Hybrid (BM25 fused with
	// embedding similarity).
	Reranker     Reranker
	HistoryLimit int
	Temperature  float64
	MaxTokens    int
}

// Reranker orders search results by relevance to a query and keeps the
// best topK (all when topK <= 0). On error it still returns a usable
// (lexical) order. *rank.Hybrid implements it.
type Reranker interface {
	Rerank(ctx context.Context, query string, docs []rank.Doc, topK int) ([]rank.Scored, error)
}

// Mode is the web search pipeline of seed 001 §2: rewrite → queries →
// iterations of parallel search, dedupe, block-list, rerank and follow-up
// queries → read the top pages in parallel → summarise → cited answer.
type Mode struct {
	cfg    Config
	model  *llm.Client // synthesis
	fast   *llm.Client // rewrite, queries, follow-ups, summaries
	chain  *search.Chain
	reader tools.PageReader

	docs     tools.DocumentSearcher // document spaces (documents.go); nil: web only
	docsTopK int
}

// New returns a search pipeline.
func New(cfg Config, model, fast *llm.Client, chain *search.Chain, reader tools.PageReader) *Mode {
	return &Mode{cfg: cfg, model: model, fast: fast, chain: chain, reader: reader}
}

// ID implements mode.Mode.
func (s *Mode) ID() string { return s.cfg.ID }

// Description implements mode.Mode.
func (s *Mode) Description() string { return s.cfg.Description }

// QueryRewrite is the rewrite step's structured output. The same call
// writes the first search queries (the query-generation step's output),
// after the rewritten request they vary: the two steps, in the seed's
// order, cost one model call's wait instead of two. A reply without
// queries is completed by the query-generation call.
type QueryRewrite struct {
	RewrittenQuery string   `json:"rewritten_query" jsonschema:"the question rewritten as a precise, self-contained web search request"`
	Queries        []string `json:"queries" jsonschema:"distinct web search queries that together cover the rewritten request"`
}

// Validate implements the structured-output check.
func (q QueryRewrite) Validate() error {
	if strings.TrimSpace(q.RewrittenQuery) == "" {
		return errors.New("rewritten_query must not be empty")
	}
	return nil
}

// SearchQueries is the query-generation and follow-up step's output.
type SearchQueries struct {
	Queries []string `json:"queries" jsonschema:"distinct web search queries"`
}

// searchSteps is what the stored message keeps of the pipeline's work.
type searchSteps struct {
	RewrittenQuery string          `json:"rewrittenQuery"`
	Iterations     []iterationStep `json:"iterations"`
	Pages          []pageStep      `json:"pages"`
	Failovers      []string        `json:"failovers,omitempty"`
	Documents      *docStep        `json:"documents,omitempty"`
}

type iterationStep struct {
	Queries []queryStep `json:"queries"`
	Pool    int         `json:"pool"` // distinct allowed results so far
}

type queryStep struct {
	Query    string `json:"query"`
	Results  int    `json:"results"`
	Provider string `json:"provider,omitempty"`
	Error    string `json:"error,omitempty"`
}

type pageStep struct {
	URL   string `json:"url"`
	Title string `json:"title,omitempty"`
	Chars int    `json:"chars,omitempty"`
	Error string `json:"error,omitempty"`
}

// readPage is a page the run read and summarised: what the answer may cite.
type readPage struct {
	source  sova.Source
	summary string
}

// Run implements mode.Mode.
func (s *Mode) Run(ctx context.Context, in mode.Input, sink event.Sink) (*mode.Result, error) {
	language := mode.LanguageOf(in)
	history := mode.LastMessages(in.History, s.cfg.HistoryLimit)
	steps := &searchSteps{}
	var failMu sync.Mutex
	provider := s.chain.WithFailover(func(failed string, err error, next string) {
		msg := fmt.Sprintf("Search provider %s failed; trying %s", failed, next)
		mode.Status(sink, "search", msg, err.Error())
		failMu.Lock()
		steps.Failovers = append(steps.Failovers, msg+": "+err.Error())
		failMu.Unlock()
	})

	// 1. Rewrite the question into a search request, and 2. write the
	// first queries for it, in one structured call.
	mode.Status(sink, "rewrite", "Rewriting the question", "")
	rewritten := in.Question
	var queries []string
	if rw, _, err := llm.Structured[QueryRewrite](ctx, s.fast, llm.Request{
		Messages: s.rewriteMessages(in, history),
	}, llm.WithSchemaName("QueryRewrite")); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// A failed rewrite is not fatal: the question itself is a query.
		if llm.IsSetupError(err) {
			return nil, err // the model endpoint is set up wrongly: every later call would fail too
		}
		mode.Warn(sink, "rewrite", "Could not rewrite the question; searching for it as asked", err.Error())
	} else {
		rewritten = strings.TrimSpace(rw.RewrittenQuery)
		queries = s.cleanQueries(rw.Queries, nil)
		mode.Status(sink, "rewrite", "Rewritten query", rewritten)
	}
	steps.RewrittenQuery = rewritten
	docs := s.searchDocuments(ctx, sink, in, rewritten) // beside the web search
	defer docs.wait(nil)

	if len(queries) == 0 {
		var err error
		if queries, err = s.generateQueries(ctx, in, rewritten, nil, nil); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if llm.IsSetupError(err) {
				return nil, err // the model endpoint is set up wrongly: every later call would fail too
			}
			mode.Warn(sink, "queries", "Could not generate queries; searching for the rewritten question", err.Error())
			queries = []string{rewritten}
		}
	}
	// Pages read ahead while the last iteration searches (readAhead),
	// and the fetch slots every page read of the run takes: at most
	// Concurrency pages are fetched at once.
	ahead := newReadAhead(ctx)
	defer ahead.stop()
	fetchSlots := make(chan struct{}, max(1, s.cfg.Concurrency))

	// 3. Iterations of search, dedupe, filter, rerank, follow-up.
	rr := &ranking{s: s, sink: sink}
	var pool []search.Result // deduplicated, allowed, in order of discovery
	seen := map[string]bool{}
	ran := map[string]bool{}
	var top []search.Result
	firstErr := ""
	// What the pages are read for: long pages are cut to the passages that
	// match the question and the queries run.
	focus := []string{in.Question, rewritten}
	for it := 1; it <= s.cfg.Iterations && len(queries) > 0; it++ {
		mode.Status(sink, "search", fmt.Sprintf("Searching, iteration %d of %d", it, s.cfg.Iterations), "")
		results, step := s.searchAll(ctx, sink, provider, queries, it, language)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		for _, q := range queries {
			ran[strings.ToLower(q)] = true
			focus = append(focus, q)
		}
		for _, r := range search.Filter(search.Dedupe(results), s.cfg.BlockList) {
			key := search.NormalizeURL(r.URL)
			if seen[key] {
				continue
			}
			seen[key] = true
			pool = append(pool, r)
		}
		for _, q := range step.Queries {
			if q.Error != "" && firstErr == "" {
				firstErr = q.Error
			}
		}
		step.Pool = len(pool)
		steps.Iterations = append(steps.Iterations, step)
		top = rr.rerank(ctx, rewritten, pool, s.cfg.RerankTopK)
		mode.Status(sink, "rerank", fmt.Sprintf("%d distinct results, %d best kept", len(pool), len(top)), "")
		if it == s.cfg.Iterations {
			break
		}
		if it == s.cfg.Iterations-1 {
			// The best pages so far usually stay the best: read them
			// while the last iteration searches. Pages that do not stay
			// among those read are dropped unseen.
			aheadFocus := slices.Clone(focus)
			for _, r := range top[:min(len(top), s.cfg.ScrapeTopN)] {
				ahead.start(r.URL, func(ctx context.Context) (*fetch.Page, error) { return s.fetchPage(ctx, r.URL, fetchSlots) },
					func(ctx context.Context, page *fetch.Page) (fetch.Excerpt, string, error) {
						return s.summarisePage(ctx, rewritten, aheadFocus, language, page, r.Title)
					})
			}
		}
		next, err := s.generateQueries(ctx, in, rewritten, top, ran)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if llm.IsSetupError(err) {
				return nil, err // the model endpoint is set up wrongly: every later call would fail too
			}
			mode.Warn(sink, "queries", "Could not generate follow-up queries", err.Error())
			break
		}
		queries = next
	}
	docPages := docs.wait(steps)
	if len(pool) == 0 && len(docPages) == 0 {
		if firstErr != "" {
			return nil, fmt.Errorf("web search failed: %s", firstErr)
		}
		return nil, errors.New("the web search found nothing for this question; try rephrasing it")
	}

	// 4. Read the best pages in parallel; candidates past the top N stand
	// in for pages that cannot be read.
	candidates := rr.rerank(ctx, rewritten, pool, len(pool))
	for _, r := range candidates[:min(len(candidates), s.cfg.RerankTopK)] {
		src := tools.SourceOf(r)
		sink.Emit(event.Event{Type: event.TypeSource, Time: time.Now(), Source: &src})
	}
	mode.Status(sink, "read", fmt.Sprintf("Reading %d pages", min(s.cfg.ScrapeTopN, len(candidates))), "")
	pages := s.readPages(ctx, sink, rewritten, focus, language, candidates, steps, ahead, fetchSlots)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	pages = append(pages, docPages...)
	snippetsOnly := false
	if len(pages) == 0 {
		// Nothing could be read: the search engines' own snippets are the
		// only text this run saw, so they become the citable sources.
		// They are marked as such: the answer cites no page it read.
		mode.Status(sink, "read", "No page could be read; answering from search snippets", "")
		mode.Status(sink, mode.StageUnverified, "No page was read: the answer rests on search snippets, unverified",
			"every page found failed to load or had no text")
		snippetsOnly = true
		for _, r := range candidates[:min(len(candidates), s.cfg.ScrapeTopN)] {
			src := tools.SourceOf(r)
			src.SnippetOnly = true
			pages = append(pages, readPage{source: src, summary: r.Snippet})
		}
	}

	// 5. Synthesise the cited answer.
	mode.Status(sink, "synthesize", "Writing the answer", "")
	read := make([]sova.Source, len(pages))
	for i, p := range pages {
		read[i] = p.source
	}
	filter := cite.NewFilter(read, func(src sova.Source) {
		sink.Emit(event.Event{Type: event.TypeSource, Time: time.Now(), Source: &src})
	})
	var text strings.Builder
	if snippetsOnly {
		note := mode.SnippetsNote(language)
		text.WriteString(note)
		sink.Emit(mode.TextDelta(note))
	}
	temp := s.cfg.Temperature
	resp, err := s.model.Stream(ctx, llm.Request{
		Messages:    s.answerMessages(in, history, rewritten, language, pages),
		Temperature: &temp,
		MaxTokens:   s.cfg.MaxTokens,
	}, func(delta string) {
		if out := filter.Write(delta); out != "" {
			text.WriteString(out)
			sink.Emit(mode.TextDelta(out))
		}
	})
	if err != nil {
		return nil, fmt.Errorf("writing the answer: %w", err)
	}
	if out := filter.Flush(); out != "" {
		text.WriteString(out)
		sink.Emit(mode.TextDelta(out))
	}
	stepsJSON, _ := json.Marshal(steps)
	return &mode.Result{
		Text:         text.String(),
		Sources:      filter.Cited(),
		Model:        resp.Model,
		FinishReason: mode.FinishReason(resp.FinishReason),
		Steps:        stepsJSON,
	}, nil
}

func (s *Mode) rewriteMessages(in mode.Input, history []llm.Message) []llm.Message {
	sys := "You turn a person's question into one precise, self-contained web search request. " +
		"Resolve references to earlier messages (\"it\", \"that year\") using the conversation. " +
		"Keep the language of the question. " +
		fmt.Sprintf("Then write exactly %d different web search queries that together cover the rewritten request: "+
			"vary wording, angle and specificity. Keep proper names exact. ", s.cfg.Queries) +
		"Current date: " + mode.DateIn(in.Now, in.Timezone) + "."
	msgs := []llm.Message{{Role: llm.RoleSystem, Content: sys}}
	msgs = append(msgs, history...)
	return append(msgs, llm.Message{Role: llm.RoleUser, Content: "Question: " + in.Question})
}

// generateQueries asks for the first queries (top == nil) or follow-up
// queries that cover what the best results so far leave open.
func (s *Mode) generateQueries(ctx context.Context, in mode.Input, rewritten string, top []search.Result, ran map[string]bool) ([]string, error) {
	var user strings.Builder
	fmt.Fprintf(&user, "Research request: %s\n", rewritten)
	if top == nil {
		fmt.Fprintf(&user, "\nWrite exactly %d different web search queries that together cover the request: "+
			"vary wording, angle and specificity. Keep proper names exact.", s.cfg.Queries)
	} else {
		var results strings.Builder
		for i, r := range top {
			fmt.Fprintf(&results, "%d. %s — %s\n", i+1, r.Title, clip(r.Snippet, 200))
		}
		user.WriteString("\nBest results so far:\n" + agent.Untrusted("search results", results.String()) + "\n")
		user.WriteString("\nQueries already run:\n")
		for q := range ran {
			fmt.Fprintf(&user, "- %s\n", q)
		}
		fmt.Fprintf(&user, "\nWrite up to %d follow-up web search queries that find what these results do not yet answer. "+
			"Do not repeat queries already run. Return an empty list if the results already cover the request.", s.cfg.Queries)
	}
	sys := "You write web search queries for a research assistant. Current date: " + mode.DateIn(in.Now, in.Timezone) + ".\n\n" + agent.UntrustedRule
	out, _, err := llm.Structured[SearchQueries](ctx, s.fast, llm.Request{
		Messages: []llm.Message{{Role: llm.RoleSystem, Content: sys}, {Role: llm.RoleUser, Content: user.String()}},
	}, llm.WithSchemaName("SearchQueries"))
	if err != nil {
		return nil, err
	}
	qs := s.cleanQueries(out.Queries, ran)
	if top == nil && len(qs) == 0 {
		return nil, errors.New("the model returned no search queries")
	}
	return qs, nil
}

// cleanQueries trims the model's queries and drops empty ones, repeats
// and those already run, keeping at most Queries.
func (s *Mode) cleanQueries(queries []string, ran map[string]bool) []string {
	var qs []string
	dup := map[string]bool{}
	for _, q := range queries {
		q = strings.TrimSpace(q)
		k := strings.ToLower(q)
		if q == "" || dup[k] || ran[k] {
			continue
		}
		dup[k] = true
		qs = append(qs, q)
	}
	if len(qs) > s.cfg.Queries {
		qs = qs[:s.cfg.Queries]
	}
	return qs
}

// searchAll runs one iteration's queries in parallel, reporting each as
// data-query_completion events, and returns their results in query order.
func (s *Mode) searchAll(ctx context.Context, sink event.Sink, provider search.Provider, queries []string, iteration int, language lang.Language) ([]search.Result, iterationStep) {
	step := iterationStep{Queries: make([]queryStep, len(queries))}
	per := make([][]search.Result, len(queries))
	// As with pages (readPages): once one query has answered, queries
	// still running ReadGrace later are given up, so one slow search
	// engine does not hold the run for SOVA_SEARCH_TIMEOUT.
	queryCtx, stopQueries := context.WithCancel(ctx)
	defer stopQueries()
	var graceOnce sync.Once
	startGrace := func() {
		if s.cfg.ReadGrace <= 0 {
			return
		}
		graceOnce.Do(func() {
			t := time.AfterFunc(s.cfg.ReadGrace, stopQueries)
			context.AfterFunc(queryCtx, func() { t.Stop() })
		})
	}
	g, gctx := errgroup.WithContext(queryCtx)
	g.SetLimit(max(1, s.cfg.Concurrency))
	for i, q := range queries {
		g.Go(func() error {
			sink.Emit(event.Event{Type: event.TypeQuery, Time: time.Now(), Query: &event.Query{
				Query: q, Index: i, Total: len(queries), Status: event.QueryStarted, Iteration: iteration,
			}})
			res, err := provider.Search(gctx, search.Query{Text: q, MaxResults: s.cfg.MaxResults, Language: language.Code})
			ev := &event.Query{Query: q, Index: i, Total: len(queries), Iteration: iteration}
			if err != nil && queryCtx.Err() != nil && ctx.Err() == nil {
				err = fmt.Errorf("%w %s after the first query answered", errSlowQuery, s.cfg.ReadGrace)
			}
			if err == nil {
				startGrace()
			}
			if err != nil {
				ev.Status, ev.Error = event.QueryError, err.Error()
				step.Queries[i] = queryStep{Query: q, Error: err.Error()}
			} else {
				if len(res) > s.cfg.MaxResults {
					res = res[:s.cfg.MaxResults]
				}
				n, imgs := len(res), 0
				for _, r := range res {
					imgs += len(r.Images)
				}
				ev.Status, ev.ResultsCount, ev.ImagesCount = event.QueryCompleted, &n, &imgs
				if n > 0 {
					ev.Provider = res[0].Provider
				}
				step.Queries[i] = queryStep{Query: q, Results: n, Provider: ev.Provider}
				per[i] = res
			}
			sink.Emit(event.Event{Type: event.TypeQuery, Time: time.Now(), Query: ev})
			return nil // one failed query must not cancel the others
		})
	}
	_ = g.Wait()
	var all []search.Result
	for _, r := range per {
		all = append(all, r...)
	}
	return all, step
}

// ranking reranks a run's results, reporting once when the configured
// reranker fails; BM25 stands in from then on.
type ranking struct {
	s      *Mode
	sink   event.Sink
	warned bool
}

// rerank orders results by relevance to the query (BM25, or the
// configured reranker) and keeps topK.
func (rr *ranking) rerank(ctx context.Context, query string, pool []search.Result, topK int) []search.Result {
	docs := make([]rank.Doc, len(pool))
	for i, r := range pool {
		docs[i] = rank.Doc{ID: r.URL, Text: r.Title + "\n" + r.Snippet + "\n" + r.Content}
	}
	var scored []rank.Scored
	if rr.s.cfg.Reranker == nil || rr.warned {
		// After one failure the run keeps to BM25 rather than waiting on
		// a failing embedding endpoint again at every step.
		scored = rank.Rerank(query, docs, topK)
	} else {
		var err error
		scored, err = rr.s.cfg.Reranker.Rerank(ctx, query, docs, topK)
		if err != nil && ctx.Err() == nil && !rr.warned {
			rr.warned = true
			mode.Warn(rr.sink, "rerank", "Embedding rerank failed; ranking by keywords", err.Error())
		}
	}
	out := make([]search.Result, 0, len(scored))
	for _, sc := range scored {
		out = append(out, pool[sc.Index])
	}
	return out
}

// readPages reads up to ScrapeTopN candidates in parallel and summarises
// each; a page that cannot be read is replaced by the next candidate. At
// most Concurrency pages are fetched at once; a page's summary does not
// hold a fetch slot, so the next page is fetched while it is written.
// Pages read ahead (ahead) are taken as they are, or waited for.
func (s *Mode) readPages(ctx context.Context, sink event.Sink, query string, focus []string, language lang.Language,
	candidates []search.Result, steps *searchSteps, ahead *readAhead, fetchSlots chan struct{}) []readPage {
	want := min(s.cfg.ScrapeTopN, len(candidates))
	var (
		mu       sync.Mutex
		pages    = make([]*readPage, len(candidates))
		got      int
		next     = 0
		inFlight int
		late     bool // the grace after the first page is over
	)
	// Fetches run under their own context: once the first page is read,
	// pages still loading after ReadGrace are given up (late), so one slow
	// site does not hold the answer for SOVA_FETCH_TIMEOUT. A summary
	// under way is not cut: the page it summarises was read in time.
	fetchCtx, stopFetches := context.WithCancel(ctx)
	defer stopFetches()
	var graceOnce sync.Once
	startGrace := func() {
		if s.cfg.ReadGrace <= 0 {
			return
		}
		graceOnce.Do(func() {
			t := time.AfterFunc(s.cfg.ReadGrace, func() {
				mu.Lock()
				late = true
				mu.Unlock()
				stopFetches()
			})
			context.AfterFunc(fetchCtx, func() { t.Stop() })
		})
	}
	// take hands out the next candidate while fewer than want pages have
	// been read or are being read, and none once the grace is over.
	take := func() (int, bool) {
		mu.Lock()
		defer mu.Unlock()
		if late || got+inFlight >= want || next >= len(candidates) {
			return 0, false
		}
		i := next
		next++
		inFlight++
		return i, true
	}
	var skipped []string
	g, gctx := errgroup.WithContext(ctx)
	for w := 0; w < want; w++ {
		g.Go(func() error {
			for {
				i, ok := take()
				if !ok {
					return nil
				}
				p, step := s.readOne(gctx, fetchCtx, sink, query, focus, language, candidates[i], fetchSlots, ahead)
				mu.Lock()
				inFlight--
				if p == nil && step.Error == errSlowPage.Error() {
					skipped = append(skipped, candidates[i].URL)
				}
				steps.Pages = append(steps.Pages, step)
				if p != nil {
					pages[i] = p
					got++
				}
				mu.Unlock()
				if p != nil {
					startGrace()
				}
				if gctx.Err() != nil {
					return nil
				}
			}
		})
	}
	_ = g.Wait()
	if len(skipped) > 0 {
		mode.Status(sink, "read", fmt.Sprintf("Answering without %d slow page(s)", len(skipped)),
			fmt.Sprintf("still loading %s after the first page was read: %s", s.cfg.ReadGrace, strings.Join(skipped, ", ")))
	}
	var out []readPage
	for _, p := range pages {
		if p != nil {
			out = append(out, *p)
		}
	}
	return out
}

// errSlowQuery is a query given up because another had answered and it
// was still running after the grace (Config.ReadGrace).
var errSlowQuery = errors.New("skipped: still searching")

// errSlowPage is a page given up because the others were read and it
// was still loading after the grace (Config.ReadGrace).
var errSlowPage = errors.New("skipped: still loading when the other pages had been read")

// readOne reads and summarises one result: the page is fetched under
// fetchCtx (given up when the run stops waiting for slow pages), the
// summary under ctx.
func (s *Mode) readOne(ctx, fetchCtx context.Context, sink event.Sink, query string, focus []string, language lang.Language,
	r search.Result, fetchSlots chan struct{}, ahead *readAhead) (*readPage, pageStep) {
	sink.Emit(event.Event{Type: event.TypePage, Time: time.Now(), Page: &event.Page{URL: r.URL, Title: r.Title, State: event.PageReading}})
	pre := ahead.take(r.URL)
	var page *fetch.Page
	var err error
	if pre != nil {
		page, err = pre.page(fetchCtx)
	} else {
		page, err = s.fetchPage(fetchCtx, r.URL, fetchSlots)
	}
	if err != nil && fetchCtx.Err() != nil && ctx.Err() == nil {
		err = errSlowPage
	}
	if err == nil && strings.TrimSpace(page.Markdown) == "" {
		err = errors.New("no readable text on the page")
	}
	if err != nil {
		sink.Emit(event.Event{Type: event.TypePage, Time: time.Now(), Page: &event.Page{URL: r.URL, Title: r.Title, State: event.PageFailed, Error: err.Error()}})
		return nil, pageStep{URL: r.URL, Title: r.Title, Error: err.Error()}
	}
	title := page.Title
	if title == "" {
		title = r.Title
	}
	ex := page.Excerpt(focus...)
	var summary string
	// A summary written ahead serves when it was written from the same
	// excerpt: the passages of a long page are chosen for the queries,
	// and the last iteration's may choose others.
	if pre != nil {
		if pex, psum, perr := pre.summary(ctx); perr == nil && pex.Markdown == ex.Markdown {
			summary = psum
		}
	}
	if summary == "" {
		if summary, err = s.summarise(ctx, query, language, title, ex.Markdown); err != nil {
			// The page was read; its trimmed text serves when no summary can be made.
			summary = ex.Markdown
		}
	}
	src := tools.SourceOf(r)
	src.Title = title
	src.Passages = ex.Sections
	sink.Emit(event.Event{Type: event.TypePage, Time: time.Now(), Page: &event.Page{URL: r.URL, Title: title, State: event.PageRead, Chars: page.Chars}})
	return &readPage{source: src, summary: summary}, pageStep{URL: r.URL, Title: title, Chars: page.Chars}
}

// fetchPage reads a page holding one of the run's fetch slots.
func (s *Mode) fetchPage(ctx context.Context, url string, fetchSlots chan struct{}) (*fetch.Page, error) {
	select {
	case fetchSlots <- struct{}{}:
		defer func() { <-fetchSlots }()
		return s.reader.Fetch(ctx, url)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// summarisePage is a page's excerpt for focus and its summary, as readOne
// makes them (for reading ahead).
func (s *Mode) summarisePage(ctx context.Context, query string, focus []string, language lang.Language, page *fetch.Page, resultTitle string) (fetch.Excerpt, string, error) {
	if strings.TrimSpace(page.Markdown) == "" {
		return fetch.Excerpt{}, "", errors.New("no readable text on the page")
	}
	title := page.Title
	if title == "" {
		title = resultTitle
	}
	ex := page.Excerpt(focus...)
	sum, err := s.summarise(ctx, query, language, title, ex.Markdown)
	return ex, sum, err
}

func (s *Mode) summarise(ctx context.Context, query string, language lang.Language, title, content string) (string, error) {
	sys := "You summarise a web page for a research assistant. Keep every fact, number, date, name and quotation " +
		"that bears on the research request; drop navigation, adverts and anything unrelated. " +
		"At most 200 words, in " + language.Name + ". If the page says nothing relevant, say so in one sentence.\n\n" + agent.UntrustedRule
	user := fmt.Sprintf("Research request: %s\n\nPage title: %s\n\nPage content:\n%s", query, title, agent.Untrusted("web page: "+title, content))
	return tools.Condense(ctx, s.fast, sys, user)
}

func (s *Mode) answerMessages(in mode.Input, history []llm.Message, rewritten string, language lang.Language, pages []readPage) []llm.Message {
	sys := fmt.Sprintf(`You are Sova, a research assistant that answers from web sources.
Write a well-structured answer of %s words in Markdown, in %s (the language of the question).
Rules:
- Use only the numbered sources below for facts; if they do not answer something, say so.
- Cite every factual sentence with the source number in square brackets, like [1] or [2][3], right after the claim.
- Cite only numbers from the list. Do not write a list of sources at the end; it is added for you.
- Prefer specific facts, figures and dates; note where sources disagree.
Current date: %s.

%s`, s.cfg.AnswerWords, language.Name, mode.DateIn(in.Now, in.Timezone), agent.UntrustedRule) + mode.Personal(in)
	var src strings.Builder
	for i, p := range pages {
		fmt.Fprintf(&src, "[%d] %s\nURL: %s\n%s\n\n", i+1, p.source.Title, p.source.URL, agent.Untrusted(p.source.URL, p.summary))
	}
	msgs := []llm.Message{{Role: llm.RoleSystem, Content: sys}}
	msgs = append(msgs, history...)
	user := fmt.Sprintf("Sources:\n\n%s\nQuestion: %s", src.String(), in.Question)
	if rewritten != in.Question {
		user += "\n(Searched as: " + rewritten + ")"
	}
	return append(msgs, llm.Message{Role: llm.RoleUser, Content: user})
}

func clip(s string, n int) string { return mode.Clip(s, n) }
