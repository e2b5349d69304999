package search

import (
	"cmp"
	"context"
	"net/http"
	"strings"

	"github.com/sova-ai/sova/internal/provider/tavily"
)

// DefaultTavilyURL is the Tavily API base used when NewTavily gets "".
const DefaultTavilyURL = tavily.DefaultURL

// Tavily is the web search through Tavily's API, on the one Tavily client
// (internal/provider/tavily) that the Reddit group shares.
type Tavily struct {
	client *tavily.Client
	cfg    config
}

// NewTavily returns a provider for the Tavily API. baseURL "" means
// DefaultTavilyURL; a nil httpClient means an egress client. The key is
// sent as a bearer token and never appears in errors.
func NewTavily(apiKey, baseURL string, httpClient *http.Client, opts ...Option) *Tavily {
	cfg := newConfig(opts)
	return &Tavily{
		client: tavily.New(apiKey, baseURL, cfg.api(httpClient)),
		cfg:    cfg,
	}
}

// Name returns "tavily".
func (t *Tavily) Name() string { return "tavily" }

// Search runs q as a general search, of basic depth unless
// WithAdvancedDepth was given. Tavily has no language
// parameter, so q.Language is not sent. Tavily returns query-level images
// (only when WithImages was given); they are attached to the first result.
func (t *Tavily) Search(ctx context.Context, q Query) ([]Result, error) {
	if err := q.validate(); err != nil {
		return nil, &Error{Provider: t.Name(), Message: "invalid query", Err: err}
	}
	resp, err := t.client.Search(ctx, tavily.Request{
		Query:             q.Text,
		MaxResults:        q.maxResults(),
		SearchDepth:       cmp.Or(t.cfg.depth, "basic"),
		IncludeDomains:    normalizeDomains(q.IncludeDomains),
		ExcludeDomains:    normalizeDomains(q.ExcludeDomains),
		TimeRange:         q.TimeRange,
		IncludeImages:     t.cfg.images,
		IncludeRawContent: t.cfg.raw,
	})
	if err != nil {
		return nil, err
	}
	limit := q.maxResults()
	out := make([]Result, 0, min(limit, len(resp.Results)))
	for _, r := range resp.Results {
		if len(out) == limit {
			break
		}
		u := strings.TrimSpace(r.URL)
		if u == "" {
			continue
		}
		out = append(out, Result{
			URL:       u,
			Title:     strings.TrimSpace(r.Title),
			Snippet:   strings.TrimSpace(r.Content),
			Content:   strings.TrimSpace(string(r.RawContent)),
			Published: string(r.PublishedDate),
			Favicon:   string(r.Favicon),
			Provider:  t.Name(),
			Score:     r.Score,
		})
	}
	if len(out) > 0 {
		for _, img := range resp.Images {
			if img.URL != "" {
				out[0].Images = append(out[0].Images, img.URL)
			}
		}
	}
	return out, nil
}
