package search

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/sova-ai/sova/internal/errtext"
)

// DefaultExaURL is the Exa API base used when NewExa gets "".
const DefaultExaURL = "https://api.exa.ai"

const (
	// exaMaxResults is the most results one Exa search returns.
	exaMaxResults = 100
	// exaTextChars is how much page text Exa is asked to return with each
	// result; it fills Result.Content and helps reranking.
	exaTextChars = 1500
)

// Exa queries the Exa search API (POST /search).
type Exa struct {
	key    string
	base   string
	caller caller
	now    func() time.Time
}

// NewExa returns a provider for the Exa API. baseURL "" means
// DefaultExaURL; a nil httpClient means a fresh default client. The key is
// sent in the x-api-key header and never appears in errors.
func NewExa(apiKey, baseURL string, httpClient *http.Client, opts ...Option) *Exa {
	base := strings.TrimRight(strings.TrimSpace(baseURL), "/")
	if base == "" {
		base = DefaultExaURL
	}
	return &Exa{
		key:    strings.TrimSpace(apiKey),
		base:   base,
		caller: newCaller("exa", httpClient, newConfig(opts)),
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
	if e.key == "" {
		return nil, &Error{Provider: e.Name(), Message: "no Exa API key is configured (set EXA_API_KEY)"}
	}
	req := exaRequest{
		Query:          strings.TrimSpace(q.Text),
		Type:           "auto",
		NumResults:     min(q.maxResults(), exaMaxResults),
		IncludeDomains: normalizeDomains(q.IncludeDomains),
		ExcludeDomains: normalizeDomains(q.ExcludeDomains),
		Contents:       exaContents{Text: exaText{MaxCharacters: exaTextChars}},
	}
	if since := timeRangeStart(q.TimeRange, e.now()); !since.IsZero() {
		req.StartPublishedDate = since.UTC().Format(time.RFC3339)
	}
	payload, err := json.Marshal(req)
	if err != nil {
		return nil, &Error{Provider: e.Name(), Message: "cannot encode the request", Err: err}
	}
	newReq := func(ctx context.Context) (*http.Request, error) {
		r, err := http.NewRequestWithContext(ctx, http.MethodPost, e.base+"/search", bytes.NewReader(payload))
		if err != nil {
			return nil, err
		}
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json")
		r.Header.Set("x-api-key", e.key)
		return r, nil
	}
	body, err := e.caller.do(ctx, newReq, e.statusError)
	if err != nil {
		return nil, err
	}
	var resp exaResponse
	if err := json.Unmarshal(body, &resp); err != nil {
		return nil, &Error{
			Provider: e.Name(),
			Message:  fmt.Sprintf("the answer is not valid JSON; it starts with %q", errtext.Scrub(redact(snippet(body), e.key), e.base)),
			Addr:     e.base,
			Err:      err,
		}
	}
	return e.results(resp, q), nil
}

func (e *Exa) statusError(status int, body []byte) *Error {
	msg := "the service answered " + statusText(status)
	var eb struct {
		Error string `json:"error"`
		Tag   string `json:"tag"`
	}
	detail := snippet(body)
	if json.Unmarshal(body, &eb) == nil && eb.Error != "" {
		detail = strings.TrimSpace(eb.Error)
		if eb.Tag != "" {
			detail += " (" + eb.Tag + ")"
		}
	}
	if detail != "" {
		msg += ": " + redact(detail, e.key)
	}
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden:
		msg += " (check EXA_API_KEY)"
	case http.StatusPaymentRequired:
		msg += " (the Exa account has no credits left)"
	}
	return &Error{Message: msg}
}

func (e *Exa) results(resp exaResponse, q Query) []Result {
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
	return out
}

type exaRequest struct {
	Query              string      `json:"query"`
	Type               string      `json:"type"`
	NumResults         int         `json:"numResults"`
	IncludeDomains     []string    `json:"includeDomains,omitempty"`
	ExcludeDomains     []string    `json:"excludeDomains,omitempty"`
	StartPublishedDate string      `json:"startPublishedDate,omitempty"`
	Contents           exaContents `json:"contents"`
}

type exaContents struct {
	Text exaText `json:"text"`
}

type exaText struct {
	MaxCharacters int `json:"maxCharacters"`
}

// exaResponse is the part of Exa's /search answer that is used.
type exaResponse struct {
	RequestID string      `json:"requestId"`
	Results   []exaResult `json:"results"`
}

type exaResult struct {
	ID            string     `json:"id"`
	URL           string     `json:"url"`
	Title         flexString `json:"title"`
	PublishedDate flexString `json:"publishedDate"`
	Author        flexString `json:"author"`
	Score         float64    `json:"score"`
	Image         flexString `json:"image"`
	Favicon       flexString `json:"favicon"`
	Text          flexString `json:"text"`
	Summary       flexString `json:"summary"`
	Highlights    []string   `json:"highlights"`
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
