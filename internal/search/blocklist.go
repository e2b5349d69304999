package search

import (
	"net/url"
	"strings"
	"unicode"
)

// BlockList removes unwanted results.
//
// A domain entry blocks that domain and every subdomain: "example.com"
// blocks example.com and a.example.com but not badexample.com. Entries may
// be written as URLs or with a leading "*." or "."; a leading "www." is
// ignored on both sides, so "www.example.com" blocks example.com too.
//
// A keyword blocks every result whose title, URL or snippet contains it,
// ignoring case. Empty entries are ignored.
type BlockList struct {
	Domains  []string
	Keywords []string
}

// Allowed reports whether r passes the block list.
func (b BlockList) Allowed(r Result) bool {
	return b.compile().allowed(r)
}

// Filter returns the results that pass b, in their original order. The
// input slice is not modified.
func Filter(results []Result, b BlockList) []Result {
	m := b.compile()
	out := make([]Result, 0, len(results))
	for _, r := range results {
		if m.allowed(r) {
			out = append(out, r)
		}
	}
	return out
}

// blockMatcher is a BlockList with its entries normalised once.
type blockMatcher struct {
	domains  []string
	keywords []string
}

func (b BlockList) compile() blockMatcher {
	m := blockMatcher{domains: normalizeDomains(b.Domains)}
	for _, k := range b.Keywords {
		if k = strings.ToLower(strings.TrimSpace(k)); k != "" {
			m.keywords = append(m.keywords, k)
		}
	}
	return m
}

func (m blockMatcher) allowed(r Result) bool {
	if len(m.domains) > 0 {
		if host := urlHost(r.URL); host != "" && matchesAnyDomain(host, m.domains) {
			return false
		}
	}
	if len(m.keywords) > 0 {
		fields := [...]string{strings.ToLower(r.Title), strings.ToLower(r.URL), strings.ToLower(r.Snippet)}
		for _, k := range m.keywords {
			for _, f := range fields {
				if strings.Contains(f, k) {
					return false
				}
			}
		}
	}
	return true
}

// domainFilter enforces Query.IncludeDomains / ExcludeDomains on results.
type domainFilter struct {
	include, exclude []string
}

func newDomainFilter(include, exclude []string) domainFilter {
	return domainFilter{include: normalizeDomains(include), exclude: normalizeDomains(exclude)}
}

func (f domainFilter) allows(rawURL string) bool {
	if len(f.include) == 0 && len(f.exclude) == 0 {
		return true
	}
	host := urlHost(rawURL)
	if len(f.include) > 0 && (host == "" || !matchesAnyDomain(host, f.include)) {
		return false
	}
	return host == "" || !matchesAnyDomain(host, f.exclude)
}

// matchesAnyDomain reports whether host equals one of domains or is a
// subdomain of one. Both sides must already be normalised.
func matchesAnyDomain(host string, domains []string) bool {
	for _, d := range domains {
		if host == d || (len(host) > len(d) && strings.HasSuffix(host, d) && host[len(host)-len(d)-1] == '.') {
			return true
		}
	}
	return false
}

// normalizeDomains normalises every entry and drops empty ones.
func normalizeDomains(in []string) []string {
	var out []string
	for _, d := range in {
		if d = normalizeDomain(d); d != "" {
			out = append(out, d)
		}
	}
	return out
}

// normalizeDomain turns "https://WWW.Example.com:443/path", "*.example.com"
// or ".example.com." into "example.com".
func normalizeDomain(d string) string {
	d = strings.ToLower(strings.TrimSpace(d))
	if i := strings.Index(d, "://"); i >= 0 {
		d = d[i+3:]
	}
	if i := strings.IndexAny(d, "/?#"); i >= 0 {
		d = d[:i]
	}
	if i := strings.LastIndexByte(d, '@'); i >= 0 {
		d = d[i+1:]
	}
	if i := strings.LastIndexByte(d, ':'); i >= 0 && !strings.Contains(d[i:], "]") {
		d = d[:i]
	}
	d = strings.TrimPrefix(d, "*")
	d = strings.Trim(d, ".")
	d = strings.TrimPrefix(d, "www.")
	if !isHostName(d) {
		// "state of the union" is not a domain: as site:… it would empty
		// every search.
		return ""
	}
	return d
}

// isHostName reports whether d is a host name with a dot: labels of
// letters, digits and hyphens (any script, for IDNs), none empty.
func isHostName(d string) bool {
	if len(d) > 253 || !strings.Contains(d, ".") {
		return false
	}
	for _, label := range strings.Split(d, ".") {
		if label == "" || len(label) > 63 || strings.HasPrefix(label, "-") || strings.HasSuffix(label, "-") {
			return false
		}
		for _, r := range label {
			if r != '-' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				return false
			}
		}
	}
	return true
}

// HostNames splits domain filters into the host names among them
// (normalised: "https://www.bbc.co.uk/news" is bbc.co.uk) and the entries
// that are not host names ("state of the union"), which filter nothing.
func HostNames(domains []string) (hosts, rejected []string) {
	for _, d := range domains {
		if h := normalizeDomain(d); h != "" {
			hosts = append(hosts, h)
		} else if strings.TrimSpace(d) != "" {
			rejected = append(rejected, d)
		}
	}
	return hosts, rejected
}

// urlHost returns the normalised host of rawURL ("" when it has none).
func urlHost(rawURL string) string {
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil {
		return ""
	}
	host := strings.Trim(strings.ToLower(u.Hostname()), ".")
	return strings.TrimPrefix(host, "www.")
}
