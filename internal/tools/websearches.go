package tools

import (
	"context"
	"errors"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/multiquery"
	"github.com/sova-ai/sova/internal/search"
)

// MultiWebSearchOptions tune the web group's web_search.
type MultiWebSearchOptions struct {
	// Cite numbers the results as citable sources; nil: not numbered.
	Cite *Citations
	// Results is the default number of results per query (10, 000 §3.1);
	// MaxResults caps what a call may ask for (20).
	Results, MaxResults int
	// ContentRunes clips each result's text (default 1000).
	ContentRunes int
	// Images is how many images a query asks the image search for, in
	// parallel with its results, when the search provider has one
	// (default 4; negative: none).
	Images    int
	Language  string
	BlockList search.BlockList
}

// maxImagesPerQuery bounds the images of one query: the image search's
// and the results' own.
const maxImagesPerQuery = 12

// MultiWebSearchArgs are the web group's web_search arguments (000 §3.1).
type MultiWebSearchArgs struct {
	Queries    agent.StringList `json:"queries" jsonschema:"3 to 5 web search queries"`
	MaxResults []int            `json:"maxResults,omitempty" jsonschema:"results per query, in the order of the queries (default 10)"`
	Topics     []string         `json:"topics,omitempty" jsonschema:"topic per query: general, or news for recent events (the last week)"`
	Quality    []string         `json:"quality,omitempty" jsonschema:"quality per query: default or best (accepted for compatibility; one quality is served)"`
}

// MultiWebSearchResult is the web group's web_search output, 000 §3.1's
// {searches: [{query, results: [{url, title, content, published_date,
// author}], images: [{url, description}]}]}, each result with its
// citation number.
type MultiWebSearchResult struct {
	Searches []WebQuery `json:"searches"`
}

// WebQuery is one query's results.
type WebQuery struct {
	Query   string      `json:"query"`
	Results []WebResult `json:"results"`
	Images  []WebImage  `json:"images"`
	Error   string      `json:"error,omitempty"`
}

// WebResult is one web search result.
type WebResult struct {
	Number        int    `json:"number,omitempty"`
	URL           string `json:"url"`
	Title         string `json:"title"`
	Content       string `json:"content"`
	PublishedDate string `json:"published_date,omitempty"`
	Author        string `json:"author,omitempty"`
}

// WebImage is an image found for a query: by the provider's image search
// or with a result. The page shows it through the image proxy.
type WebImage struct {
	URL         string `json:"url"`
	Description string `json:"description"`
	// Thumbnail is a smaller copy, when the provider has one.
	Thumbnail string `json:"thumbnail,omitempty"`
	// Source is the page the image is on.
	Source string `json:"source,omitempty"`
}

// MultiWebSearch is the web group's web_search (seed 000 §3.1): 1–5
// queries (3–5 asked for) in parallel over the run's search chain, each
// with its result count and topic, results de-duplicated and without
// blocked sites; each query shows as data-query_completion. When the
// provider searches images (SearXNG, Tavily), each query's images are
// searched in parallel with its results (000 §3.1); an image search that
// fails leaves the query without images. A query that fails is reported
// in its search; the call fails when every query did.
func MultiWebSearch(run *Run, o MultiWebSearchOptions) agent.Tool {
	if o.Results <= 0 {
		o.Results = 10
	}
	if o.MaxResults <= 0 {
		o.MaxResults = 20
	}
	if o.ContentRunes <= 0 {
		o.ContentRunes = 1000
	}
	if o.Images == 0 {
		o.Images = 4
	}
	call := func(ctx context.Context, a MultiWebSearchArgs) (agent.Output, error) {
		if run.p.Search == nil {
			return agent.Output{}, errors.New("web search is not available")
		}
		queries, err := multiquery.Validate(a.Queries, 0)
		if err != nil {
			return agent.Output{}, err
		}
		imager, _ := run.p.Search.(search.ImageSearcher)
		if o.Images < 0 {
			imager = nil
		}
		images := make([][]search.Image, len(queries)) // each written by its query only
		outs := multiquery.Run(ctx, queries, run.progress(), func(ctx context.Context, i int, q string) ([]search.Result, error) {
			n := min(max(multiquery.At(a.MaxResults, i, o.Results), 1), o.MaxResults)
			sq := search.Query{Text: q, MaxResults: n, Language: o.Language}
			if multiquery.At(a.Topics, i, "general") == "news" {
				sq.TimeRange = "week"
			}
			var wg sync.WaitGroup
			if imager != nil {
				wg.Go(func() {
					if imgs, err := imager.SearchImages(ctx, search.Query{Text: q, MaxResults: o.Images, Language: o.Language}); err == nil {
						images[i] = imgs
					}
				})
			}
			res, err := run.p.Search.Search(ctx, sq)
			run.NoteSearch(err)
			wg.Wait()
			if err != nil {
				return nil, err
			}
			res = search.Filter(search.Dedupe(res), o.BlockList)
			return res[:min(len(res), n)], nil
		})
		if err := ctx.Err(); err != nil {
			return agent.Output{}, err
		}
		if err := multiquery.AllFailed(outs); err != nil {
			return agent.Output{}, err
		}
		out := MultiWebSearchResult{Searches: make([]WebQuery, len(queries))}
		total := 0
		for i, oc := range outs {
			wq := WebQuery{Query: queries[i], Results: make([]WebResult, 0, len(oc.Results)), Images: []WebImage{}}
			if oc.Err != nil {
				wq.Error = oc.Err.Error()
			}
			seen := map[string]bool{}
			addImage := func(img WebImage) {
				if img.URL != "" && !seen[img.URL] && len(wq.Images) < maxImagesPerQuery {
					seen[img.URL] = true
					wq.Images = append(wq.Images, img)
				}
			}
			for _, img := range images[i] {
				addImage(WebImage{URL: img.URL, Description: img.Description, Thumbnail: img.Thumbnail, Source: img.Source})
			}
			for _, r := range oc.Results {
				content, src := r.Content, SourceOf(r)
				if content == "" {
					// Only the engine's snippet: cited, it is marked so.
					content, src.SnippetOnly = r.Snippet, true
				}
				wq.Results = append(wq.Results, WebResult{
					Number: number(o.Cite, src), URL: r.URL, Title: r.Title, Content: clip(content, o.ContentRunes),
					PublishedDate: r.Published, Author: r.Author,
				})
				for _, img := range r.Images {
					addImage(WebImage{URL: img, Description: r.Title, Source: r.URL})
				}
			}
			total += len(wq.Results)
			out.Searches[i] = wq
		}
		return jsonOutput(out, plural(total, "result", "results")+" for "+plural(len(queries), "query", "queries"))
	}
	return agent.NewTool(WebSearchName,
		"Search the web. Give 3 to 5 queries that cover the question from different sides; returns per query the numbered results "+
			"with title, URL, content and date.",
		call,
		agent.WithTitle(func(a MultiWebSearchArgs) string { return "Searching the web for " + quoteList(a.Queries) }),
		queriesSchema("queries", "3 to 5 web search queries, each as a person would type it"),
		agent.WithSchema(func(s *jsonschema.Schema) {
			if p := s.Properties["topics"]; p != nil && p.Items != nil {
				p.Items.Enum = []any{"general", "news"}
			}
			if p := s.Properties["quality"]; p != nil && p.Items != nil {
				p.Items.Enum = []any{"default", "best"}
			}
		}))
}
