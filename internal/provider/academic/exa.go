package academic

import (
	"context"
	"github.com/sova-ai/sova/internal/apiclient"
	"strings"

	"github.com/sova-ai/sova/internal/provider/exa"
)

// exaSummaryQuery is what Exa's generated summary is asked to be (000 §3.2).
const exaSummaryQuery = "Abstract of the Paper"

// Exa searches Exa's "research paper" category with a generated abstract
// of each result, on the one Exa client (internal/provider/exa) that the
// web search shares.
type Exa struct {
	client *exa.Client
}

// NewExa returns an Exa searcher for cfg. The key goes in the x-api-key
// header and never into errors.
func NewExa(cfg Config) *Exa {
	return &Exa{client: exa.New(cfg.ExaAPIKey, baseURL(cfg.ExaURL, DefaultExaURL), apiclient.Options{
		HTTPClient: cfg.HTTPClient, Timeout: cfg.Timeout, RetryBackoff: cfg.RetryBackoff, UserAgent: cfg.UserAgent,
	})}
}

// Name returns "exa".
func (e *Exa) Name() string { return "exa" }

// Search runs query as an "auto" search in the research paper category.
func (e *Exa) Search(ctx context.Context, query string, limit int) ([]Paper, error) {
	limit = min(max(limit, 1), exa.MaxResults)
	rs, err := e.client.Search(ctx, exa.Request{
		Query:        query,
		NumResults:   limit,
		Category:     "research paper",
		SummaryQuery: exaSummaryQuery,
	})
	if err != nil {
		return nil, err
	}
	out := make([]Paper, 0, min(limit, len(rs)))
	for _, r := range rs {
		if len(out) == limit {
			break
		}
		p := Paper{
			URL:           string(r.URL),
			Title:         string(r.Title),
			Summary:       string(r.Summary),
			PublishedDate: dateOnly(string(r.PublishedDate)),
			Source:        "exa",
		}
		if p.Summary == "" {
			p.Summary = clip(string(r.Text), 1500)
		}
		if a := strings.TrimSpace(string(r.Author)); a != "" {
			p.Authors = []string{a}
		}
		p.Year = yearOf(p.PublishedDate)
		if strings.Contains(strings.ToLower(p.URL), "doi.org/") {
			p.DOI = bareDOI(p.URL)
		}
		if id := arxivID(p.URL, ""); id != "" {
			p.PDFURL = "https://arxiv.org/pdf/" + id
			p.Venue = "arXiv"
		} else if strings.HasSuffix(strings.ToLower(p.URL), ".pdf") {
			p.PDFURL = p.URL
		}
		p = clean(p)
		if p.URL != "" {
			out = append(out, p)
		}
	}
	return out, nil
}

// clip shortens s to at most n runes, adding "…" when it cut.
func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return strings.TrimSpace(string(r[:n])) + "…"
}
