package academic

import (
	"context"

	"github.com/sova-ai/sova/internal/multiquery"
)

// Limits of one academic_search call (000 §3.2).
const (
	// DefaultMaxResults is the number of papers a query asks for when the
	// call does not say.
	DefaultMaxResults = 20
	// MaxResults caps what one query may ask for.
	MaxResults = 100
)

// Request is one academic_search call.
type Request struct {
	// Queries are 1 to 5 search queries, run in parallel.
	Queries []string
	// MaxResults[i] caps the results of Queries[i]; a missing or
	// non-positive entry means DefaultMaxResults.
	MaxResults []int
}

// Search is the outcome of one query.
type Search struct {
	Query   string  `json:"query"`
	Results []Paper `json:"results"`
	Error   string  `json:"error,omitempty"` // why the query failed
}

// Result is the outcome of one academic_search call.
type Result struct {
	Searches []Search `json:"searches"`
}

// Run performs req with s: its queries in parallel, each query's papers
// cleaned (title without a trailing "[...]", summary without "Summary:")
// and de-duplicated by URL, DOI and arXiv identifier. progress, if not nil,
// receives each query's data-query_completion events. A query that fails
// is reported in its Search.Error; Run fails only when the request is
// invalid, ctx ends, or every query failed.
func Run(ctx context.Context, s Searcher, req Request, progress multiquery.ProgressFunc) (Result, error) {
	queries, err := multiquery.Validate(req.Queries, 0)
	if err != nil {
		return Result{}, err
	}
	outs := multiquery.Run(ctx, queries, progress, func(ctx context.Context, i int, q string) ([]Paper, error) {
		limit := min(multiquery.At(req.MaxResults, i, DefaultMaxResults), MaxResults)
		if limit <= 0 {
			limit = DefaultMaxResults
		}
		papers, err := s.Search(ctx, q, limit)
		if err != nil {
			return nil, err
		}
		for j := range papers {
			papers[j] = clean(papers[j])
		}
		papers = Dedupe(papers)
		if len(papers) > limit {
			papers = papers[:limit]
		}
		return papers, nil
	})
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	res := Result{Searches: make([]Search, len(queries))}
	for i, o := range outs {
		res.Searches[i] = Search{Query: queries[i], Results: o.Results}
		if res.Searches[i].Results == nil {
			res.Searches[i].Results = []Paper{}
		}
		if o.Err != nil {
			res.Searches[i].Error = o.Err.Error()
		}
	}
	if err := multiquery.AllFailed(outs); err != nil {
		return res, err
	}
	return res, nil
}
