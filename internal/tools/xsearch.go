package tools

import (
	"context"
	"errors"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/provider/xai"
)

// XSearchName is the x group's search of posts on X (seed 000 §3.4).
const XSearchName = xai.ToolName

// XSearchOptions tune an x_search tool.
type XSearchOptions struct {
	// Cite numbers the posts as citable sources; nil: not numbered.
	Cite *Citations
	// Now is today, for the default dates; nil means time.Now.
	Now func() time.Time
}

// XSearchArgs are x_search's arguments (000 §3.4).
type XSearchArgs struct {
	Queries            agent.StringList `json:"queries" jsonschema:"1 to 5 queries for posts on X"`
	StartDate          string           `json:"startDate,omitempty" jsonschema:"first day of the posts, YYYY-MM-DD (default 15 days ago)"`
	EndDate            string           `json:"endDate,omitempty" jsonschema:"last day of the posts, YYYY-MM-DD (default today)"`
	IncludeXHandles    []string         `json:"includeXHandles,omitempty" jsonschema:"only posts by these handles (at most 10; not with excludeXHandles)"`
	ExcludeXHandles    []string         `json:"excludeXHandles,omitempty" jsonschema:"no posts by these handles (at most 10; not with includeXHandles)"`
	PostFavoritesCount int              `json:"postFavoritesCount,omitempty" jsonschema:"least likes a post must have"`
	PostViewCount      int              `json:"postViewCount,omitempty" jsonschema:"least views a post must have"`
	MaxResults         []int            `json:"maxResults,omitempty" jsonschema:"posts per query, in the order of the queries (default 15, at most 50)"`
}

// XSearchResult is x_search's output, 000 §3.4's {searches: [{content,
// citations, sources: [{text, link, title}], query, dateRange, handles}],
// dateRange, handles}, each source with its citation number.
type XSearchResult struct {
	Searches  []XQuery      `json:"searches"`
	DateRange xai.DateRange `json:"dateRange"`
	Handles   xai.Handles   `json:"handles"`
}

// XQuery is one query's outcome.
type XQuery struct {
	Query     string        `json:"query"`
	Content   string        `json:"content"`
	Citations []string      `json:"citations"`
	Sources   []XSource     `json:"sources"`
	DateRange xai.DateRange `json:"dateRange"`
	Handles   xai.Handles   `json:"handles"`
	Error     string        `json:"error,omitempty"`
}

// XSource is a post, numbered for citation.
type XSource struct {
	Number int `json:"number,omitempty"`
	xai.Source
}

// XSearch is the x_search tool: 1–5 queries in parallel through xAI's
// search restricted to X, with dates, handles and least likes and views;
// each query shows as data-query_completion. It exists only with
// XAI_API_KEY.
func XSearch(run *Run, o XSearchOptions) agent.Tool {
	if o.Now == nil {
		o.Now = time.Now
	}
	call := func(ctx context.Context, a XSearchArgs) (agent.Output, error) {
		if run.p.X == nil {
			return agent.Output{}, errors.New("searching X needs XAI_API_KEY")
		}
		res, err := xai.Run(ctx, run.p.X, xai.Request{
			Queries: a.Queries, StartDate: a.StartDate, EndDate: a.EndDate,
			IncludeHandles: a.IncludeXHandles, ExcludeHandles: a.ExcludeXHandles,
			PostFavoritesCount: a.PostFavoritesCount, PostViewCount: a.PostViewCount,
			MaxResults: a.MaxResults, Now: o.Now(),
		}, run.progress())
		if err != nil {
			return agent.Output{}, err
		}
		out := XSearchResult{DateRange: res.DateRange, Handles: res.Handles, Searches: make([]XQuery, len(res.Searches))}
		n := 0
		for i, s := range res.Searches {
			q := XQuery{Query: s.Query, Content: s.Content, Citations: s.Citations, DateRange: s.DateRange, Handles: s.Handles,
				Error: s.Error, Sources: make([]XSource, 0, len(s.Sources))}
			for _, src := range s.Sources {
				num := number(o.Cite, sova.Source{URL: src.Link, Title: src.Title, Snippet: clip(src.Text, 300), Kind: sova.SourceWeb})
				q.Sources = append(q.Sources, XSource{Number: num, Source: src})
			}
			n += len(q.Sources)
			out.Searches[i] = q
		}
		return jsonOutput(out, plural(n, "post", "posts")+" for "+plural(len(out.Searches), "query", "queries"))
	}
	return agent.NewTool(XSearchName,
		"Search posts on X (Twitter) of the last 15 days unless dates are given. Give 1 to 5 queries; optionally restrict authors, dates, "+
			"least likes and views. Returns per query what the posts say and the numbered posts.",
		call,
		agent.WithTitle(func(a XSearchArgs) string { return "Searching X for " + quoteList(a.Queries) }),
		queriesSchema("queries", "1 to 5 queries for posts on X"))
}
