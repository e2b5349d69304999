// Package academic searches for scholarly papers for the academic_search
// tool (seed 000 §3.2, DESIGN §8).
//
// With an Exa key the search is Exa's "research paper" category with a
// generated abstract of each paper; without one it is OpenAlex and arXiv
// together, which need no account (OpenAlex asks for a free key from
// February 2026 on and rations keyless use). Run is the tool's pipeline:
// 1–5 queries in parallel, each reported as a data-query_completion event,
// results de-duplicated and cleaned.
package academic

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/sova-ai/sova/internal/apiclient"
)

// Default base URLs, used when a Config field is "".
const (
	DefaultOpenAlexURL = "https://api.openalex.org"
	DefaultArxivURL    = "https://export.arxiv.org"
	DefaultExaURL      = "https://api.exa.ai"
)

// DefaultArxivInterval is the pause between two arXiv requests: arXiv asks
// API clients for no more than one request every three seconds.
const DefaultArxivInterval = 3 * time.Second

// ErrRateLimited and ErrBadResponse are matched (errors.Is) by the errors of
// a provider that refused for too many requests or an exhausted quota, and
// of an answer that could not be parsed.
var (
	ErrRateLimited = apiclient.ErrRateLimited
	ErrBadResponse = apiclient.ErrBadResponse
)

// Config holds the settings of the academic providers. The env tags are
// the variables internal/config reads them from (docs/configuration.md).
type Config struct {
	// OpenAlexURL is the OpenAlex API base (SOVA_OPENALEX_URL).
	OpenAlexURL string `env:"SOVA_OPENALEX_URL" envDefault:"https://api.openalex.org"`
	// OpenAlexAPIKey is sent as api_key (OPENALEX_API_KEY); optional but
	// OpenAlex rations keyless use to a few searches a day.
	OpenAlexAPIKey string `env:"OPENALEX_API_KEY"`
	// OpenAlexMailto is sent as mailto, OpenAlex's "polite pool" contact
	// address (SOVA_OPENALEX_MAILTO); optional.
	OpenAlexMailto string `env:"SOVA_OPENALEX_MAILTO"`
	// ArxivURL is the arXiv API base (SOVA_ARXIV_URL).
	ArxivURL string `env:"SOVA_ARXIV_URL" envDefault:"https://export.arxiv.org"`
	// ArxivInterval is the least time between two arXiv requests of one
	// client; 0 means DefaultArxivInterval, negative means no pause
	// (SOVA_ARXIV_INTERVAL, where internal/config reads 0 as no pause).
	ArxivInterval time.Duration `env:"SOVA_ARXIV_INTERVAL" envDefault:"3s"`
	// ExaAPIKey selects Exa (EXA_API_KEY).
	ExaAPIKey string `env:"EXA_API_KEY"`
	// ExaURL is the Exa API base (SOVA_EXA_URL).
	ExaURL string `env:"SOVA_EXA_URL" envDefault:"https://api.exa.ai"`

	// HTTPClient sends the requests; nil means one with Timeout.
	HTTPClient *http.Client
	// Timeout bounds one provider call, its retry included; 0 means 30s
	// (SOVA_PROVIDER_TIMEOUT).
	Timeout time.Duration `env:"SOVA_PROVIDER_TIMEOUT" envDefault:"30s"`
	// UserAgent is sent with every request; "" means Sova's.
	UserAgent string
	// RetryBackoff is the pause before retrying a 5xx answer or a network
	// failure; 0 means 500ms, negative turns the retry off.
	RetryBackoff time.Duration
}

func (c Config) client(provider string, secrets []string, describe func(int, []byte) (string, bool)) *apiclient.Client {
	return apiclient.New(apiclient.Options{
		Provider:     provider,
		HTTPClient:   c.HTTPClient,
		Bases:        []string{c.OpenAlexURL, c.ArxivURL, c.ExaURL},
		Timeout:      c.Timeout,
		UserAgent:    c.UserAgent,
		RetryBackoff: c.RetryBackoff,
		Secrets:      secrets,
		Describe:     describe,
	})
}

// Paper is one search result.
type Paper struct {
	// URL is the paper's page: its DOI link, arXiv abstract page or the
	// page the provider found.
	URL     string   `json:"url"`
	Title   string   `json:"title"`
	Summary string   `json:"summary,omitempty"` // abstract (or a generated summary from Exa)
	Authors []string `json:"authors,omitempty"`
	// PublishedDate is the publication date as YYYY-MM-DD when known.
	PublishedDate string `json:"publishedDate,omitempty"`
	Year          int    `json:"year,omitempty"`
	Venue         string `json:"venue,omitempty"` // journal, conference or "arXiv"
	DOI           string `json:"doi,omitempty"`   // bare, e.g. "10.7717/peerj.4375"
	PDFURL        string `json:"pdfUrl,omitempty"`
	// Citations is the citation count; OpenAlex gives it, 0 otherwise.
	Citations int    `json:"citations,omitempty"`
	Source    string `json:"source"` // "openalex", "arxiv" or "exa"
}

// Searcher searches one source (or several merged) for papers.
type Searcher interface {
	// Name names the source in errors and in Paper.Source.
	Name() string
	// Search returns at most limit papers for query, best first.
	Search(ctx context.Context, query string, limit int) ([]Paper, error)
}

// New returns the searcher the configuration selects: Exa when it has an
// Exa key, otherwise OpenAlex and arXiv merged.
func New(cfg Config) Searcher {
	if strings.TrimSpace(cfg.ExaAPIKey) != "" {
		return NewExa(cfg)
	}
	return Merge(NewOpenAlex(cfg), NewArxiv(cfg))
}

// baseURL trims raw and falls back to def.
func baseURL(raw, def string) string {
	b := strings.TrimRight(strings.TrimSpace(raw), "/")
	if b == "" {
		return def
	}
	return b
}

var (
	tagRE            = regexp.MustCompile(`<[^>]*>`)
	spaceRE          = regexp.MustCompile(`\s+`)
	titleSuffixRE    = regexp.MustCompile(`\s*\[[^\[\]]*\]\s*$`)
	summaryPrefixRE  = regexp.MustCompile(`(?i)^\s*summary\s*:\s*`)
	doiPrefixRE      = regexp.MustCompile(`(?i)^(?:https?://(?:dx\.)?doi\.org/|doi:)`)
	arxivIDInURLRE   = regexp.MustCompile(`(?i)arxiv\.org/(?:abs|pdf)/([a-z\-.]+/\d{7}|\d{4}\.\d{4,5})`)
	arxivIDInDOIRE   = regexp.MustCompile(`(?i)^10\.48550/arxiv\.(.+)$`)
	arxivVersionRE   = regexp.MustCompile(`v\d+$`)
	arxivPDFSuffixRE = regexp.MustCompile(`(?i)\.pdf$`)
)

// cleanText strips markup and entities some providers leave in titles and
// abstracts (OpenAlex has <i>, <sub>; arXiv wraps lines) and collapses
// white space.
func cleanText(s string) string {
	s = tagRE.ReplaceAllString(s, "")
	s = html.UnescapeString(s)
	return strings.TrimSpace(spaceRE.ReplaceAllString(s, " "))
}

// CleanTitle removes a trailing bracketed note such as "[PDF]" or
// "[2307.06435]" (000 §3.2).
func CleanTitle(s string) string {
	s = strings.TrimSpace(s)
	for {
		t := titleSuffixRE.ReplaceAllString(s, "")
		if t == s || t == "" {
			return s
		}
		s = t
	}
}

// CleanSummary removes a leading "Summary:" (000 §3.2).
func CleanSummary(s string) string {
	return strings.TrimSpace(summaryPrefixRE.ReplaceAllString(strings.TrimSpace(s), ""))
}

// bareDOI returns a DOI without a resolver prefix, lower-cased (DOIs are
// case-insensitive).
func bareDOI(s string) string {
	return strings.ToLower(strings.TrimSpace(doiPrefixRE.ReplaceAllString(strings.TrimSpace(s), "")))
}

// arxivID returns the version-less arXiv identifier in an arXiv URL or an
// arXiv DOI, or "".
func arxivID(rawURL, doi string) string {
	if m := arxivIDInURLRE.FindStringSubmatch(rawURL); m != nil {
		return strings.ToLower(arxivVersionRE.ReplaceAllString(arxivPDFSuffixRE.ReplaceAllString(m[1], ""), ""))
	}
	if m := arxivIDInDOIRE.FindStringSubmatch(doi); m != nil {
		return strings.ToLower(arxivVersionRE.ReplaceAllString(m[1], ""))
	}
	return ""
}

// NormalizeURL returns a comparison key for a URL: the scheme and host in
// lower case, http as https, no "www.", default port, fragment, trailing
// slash or tracking parameters (utm_*, fbclid, ...), the rest of the query
// sorted. A string that is not an absolute URL is returned trimmed.
func NormalizeURL(raw string) string {
	raw = strings.TrimSpace(raw)
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return raw
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme == "http" {
		scheme = "https"
	}
	host := strings.TrimPrefix(strings.Trim(strings.ToLower(u.Hostname()), "."), "www.")
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if p := u.Port(); p != "" && p != "80" && p != "443" {
		host += ":" + p
	}
	out := url.URL{Scheme: scheme, Host: host, Path: strings.TrimRight(u.Path, "/")}
	if u.RawQuery != "" {
		q, err := url.ParseQuery(u.RawQuery)
		if err != nil {
			out.RawQuery = u.RawQuery
		} else {
			for k := range q {
				lk := strings.ToLower(k)
				if strings.HasPrefix(lk, "utm_") || slices.Contains(trackingParams, lk) {
					delete(q, k)
				}
			}
			out.RawQuery = q.Encode()
		}
	}
	return out.String()
}

var trackingParams = []string{"fbclid", "gclid", "yclid", "msclkid", "mc_cid", "mc_eid", "ref", "ref_src", "_ga"}

// keys returns the identities of p for de-duplication: its normalised URL,
// DOI and arXiv identifier, whichever it has.
func (p Paper) keys() []string {
	var ks []string
	if p.URL != "" {
		ks = append(ks, "url:"+NormalizeURL(p.URL))
	}
	doi := bareDOI(p.DOI)
	if doi == "" && strings.Contains(strings.ToLower(p.URL), "doi.org/") {
		doi = bareDOI(p.URL)
	}
	if doi != "" {
		ks = append(ks, "doi:"+doi)
	}
	if id := arxivID(p.URL, doi); id != "" {
		ks = append(ks, "arxiv:"+id)
	} else if id := arxivID(p.PDFURL, ""); id != "" {
		ks = append(ks, "arxiv:"+id)
	}
	return ks
}

// Dedupe drops papers whose URL (normalised), DOI or arXiv identifier an
// earlier paper already has, keeping the first (higher-ranked) one. Papers
// without a URL are dropped.
func Dedupe(papers []Paper) []Paper {
	out := make([]Paper, 0, len(papers))
	seen := map[string]bool{}
	for _, p := range papers {
		if strings.TrimSpace(p.URL) == "" {
			continue
		}
		ks := p.keys()
		dup := false
		for _, k := range ks {
			if seen[k] {
				dup = true
				break
			}
		}
		if dup {
			continue
		}
		for _, k := range ks {
			seen[k] = true
		}
		out = append(out, p)
	}
	return out
}

// clean applies 000 §3.2's clean-up to a result.
func clean(p Paper) Paper {
	p.Title = CleanTitle(cleanText(p.Title))
	p.Summary = CleanSummary(cleanText(p.Summary))
	p.URL = strings.TrimSpace(p.URL)
	return p
}

// yearOf returns the year of a date that starts with YYYY.
func yearOf(date string) int {
	if len(date) < 4 {
		return 0
	}
	y := 0
	for _, r := range date[:4] {
		if r < '0' || r > '9' {
			return 0
		}
		y = y*10 + int(r-'0')
	}
	return y
}

// dateOnly returns the YYYY-MM-DD start of an ISO 8601 date or timestamp.
func dateOnly(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 10 && s[4] == '-' && s[7] == '-' {
		return s[:10]
	}
	return s
}
