package search

import (
	"encoding/json"
	"errors"
	"github.com/sova-ai/sova/internal/apiclient"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

const tavilyKey = "tvly-dev-SECRET0123456789"

// tavilyBody follows Tavily's documented /search answer, including fields
// the provider does not use (answer, follow_up_questions, auto_parameters,
// response_time, request_id) and both forms of "images".
const tavilyBody = `{
  "query": "Who is Leo Messi?",
  "follow_up_questions": null,
  "answer": null,
  "images": [
    "https://images.example.com/messi-1.jpg",
    {"url": "https://images.example.com/messi-2.jpg", "description": "Messi celebrating a goal"}
  ],
  "results": [
    {
      "title": "Lionel Messi Facts | Britannica",
      "url": "https://www.britannica.com/facts/Lionel-Messi",
      "content": "Lionel Messi, an Argentine footballer, is widely regarded as one of the greatest football players of his generation.",
      "score": 0.81025416,
      "raw_content": null,
      "favicon": "https://britannica.com/favicon.png"
    },
    {
      "title": "Messi wins another award",
      "url": "https://news.example.com/messi-award",
      "content": "Messi was named player of the year.",
      "score": 0.62,
      "raw_content": null,
      "published_date": "Mon, 12 May 2025 10:00:00 GMT"
    }
  ],
  "auto_parameters": {"topic": "general", "search_depth": "basic"},
  "response_time": "1.67",
  "request_id": "123e4567-e89b-12d3-a456-426614174111"
}`

func TestTavilyContract(t *testing.T) {
	srv := newScriptServer(t, reply{status: 200, body: tavilyBody})
	p := NewTavily(tavilyKey, srv.URL+"/", srv.Client(), WithImages())

	got, err := p.Search(t.Context(), Query{
		Text: "Who is Leo Messi?", MaxResults: 50, Language: "en", TimeRange: "week",
		IncludeDomains: []string{"www.britannica.com", "news.example.com"}, ExcludeDomains: []string{"spam.example"},
	})
	if err != nil {
		t.Fatalf("Search: %v", err)
	}

	r := srv.requests()[0]
	if r.method != http.MethodPost || r.path != "/search" {
		t.Errorf("request = %s %s, want POST /search", r.method, r.path)
	}
	if h := r.header.Get("Authorization"); h != "Bearer "+tavilyKey {
		t.Errorf("Authorization = %q", h)
	}
	if h := r.header.Get("Content-Type"); h != "application/json" {
		t.Errorf("Content-Type = %q", h)
	}
	var body map[string]any
	if err := json.Unmarshal(r.body, &body); err != nil {
		t.Fatalf("request body: %v", err)
	}
	wantBody := map[string]any{
		"query":           "Who is Leo Messi?",
		"max_results":     float64(20), // capped to Tavily's maximum
		"search_depth":    "basic",
		"topic":           "general",
		"time_range":      "week",
		"include_domains": []any{"britannica.com", "news.example.com"},
		"exclude_domains": []any{"spam.example"},
		"include_images":  true,
	}
	if !reflect.DeepEqual(body, wantBody) {
		t.Errorf("request body\n got %v\nwant %v", body, wantBody)
	}

	want := []Result{
		{
			URL:      "https://www.britannica.com/facts/Lionel-Messi",
			Title:    "Lionel Messi Facts | Britannica",
			Snippet:  "Lionel Messi, an Argentine footballer, is widely regarded as one of the greatest football players of his generation.",
			Favicon:  "https://britannica.com/favicon.png",
			Provider: "tavily",
			Score:    0.81025416,
			Images:   []string{"https://images.example.com/messi-1.jpg", "https://images.example.com/messi-2.jpg"},
		},
		{
			URL:       "https://news.example.com/messi-award",
			Title:     "Messi wins another award",
			Snippet:   "Messi was named player of the year.",
			Published: "Mon, 12 May 2025 10:00:00 GMT",
			Provider:  "tavily",
			Score:     0.62,
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("results\n got %+v\nwant %+v", got, want)
	}
}

func TestTavilyMinimalRequest(t *testing.T) {
	srv := newScriptServer(t, reply{status: 200, body: `{"query":"q","results":[],"images":[],"response_time":0.5}`})
	got, err := NewTavily(tavilyKey, srv.URL, srv.Client()).Search(t.Context(), Query{Text: "q"})
	if err != nil || len(got) != 0 {
		t.Fatalf("Search = %v, %v; want no results and no error", got, err)
	}
	var body map[string]any
	_ = json.Unmarshal(srv.requests()[0].body, &body)
	for _, k := range []string{"include_domains", "exclude_domains", "time_range", "include_images", "include_raw_content"} {
		if _, ok := body[k]; ok {
			t.Errorf("%s sent although unset: %v", k, body)
		}
	}
	if body["max_results"] != float64(DefaultMaxResults) {
		t.Errorf("max_results = %v, want %d", body["max_results"], DefaultMaxResults)
	}
}

// code_context's Tavily: advanced depth with each page's Markdown, which
// becomes the results' Content.
func TestTavilyAdvancedRawContent(t *testing.T) {
	srv := newScriptServer(t, reply{status: 200, body: `{"query":"q","results":[{"title":"T","url":"https://docs.example.com/x","content":"c","raw_content":"# Heading\n\ncode","score":0.9}]}`})
	got, err := NewTavily(tavilyKey, srv.URL, srv.Client(), WithAdvancedDepth(), WithRawContent("markdown")).Search(t.Context(), Query{Text: "q"})
	if err != nil || len(got) != 1 || got[0].Content != "# Heading\n\ncode" {
		t.Fatalf("Search = %+v, %v", got, err)
	}
	var body map[string]any
	_ = json.Unmarshal(srv.requests()[0].body, &body)
	if body["search_depth"] != "advanced" || body["include_raw_content"] != "markdown" {
		t.Errorf("request body = %v", body)
	}
}

func TestTavilyErrors(t *testing.T) {
	tests := []struct {
		name     string
		replies  []reply
		wantHits int
		wantIn   []string
		status   int
	}{
		{
			name:     "401 invalid key",
			replies:  []reply{{status: 401, body: `{"detail":{"error":"Unauthorized: missing or invalid API key."}}`}},
			wantHits: 1,
			wantIn:   []string{"tavily:", "HTTP 401", "Unauthorized: missing or invalid API key.", "check TAVILY_API_KEY"},
			status:   401,
		},
		{
			name: "429 not retried (the chain moves on)",
			replies: []reply{{status: 429, body: `{"detail":{"error":"Your request has been blocked due to excessive requests. Please reduce rate of requests."}}`,
				header: map[string]string{"Retry-After": "0"}}},
			wantHits: 1,
			wantIn:   []string{"HTTP 429", "Please reduce rate of requests."},
			status:   429,
		},
		{
			name:     "432 plan limit",
			replies:  []reply{{status: 432, body: `{"detail":{"error":"This request exceeds your plan's set usage limit. Please upgrade your plan or contact support@tavily.com"}}`}},
			wantHits: 1,
			wantIn:   []string{"HTTP 432", "exceeds your plan's set usage limit", "Tavily dashboard"},
			status:   432,
		},
		{
			name:     "433 pay-as-you-go limit",
			replies:  []reply{{status: 433, body: `{"detail":{"error":"This request exceeds the pay-as-you-go limit. You can increase your limit on the Tavily dashboard."}}`}},
			wantHits: 1,
			wantIn:   []string{"HTTP 433", "pay-as-you-go limit"},
			status:   433,
		},
		{
			name:     "400 string detail",
			replies:  []reply{{status: 400, body: `{"detail":"Invalid topic. Must be 'general', 'news' or 'finance'."}`}},
			wantHits: 1,
			wantIn:   []string{"HTTP 400", "Invalid topic"},
			status:   400,
		},
		{
			name:     "500 retried, non-JSON body quoted",
			replies:  []reply{{status: 500, body: "Internal Server Error"}},
			wantHits: 2,
			wantIn:   []string{"HTTP 500", "Internal Server Error"},
			status:   500,
		},
		{
			name:     "server echoes the key",
			replies:  []reply{{status: 403, body: `{"detail":{"error":"key ` + tavilyKey + ` is not allowed"}}`}},
			wantHits: 1,
			wantIn:   []string{"HTTP 403", "key [redacted] is not allowed"},
			status:   403,
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
			_, err := NewTavily(tavilyKey, srv.URL, srv.Client(), fast()).Search(t.Context(), Query{Text: "q"})
			if err == nil {
				t.Fatal("Search succeeded, want an error")
			}
			msg := err.Error()
			if strings.Contains(msg, tavilyKey) || strings.Contains(msg, "SECRET") {
				t.Errorf("error leaks the API key: %q", msg)
			}
			for _, s := range tt.wantIn {
				if !strings.Contains(msg, s) {
					t.Errorf("error %q does not contain %q", msg, s)
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

func TestTavilyNoKey(t *testing.T) {
	_, err := NewTavily(" ", "http://127.0.0.1:1", nil).Search(t.Context(), Query{Text: "q"})
	if err == nil || !strings.Contains(err.Error(), "no Tavily API key") {
		t.Fatalf("err = %v, want a missing-key error", err)
	}
}

func TestTavilyDefaultBase(t *testing.T) {
	if p := NewTavily(tavilyKey, "", nil); p.client.Base() != DefaultTavilyURL {
		t.Errorf("base = %q, want %q", p.client.Base(), DefaultTavilyURL)
	}
}
