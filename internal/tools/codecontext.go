package tools

import (
	"context"
	"errors"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/search"
)

// CodeContextName is the code group's search (seed 000 §4.2).
const CodeContextName = "code_context"

// CodeContextOptions tune a code_context tool.
type CodeContextOptions struct {
	// Cite numbers the results as citable sources; nil: not numbered.
	Cite *Citations
	// Results is the number of results (default 10, 000 §4.2).
	Results int
	// Read is how many of the first results are read in full when the
	// search returns no page text (default 3).
	Read int
	// ContentRunes clips each result's text (default 4000).
	ContentRunes int
	BlockList    search.BlockList
}

// CodeContextArgs are code_context's arguments (000 §4.2).
type CodeContextArgs struct {
	Query string `json:"query" jsonschema:"the programming question: library, function, error message or task"`
}

// CodeContextResult is code_context's output, 000 §4.2's {results: [{url,
// title, content, score}]}, each result with its citation number.
type CodeContextResult struct {
	Query   string            `json:"query"`
	Results []CodeContextPage `json:"results"`
}

// CodeContextPage is one page of code context.
type CodeContextPage struct {
	Number  int     `json:"number,omitempty"`
	URL     string  `json:"url"`
	Title   string  `json:"title"`
	Content string  `json:"content"`
	Score   float64 `json:"score,omitempty"`
	// Docs is true for official documentation and reference sites.
	Docs bool `json:"docs,omitempty"`
}

// CodeContext is the code_context tool: documentation and code examples
// for a programming question. With its own search (Tavily, advanced
// depth, pages as Markdown) the pages' text comes with the results;
// without, the run's web search is used, documentation sites first, and
// the first results are read.
func CodeContext(run *Run, o CodeContextOptions) agent.Tool {
	if o.Results <= 0 {
		o.Results = 10
	}
	if o.Read <= 0 {
		o.Read = 3
	}
	if o.ContentRunes <= 0 {
		o.ContentRunes = 4000
	}
	call := func(ctx context.Context, a CodeContextArgs) (agent.Output, error) {
		q := strings.Join(strings.Fields(a.Query), " ")
		if q == "" {
			return agent.Output{}, errors.New("the query is empty")
		}
		searcher := run.p.Code
		if searcher == nil {
			searcher = run.p.Search
		}
		if searcher == nil {
			return agent.Output{}, errors.New("web search is not available")
		}
		res, err := single(ctx, run, q, func(ctx context.Context) ([]search.Result, error) {
			res, err := searcher.Search(ctx, search.Query{Text: q, MaxResults: o.Results})
			if err != nil {
				return nil, err
			}
			res = search.Filter(search.Dedupe(res), o.BlockList)
			return DocsFirst(res)[:min(len(res), o.Results)], nil
		})
		if err != nil {
			return agent.Output{}, err
		}
		out := CodeContextResult{Query: q, Results: make([]CodeContextPage, len(res))}
		for i, r := range res {
			text := r.Content
			if text == "" {
				text = r.Snippet
			}
			out.Results[i] = CodeContextPage{URL: r.URL, Title: r.Title, Content: clip(text, o.ContentRunes), Score: r.Score, Docs: IsDocsSite(r.URL)}
		}
		if run.p.Code == nil && run.p.Reader != nil {
			// The web search gave snippets: read the first pages.
			g, gctx := errgroup.WithContext(ctx)
			for i := range out.Results[:min(o.Read, len(out.Results))] {
				r := &out.Results[i]
				g.Go(func() error {
					pg, err := run.Read(gctx, r.URL, r.Title)
					if err != nil {
						return gctx.Err() // a page that cannot be read keeps its snippet
					}
					r.Content = clip(pg.Markdown, o.ContentRunes)
					if r.Title == "" {
						r.Title = pg.Title
					}
					return nil
				})
			}
			if err := g.Wait(); err != nil {
				return agent.Output{}, err
			}
		}
		for i := range out.Results {
			r := &out.Results[i]
			r.Number = number(o.Cite, sova.Source{URL: r.URL, Title: r.Title, Snippet: clip(r.Content, 300), Kind: sova.SourceWeb})
		}
		return jsonOutput(out, plural(len(out.Results), "result", "results"))
	}
	return agent.NewTool(CodeContextName,
		"Find documentation and code examples for a programming question. Returns numbered pages (official documentation first) with their text.",
		call,
		agent.WithTitle(func(a CodeContextArgs) string { return "Looking up code context for “" + a.Query + "”" }))
}

// docsHostRE matches the hosts of documentation sites.
var docsHostRE = regexp.MustCompile(`^(docs?|developers?|devdocs|api|reference|learn|manual|wiki)\.|\.readthedocs\.(io|org)$|^(pkg\.go\.dev|go\.dev|docs\.rs|developer\.mozilla\.org|cppreference\.com|en\.cppreference\.com|man7\.org|hexdocs\.pm|rubydoc\.info|javadoc\.io|kotlinlang\.org|doc\.rust-lang\.org|nodejs\.org|typescriptlang\.org|react\.dev|vuejs\.org|postgresql\.org|sqlite\.org|python\.org)$`)

// docsPathRE matches documentation paths on other hosts.
var docsPathRE = regexp.MustCompile(`(?i)/(docs?|documentation|reference|manual|api|guide|guides|library|stdlib)(/|$)`)

// IsDocsSite reports whether u is a page of official documentation or a
// reference: a docs host (docs.python.org, pkg.go.dev, *.readthedocs.io,
// …) or a /docs/, /reference/, /api/ path.
func IsDocsSite(u string) bool {
	p, err := url.Parse(u)
	if err != nil {
		return false
	}
	host := strings.TrimPrefix(strings.ToLower(p.Hostname()), "www.")
	return docsHostRE.MatchString(host) || docsPathRE.MatchString(p.Path)
}

// codeHosts are where code examples live, after the documentation.
var codeHosts = []string{"github.com", "gist.github.com", "stackoverflow.com", "gitlab.com", "codeberg.org"}

// DocsFirst orders results documentation sites first, then code hosts
// (GitHub, Stack Overflow, …), then the rest, each group in its order.
func DocsFirst(res []search.Result) []search.Result {
	rank := func(r search.Result) int {
		if IsDocsSite(r.URL) {
			return 0
		}
		if p, err := url.Parse(r.URL); err == nil {
			host := strings.TrimPrefix(strings.ToLower(p.Hostname()), "www.")
			if slices.Contains(codeHosts, host) || strings.HasSuffix(host, ".stackexchange.com") {
				return 1
			}
		}
		return 2
	}
	out := slices.Clone(res)
	slices.SortStableFunc(out, func(a, b search.Result) int { return rank(a) - rank(b) })
	return out
}
