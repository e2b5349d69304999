package search

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/sova-ai/sova/internal/errtext"
)

// DefaultTavilyURL is the Tavily API base used when NewTavily gets "".
const DefaultTavilyURL = "https://api.tavily.com"

// tavilyMaxResults is the largest max_results Tavily accepts.
const tavilyMaxResults = 20

// Tavily queries the Tavily search API (POST /search).
type Tavily struct {
	key    string
	base   string
	caller caller
}

// NewTavily returns a provider for the Tavily API. baseURL "" means
// DefaultTavilyURL; a nil httpClient means a fresh default client. The key
// is sent as a bearer token and never appears in errors.
func NewTavily(apiKey, baseURL string, httpClient *http.Client, opts ...Option) *Tavily {
	base := strings.TrimRight(strings.TrimSpace(baseURL), "/")
	if base == "" {
		base = DefaultTavilyURL
	}
	return &Tavily{
		key:    strings.TrimSpace(apiKey),
		base:   base,
		caller: newCaller("tavily", httpClient, newConfig(opts)),
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
	if t.key == "" {
		return nil, &Error{Provider: t.Name(), Message: "no Tavily API key is configured"}
	}

	payload, err := json.Marshal(tavilyRequest{
		Query:          strings.TrimSpace(q.Text),
		MaxResults:     min(q.maxResults(), tavilyMaxResults),
		SearchDepth:    cmp.Or(t.caller.cfg.depth, "basic"),
		Topic:          "general",
		IncludeDomains: normalizeDomains(q.IncludeDomains),
		ExcludeDomains: normalizeDomains(q.ExcludeDomains),
		TimeRange:      q.TimeRange,
		IncludeImages:  t.caller.cfg.images,
		RawContent:     t.caller.cfg.raw,
	})
	if err != nil {
		return nil, &Error{Provider: t.Name(), Message: "cannot encode the request", Err: err}
	}

	body, err := t.post(ctx, payload)
	if err != nil {
		return nil, err
	}

	var resp tavilyResponse
	if err := json.Unmarshal(body, &resp); err != nil {
		return nil, &Error{
			Provider: t.Name(),
			Message:  fmt.Sprintf("the answer is not valid JSON; it starts with %q", errtext.Scrub(t.redact(snippet(body)), t.base)),
			Addr:     t.base,
			Err:      err,
		}
	}
	return t.results(resp, q), nil
}

func (t *Tavily) statusError(status int, body []byte) *Error {
	msg := "the service answered " + statusText(status)
	detail := tavilyDetail(body)
	if detail == "" {
		detail = snippet(body)
	}
	if detail != "" {
		msg += ": " + t.redact(detail)
	}
	switch status {
	case http.StatusUnauthorized:
		msg += " (check the Tavily API key)"
	case 432, 433:
		msg += " (see the usage limits on the Tavily dashboard)"
	}
	return &Error{Message: msg}
}

// tavilyDetail extracts the message of Tavily's error body
// {"detail":{"error":"..."}}; it also accepts {"detail":"..."} and
// {"error":"..."}. It returns "" for anything else.
func tavilyDetail(body []byte) string {
	var e struct {
		Detail json.RawMessage `json:"detail"`
		Error  string          `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	var obj struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(e.Detail, &obj) == nil && obj.Error != "" {
		return strings.TrimSpace(obj.Error)
	}
	var s string
	if json.Unmarshal(e.Detail, &s) == nil && s != "" {
		return strings.TrimSpace(s)
	}
	return strings.TrimSpace(e.Error)
}

// redact removes the API key from text that came from the server.
func (t *Tavily) redact(s string) string {
	if t.key == "" {
		return s
	}
	return strings.ReplaceAll(s, t.key, "[redacted]")
}

func (t *Tavily) results(resp tavilyResponse, q Query) []Result {
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
	return out
}

type tavilyRequest struct {
	Query          string   `json:"query"`
	MaxResults     int      `json:"max_results"`
	SearchDepth    string   `json:"search_depth"`
	Topic          string   `json:"topic"`
	IncludeDomains []string `json:"include_domains,omitempty"`
	ExcludeDomains []string `json:"exclude_domains,omitempty"`
	TimeRange      string   `json:"time_range,omitempty"`
	IncludeImages  bool     `json:"include_images,omitempty"`
	RawContent     string   `json:"include_raw_content,omitempty"`
}

// tavilyResponse is the part of Tavily's /search answer that is used.
type tavilyResponse struct {
	Results []tavilyResult `json:"results"`
	Images  []tavilyImage  `json:"images"`
}

type tavilyResult struct {
	Title         string     `json:"title"`
	URL           string     `json:"url"`
	Content       string     `json:"content"`
	RawContent    flexString `json:"raw_content"`
	Score         float64    `json:"score"`
	PublishedDate flexString `json:"published_date"`
	Favicon       flexString `json:"favicon"`
}

// tavilyImage is an entry of "images": a URL string, or an object
// {"url","description"} when image descriptions were requested.
type tavilyImage struct {
	URL string
}

func (i *tavilyImage) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '{' {
		var o struct {
			URL string `json:"url"`
		}
		if err := json.Unmarshal(b, &o); err != nil {
			return err
		}
		i.URL = o.URL
		return nil
	}
	var s flexString
	if err := s.UnmarshalJSON(b); err != nil {
		return err
	}
	i.URL = string(s)
	return nil
}

// post sends a search request body to Tavily's /search with the key.
func (t *Tavily) post(ctx context.Context, payload []byte) ([]byte, error) {
	return t.caller.do(ctx, func(ctx context.Context) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.base+"/search", bytes.NewReader(payload))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		req.Header.Set("Authorization", "Bearer "+t.key)
		return req, nil
	}, t.statusError)
}
