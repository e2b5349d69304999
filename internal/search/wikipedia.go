package search

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/sova-ai/sova/internal/apiclient"
	"github.com/sova-ai/sova/internal/errtext"
)

// DefaultWikipediaURL is the Wikipedia base used when NewWikipedia gets "":
// "{lang}" is replaced by the query's language.
const DefaultWikipediaURL = "https://{lang}.wikipedia.org"

// wikipediaMaxResults is the largest limit the search endpoint accepts.
const wikipediaMaxResults = 100

// wikipediaLang matches the language editions' subdomain names.
var wikipediaLang = regexp.MustCompile(`^[a-z]{2,3}(-[a-z]{2,8})?$`)

// Wikipedia queries Wikipedia's full-text search through the MediaWiki
// REST API (GET /w/rest.php/v1/search/page), which needs no key. The
// language edition follows the query's language (English when unset).
type Wikipedia struct {
	base string // may contain "{lang}"
	api  *apiclient.Client
}

// NewWikipedia returns the Wikipedia provider. baseURL "" means
// DefaultWikipediaURL; a base without "{lang}" serves every language
// (tests, a mirror). A nil httpClient means an egress client on which a
// base without "{lang}" is reachable wherever it is.
func NewWikipedia(baseURL string, httpClient *http.Client, opts ...Option) *Wikipedia {
	base := strings.TrimRight(strings.TrimSpace(baseURL), "/")
	if base == "" {
		base = DefaultWikipediaURL
	}
	cfg := newConfig(opts)
	if cfg.userAgent == DefaultUserAgent {
		// Wikimedia asks API clients for a User-Agent that says who they are.
		cfg.userAgent = DefaultUserAgent + " (+https://github.com/sova-ai/sova)"
	}
	return &Wikipedia{base: base, api: cfg.client(httpClient, apiclient.Options{
		Provider: "wikipedia",
		Bases:    []string{base},
		Describe: wikipediaDescribe,
	})}
}

// Name returns "wikipedia".
func (w *Wikipedia) Name() string { return "wikipedia" }

// Search runs q on the language edition's full-text search. Articles are
// not dated, so a query with a time range gets no results, and neither
// does one whose domain filters leave out wikipedia.org. Results carry
// the short description and the matching excerpt as the snippet and the
// article's thumbnail as an image.
func (w *Wikipedia) Search(ctx context.Context, q Query) ([]Result, error) {
	if err := q.validate(); err != nil {
		return nil, &Error{Provider: w.Name(), Message: "invalid query", Err: err}
	}
	lang := primaryLanguage(q.Language)
	if !wikipediaLang.MatchString(lang) {
		lang = "en"
	}
	site := strings.ReplaceAll(w.base, "{lang}", lang)
	if q.TimeRange != "" || !newDomainFilter(q.IncludeDomains, q.ExcludeDomains).allows(strings.ReplaceAll(DefaultWikipediaURL, "{lang}", lang)) {
		return []Result{}, nil
	}
	u, err := url.Parse(site + "/w/rest.php/v1/search/page")
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &Error{Provider: w.Name(), Message: "its base URL is not an http(s) URL", Addr: w.base}
	}
	v := url.Values{}
	v.Set("q", strings.TrimSpace(q.Text))
	v.Set("limit", strconv.Itoa(min(q.maxResults(), wikipediaMaxResults)))
	u.RawQuery = v.Encode()
	body, err := w.api.Get(ctx, u.String(), http.Header{"Accept": {"application/json"}})
	if err != nil {
		return nil, err
	}
	var resp wikipediaResponse
	if err := json.Unmarshal(body, &resp); err != nil {
		return nil, &Error{
			Provider: w.Name(),
			Message:  fmt.Sprintf("the answer is not valid JSON; it starts with %q", errtext.Scrub(snippet(body), site)),
			Addr:     site,
			Err:      err,
		}
	}
	return w.results(resp, site, lang, q), nil
}

// wikipediaDescribe reads the MediaWiki REST error body
// {"errorKey","messageTranslations":{"en":"..."},"httpCode","httpReason"}.
func wikipediaDescribe(_ int, body []byte) (string, bool) {
	var eb struct {
		ErrorKey            string            `json:"errorKey"`
		Message             string            `json:"message"`
		MessageTranslations map[string]string `json:"messageTranslations"`
		HTTPReason          string            `json:"httpReason"`
	}
	if json.Unmarshal(body, &eb) != nil {
		return "", false
	}
	var detail string
	switch {
	case eb.MessageTranslations["en"] != "":
		detail = eb.MessageTranslations["en"]
	case eb.Message != "":
		detail = eb.Message
	case eb.HTTPReason != "":
		detail = eb.HTTPReason
	}
	if eb.ErrorKey != "" {
		detail += " (" + eb.ErrorKey + ")"
	}
	return strings.TrimSpace(detail), false
}

func (w *Wikipedia) results(resp wikipediaResponse, site, lang string, q Query) []Result {
	articleBase := strings.ReplaceAll(DefaultWikipediaURL, "{lang}", lang)
	if !strings.Contains(w.base, "{lang}") {
		articleBase = site
	}
	limit := q.maxResults()
	out := make([]Result, 0, min(limit, len(resp.Pages)))
	for _, p := range resp.Pages {
		if len(out) == limit {
			break
		}
		key := p.Key
		if key == "" {
			key = strings.ReplaceAll(p.Title, " ", "_")
		}
		if key == "" {
			continue
		}
		snip := stripTags(string(p.Excerpt))
		if d := strings.TrimSpace(string(p.Description)); d != "" {
			snip = d + ". " + snip
		}
		r := Result{
			URL:      articleBase + "/wiki/" + wikiPath(key),
			Title:    strings.TrimSpace(p.Title),
			Snippet:  strings.TrimSpace(snip),
			Favicon:  articleBase + "/static/favicon/wikipedia.ico",
			Provider: w.Name(),
		}
		if p.Thumbnail != nil && p.Thumbnail.URL != "" {
			r.Images = []string{absoluteProtocol(p.Thumbnail.URL)}
		}
		out = append(out, r)
	}
	return out
}

// wikiPath escapes an article key for a /wiki/ URL the way Wikipedia
// writes its own links (spaces as underscores, ":" and "/" kept).
func wikiPath(key string) string {
	key = strings.ReplaceAll(key, " ", "_")
	parts := strings.Split(key, "/")
	for i, p := range parts {
		parts[i] = strings.ReplaceAll(url.PathEscape(p), "%3A", ":")
	}
	return strings.Join(parts, "/")
}

// wikipediaResponse is the REST search answer.
type wikipediaResponse struct {
	Pages []wikipediaPage `json:"pages"`
}

type wikipediaPage struct {
	ID          int64      `json:"id"`
	Key         string     `json:"key"`
	Title       string     `json:"title"`
	Excerpt     flexString `json:"excerpt"`
	Description flexString `json:"description"`
	Thumbnail   *struct {
		URL string `json:"url"`
	} `json:"thumbnail"`
}
