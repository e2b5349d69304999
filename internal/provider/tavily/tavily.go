// Package tavily is Sova's one client of the Tavily search API (POST
// /search). The web search (internal/search) and the Reddit group
// (internal/provider/reddit) both send their searches through it, each
// turning Tavily's results into its own types.
package tavily

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/sova-ai/sova/internal/apiclient"
)

// DefaultURL is the Tavily API base used when New gets "".
const DefaultURL = "https://api.tavily.com"

// MaxResults is the largest max_results Tavily accepts.
const MaxResults = 20

// Client sends searches to Tavily. It is safe for concurrent use.
type Client struct{ apiclient.Keyed }

// New returns a Client for apiKey at baseURL ("" means DefaultURL). opts
// set the HTTP client, timeout, retry backoff and User-Agent; a nil
// HTTPClient means an egress client on which baseURL's host is reachable
// wherever it is. The key never appears in errors.
func New(apiKey, baseURL string, opts apiclient.Options) *Client {
	opts.Provider, opts.Describe, opts.Hint = "tavily", describe, hint
	return &Client{apiclient.NewKeyed(apiKey, baseURL, DefaultURL, opts)}
}

// Request is one search, in Tavily's own fields. Query is required.
type Request struct {
	Query string `json:"query"`
	// MaxResults is clamped to 1..MaxResults.
	MaxResults  int    `json:"max_results"`
	SearchDepth string `json:"search_depth"` // "" means basic
	Topic       string `json:"topic"`        // "" means general
	// TimeRange is day, week, month or year; "" means any time.
	TimeRange       string   `json:"time_range,omitempty"`
	ChunksPerSource int      `json:"chunks_per_source,omitempty"`
	IncludeDomains  []string `json:"include_domains,omitempty"`
	ExcludeDomains  []string `json:"exclude_domains,omitempty"`
	IncludeImages   bool     `json:"include_images,omitempty"`
	// IncludeImageDescriptions makes each image an object with its
	// description.
	IncludeImageDescriptions bool   `json:"include_image_descriptions,omitempty"`
	IncludeRawContent        string `json:"include_raw_content,omitempty"` // "markdown", "text" or ""
}

// Result is one result of a search.
type Result struct {
	Title         string               `json:"title"`
	URL           string               `json:"url"`
	Content       string               `json:"content"`
	RawContent    apiclient.FlexString `json:"raw_content"`
	Score         float64              `json:"score"`
	PublishedDate apiclient.FlexString `json:"published_date"`
	Favicon       apiclient.FlexString `json:"favicon"`
}

// Response is Tavily's answer: the results and, when asked for, images
// of the whole query.
type Response struct {
	Results []Result `json:"results"`
	Images  []Image  `json:"images"`
}

// Image is an entry of "images": a URL string, or an object
// {"url","description"} when image descriptions were requested.
type Image struct {
	URL         string
	Description string
}

// UnmarshalJSON implements json.Unmarshaler.
func (i *Image) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '{' {
		var o struct {
			URL         string `json:"url"`
			Description string `json:"description"`
		}
		if err := json.Unmarshal(b, &o); err != nil {
			return err
		}
		i.URL, i.Description = o.URL, o.Description
		return nil
	}
	var s apiclient.FlexString
	if err := s.UnmarshalJSON(b); err != nil {
		return err
	}
	i.URL = string(s)
	return nil
}

// Search sends r. Its errors are *apiclient.Error values of provider
// "tavily".
func (c *Client) Search(ctx context.Context, r Request) (*Response, error) {
	r.Query = strings.TrimSpace(r.Query)
	if r.Query == "" {
		return nil, apiclient.Invalid("tavily", "the query is empty")
	}
	if !c.HasKey() {
		return nil, apiclient.Invalid("tavily", "no Tavily API key is configured (set TAVILY_API_KEY)")
	}
	r.MaxResults = min(max(r.MaxResults, 1), MaxResults)
	if r.SearchDepth == "" {
		r.SearchDepth = "basic"
	}
	if r.Topic == "" {
		r.Topic = "general"
	}
	var resp Response
	h := http.Header{"Authorization": {"Bearer " + c.Key()}}
	if err := c.PostJSON(ctx, c.Base()+"/search", h, r, &resp); err != nil {
		return nil, err
	}
	if resp.Results == nil && resp.Images == nil {
		return nil, c.Errorf(apiclient.ErrBadResponse, nil, "the answer has no results list")
	}
	return &resp, nil
}

// describe reads Tavily's error body {"detail": {"error": "..."}} (also
// {"detail": "..."} and {"error": "..."}); 432 and 433 are Tavily's plan
// and usage limits, quotas.
func describe(status int, body []byte) (string, bool) {
	var e struct {
		Detail json.RawMessage `json:"detail"`
		Error  string          `json:"error"`
	}
	detail := ""
	if json.Unmarshal(body, &e) == nil {
		var obj struct {
			Error string `json:"error"`
		}
		var s string
		switch {
		case json.Unmarshal(e.Detail, &obj) == nil && obj.Error != "":
			detail = obj.Error
		case json.Unmarshal(e.Detail, &s) == nil && s != "":
			detail = s
		default:
			detail = e.Error
		}
	}
	return strings.TrimSpace(detail), status == 432 || status == 433
}

// hint says what to do about a refused key or a used-up plan.
func hint(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return "check TAVILY_API_KEY"
	case 432, 433:
		return "see the usage limits on the Tavily dashboard"
	}
	return ""
}
