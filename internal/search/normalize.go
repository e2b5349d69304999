package search

import (
	"net/url"
	"slices"
	"strings"
)

// isTrackingParam reports whether the (lower-cased) query parameter name k
// only tracks the visitor and never changes the page.
func isTrackingParam(k string) bool {
	if strings.HasPrefix(k, "utm_") {
		return true
	}
	switch k {
	case "gclid", "gclsrc", "dclid", "gbraid", "wbraid", "fbclid", "yclid",
		"msclkid", "twclid", "ttclid", "igshid", "li_fat_id", "mc_cid", "mc_eid",
		"_ga", "_gl", "_hsenc", "_hsmi", "mkt_tok", "vero_id", "oly_enc_id",
		"oly_anon_id", "rb_clickid", "s_cid", "ref", "ref_src", "ref_url", "referrer":
		return true
	}
	return false
}

// NormalizeURL returns a comparison key for raw: two URLs that name the same
// page get the same key. It lower-cases the scheme and host, drops "www.",
// default ports, userinfo, the fragment, a trailing slash and tracking
// parameters (utm_*, gclid, fbclid, yclid, ref, ...), sorts the remaining
// query parameters and treats http and https as equal (the key uses https).
// The key is meant for comparison, not for fetching. A string that does not
// parse as an absolute URL is returned trimmed.
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
	host := strings.Trim(strings.ToLower(u.Hostname()), ".")
	host = strings.TrimPrefix(host, "www.")
	if strings.Contains(host, ":") {
		host = "[" + host + "]" // IPv6 literal
	}
	if port := u.Port(); port != "" && port != "80" && port != "443" {
		host += ":" + port
	}

	out := url.URL{Scheme: scheme, Host: host, Path: strings.TrimRight(u.Path, "/")}

	if u.RawQuery != "" {
		q, err := url.ParseQuery(u.RawQuery)
		if err != nil {
			// Keep a query we cannot parse verbatim rather than lose it.
			out.RawQuery = u.RawQuery
		} else {
			for k := range q {
				if isTrackingParam(strings.ToLower(k)) {
					delete(q, k)
				}
			}
			out.RawQuery = q.Encode() // sorted by key
		}
	}
	return out.String()
}

// Dedupe returns results with duplicates removed, comparing NormalizeURL
// keys. The first occurrence (the higher-ranked one) is kept in place; a
// later duplicate contributes a longer snippet, fills fields the kept result
// lacks and adds images it does not have yet. The input is not modified.
func Dedupe(results []Result) []Result {
	out := make([]Result, 0, len(results))
	seen := make(map[string]int, len(results))
	for _, r := range results {
		key := NormalizeURL(r.URL)
		i, dup := seen[key]
		if !dup {
			seen[key] = len(out)
			r.Images = append([]string(nil), r.Images...)
			out = append(out, r)
			continue
		}
		mergeInto(&out[i], r)
	}
	return out
}

// mergeInto folds the duplicate d into the kept result k.
func mergeInto(k *Result, d Result) {
	if len(d.Snippet) > len(k.Snippet) {
		k.Snippet = d.Snippet
	}
	if len(d.Content) > len(k.Content) {
		k.Content = d.Content
	}
	fillEmpty(&k.Title, d.Title)
	fillEmpty(&k.Published, d.Published)
	fillEmpty(&k.Author, d.Author)
	fillEmpty(&k.Favicon, d.Favicon)
	for _, img := range d.Images {
		if !slices.Contains(k.Images, img) {
			k.Images = append(k.Images, img)
		}
	}
}

func fillEmpty(dst *string, src string) {
	if *dst == "" {
		*dst = src
	}
}
