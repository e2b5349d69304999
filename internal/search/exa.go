package search

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/sova-ai/sova/internal/provider/exa"
)

// DefaultExaURL is the Exa API base used when NewExa gets "".
const DefaultExaURL = exa.DefaultURL

// exaTextChars is how much page text Exa is asked to return with each
// result; it fills Result.Content and helps reranking.
const exaTextChars = 1500

// Exa is the web search through Exa's API, on the one Exa client
// (internal/provider/exa) that the academic group shares.
type Exa struct {
	client *exa.Client
	now    func() time.Time
}

// NewExa returns a provider for the Exa API. baseURL "" means
// DefaultExaURL; a nil httpClient means an egress client. The key is sent
// in the x-api-key header and never appears in errors.
func NewExa(apiKey, baseURL string, httpClient *http.Client, opts ...Option) *Exa {
	cfg := newConfig(opts)
	return &Exa{
		client: exa.New(apiKey, baseURL, cfg.api(httpClient)),
		now:    time.Now,
	}
}

// Name returns "exa".
func (e *Exa) Name() string { return "exa" }

// Search runs q as an "auto" search with page text. Domains go to Exa's
// includeDomains/excludeDomains, a time range becomes startPublishedDate.
// Exa has no language parameter.
func (e *Exa) Search(ctx context.Context, q Query) ([]Result, error) {
	if err := q.validate(); err != nil {
		return nil, &Error{Provider: e.Name(), Message: "invalid query", Err: err}
	}
	rs, err := e.client.Search(ctx, exa.Request{
		Query:          q.Text,
		NumResults:     q.maxResults(),
		IncludeDomains: normalizeDomains(q.IncludeDomains),
		ExcludeDomains: normalizeDomains(q.ExcludeDomains),
		StartPublished: timeRangeStart(q.TimeRange, e.now()),
		TextChars:      exaTextChars,
	})
	if err != nil {
		return nil, err
	}
	limit := q.maxResults()
	out := make([]Result, 0, min(limit, len(rs)))
	for _, r := range rs {
		if len(out) == limit {
			break
		}
		u := strings.TrimSpace(string(r.URL))
		if u == "" {
			continue
		}
		text := strings.TrimSpace(string(r.Text))
		snip := strings.TrimSpace(strings.Join(r.Highlights, " … "))
		if snip == "" {
			snip = strings.TrimSpace(string(r.Summary))
		}
		if snip == "" {
			snip = clipRunes(text, 300)
		}
		res := Result{
			URL:       u,
			Title:     strings.TrimSpace(string(r.Title)),
			Snippet:   snip,
			Content:   text,
			Published: string(r.PublishedDate),
			Author:    strings.TrimSpace(string(r.Author)),
			Favicon:   string(r.Favicon),
			Provider:  e.Name(),
			Score:     r.Score,
		}
		if r.Image != "" {
			res.Images = []string{string(r.Image)}
		}
		out = append(out, res)
	}
	return out, nil
}

// timeRangeStart returns the earliest publication time a time range
// allows, or the zero time for "".
func timeRangeStart(tr string, now time.Time) time.Time {
	switch tr {
	case "day":
		return now.AddDate(0, 0, -1)
	case "week":
		return now.AddDate(0, 0, -7)
	case "month":
		return now.AddDate(0, -1, 0)
	case "year":
		return now.AddDate(-1, 0, 0)
	}
	return time.Time{}
}

// redact removes a secret from text that came from a server.
func redact(s, secret string) string {
	if secret == "" {
		return s
	}
	return strings.ReplaceAll(s, secret, "[redacted]")
}

// clipRunes shortens s to at most n runes, adding "…" when it cut.
func clipRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return strings.TrimSpace(string(r[:n])) + "…"
}
