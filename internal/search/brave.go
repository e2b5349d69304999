package search

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/sova-ai/sova/internal/apiclient"
	"github.com/sova-ai/sova/internal/errtext"
)

// DefaultBraveURL is the Brave Search API base used when NewBrave gets "".
const DefaultBraveURL = "https://api.search.brave.com"

// braveMaxResults is the largest count Brave's web search accepts.
const braveMaxResults = 20

// braveFreshness maps Query.TimeRange to Brave's freshness values.
var braveFreshness = map[string]string{"day": "pd", "week": "pw", "month": "pm", "year": "py"}

// braveLanguages maps a language subtag to the search_lang codes Brave
// accepts; languages it does not list are not sent (Brave refuses unknown
// codes with 422).
var braveLanguages = map[string]string{
	"ar": "ar", "eu": "eu", "bn": "bn", "bg": "bg", "ca": "ca", "zh": "zh-hans", "hr": "hr",
	"cs": "cs", "da": "da", "nl": "nl", "en": "en", "et": "et", "fi": "fi", "fr": "fr",
	"gl": "gl", "de": "de", "gu": "gu", "he": "he", "hi": "hi", "hu": "hu", "is": "is",
	"it": "it", "ja": "jp", "kn": "kn", "ko": "ko", "lv": "lv", "lt": "lt", "ms": "ms",
	"ml": "ml", "mr": "mr", "nb": "nb", "no": "nb", "pl": "pl", "pt": "pt-pt", "pa": "pa",
	"ro": "ro", "ru": "ru", "sr": "sr", "sk": "sk", "sl": "sl", "es": "es", "sv": "sv",
	"ta": "ta", "te": "te", "th": "th", "tr": "tr", "uk": "uk", "vi": "vi",
}

// Brave queries the Brave Search API (GET /res/v1/web/search).
type Brave struct {
	key  string
	base string
	api  *apiclient.Client
}

// NewBrave returns a provider for the Brave Search API. baseURL "" means
// DefaultBraveURL; a nil httpClient means an egress client on which the
// base's host is reachable wherever it is. The key is sent in the
// X-Subscription-Token header and never appears in errors.
func NewBrave(apiKey, baseURL string, httpClient *http.Client, opts ...Option) *Brave {
	base := strings.TrimRight(strings.TrimSpace(baseURL), "/")
	if base == "" {
		base = DefaultBraveURL
	}
	key := strings.TrimSpace(apiKey)
	return &Brave{
		key:  key,
		base: base,
		api: newConfig(opts).client(httpClient, apiclient.Options{
			Provider: "brave",
			Bases:    []string{base},
			Secrets:  []string{key},
			Describe: braveDescribe,
			Hint:     braveHint,
		}),
	}
}

// Name returns "brave".
func (b *Brave) Name() string { return "brave" }

// Search runs q on Brave's web index. The time range becomes Brave's
// freshness, the language its search_lang; domains are sent as site:
// operators and also enforced on the results. Extra snippets, when Brave
// returns them, fill Result.Content.
func (b *Brave) Search(ctx context.Context, q Query) ([]Result, error) {
	if err := q.validate(); err != nil {
		return nil, &Error{Provider: b.Name(), Message: "invalid query", Err: err}
	}
	if b.key == "" {
		return nil, &Error{Provider: b.Name(), Message: "no Brave Search API key is configured (set BRAVE_API_KEY)"}
	}
	u, err := url.Parse(b.base + "/res/v1/web/search")
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &Error{Provider: b.Name(), Message: "its base URL is not an http(s) URL", Addr: b.base}
	}
	v := url.Values{}
	v.Set("q", withSiteOperators(q))
	v.Set("count", strconv.Itoa(min(q.maxResults(), braveMaxResults)))
	v.Set("extra_snippets", "true")
	v.Set("text_decorations", "false")
	v.Set("result_filter", "web")
	if f := braveFreshness[q.TimeRange]; f != "" {
		v.Set("freshness", f)
	}
	if l := braveLanguages[primaryLanguage(q.Language)]; l != "" {
		v.Set("search_lang", l)
	}
	u.RawQuery = v.Encode()
	body, err := b.api.Get(ctx, u.String(), http.Header{"Accept": {"application/json"}, "X-Subscription-Token": {b.key}})
	if err != nil {
		return nil, err
	}
	var resp braveResponse
	if err := json.Unmarshal(body, &resp); err != nil {
		return nil, &Error{
			Provider: b.Name(),
			Message:  fmt.Sprintf("the answer is not valid JSON; it starts with %q", errtext.Scrub(redact(snippet(body), b.key), b.base)),
			Addr:     b.base,
			Err:      err,
		}
	}
	return b.results(resp, q), nil
}

// braveDescribe reads Brave's error body
// {"type":"ErrorResponse","error":{"id","status","code","detail","meta"}}:
// the detail, its code and the parameters it refused.
func braveDescribe(_ int, body []byte) (string, bool) {
	var eb struct {
		Error struct {
			Code   string `json:"code"`
			Detail string `json:"detail"`
			Meta   struct {
				Errors []struct {
					Loc []any  `json:"loc"`
					Msg string `json:"msg"`
				} `json:"errors"`
			} `json:"meta"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &eb) != nil || (eb.Error.Detail == "" && eb.Error.Code == "") {
		return "", false
	}
	detail := strings.TrimSpace(eb.Error.Detail)
	if eb.Error.Code != "" {
		detail = strings.TrimSpace(detail + " (" + eb.Error.Code + ")")
	}
	for _, e := range eb.Error.Meta.Errors {
		detail += fmt.Sprintf("; %v: %s", e.Loc, e.Msg)
	}
	return detail, false
}

// braveHint says what to check after a refusal or a rate limit.
func braveHint(status int) string {
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden:
		return "check BRAVE_API_KEY and that the key has an active subscription"
	case http.StatusTooManyRequests:
		return "the plan's rate limit; lower the brave entry of SOVA_SEARCH_LIMITS"
	}
	return ""
}

func (b *Brave) results(resp braveResponse, q Query) []Result {
	filter := newDomainFilter(q.IncludeDomains, q.ExcludeDomains)
	limit := q.maxResults()
	out := make([]Result, 0, min(limit, len(resp.Web.Results)))
	for _, r := range resp.Web.Results {
		if len(out) == limit {
			break
		}
		u := strings.TrimSpace(r.URL)
		if u == "" || !filter.allows(u) {
			continue
		}
		res := Result{
			URL:       u,
			Title:     stripTags(r.Title),
			Snippet:   stripTags(r.Description),
			Published: firstNonEmpty(string(r.PageAge), string(r.Age)),
			Favicon:   firstNonEmpty(r.MetaURL.Favicon, r.Profile.Img),
			Provider:  b.Name(),
		}
		if len(r.ExtraSnippets) > 0 {
			parts := make([]string, 0, len(r.ExtraSnippets))
			for _, s := range r.ExtraSnippets {
				if s = stripTags(s); s != "" {
					parts = append(parts, s)
				}
			}
			res.Content = strings.Join(parts, "\n")
		}
		for _, a := range r.Article.Author {
			if a.Name != "" {
				res.Author = strings.TrimSpace(a.Name)
				break
			}
		}
		if img := firstNonEmpty(r.Thumbnail.Original, r.Thumbnail.Src); img != "" {
			res.Images = []string{img}
		}
		out = append(out, res)
	}
	return out
}

// braveResponse is the part of Brave's web search answer that is used.
type braveResponse struct {
	Type string `json:"type"`
	Web  struct {
		Results []braveResult `json:"results"`
	} `json:"web"`
}

type braveResult struct {
	Title         string     `json:"title"`
	URL           string     `json:"url"`
	Description   string     `json:"description"`
	Age           flexString `json:"age"`
	PageAge       flexString `json:"page_age"`
	ExtraSnippets []string   `json:"extra_snippets"`
	Profile       struct {
		Name string `json:"name"`
		Img  string `json:"img"`
	} `json:"profile"`
	MetaURL struct {
		Hostname string `json:"hostname"`
		Favicon  string `json:"favicon"`
	} `json:"meta_url"`
	Thumbnail struct {
		Src      string `json:"src"`
		Original string `json:"original"`
	} `json:"thumbnail"`
	Article struct {
		Author []struct {
			Name string `json:"name"`
		} `json:"author"`
	} `json:"article"`
}

var tagRE = regexp.MustCompile(`<[^>]*>`)

// stripTags removes HTML tags (search engines mark matches with <b> or
// <strong>) and entities from a one-line snippet.
func stripTags(s string) string {
	return strings.Join(strings.Fields(html.UnescapeString(tagRE.ReplaceAllString(s, ""))), " ")
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" {
			return s
		}
	}
	return ""
}

// primaryLanguage returns the lower-case primary subtag of a BCP 47 tag
// ("ru-RU" → "ru").
func primaryLanguage(tag string) string {
	p, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(tag)), "-")
	p, _, _ = strings.Cut(p, "_")
	return p
}

// withSiteOperators appends site: and -site: operators for q's domain
// filters to its text, for engines that understand them.
func withSiteOperators(q Query) string {
	text := strings.TrimSpace(q.Text)
	var include []string
	for _, d := range normalizeDomains(q.IncludeDomains) {
		include = append(include, "site:"+d)
	}
	if len(include) > 0 {
		text += " " + strings.Join(include, " OR ")
	}
	for _, d := range normalizeDomains(q.ExcludeDomains) {
		text += " -site:" + d
	}
	return text
}
