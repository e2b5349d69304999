// Package exa is Sova's one client of the Exa search API (POST /search).
// The web search (internal/search) and the academic group
// (internal/provider/academic) both send their searches through it, each
// turning Exa's results into its own types.
package exa

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/sova-ai/sova/internal/apiclient"
)

// DefaultURL is the Exa API base used when New gets "".
const DefaultURL = "https://api.exa.ai"

// MaxResults is the most results one Exa search returns.
const MaxResults = 100

// Client sends searches to Exa. It is safe for concurrent use.
type Client struct{ apiclient.Keyed }

// New returns a Client for apiKey at baseURL ("" means DefaultURL). opts
// set the HTTP client, timeout, retry backoff and User-Agent; a nil
// HTTPClient means an egress client on which baseURL's host is reachable
// wherever it is. The key never appears in errors.
func New(apiKey, baseURL string, opts apiclient.Options) *Client {
	opts.Provider, opts.Describe, opts.Hint = "exa", describe, hint
	return &Client{apiclient.NewKeyed(apiKey, baseURL, DefaultURL, opts)}
}

// Request is one search. Query is required; the rest is optional.
type Request struct {
	Query string
	// NumResults is clamped to 1..MaxResults.
	NumResults int
	// Category narrows the search ("research paper", "news", …).
	Category       string
	IncludeDomains []string
	ExcludeDomains []string
	// StartPublished keeps results published after it (zero: no bound).
	StartPublished time.Time
	// TextChars asks for up to this much page text with each result.
	TextChars int
	// SummaryQuery asks for a generated summary of each result, written
	// to this instruction.
	SummaryQuery string
}

// Result is one result of a search. Exa sends null for unknown titles,
// dates and authors; they are "" here.
type Result struct {
	ID            string               `json:"id"`
	URL           apiclient.FlexString `json:"url"`
	Title         apiclient.FlexString `json:"title"`
	PublishedDate apiclient.FlexString `json:"publishedDate"`
	Author        apiclient.FlexString `json:"author"`
	Score         float64              `json:"score"`
	Image         apiclient.FlexString `json:"image"`
	Favicon       apiclient.FlexString `json:"favicon"`
	Text          apiclient.FlexString `json:"text"`
	Summary       apiclient.FlexString `json:"summary"`
	Highlights    []string             `json:"highlights"`
}

// Search sends r and returns Exa's results in its order. Its errors are
// *apiclient.Error values of provider "exa".
func (c *Client) Search(ctx context.Context, r Request) ([]Result, error) {
	query := strings.TrimSpace(r.Query)
	if query == "" {
		return nil, apiclient.Invalid("exa", "the query is empty")
	}
	if !c.HasKey() {
		return nil, apiclient.Invalid("exa", "no Exa API key is configured (set EXA_API_KEY)")
	}
	body := wireRequest{
		Query:          query,
		Type:           "auto",
		NumResults:     min(max(r.NumResults, 1), MaxResults),
		Category:       r.Category,
		IncludeDomains: r.IncludeDomains,
		ExcludeDomains: r.ExcludeDomains,
	}
	if !r.StartPublished.IsZero() {
		body.StartPublishedDate = r.StartPublished.UTC().Format(time.RFC3339)
	}
	if r.TextChars > 0 {
		body.Contents.Text = &wireText{MaxCharacters: r.TextChars}
	}
	if r.SummaryQuery != "" {
		body.Contents.Summary = &wireSummary{Query: r.SummaryQuery}
	}
	var resp struct {
		RequestID string   `json:"requestId"`
		Results   []Result `json:"results"`
	}
	h := http.Header{"X-Api-Key": {c.Key()}}
	if err := c.PostJSON(ctx, c.Base()+"/search", h, body, &resp); err != nil {
		return nil, err
	}
	if resp.Results == nil {
		return nil, c.Errorf(apiclient.ErrBadResponse, nil, "the answer has no results list")
	}
	return resp.Results, nil
}

// describe reads Exa's error body {"error": "...", "tag": "..."}; 402
// means the account has no credits left, a quota.
func describe(status int, body []byte) (string, bool) {
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
	return detail, status == http.StatusPaymentRequired
}

// hint says what to do about a refused key or an empty account.
func hint(status int) string {
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden:
		return "check EXA_API_KEY"
	case http.StatusPaymentRequired:
		return "the Exa account has no credits left"
	}
	return ""
}

type wireRequest struct {
	Query              string   `json:"query"`
	Type               string   `json:"type"`
	NumResults         int      `json:"numResults"`
	Category           string   `json:"category,omitempty"`
	IncludeDomains     []string `json:"includeDomains,omitempty"`
	ExcludeDomains     []string `json:"excludeDomains,omitempty"`
	StartPublishedDate string   `json:"startPublishedDate,omitempty"`
	Contents           struct {
		Text    *wireText    `json:"text,omitempty"`
		Summary *wireSummary `json:"summary,omitempty"`
	} `json:"contents"`
}

type wireText struct {
	MaxCharacters int `json:"maxCharacters"`
}

type wireSummary struct {
	Query string `json:"query"`
}
