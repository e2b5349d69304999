package reddit

import (
	"context"
	"fmt"

	"github.com/sova-ai/sova/internal/multiquery"
)

// MaxQueryChars caps the length of one query (000 §3.3).
const MaxQueryChars = 200

// Request is one reddit_search call.
type Request struct {
	// Queries are 1 to 5 queries, run in parallel. A query that is (or
	// contains) a Reddit post URL reads that post and its top comments.
	Queries []string
	// MaxResults[i] caps the posts of Queries[i]; a missing or non-positive
	// entry means DefaultMaxResults.
	MaxResults []int
	// TimeRanges[i] is the time range of Queries[i] ("day", "week",
	// "month", "year", "all"); a missing or empty entry means
	// DefaultTimeRange.
	TimeRanges []string
	// Sort applies to every keyless search ("" means relevance).
	Sort string
}

// Search is the outcome of one query.
type Search struct {
	Query     string `json:"query"`
	TimeRange string `json:"timeRange"`
	Results   []Post `json:"results"`
	Error     string `json:"error,omitempty"` // why the query failed
}

// Result is the outcome of one reddit_search call.
type Result struct {
	Searches []Search `json:"searches"`
}

// Run performs req with c, its queries in parallel. progress, if not nil,
// receives each query's data-query_completion events. A query that fails is
// reported in its Search.Error; Run fails only when the request is invalid,
// ctx ends, or every query failed.
func Run(ctx context.Context, c *Client, req Request, progress multiquery.ProgressFunc) (Result, error) {
	queries, err := multiquery.Validate(req.Queries, MaxQueryChars)
	if err != nil {
		return Result{}, err
	}
	ranges := make([]string, len(queries))
	for i := range queries {
		tr, err := normTimeRange(multiquery.At(req.TimeRanges, i, ""))
		if err != nil {
			return Result{}, fmt.Errorf("query %d: %w", i+1, err)
		}
		ranges[i] = tr
	}
	outs := multiquery.Run(ctx, queries, progress, func(ctx context.Context, i int, q string) ([]Post, error) {
		if _, ok := PostID(q); ok {
			p, err := c.ReadPost(ctx, q, DefaultComments)
			if err != nil {
				return nil, err
			}
			return []Post{p}, nil
		}
		return c.Search(ctx, Query{
			Text: q, TimeRange: ranges[i], Sort: req.Sort,
			MaxResults: max(multiquery.At(req.MaxResults, i, DefaultMaxResults), 0),
		})
	})
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	res := Result{Searches: make([]Search, len(queries))}
	for i, o := range outs {
		s := Search{Query: queries[i], TimeRange: ranges[i], Results: o.Results}
		if s.Results == nil {
			s.Results = []Post{}
		}
		if o.Err != nil {
			s.Error = o.Err.Error()
		}
		res.Searches[i] = s
	}
	if err := multiquery.AllFailed(outs); err != nil {
		return res, err
	}
	return res, nil
}
