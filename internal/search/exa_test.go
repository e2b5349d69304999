package search

import (
	"encoding/json"
	"errors"
	"github.com/sova-ai/sova/internal/apiclient"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

const exaKey = "exa-SECRET-0123456789"

// exaBody follows Exa's documented /search answer with text contents,
// including fields the provider does not use.
const exaBody = `{
  "requestId": "b5947044c4b78efa9552a7c89b306d95",
  "resolvedSearchType": "neural",
  "searchType": "auto",
  "results": [
    {
      "title": "A Comprehensive Overview of Large Language Models",
      "url": "https://arxiv.org/pdf/2307.06435.pdf",
      "publishedDate": "2023-11-16T01:36:32.547Z",
      "author": "Humza  Naveed, University of Engineering and Technology (UET), Lahore, Pakistan",
      "score": 0.4600165784358978,
      "id": "https://arxiv.org/abs/2307.06435",
      "image": "https://arxiv.org/pdf/2307.06435.pdf/page_1.png",
      "favicon": "https://arxiv.org/favicon.ico",
      "text": "Abstract Large Language Models (LLMs) have recently demonstrated remarkable capabilities..."
    },
    {
      "title": null,
      "url": "https://example.com/no-title",
      "publishedDate": null,
      "author": null,
      "id": "https://example.com/no-title",
      "text": "Plain text of the page.",
      "highlights": ["the most relevant sentence", "another one"],
      "highlightScores": [0.5, 0.4]
    },
    {"title": "empty url", "url": "", "id": "x"}
  ],
  "costDollars": {"total": 0.005, "search": {"neural": 0.005}}
}`

func TestExaContract(t *testing.T) {
	srv := newScriptServer(t, reply{status: 200, body: exaBody})
	p := NewExa(exaKey, srv.URL+"/", srv.Client())
	p.now = func() time.Time { return time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC) }

	got, err := p.Search(t.Context(), Query{
		Text: " large language models ", MaxResults: 500, Language: "en", TimeRange: "month",
		IncludeDomains: []string{"https://www.arxiv.org/", "example.com"}, ExcludeDomains: []string{"spam.example"},
	})
	if err != nil {
		t.Fatalf("Search: %v", err)
	}
	r := srv.requests()[0]
	if r.method != http.MethodPost || r.path != "/search" {
		t.Errorf("request = %s %s, want POST /search", r.method, r.path)
	}
	if h := r.header.Get("x-api-key"); h != exaKey {
		t.Errorf("x-api-key = %q", h)
	}
	var body map[string]any
	if err := json.Unmarshal(r.body, &body); err != nil {
		t.Fatal(err)
	}
	wantBody := map[string]any{
		"query":              "large language models",
		"type":               "auto",
		"numResults":         float64(100),
		"includeDomains":     []any{"arxiv.org", "example.com"},
		"excludeDomains":     []any{"spam.example"},
		"startPublishedDate": "2026-02-10T12:00:00Z",
		"contents":           map[string]any{"text": map[string]any{"maxCharacters": float64(exaTextChars)}},
	}
	if !reflect.DeepEqual(body, wantBody) {
		t.Errorf("request body\n got %v\nwant %v", body, wantBody)
	}
	want := []Result{
		{
			URL:       "https://arxiv.org/pdf/2307.06435.pdf",
			Title:     "A Comprehensive Overview of Large Language Models",
			Snippet:   "Abstract Large Language Models (LLMs) have recently demonstrated remarkable capabilities...",
			Content:   "Abstract Large Language Models (LLMs) have recently demonstrated remarkable capabilities...",
			Published: "2023-11-16T01:36:32.547Z",
			Author:    "Humza  Naveed, University of Engineering and Technology (UET), Lahore, Pakistan",
			Favicon:   "https://arxiv.org/favicon.ico",
			Provider:  "exa",
			Score:     0.4600165784358978,
			Images:    []string{"https://arxiv.org/pdf/2307.06435.pdf/page_1.png"},
		},
		{
			URL:      "https://example.com/no-title",
			Snippet:  "the most relevant sentence … another one",
			Content:  "Plain text of the page.",
			Provider: "exa",
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("results\n got %+v\nwant %+v", got, want)
	}
}

func TestExaMinimalRequest(t *testing.T) {
	srv := newScriptServer(t, reply{status: 200, body: `{"requestId":"r","results":[]}`})
	got, err := NewExa(exaKey, srv.URL, srv.Client()).Search(t.Context(), Query{Text: "q"})
	if err != nil || len(got) != 0 {
		t.Fatalf("Search = %v, %v", got, err)
	}
	var body map[string]any
	_ = json.Unmarshal(srv.requests()[0].body, &body)
	for _, k := range []string{"includeDomains", "excludeDomains", "startPublishedDate"} {
		if _, ok := body[k]; ok {
			t.Errorf("%s sent although unset", k)
		}
	}
	if body["numResults"] != float64(DefaultMaxResults) {
		t.Errorf("numResults = %v", body["numResults"])
	}
}

func TestExaErrors(t *testing.T) {
	tests := []struct {
		name     string
		replies  []reply
		wantHits int
		status   int
		wantIn   []string
	}{
		{
			name:     "401 invalid key",
			replies:  []reply{{status: 401, body: `{"requestId":"abc","error":"Invalid API key","tag":"INVALID_API_KEY"}`}},
			wantHits: 1, status: 401,
			wantIn: []string{"exa:", "HTTP 401", "Invalid API key (INVALID_API_KEY)", "check EXA_API_KEY"},
		},
		{
			name:     "400 invalid request",
			replies:  []reply{{status: 400, body: `{"requestId":"abc","error":"numResults must be at most 100","tag":"INVALID_NUM_RESULTS"}`}},
			wantHits: 1, status: 400,
			wantIn: []string{"HTTP 400", "numResults must be at most 100"},
		},
		{
			name:     "402 no credits",
			replies:  []reply{{status: 402, body: `{"requestId":"abc","error":"Insufficient credits","tag":"NO_MORE_CREDITS"}`}},
			wantHits: 1, status: 402,
			wantIn: []string{"HTTP 402", "no credits left"},
		},
		{
			name:     "429 not retried (the chain moves on)",
			replies:  []reply{{status: 429, body: `{"requestId":"abc","error":"Rate limit exceeded","tag":"RATE_LIMIT_EXCEEDED"}`, header: map[string]string{"Retry-After": "0"}}},
			wantHits: 1, status: 429,
			wantIn: []string{"HTTP 429", "Rate limit exceeded"},
		},
		{
			name:     "503 retried, text body",
			replies:  []reply{{status: 503, body: "upstream unavailable"}},
			wantHits: 2, status: 503,
			wantIn: []string{"HTTP 503", "upstream unavailable"},
		},
		{
			name:     "key echoed back is redacted",
			replies:  []reply{{status: 403, body: `{"error":"key ` + exaKey + ` blocked","tag":"ACCESS_DENIED"}`}},
			wantHits: 1, status: 403,
			wantIn: []string{"key [redacted] blocked"},
		},
		{
			name:     "invalid JSON",
			replies:  []reply{{status: 200, body: `{"results": [`}},
			wantHits: 1,
			wantIn:   []string{"not valid JSON"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newScriptServer(t, tt.replies...)
			_, err := NewExa(exaKey, srv.URL, srv.Client(), fast()).Search(t.Context(), Query{Text: "q"})
			if err == nil {
				t.Fatal("Search succeeded, want an error")
			}
			if strings.Contains(err.Error(), exaKey) {
				t.Errorf("error leaks the key: %v", err)
			}
			for _, s := range tt.wantIn {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
			var pe *apiclient.Error
			if !errors.As(err, &pe) || pe.Status != tt.status {
				t.Errorf("error %#v: want *apiclient.Error with status %d", err, tt.status)
			}
			if n := len(srv.requests()); n != tt.wantHits {
				t.Errorf("requests = %d, want %d", n, tt.wantHits)
			}
		})
	}
}

func TestExaNoKey(t *testing.T) {
	_, err := NewExa("", "http://127.0.0.1:1", nil).Search(t.Context(), Query{Text: "q"})
	if err == nil || !strings.Contains(err.Error(), "EXA_API_KEY") {
		t.Fatalf("err = %v", err)
	}
	if p := NewExa("k", "", nil); p.client.Base() != DefaultExaURL {
		t.Errorf("base = %q", p.client.Base())
	}
}

func TestTimeRangeStart(t *testing.T) {
	now := time.Date(2026, 3, 31, 0, 0, 0, 0, time.UTC)
	tests := map[string]time.Time{
		"":      {},
		"day":   time.Date(2026, 3, 30, 0, 0, 0, 0, time.UTC),
		"week":  time.Date(2026, 3, 24, 0, 0, 0, 0, time.UTC),
		"month": time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC), // AddDate normalises 31 Feb
		"year":  time.Date(2025, 3, 31, 0, 0, 0, 0, time.UTC),
	}
	for tr, want := range tests {
		if got := timeRangeStart(tr, now); !got.Equal(want) {
			t.Errorf("timeRangeStart(%q) = %v, want %v", tr, got, want)
		}
	}
}
