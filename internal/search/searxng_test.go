package search

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// searxngBody follows the answer of SearXNG's /search?format=json: results
// with the fields of the default template, plus answers, infoboxes,
// suggestions and unresponsive engines, which the provider ignores.
const searxngBody = `{
  "query": "self-hosted search",
  "number_of_results": 0,
  "results": [
    {
      "url": "https://www.example.org/articles/self-hosted-search?utm_source=searx",
      "title": "Self-hosted search engines compared",
      "content": "A comparison of SearXNG, YaCy and other self-hosted engines.",
      "publishedDate": "2025-01-15T00:00:00",
      "thumbnail": "https://www.example.org/thumb.jpg",
      "engine": "google",
      "template": "default.html",
      "parsed_url": ["https", "www.example.org", "/articles/self-hosted-search", "", "utm_source=searx", ""],
      "img_src": "",
      "priority": "",
      "engines": ["google", "duckduckgo", "brave"],
      "positions": [1, 1, 2],
      "score": 7.5,
      "category": "general"
    },
    {
      "url": "https://docs.searxng.org/",
      "title": "Welcome to SearXNG",
      "content": "SearXNG is a free internet metasearch engine.",
      "publishedDate": null,
      "thumbnail": null,
      "engine": "duckduckgo",
      "template": "default.html",
      "parsed_url": ["https", "docs.searxng.org", "/", "", "", ""],
      "engines": ["duckduckgo"],
      "positions": [2],
      "score": 0.5,
      "category": "general"
    },
    {
      "url": "https://video.example.net/watch/42",
      "title": "Running your own search engine",
      "content": "",
      "author": ["Jane Doe"],
      "length": 1234,
      "iframe_src": "https://video.example.net/embed/42",
      "thumbnail": "https://video.example.net/42.jpg",
      "img_src": "https://video.example.net/42-large.jpg",
      "engine": "youtube",
      "template": "videos.html",
      "engines": ["youtube"],
      "positions": [3],
      "score": 0.33,
      "category": "videos"
    }
  ],
  "answers": [{"answer": "42", "url": null, "engine": "wolframalpha"}],
  "corrections": [],
  "infoboxes": [
    {
      "infobox": "SearXNG",
      "id": "https://en.wikipedia.org/wiki/SearXNG",
      "content": "SearXNG is a fork of Searx.",
      "img_src": null,
      "urls": [{"title": "Official website", "url": "https://searxng.org"}],
      "attributes": [{"label": "License", "value": "AGPL-3.0"}],
      "engine": "wikidata",
      "engines": ["wikidata", "wikipedia"]
    }
  ],
  "suggestions": ["searxng docker", "searxng settings"],
  "unresponsive_engines": [["bing", "timeout"], ["qwant", "CAPTCHA"]]
}`

func TestSearXNGContract(t *testing.T) {
	srv := newScriptServer(t, reply{status: 200, body: searxngBody})
	p := NewSearXNG(srv.URL+"/searxng/", srv.Client(), fast())

	got, err := p.Search(t.Context(), Query{Text: "self-hosted search", Language: "ru", TimeRange: "month"})
	if err != nil {
		t.Fatalf("Search: %v", err)
	}

	reqs := srv.requests()
	if len(reqs) != 1 {
		t.Fatalf("requests = %d, want 1", len(reqs))
	}
	r := reqs[0]
	if r.method != http.MethodGet || r.path != "/searxng/search" {
		t.Errorf("request = %s %s, want GET /searxng/search", r.method, r.path)
	}
	wantParams := map[string]string{
		"q": "self-hosted search", "format": "json", "pageno": "1",
		"categories": "general", "language": "ru", "time_range": "month",
	}
	for k, v := range wantParams {
		if got := strings.Join(r.query[k], ","); got != v {
			t.Errorf("param %s = %q, want %q", k, got, v)
		}
	}
	if r.header.Get("Accept-Language") == "" || r.header.Get("User-Agent") != DefaultUserAgent {
		t.Errorf("headers: Accept-Language %q, User-Agent %q", r.header.Get("Accept-Language"), r.header.Get("User-Agent"))
	}

	want := []Result{
		{
			URL:       "https://www.example.org/articles/self-hosted-search?utm_source=searx",
			Title:     "Self-hosted search engines compared",
			Snippet:   "A comparison of SearXNG, YaCy and other self-hosted engines.",
			Published: "2025-01-15T00:00:00",
			Engine:    "google,duckduckgo,brave",
			Provider:  "searxng",
			Score:     7.5,
			Images:    []string{"https://www.example.org/thumb.jpg"},
		},
		{
			URL:      "https://docs.searxng.org/",
			Title:    "Welcome to SearXNG",
			Snippet:  "SearXNG is a free internet metasearch engine.",
			Engine:   "duckduckgo",
			Provider: "searxng",
			Score:    0.5,
		},
		{
			URL:      "https://video.example.net/watch/42",
			Title:    "Running your own search engine",
			Engine:   "youtube",
			Provider: "searxng",
			Score:    0.33,
			Images:   []string{"https://video.example.net/42.jpg", "https://video.example.net/42-large.jpg"},
		},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d results, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if !equalResult(got[i], want[i]) {
			t.Errorf("result %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
}

func equalResult(a, b Result) bool {
	return reflect.DeepEqual(a, b)
}

func TestSearXNGQueryOptions(t *testing.T) {
	tests := []struct {
		name    string
		q       Query
		wantQ   string
		wantURL []string // result URLs kept, in order
	}{
		{
			name:    "max results caps",
			q:       Query{Text: "x", MaxResults: 2},
			wantQ:   "x",
			wantURL: []string{"https://www.example.org/articles/self-hosted-search?utm_source=searx", "https://docs.searxng.org/"},
		},
		{
			name:    "one include domain",
			q:       Query{Text: "x", IncludeDomains: []string{"https://www.Example.org/"}},
			wantQ:   "x site:example.org",
			wantURL: []string{"https://www.example.org/articles/self-hosted-search?utm_source=searx"},
		},
		{
			name:    "several include domains are ORed and enforced",
			q:       Query{Text: "x", IncludeDomains: []string{"searxng.org", "example.net"}},
			wantQ:   "x site:searxng.org OR site:example.net",
			wantURL: []string{"https://docs.searxng.org/", "https://video.example.net/watch/42"},
		},
		{
			// A phrase is not a domain: as site:… it would empty the search.
			name:    "a phrase among the domains filters nothing",
			q:       Query{Text: "x", IncludeDomains: []string{"state of the union", "example.org"}},
			wantQ:   "x site:example.org",
			wantURL: []string{"https://www.example.org/articles/self-hosted-search?utm_source=searx"},
		},
		{
			name:    "exclude domains are enforced with subdomains",
			q:       Query{Text: "x", ExcludeDomains: []string{"searxng.org", "example.net"}},
			wantQ:   "x -site:searxng.org -site:example.net",
			wantURL: []string{"https://www.example.org/articles/self-hosted-search?utm_source=searx"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newScriptServer(t, reply{status: 200, body: searxngBody})
			got, err := NewSearXNG(srv.URL, srv.Client()).Search(t.Context(), tt.q)
			if err != nil {
				t.Fatalf("Search: %v", err)
			}
			r := srv.requests()[0]
			if q := r.query.Get("q"); q != tt.wantQ {
				t.Errorf("q = %q, want %q", q, tt.wantQ)
			}
			if _, ok := r.query["language"]; ok {
				t.Errorf("language sent although the query has none")
			}
			var urls []string
			for _, res := range got {
				urls = append(urls, res.URL)
			}
			if !slices.Equal(urls, tt.wantURL) {
				t.Errorf("urls = %q, want %q", urls, tt.wantURL)
			}
		})
	}
}

func TestSearXNGErrors(t *testing.T) {
	tests := []struct {
		name      string
		replies   []reply
		wantHits  int
		wantIn    []string
		wantIs    error
		wantState int
	}{
		{
			name:      "403 means JSON is disabled",
			replies:   []reply{{status: 403, body: "<html><body>Forbidden</body></html>", header: map[string]string{"Content-Type": "text/html"}}},
			wantHits:  1,
			wantIn:    []string{"searxng:", "403", "formats: [html, json]", "settings.yml"},
			wantIs:    ErrJSONDisabled,
			wantState: 403,
		},
		{
			name:      "400 is final and quoted",
			replies:   []reply{{status: 400, body: "Invalid value \"xx\" for parameter language"}},
			wantHits:  1,
			wantIn:    []string{"HTTP 400 Bad Request", `Invalid value "xx"`},
			wantState: 400,
		},
		{
			name:      "5xx is retried once",
			replies:   []reply{{status: 502, body: "bad gateway"}, {status: 503, body: "upstream down"}},
			wantHits:  2,
			wantIn:    []string{"HTTP 503 Service Unavailable", "upstream down"},
			wantState: 503,
		},
		{
			name:      "429 with a long Retry-After is final",
			replies:   []reply{{status: 429, body: "Too Many Requests", header: map[string]string{"Retry-After": "3600"}}},
			wantHits:  1,
			wantIn:    []string{"HTTP 429"},
			wantState: 429,
		},
		{
			name:     "invalid JSON",
			replies:  []reply{{status: 200, body: "<!DOCTYPE html><html><title>SearXNG</title>"}},
			wantHits: 1,
			wantIn:   []string{"not valid JSON", "<!DOCTYPE html>"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newScriptServer(t, tt.replies...)
			_, err := NewSearXNG(srv.URL, srv.Client(), fast()).Search(t.Context(), Query{Text: "q"})
			if err == nil {
				t.Fatal("Search succeeded, want an error")
			}
			for _, s := range tt.wantIn {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("errors.Is(%v, %v) = false", err, tt.wantIs)
			}
			var pe *Error
			if !errors.As(err, &pe) || pe.Status != tt.wantState || pe.Provider != "searxng" {
				t.Errorf("error %#v: want *Error with status %d", err, tt.wantState)
			}
			if n := len(srv.requests()); n != tt.wantHits {
				t.Errorf("requests = %d, want %d", n, tt.wantHits)
			}
		})
	}
}

func TestSearXNGRetrySucceeds(t *testing.T) {
	srv := newScriptServer(t, reply{status: 500, body: "oops"}, reply{status: 200, body: searxngBody})
	got, err := NewSearXNG(srv.URL, srv.Client(), fast()).Search(t.Context(), Query{Text: "q"})
	if err != nil || len(got) != 3 {
		t.Fatalf("Search = %d results, %v; want 3, nil", len(got), err)
	}
}

func TestSearXNGNetworkErrorRetried(t *testing.T) {
	srv := newScriptServer(t, reply{status: 200, body: searxngBody})
	base := srv.URL
	srv.Close() // connection refused from now on
	start := time.Now()
	_, err := NewSearXNG(base, nil, WithRetryBackoff(50*time.Millisecond)).Search(t.Context(), Query{Text: "q"})
	if err == nil || !strings.Contains(err.Error(), "cannot reach") {
		t.Fatalf("err = %v, want a 'cannot reach' error", err)
	}
	if time.Since(start) < 50*time.Millisecond {
		t.Errorf("returned after %s: the network error was not retried after the backoff", time.Since(start))
	}
}

func TestSearXNGTimeout(t *testing.T) {
	srv := newScriptServer(t, reply{status: 200, body: searxngBody, delay: 2 * time.Second})
	start := time.Now()
	_, err := NewSearXNG(srv.URL, srv.Client(), WithTimeout(100*time.Millisecond)).Search(t.Context(), Query{Text: "q"})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no answer within 100ms") {
		t.Fatalf("err = %v, want a timeout error", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("took %s, want about 100ms", d)
	}
}

func TestSearXNGCancelled(t *testing.T) {
	srv := newScriptServer(t, reply{status: 200, body: searxngBody, delay: 2 * time.Second})
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err := NewSearXNG(srv.URL, srv.Client()).Search(ctx, Query{Text: "q"})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "cancelled") {
		t.Fatalf("err = %v, want the caller's context error", err)
	}
	if n := len(srv.requests()); n != 1 {
		t.Errorf("requests = %d, want 1 (no retry after cancellation)", n)
	}
}

func TestSearXNGBadConfigAndQuery(t *testing.T) {
	tests := []struct {
		name   string
		base   string
		q      Query
		wantIn string
	}{
		{"no base URL", "", Query{Text: "q"}, "no SearXNG base URL"},
		{"not http", "ftp://host", Query{Text: "q"}, "not an http(s) URL"},
		{"empty query", "http://127.0.0.1:1", Query{Text: "  "}, "query text is empty"},
		{"bad time range", "http://127.0.0.1:1", Query{Text: "q", TimeRange: "decade"}, `unsupported time range "decade"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewSearXNG(tt.base, nil).Search(t.Context(), tt.q)
			if err == nil || !strings.Contains(err.Error(), tt.wantIn) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.wantIn)
			}
		})
	}
}
