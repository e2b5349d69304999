package tools

import (
	"context"
	"errors"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/provider/reddit"
)

// RedditSearchName is the reddit group's search (seed 000 §3.3).
const RedditSearchName = reddit.ToolName

// RedditOptions tune a reddit_search tool.
type RedditOptions struct {
	// Cite numbers the posts as citable sources; nil: not numbered.
	Cite *Citations
}

// RedditSearchArgs are reddit_search's arguments (000 §3.3).
type RedditSearchArgs struct {
	Queries    agent.StringList `json:"queries" jsonschema:"1 to 5 queries"`
	MaxResults []int            `json:"maxResults,omitempty" jsonschema:"posts per query, in the order of the queries (default 20)"`
	TimeRange  []string         `json:"timeRange,omitempty" jsonschema:"time range per query: day, week, month, year or all (default week)"`
}

// RedditResult is reddit_search's output: 000 §3.3's {searches: [{query,
// timeRange, results: [{url, title, content, score, subreddit,
// isRedditPost, comments, …}]}]}, each post with its citation number.
type RedditResult struct {
	Searches []RedditQuery `json:"searches"`
}

// RedditQuery is one query's posts.
type RedditQuery struct {
	Query     string       `json:"query"`
	TimeRange string       `json:"timeRange"`
	Results   []RedditPost `json:"results"`
	Error     string       `json:"error,omitempty"`
}

// RedditPost is a post found, numbered for citation.
type RedditPost struct {
	Number int `json:"number,omitempty"`
	reddit.Post
}

// RedditSearch is the reddit_search tool: 1–5 queries in parallel, each
// with its time range (Tavily limited to reddit.com with a key, Reddit's
// own search without). A query naming a subreddit ("r/golang") searches
// only it; a query that is a post URL reads the post and its top
// comments. Each query shows as data-query_completion.
func RedditSearch(run *Run, o RedditOptions) agent.Tool {
	call := func(ctx context.Context, a RedditSearchArgs) (agent.Output, error) {
		if run.p.Reddit == nil {
			return agent.Output{}, errors.New("reddit search is not available")
		}
		res, err := reddit.Run(ctx, run.p.Reddit, reddit.Request{Queries: a.Queries, MaxResults: a.MaxResults, TimeRanges: a.TimeRange}, run.progress())
		if err != nil {
			return agent.Output{}, err
		}
		out := RedditResult{Searches: make([]RedditQuery, len(res.Searches))}
		n := 0
		for i, s := range res.Searches {
			q := RedditQuery{Query: s.Query, TimeRange: s.TimeRange, Error: s.Error, Results: make([]RedditPost, 0, len(s.Results))}
			for _, p := range s.Results {
				src := sova.Source{URL: p.URL, Title: p.Title, Snippet: clip(p.Content, 300), Kind: sova.SourceWeb}
				if !p.Created.IsZero() {
					src.Published = p.Created.Format(time.DateOnly)
				}
				q.Results = append(q.Results, RedditPost{Number: number(o.Cite, src), Post: p})
			}
			n += len(q.Results)
			out.Searches[i] = q
		}
		return jsonOutput(out, plural(n, "post", "posts")+" for "+plural(len(out.Searches), "query", "queries"))
	}
	return agent.NewTool(RedditSearchName,
		"Search Reddit posts and discussions. Give 1 to 5 queries (at most 200 characters each) with a time range each; "+
			"a query may name a subreddit (r/golang) or be a post URL to read that post and its top comments. "+
			"Returns numbered posts with subreddit, score, excerpt and comments.",
		call,
		agent.WithTitle(func(a RedditSearchArgs) string { return "Searching Reddit for " + quoteList(a.Queries) }),
		queriesSchema("queries", "1 to 5 queries of at most 200 characters; name a subreddit as r/name, or give a post URL to read it"),
		agent.WithSchema(func(s *jsonschema.Schema) {
			if p := s.Properties["timeRange"]; p != nil && p.Items != nil {
				p.Items.Enum = []any{"day", "week", "month", "year", "all"}
			}
		}))
}
