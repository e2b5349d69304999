package academic

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/sova-ai/sova/internal/apiclient"
)

// exaMaxResults is the most results one Exa search returns.
const exaMaxResults = 100

// exaSummaryQuery is what Exa's generated summary is asked to be (000 §3.2).
const exaSummaryQuery = "Abstract of the Paper"

// Exa searches Exa's "research paper" category (POST /search) with a
// generated abstract of each result.
type Exa struct {
	base string
	key  string
	api  *apiclient.Client
}

// NewExa returns an Exa searcher for cfg. The key goes in the x-api-key
// header and never into errors.
func NewExa(cfg Config) *Exa {
	key := strings.TrimSpace(cfg.ExaAPIKey)
	return &Exa{
		base: baseURL(cfg.ExaURL, DefaultExaURL),
		key:  key,
		api:  cfg.client("exa", []string{key}, describeExa),
	}
}

// Name returns "exa".
func (e *Exa) Name() string { return "exa" }

// Search runs query as an "auto" search in the research paper category.
func (e *Exa) Search(ctx context.Context, query string, limit int) ([]Paper, error) {
	query = strings.TrimSpace(query)
	if query == "" {
		return nil, e.api.Errorf(nil, nil, "the query is empty")
	}
	if e.key == "" {
		return nil, e.api.Errorf(nil, nil, "no Exa API key is configured (set EXA_API_KEY)")
	}
	limit = min(max(limit, 1), exaMaxResults)
	req := exaRequest{
		Query:      query,
		Type:       "auto",
		NumResults: limit,
		Category:   "research paper",
	}
	req.Contents.Summary.Query = exaSummaryQuery
	var resp exaResponse
	h := http.Header{"X-Api-Key": {e.key}}
	if err := e.api.PostJSON(ctx, e.base+"/search", h, req, &resp); err != nil {
		return nil, err
	}
	if resp.Results == nil {
		return nil, e.api.Errorf(ErrBadResponse, nil, "the answer has no results list")
	}
	out := make([]Paper, 0, min(limit, len(resp.Results)))
	for _, r := range resp.Results {
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

// describeExa reads Exa's error body {"error": "...", "tag": "..."}.
func describeExa(status int, body []byte) (string, bool) {
	var e struct {
		Error string `json:"error"`
		Tag   string `json:"tag"`
	}
	detail := ""
	if json.Unmarshal(body, &e) == nil && e.Error != "" {
		detail = strings.TrimSpace(e.Error)
		if e.Tag != "" {
			detail += " (" + e.Tag + ")"
		}
	}
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden:
		detail = strings.TrimSpace(detail + " (check EXA_API_KEY)")
	case http.StatusPaymentRequired:
		detail = strings.TrimSpace(detail + " (the Exa account has no credits left)")
		return detail, true
	}
	return detail, false
}

type exaRequest struct {
	Query      string `json:"query"`
	Type       string `json:"type"`
	NumResults int    `json:"numResults"`
	Category   string `json:"category"`
	Contents   struct {
		Summary struct {
			Query string `json:"query"`
		} `json:"summary"`
	} `json:"contents"`
}

type exaResponse struct {
	RequestID string      `json:"requestId"`
	Results   []exaResult `json:"results"`
}

type exaResult struct {
	ID            string     `json:"id"`
	URL           flexString `json:"url"`
	Title         flexString `json:"title"`
	PublishedDate flexString `json:"publishedDate"`
	Author        flexString `json:"author"`
	Summary       flexString `json:"summary"`
	Text          flexString `json:"text"`
}

// flexString decodes a JSON string; null and other types become "" (Exa
// sends null for unknown titles, dates and authors).
type flexString string

func (f *flexString) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*f = flexString(s)
		return nil
	}
	*f = ""
	return nil
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
