package search

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/sova-ai/sova/internal/apiclient"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// DefaultDuckDuckGoURL is the DuckDuckGo HTML endpoint's base used when
// NewDuckDuckGo gets "".
const DefaultDuckDuckGoURL = "https://html.duckduckgo.com"

// duckduckgoRegions maps a language subtag to DuckDuckGo's kl region;
// other languages search all regions ("wt-wt").
var duckduckgoRegions = map[string]string{
	"en": "us-en", "ru": "ru-ru", "de": "de-de", "fr": "fr-fr", "es": "es-es", "it": "it-it",
	"pt": "br-pt", "nl": "nl-nl", "pl": "pl-pl", "uk": "ua-uk", "ja": "jp-jp", "zh": "cn-zh",
	"ko": "kr-kr", "tr": "tr-tr", "sv": "se-sv", "fi": "fi-fi", "da": "dk-da", "no": "no-no",
	"nb": "no-no", "cs": "cz-cs", "el": "gr-el", "he": "il-he", "hu": "hu-hu", "ro": "ro-ro",
	"ar": "xa-ar", "vi": "vn-vi", "th": "th-th", "id": "id-id", "bg": "bg-bg",
}

// duckduckgoTimeRanges maps Query.TimeRange to DuckDuckGo's df parameter.
var duckduckgoTimeRanges = map[string]string{"day": "d", "week": "w", "month": "m", "year": "y"}

// ErrChallenged is wrapped by the error of a keyless provider that answered
// with a bot challenge instead of results: the server's address sent too
// many queries. Waiting, a lower rate in SOVA_SEARCH_LIMITS or a provider
// with an API key helps.
var ErrChallenged = errors.New("the search engine answered with a bot challenge (too many queries from this address); lower its rate in SOVA_SEARCH_LIMITS or configure a provider with an API key")

// DuckDuckGo reads DuckDuckGo's HTML results page (POST /html/), which
// needs no account or key. It is meant for light use; DuckDuckGo answers
// bursts of queries with a challenge page, reported as ErrChallenged.
type DuckDuckGo struct {
	base string
	api  *apiclient.Client
}

// NewDuckDuckGo returns the DuckDuckGo provider. baseURL "" means
// DefaultDuckDuckGoURL; a nil httpClient means an egress client on which
// the base's host is reachable wherever it is.
func NewDuckDuckGo(baseURL string, httpClient *http.Client, opts ...Option) *DuckDuckGo {
	base := strings.TrimRight(strings.TrimSpace(baseURL), "/")
	if base == "" {
		base = DefaultDuckDuckGoURL
	}
	return &DuckDuckGo{base: base, api: newConfig(opts).client(httpClient, apiclient.Options{
		Provider: "duckduckgo",
		Bases:    []string{base},
		Cause:    duckduckgoCause,
	})}
}

// Name returns "duckduckgo".
func (d *DuckDuckGo) Name() string { return "duckduckgo" }

// Search posts q to the HTML endpoint. The time range becomes df, the
// language a kl region; domains are sent as site: operators and enforced
// on the results. Adverts are skipped. Results carry the title, the
// snippet, the favicon DuckDuckGo shows and, when it shows one, the date.
func (d *DuckDuckGo) Search(ctx context.Context, q Query) ([]Result, error) {
	if err := q.validate(); err != nil {
		return nil, &Error{Provider: d.Name(), Message: "invalid query", Err: err}
	}
	form := url.Values{}
	form.Set("q", withSiteOperators(q))
	region := duckduckgoRegions[primaryLanguage(q.Language)]
	if region == "" {
		region = "wt-wt"
	}
	form.Set("kl", region)
	if df := duckduckgoTimeRanges[q.TimeRange]; df != "" {
		form.Set("df", df)
	}
	header := http.Header{"Content-Type": {"application/x-www-form-urlencoded"}, "Accept": {"text/html"}}
	if q.Language != "" {
		header.Set("Accept-Language", q.Language)
	}
	body, status, err := d.api.DoStatus(ctx, http.MethodPost, d.base+"/html/", header, []byte(form.Encode()))
	if err != nil {
		return nil, err
	}
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		return nil, &Error{Provider: d.Name(), Message: "the results page cannot be parsed", Err: err}
	}
	results, found := d.results(doc, q)
	if !found && (status == http.StatusAccepted || isChallenge(doc)) {
		// DuckDuckGo answers 202 with a challenge form when it suspects a bot.
		return nil, &Error{Provider: d.Name(), Status: status, Message: "the service did not return results", Err: ErrChallenged, Addr: d.base}
	}
	return results, nil
}

// duckduckgoCause reads a 403 or a 429 as DuckDuckGo's refusal of this
// address, ErrChallenged.
func duckduckgoCause(status int) error {
	if status == http.StatusForbidden || status == http.StatusTooManyRequests {
		return ErrChallenged
	}
	return nil
}

// results extracts the organic results. found reports whether the page
// is a results page at all (it has a results container or says "No
// results"), as opposed to a challenge or error page.
func (d *DuckDuckGo) results(doc *html.Node, q Query) (out []Result, found bool) {
	filter := newDomainFilter(q.IncludeDomains, q.ExcludeDomains)
	limit := q.maxResults()
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if len(out) >= limit {
			return
		}
		if n.Type == html.ElementNode {
			cls := classes(n)
			switch {
			case cls["no-results"] || cls["serp__results"] || attrVal(n, "id") == "links":
				found = true
			case cls["result"] && !cls["result--ad"]:
				found = true
				if r, ok := d.result(n); ok && filter.allows(r.URL) {
					out = append(out, r)
				}
				return
			case cls["result--ad"]:
				return
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return out, found
}

// result reads one result block.
func (d *DuckDuckGo) result(n *html.Node) (Result, bool) {
	var r Result
	var extras []string
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			cls := classes(n)
			switch {
			case cls["result__a"]:
				r.URL = unwrapRedirect(attrVal(n, "href"))
				r.Title = oneLine(nodeText(n))
				return
			case cls["result__snippet"]:
				r.Snippet = oneLine(nodeText(n))
				return
			case cls["result__icon__img"]:
				r.Favicon = absoluteProtocol(attrVal(n, "src"))
				return
			case cls["result__extras__url"]:
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					if c.Type == html.ElementNode && c.DataAtom == atom.Span && len(classes(c)) == 0 {
						if t := oneLine(nodeText(c)); t != "" {
							extras = append(extras, t)
						}
					}
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	if len(extras) > 0 {
		r.Published = extras[len(extras)-1]
	}
	r.Provider = d.Name()
	u, err := url.Parse(r.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Result{}, false
	}
	// Adverts link through DuckDuckGo's own click tracker.
	if strings.HasSuffix(u.Hostname(), "duckduckgo.com") && strings.HasPrefix(u.Path, "/y.js") {
		return Result{}, false
	}
	return r, true
}

// isChallenge reports whether the page is DuckDuckGo's bot challenge.
func isChallenge(doc *html.Node) bool {
	challenge := false
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if challenge {
			return
		}
		if n.Type == html.ElementNode {
			if strings.Contains(attrVal(n, "action"), "anomaly") || strings.Contains(attrVal(n, "id"), "anomaly") ||
				classes(n)["anomaly-modal__title"] {
				challenge = true
				return
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return challenge
}

// unwrapRedirect returns the target of DuckDuckGo's click redirect
// (//duckduckgo.com/l/?uddg=<target>&rut=...), or href itself.
func unwrapRedirect(href string) string {
	href = absoluteProtocol(strings.TrimSpace(href))
	u, err := url.Parse(href)
	if err != nil {
		return href
	}
	if strings.HasSuffix(u.Hostname(), "duckduckgo.com") && u.Path == "/l/" {
		if t := u.Query().Get("uddg"); t != "" {
			return t
		}
	}
	return href
}

// absoluteProtocol gives a protocol-relative URL ("//host/...") https.
func absoluteProtocol(s string) string {
	if strings.HasPrefix(s, "//") {
		return "https:" + s
	}
	return s
}

func classes(n *html.Node) map[string]bool {
	out := map[string]bool{}
	for _, c := range strings.Fields(attrVal(n, "class")) {
		out[c] = true
	}
	return out
}

func attrVal(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return a.Val
		}
	}
	return ""
}

// oneLine collapses whitespace runs into single spaces and trims.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func nodeText(n *html.Node) string {
	var b strings.Builder
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}
