package extreme

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"golang.org/x/sync/errgroup"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/search"
	"github.com/sova-ai/sova/internal/tools"
)

// WebSearchArgs are webSearch's arguments (seed 000 §2.2).
type WebSearchArgs struct {
	Query          string   `json:"query" jsonschema:"the search query, 5 to 15 words"`
	Category       string   `json:"category,omitempty" jsonschema:"news for recent events, general otherwise (default general)"`
	IncludeDomains []string `json:"includeDomains,omitempty" jsonschema:"only results from these domains, like reuters.com"`
}

// webResult is one result as the model reads it (seed: title, url,
// content, publishedDate), with its citation number.
type webResult struct {
	Number        int    `json:"number"`
	Title         string `json:"title"`
	URL           string `json:"url"`
	Content       string `json:"content"`
	PublishedDate string `json:"publishedDate,omitempty"`
}

// minProviderText is how much text a provider must give of a result for
// it to stand in for reading the page.
const minProviderText = 600

// minReadText is the least text a read page must yield to replace the
// provider's (seed 000 §2.2: the fallback below 100 characters).
const minReadText = 100

func (s *session) webSearchTool() agent.Tool {
	return agent.NewTool(WebSearchName,
		"Search the web. Returns the numbered results with title, URL, the text read from the page and its date. "+
			"Cite results by their numbers.",
		s.webSearch,
		agent.WithTitle(func(a WebSearchArgs) string { return "Searching the web for “" + a.Query + "”" }),
		agent.WithSchema(func(sc *jsonschema.Schema) {
			if p := sc.Properties["category"]; p != nil {
				p.Enum = []any{"general", "news"}
			}
		}))
}

// webSearch is one search (seed 000 §2.2): the query's results as sources,
// the text of the best ones read, every step a part of the stream.
func (s *session) webSearch(ctx context.Context, a WebSearchArgs) (agent.Output, error) {
	q := strings.Join(strings.Fields(a.Query), " ")
	if q == "" {
		return agent.Text("Error: the query is empty; give 5 to 15 words."), nil
	}
	if n := len([]rune(q)); n > 400 {
		return agent.Text(fmt.Sprintf("Error: the query is %d characters long; write a short search query of 5 to 15 words.", n)), nil
	}
	part := QueryPart{Kind: KindQuery, QueryID: partID(ctx, "q_"), Query: q, Status: QueryStarted, Category: a.Category,
		IncludeDomains: a.IncludeDomains, Sources: []SourceInfo{}}
	id := "query-" + part.QueryID
	s.parts.emit(id, part)
	fail := func(err error) (agent.Output, error) {
		part.Status, part.Error = QueryError, err.Error()
		s.parts.emit(id, part)
		return agent.Output{}, err
	}
	if s.cfg.Providers.Search == nil {
		return fail(errors.New("web search is not available"))
	}
	// Domain filters are host names only; what else the model wrote
	// there is left out, and it is told so.
	hosts, rejected := search.HostNames(a.IncludeDomains)
	var notes []string
	if len(rejected) > 0 {
		notes = append(notes, fmt.Sprintf("includeDomains takes host names such as reuters.com; %q is not one and was left out", rejected))
	}
	sq := search.Query{Text: q, MaxResults: s.cfg.Results, Language: s.lang.Code, IncludeDomains: hosts}
	if a.Category == "news" {
		sq.TimeRange = "week"
	}
	s.read.SetQuestion(q) // pages are read for the queries too
	find := func(sq search.Query) ([]search.Result, error) {
		res, err := s.cfg.Providers.Search.Search(ctx, sq)
		if err != nil {
			return nil, err
		}
		res = search.Filter(search.Dedupe(res), s.cfg.BlockList)
		return res[:min(len(res), s.cfg.Results)], nil
	}
	res, err := find(sq)
	if err == nil && len(res) == 0 && len(hosts) > 0 {
		// A filter that empties the search is dropped rather than leaving
		// the agent with nothing to read.
		sq.IncludeDomains = nil
		if res, err = find(sq); err == nil {
			notes = append(notes, fmt.Sprintf("no result came from %s, so these results are from the whole web", strings.Join(hosts, ", ")))
		}
	}
	s.read.NoteSearch(err)
	if err != nil {
		if ctx.Err() != nil {
			return agent.Output{}, ctx.Err()
		}
		return fail(err)
	}

	results := make([]webResult, len(res))
	for i, r := range res {
		src := tools.SourceOf(r)
		text := r.Content
		if text == "" {
			text = r.Snippet
		}
		n := s.addSource(src, mode.Clip(text, s.cfg.ContentChars))
		info := SourceInfo{Title: r.Title, URL: r.URL, Favicon: r.Favicon, Number: n}
		results[i] = webResult{Number: n, Title: r.Title, URL: r.URL, Content: mode.Clip(text, s.cfg.ContentChars), PublishedDate: r.Published}
		part.Sources = append(part.Sources, info)
		s.parts.emit(fmt.Sprintf("source-%s-%d", part.QueryID, i+1), SourcePart{Kind: KindSource, QueryID: part.QueryID, Source: info})
	}
	part.Status = QueryReading
	s.parts.emit(id, part)
	s.readContents(ctx, part.QueryID, res, results)
	if err := ctx.Err(); err != nil {
		return agent.Output{}, err
	}
	part.Status = QueryCompleted
	s.parts.emit(id, part)

	body := map[string]any{"query": q, "results": results}
	if len(notes) > 0 {
		body["note"] = strings.Join(notes, "; ")
	}
	text, err := json.Marshal(body)
	if err != nil {
		return agent.Output{}, err
	}
	return agent.Output{Text: string(text), Summary: fmt.Sprintf("%d results", len(results))}, nil
}

// readContents reads the pages of the first results whose provider gave
// little text of them (seed: the contents of the results, 3000 characters
// each), in parallel, and emits what each source holds. A page that
// cannot be read keeps the provider's text.
func (s *session) readContents(ctx context.Context, queryID string, res []search.Result, results []webResult) {
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.cfg.Concurrency)
	toRead := 0
	for i, r := range res {
		if len([]rune(r.Content)) >= minProviderText || toRead >= s.cfg.ReadPages || s.cfg.Providers.Reader == nil {
			continue
		}
		toRead++
		g.Go(func() error {
			pg, err := s.read.Read(gctx, r.URL, r.Title)
			if err != nil {
				return nil // one page failing leaves the others
			}
			text := mode.Clip(pg.Excerpt(s.read.Focus()...).Markdown, s.cfg.ContentChars)
			if len([]rune(strings.TrimSpace(text))) < minReadText {
				return nil // a page that yields next to nothing keeps the provider's text
			}
			mu.Lock()
			results[i].Content = text
			if pg.Published != "" && results[i].PublishedDate == "" {
				results[i].PublishedDate = pg.Published
			}
			mu.Unlock()
			return nil
		})
	}
	_ = g.Wait()
	for i, r := range results {
		s.addSource(tools.SourceOf(res[i]), r.Content)
		s.parts.emit(fmt.Sprintf("content-%s-%d", queryID, i+1), ContentPart{Kind: KindContent, QueryID: queryID,
			Content: ContentInfo{Title: r.Title, URL: r.URL, Text: r.Content, Favicon: res[i].Favicon}})
	}
}
