package search

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/sova-ai/sova/internal/errtext"
)

// SearXNG queries a SearXNG instance through its JSON API
// (GET /search?format=json). The instance must have the JSON format enabled
// in settings.yml; otherwise it answers 403 and Search returns an error
// wrapping ErrJSONDisabled.
type SearXNG struct {
	base   string
	caller caller
}

// NewSearXNG returns a provider for the SearXNG instance at baseURL (for
// example "http://localhost:8888" or "https://example.org/searxng"). A nil
// httpClient means a fresh default client. Problems with baseURL are
// reported by Search.
func NewSearXNG(baseURL string, httpClient *http.Client, opts ...Option) *SearXNG {
	return &SearXNG{
		base:   strings.TrimRight(strings.TrimSpace(baseURL), "/"),
		caller: newCaller("searxng", httpClient, newConfig(opts)),
	}
}

// Name returns "searxng".
func (s *SearXNG) Name() string { return "searxng" }

// Search runs q on the instance's "general" category, page 1.
//
// Include and exclude domains are sent as site:/-site: operators, which not
// every upstream engine honours, so they are also enforced on the results.
// At most q.MaxResults results are returned.
func (s *SearXNG) Search(ctx context.Context, q Query) ([]Result, error) {
	if err := q.validate(); err != nil {
		return nil, &Error{Provider: s.Name(), Message: "invalid query", Err: err}
	}
	endpoint, err := s.endpoint(q)
	if err != nil {
		return nil, err
	}

	newReq := func(ctx context.Context) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Accept", "application/json")
		// SearXNG's bot detection rejects requests without Accept-Language.
		lang := q.Language
		if lang == "" {
			lang = "*"
		}
		req.Header.Set("Accept-Language", lang)
		return req, nil
	}
	body, err := s.caller.do(ctx, newReq, s.statusError)
	if err != nil {
		return nil, err
	}

	var resp searxngResponse
	if err := json.Unmarshal(body, &resp); err != nil {
		return nil, &Error{
			Provider: s.Name(),
			Message: fmt.Sprintf("the answer is not valid JSON (is SOVA_SEARXNG_URL a SearXNG instance?); it starts with %q",
				errtext.Scrub(snippet(body), s.base)),
			Addr: s.base,
			Err:  err,
		}
	}
	return s.results(resp, q), nil
}

// endpoint builds the request URL for q.
func (s *SearXNG) endpoint(q Query) (string, error) {
	if s.base == "" {
		return "", &Error{Provider: s.Name(), Message: "no SearXNG base URL is configured"}
	}
	u, err := url.Parse(s.base + "/search")
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", &Error{Provider: s.Name(), Message: "its base URL is not an http(s) URL", Addr: s.base}
	}

	text := strings.TrimSpace(q.Text)
	var include []string
	for _, d := range q.IncludeDomains {
		if d = normalizeDomain(d); d != "" {
			include = append(include, "site:"+d)
		}
	}
	if len(include) > 0 {
		text += " " + strings.Join(include, " OR ")
	}
	for _, d := range q.ExcludeDomains {
		if d = normalizeDomain(d); d != "" {
			text += " -site:" + d
		}
	}

	v := u.Query()
	v.Set("q", text)
	v.Set("format", "json")
	v.Set("pageno", "1")
	v.Set("categories", "general")
	if q.Language != "" {
		v.Set("language", q.Language)
	}
	if q.TimeRange != "" {
		v.Set("time_range", q.TimeRange)
	}
	u.RawQuery = v.Encode()
	return u.String(), nil
}

func (s *SearXNG) statusError(status int, body []byte) *Error {
	if status == http.StatusForbidden {
		return &Error{
			Message: fmt.Sprintf("the instance refused format=json (%s)", statusText(status)),
			Err:     ErrJSONDisabled,
		}
	}
	msg := "the service answered " + statusText(status)
	if sn := snippet(body); sn != "" {
		msg += ": " + sn
	}
	return &Error{Message: msg}
}

// results maps the answer to Results, enforcing domain filters and the
// result cap. Answers, infoboxes, suggestions and the like are ignored.
func (s *SearXNG) results(resp searxngResponse, q Query) []Result {
	filter := newDomainFilter(q.IncludeDomains, q.ExcludeDomains)
	limit := q.maxResults()
	out := make([]Result, 0, min(limit, len(resp.Results)))
	for _, r := range resp.Results {
		if len(out) == limit {
			break
		}
		u := strings.TrimSpace(string(r.URL))
		if u == "" || !filter.allows(u) {
			continue
		}
		engine := strings.Join(r.Engines, ",")
		if engine == "" {
			engine = string(r.Engine)
		}
		var images []string
		for _, img := range []flexString{r.Thumbnail, r.ImgSrc} {
			if img != "" && (len(images) == 0 || images[0] != string(img)) {
				images = append(images, string(img))
			}
		}
		out = append(out, Result{
			URL:       u,
			Title:     strings.TrimSpace(string(r.Title)),
			Snippet:   strings.TrimSpace(string(r.Content)),
			Published: string(r.PublishedDate),
			Author:    string(r.Author),
			Engine:    engine,
			Provider:  s.Name(),
			Score:     r.Score,
			Images:    images,
		})
	}
	return out
}

// searxngResponse is the part of SearXNG's JSON answer that is used.
type searxngResponse struct {
	Results []searxngResult `json:"results"`
}

// searxngResult is one entry of "results". Engines of different kinds put
// different types into some fields (publishedDate may be null, author may be
// a list), so the loosely typed ones are flexString.
type searxngResult struct {
	URL           flexString `json:"url"`
	Title         flexString `json:"title"`
	Content       flexString `json:"content"`
	PublishedDate flexString `json:"publishedDate"`
	Author        flexString `json:"author"`
	Engine        flexString `json:"engine"`
	Engines       []string   `json:"engines"`
	Score         float64    `json:"score"`
	Thumbnail     flexString `json:"thumbnail"`
	ImgSrc        flexString `json:"img_src"`
}

// flexString decodes a JSON string; null, numbers, booleans, arrays and
// objects decode to "" (numbers keep their text) instead of failing the
// whole answer.
type flexString string

func (f *flexString) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*f = flexString(s)
	case len(b) > 0 && (b[0] == '-' || (b[0] >= '0' && b[0] <= '9')):
		*f = flexString(b)
	default:
		*f = ""
	}
	return nil
}
