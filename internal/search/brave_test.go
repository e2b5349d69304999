package search

import (
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

const braveKey = "BSA-SECRET-0123456789"

// braveBody follows Brave's documented web search answer (type "search"
// with query, mixed and web sections).
const braveBody = `{
  "type": "search",
  "query": {"original": "tidal power", "show_strict_warning": false, "is_navigational": false, "country": "us", "more_results_available": true},
  "mixed": {"type": "mixed", "main": [{"type": "web", "index": 0, "all": false}]},
  "web": {
    "type": "search",
    "family_friendly": true,
    "results": [
      {
        "type": "search_result",
        "subtype": "generic",
        "title": "Tidal power - Wikipedia",
        "url": "https://en.wikipedia.org/wiki/Tidal_power",
        "description": "<strong>Tidal power</strong> or tidal energy is harnessed by converting energy from tides &amp; currents.",
        "age": "March 3, 2024",
        "page_age": "2024-03-03T10:12:00",
        "language": "en",
        "family_friendly": true,
        "profile": {"name": "Wikipedia", "url": "https://en.wikipedia.org/wiki/Tidal_power", "long_name": "en.wikipedia.org", "img": "https://imgs.search.brave.com/profile-wiki.png"},
        "meta_url": {"scheme": "https", "netloc": "en.wikipedia.org", "hostname": "en.wikipedia.org", "favicon": "https://imgs.search.brave.com/favicon-wiki.png", "path": "› wiki › Tidal_power"},
        "thumbnail": {"src": "https://imgs.search.brave.com/thumb-small.jpg", "original": "https://upload.wikimedia.org/tidal.jpg", "logo": false},
        "extra_snippets": ["The first tidal power station was La Rance.", "Tidal stream generators work like <strong>wind</strong> turbines."]
      },
      {
        "type": "search_result",
        "title": "Tidal energy explained",
        "url": "https://news.example.com/tidal",
        "description": "A reporter explains tidal energy.",
        "age": "2 days ago",
        "profile": {"name": "News", "img": "https://imgs.search.brave.com/profile-news.png"},
        "meta_url": {"hostname": "news.example.com"},
        "article": {"author": [{"type": "person", "name": "Jane Reporter"}], "date": "2024-03-01"}
      },
      {
        "type": "search_result",
        "title": "Blocked by the domain filter",
        "url": "https://spam.example/tidal",
        "description": "spam"
      }
    ]
  }
}`

func TestBraveContract(t *testing.T) {
	srv := newScriptServer(t, reply{status: 200, body: braveBody})
	got, err := NewBrave(braveKey, srv.URL, srv.Client()).Search(t.Context(), Query{
		Text: "tidal power", MaxResults: 50, Language: "ja-JP", TimeRange: "week",
		ExcludeDomains: []string{"spam.example"},
	})
	if err != nil {
		t.Fatalf("Search: %v", err)
	}
	r := srv.requests()[0]
	if r.method != http.MethodGet || r.path != "/res/v1/web/search" {
		t.Errorf("request = %s %s", r.method, r.path)
	}
	if r.header.Get("X-Subscription-Token") != braveKey || r.header.Get("Accept") != "application/json" {
		t.Errorf("headers = %v", r.header)
	}
	wantQuery := map[string]string{
		"q": "tidal power -site:spam.example", "count": "20", "freshness": "pw", "search_lang": "jp",
		"extra_snippets": "true", "text_decorations": "false", "result_filter": "web",
	}
	for k, v := range wantQuery {
		if got := r.query.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	want := []Result{
		{
			URL:       "https://en.wikipedia.org/wiki/Tidal_power",
			Title:     "Tidal power - Wikipedia",
			Snippet:   "Tidal power or tidal energy is harnessed by converting energy from tides & currents.",
			Content:   "The first tidal power station was La Rance.\nTidal stream generators work like wind turbines.",
			Published: "2024-03-03T10:12:00",
			Favicon:   "https://imgs.search.brave.com/favicon-wiki.png",
			Provider:  "brave",
			Images:    []string{"https://upload.wikimedia.org/tidal.jpg"},
		},
		{
			URL:       "https://news.example.com/tidal",
			Title:     "Tidal energy explained",
			Snippet:   "A reporter explains tidal energy.",
			Published: "2 days ago",
			Author:    "Jane Reporter",
			Favicon:   "https://imgs.search.brave.com/profile-news.png",
			Provider:  "brave",
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("results\n got %+v\nwant %+v", got, want)
	}
}

func TestBraveRequestOptions(t *testing.T) {
	srv := newScriptServer(t, reply{status: 200, body: `{"type":"search","query":{"original":"q"}}`})
	got, err := NewBrave(braveKey, srv.URL, srv.Client()).Search(t.Context(), Query{
		Text: "q", Language: "xx", IncludeDomains: []string{"a.example", "www.b.example"},
	})
	if err != nil || len(got) != 0 {
		t.Fatalf("Search = %v, %v (an answer without a web section is no results)", got, err)
	}
	q := srv.requests()[0].query
	if q.Get("q") != "q site:a.example OR site:b.example" || q.Has("freshness") || q.Has("search_lang") || q.Get("count") != "10" {
		t.Errorf("query = %v", q)
	}
}

func TestBraveErrors(t *testing.T) {
	tests := []struct {
		name     string
		replies  []reply
		wantHits int
		status   int
		wantIn   []string
	}{
		{
			name: "401 invalid token",
			replies: []reply{{status: 401, body: `{"type":"ErrorResponse","error":{"id":"0f5b2f1e","status":401,"code":"SUBSCRIPTION_TOKEN_INVALID",` +
				`"detail":"The provided subscription token is invalid.","meta":{"component":"authentication"}},"time":1710000000}`}},
			wantHits: 1, status: 401,
			wantIn: []string{"brave:", "HTTP 401", "The provided subscription token is invalid. (SUBSCRIPTION_TOKEN_INVALID)", "check BRAVE_API_KEY"},
		},
		{
			name: "422 validation",
			replies: []reply{{status: 422, body: `{"type":"ErrorResponse","error":{"id":"1a","status":422,"code":"VALIDATION",` +
				`"detail":"Unable to validate request parameter(s)","meta":{"errors":[{"type":"less_than_equal","loc":["query","count"],"msg":"Input should be less than or equal to 20","input":"50"}]}},"time":1710000000}`}},
			wantHits: 1, status: 422,
			wantIn: []string{"HTTP 422", "(VALIDATION)", "[query count]: Input should be less than or equal to 20"},
		},
		{
			name: "429 rate limited, retried once",
			replies: []reply{{status: 429, header: map[string]string{"Retry-After": "0"}, body: `{"type":"ErrorResponse","error":{"id":"2b","status":429,"code":"RATE_LIMITED",` +
				`"detail":"Request rate limit exceeded for plan.","meta":{"plan":"Free","rate_limit":1,"rate_current":2,"quota_limit":2000,"quota_current":12}},"time":1710000000}`}},
			wantHits: 2, status: 429,
			wantIn: []string{"HTTP 429", "Request rate limit exceeded for plan. (RATE_LIMITED)", "SOVA_SEARCH_LIMITS"},
		},
		{
			name:     "502 from a proxy, HTML body",
			replies:  []reply{{status: 502, body: "<html><body>Bad Gateway</body></html>", header: map[string]string{"Content-Type": "text/html"}}},
			wantHits: 2, status: 502,
			wantIn: []string{"HTTP 502", "Bad Gateway"},
		},
		{
			name:     "invalid JSON",
			replies:  []reply{{status: 200, body: `<html>`}},
			wantHits: 1,
			wantIn:   []string{"not valid JSON"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newScriptServer(t, tt.replies...)
			_, err := NewBrave(braveKey, srv.URL, srv.Client(), fast()).Search(t.Context(), Query{Text: "q"})
			if err == nil {
				t.Fatal("Search succeeded, want an error")
			}
			if strings.Contains(err.Error(), braveKey) {
				t.Errorf("error leaks the key: %v", err)
			}
			for _, s := range tt.wantIn {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
			var pe *Error
			if !errors.As(err, &pe) || pe.Status != tt.status {
				t.Errorf("error %#v: want *Error with status %d", err, tt.status)
			}
			if n := len(srv.requests()); n != tt.wantHits {
				t.Errorf("requests = %d, want %d", n, tt.wantHits)
			}
		})
	}
}

func TestBraveNoKey(t *testing.T) {
	_, err := NewBrave(" ", "http://127.0.0.1:1", nil).Search(t.Context(), Query{Text: "q"})
	if err == nil || !strings.Contains(err.Error(), "BRAVE_API_KEY") {
		t.Fatalf("err = %v", err)
	}
}
