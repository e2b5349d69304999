package search

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/sova-ai/sova/internal/apiclient"
	"github.com/sova-ai/sova/internal/errtext"
)

// SearXNG queries a SearXNG instance through its JSON API
// (GET /search?format=json). The instance must have the JSON format enabled
// in settings.yml; otherwise it answers 403 and Search returns an error
// wrapping ErrJSONDisabled.
type SearXNG struct {
	base string
	api  *apiclient.Client
}

// NewSearXNG returns a provider for the SearXNG instance at baseURL (for
// example "http://localhost:8888" or "https://example.org/searxng"). A nil
// httpClient means an egress client on which baseURL's host is reachable
// wherever it is. Problems with baseURL are reported by Search.
func NewSearXNG(baseURL string, httpClient *http.Client, opts ...Option) *SearXNG {
	base := strings.TrimRight(strings.TrimSpace(baseURL), "/")
	return &SearXNG{
		base: base,
		api: newConfig(opts).client(httpClient, apiclient.Options{
			Provider: "searxng",
			Bases:    []string{base},
			Hint:     searxngHint,
			Cause:    searxngCause,
		}),
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

	body, err := s.api.Get(ctx, endpoint, searxngHeader(q))
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

// searxngHeader is what every request to the instance sends: JSON
// accepted, and a language, since SearXNG's bot detection rejects
// requests without Accept-Language.
func searxngHeader(q Query) http.Header {
	return http.Header{"Accept": {"application/json"}, "Accept-Language": {cmp.Or(q.Language, "*")}}
}

// searxngHint explains a 403: the instance has the JSON format off.
func searxngHint(status int) string {
	if status == http.StatusForbidden {
		return "the instance refused format=json"
	}
	return ""
}

// searxngCause gives a 403 its remedy, ErrJSONDisabled.
func searxngCause(status int) error {
	if status == http.StatusForbidden {
		return ErrJSONDisabled
	}
	return nil
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
