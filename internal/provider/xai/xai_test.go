package xai

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/apiclient/apitest"
)

const key = "xai-SECRET-0123456789"

func client(srv *apitest.Server) *Client {
	return New(Config{APIKey: key, URL: srv.URL + "/v1/", HTTPClient: srv.Client(), RetryBackoff: -1})
}

func TestSearchRequestAndAnswer(t *testing.T) {
	srv := apitest.New(t, apitest.Always(apitest.Reply{Body: `{"choices":[{"message":{"role":"assistant","content":" Posts say X. "}}],
		"citations":["https://x.com/golang/status/1","https://twitter.com/Rob_Pike/statuses/2",{"url":"https://example.com/a"},"https://x.com/golang/status/1"]}`}))
	s, err := client(srv).Search(t.Context(), Query{Text: "go", FromDate: "2024-01-01", ToDate: "2024-01-31", IncludeHandles: []string{"golang"}, MinViews: 100, MaxResults: 80})
	if err != nil {
		t.Fatal(err)
	}
	if s.Content != "Posts say X." || len(s.Citations) != 3 || s.Sources[1].Title != "@Rob_Pike on X" || s.Sources[2].Title != "example.com/a" {
		t.Errorf("search = %+v", s)
	}
	r := srv.Requests()[0]
	if r.Method != http.MethodPost || r.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer "+key {
		t.Errorf("request %s %s %v", r.Method, r.Path, r.Header)
	}
	var body map[string]any
	_ = json.Unmarshal(r.Body, &body)
	sp := body["search_parameters"].(map[string]any)
	src := sp["sources"].([]any)[0].(map[string]any)
	if body["model"] != DefaultModel || sp["mode"] != "on" || sp["from_date"] != "2024-01-01" || sp["max_search_results"] != float64(MaxResults) ||
		sp["return_citations"] != true || src["type"] != "x" || src["post_view_count"] != float64(100) || src["included_x_handles"].([]any)[0] != "golang" {
		t.Errorf("body %s", r.Body)
	}
	if _, ok := src["excluded_x_handles"]; ok {
		t.Errorf("empty exclusions sent: %s", r.Body)
	}
}

func TestErrors(t *testing.T) {
	for _, tt := range []struct {
		reply apitest.Reply
		want  string
		is    error
	}{
		{apitest.Reply{Status: 401, Body: `{"code":"unauthorized","error":"Incorrect API key provided: ` + key + `"}`}, "check XAI_API_KEY", nil},
		{apitest.Reply{Status: 429, Body: `{"error":"slow down"}`}, "HTTP 429", ErrRateLimited},
		{apitest.Reply{Body: `{"choices":[`}, "not the expected JSON", ErrBadResponse},
		{apitest.Reply{Body: `{"choices":[]}`}, "no choices", ErrBadResponse},
	} {
		srv := apitest.New(t, apitest.Always(tt.reply))
		_, err := client(srv).Search(t.Context(), Query{Text: "q"})
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), key) || (tt.is != nil && !errors.Is(err, tt.is)) {
			t.Errorf("%d %s: err = %v", tt.reply.Status, tt.reply.Body, err)
		}
	}
}

func TestRun(t *testing.T) {
	if New(Config{APIKey: "  "}) != nil {
		t.Error("a client without a key")
	}
	if _, err := Run(t.Context(), nil, Request{Queries: []string{"q"}}, nil); err == nil || !strings.Contains(err.Error(), "XAI_API_KEY") {
		t.Errorf("nil client: %v", err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if strings.Contains(string(b), `"bad"`) {
			http.Error(w, "{}", 500)
			return
		}
		_, _ = io.WriteString(w, `{"choices":[{"message":{"content":"ok"}}],"citations":["https://x.com/a/status/1"]}`)
	}))
	defer srv.Close()
	c := New(Config{APIKey: key, URL: srv.URL, RetryBackoff: -1})
	now := time.Date(2025, 3, 20, 23, 0, 0, 0, time.UTC)
	res, err := Run(t.Context(), c, Request{Queries: []string{"good", "bad"}, IncludeHandles: []string{"@Golang", " "}, Now: now}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.DateRange != (DateRange{"2025-03-05", "2025-03-20"}) || res.Handles.Included[0] != "golang" ||
		len(res.Searches[0].Sources) != 1 || res.Searches[1].Error == "" || res.Searches[1].Query != "bad" {
		t.Errorf("result %+v", res)
	}
	for _, req := range []Request{
		{Queries: []string{"q"}, IncludeHandles: []string{"a"}, ExcludeHandles: []string{"b"}},
		{Queries: []string{"q"}, IncludeHandles: strings.Fields("a b c d e f g h i j k")},
		{Queries: []string{"q"}, IncludeHandles: []string{"not a handle"}},
		{Queries: []string{"q"}, StartDate: "2025-04-01", EndDate: "2025-03-01"},
		{Queries: []string{"q", "q", "q", "q", "q", "q"}},
	} {
		if _, err := Run(t.Context(), c, req, nil); err == nil {
			t.Errorf("%+v: no error", req)
		}
	}
	if _, err := Run(t.Context(), c, Request{Queries: []string{"bad"}}, nil); err == nil {
		t.Error("every query failed, no error")
	}
}
