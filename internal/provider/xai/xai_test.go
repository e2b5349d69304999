package xai

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/sova-ai/sova/internal/apiclient/apitest"
	"github.com/sova-ai/sova/internal/multiquery"
)

const key = "xai-SECRET-0123456789"

func client(srv *apitest.Server) *Client {
	return New(Config{APIKey: key, URL: srv.URL + "/v1/", HTTPClient: srv.Client(), RetryBackoff: -1})
}

// answer is a Responses API answer of xAI with the x_search tool: a
// server-side search, then the message quoting posts one a line with
// inline citations and their url_citation annotations (character
// offsets), and every URL the search met.
func answer(lines [][2]string, citations ...string) string {
	var text strings.Builder
	var notes []map[string]any
	for i, l := range lines {
		if i > 0 {
			text.WriteString("\n")
		}
		text.WriteString("- " + l[0] + " ")
		start := utf8.RuneCountInString(text.String())
		cite := fmt.Sprintf("[[%d]](%s)", i+1, l[1])
		text.WriteString(cite)
		notes = append(notes, map[string]any{"type": "url_citation", "url": l[1], "start_index": start, "end_index": start + len(cite), "title": fmt.Sprint(i + 1)})
	}
	b, _ := json.Marshal(map[string]any{
		"id": "resp_1", "object": "response", "created_at": 1716883200, "model": DefaultModel, "status": "completed",
		"output": []any{
			map[string]any{"type": "custom_tool_call", "id": "ctc_1", "call_id": "xs_1", "name": "x_keyword_search", "input": `{"query":"go"}`, "status": "completed"},
			map[string]any{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed", "content": []any{
				map[string]any{"type": "output_text", "text": text.String(), "annotations": notes, "logprobs": []any{}}}},
		},
		"citations": citations,
		"usage":     map[string]any{"input_tokens": 20, "output_tokens": 30, "total_tokens": 50},
	})
	return string(b)
}

func TestSearchRequestAndAnswer(t *testing.T) {
	srv := apitest.New(t, apitest.Always(apitest.Reply{Body: answer([][2]string{
		{`@golang: "Go 1.23 ships range-over-func iterators — finally."`, "https://x.com/golang/status/1"},
		{`@Rob_Pike: "A careful change."`, "https://twitter.com/Rob_Pike/statuses/2"},
		{`@golang again`, "https://x.com/golang/status/1"},
	}, "https://x.com/golang/status/1", "https://x.com/i/user/77", "https://x.ai/news", "https://x.com/i/status/3")}))
	s, err := client(srv).Search(t.Context(), Query{Text: "go", FromDate: "2024-01-01", ToDate: "2024-01-31", IncludeHandles: []string{"golang"}, MinViews: 100, MaxResults: 80})
	if err != nil {
		t.Fatal(err)
	}
	// The posts cited, then the other posts met; no profile, no web page,
	// no post twice; each with the words the answer quotes.
	want := []Source{
		{Link: "https://x.com/golang/status/1", Title: "@golang on X", Text: `@golang: "Go 1.23 ships range-over-func iterators — finally."`},
		{Link: "https://twitter.com/Rob_Pike/statuses/2", Title: "@Rob_Pike on X", Text: `@Rob_Pike: "A careful change."`},
		{Link: "https://x.com/i/status/3", Title: "Post on X"},
	}
	if len(s.Sources) != len(want) || len(s.Citations) != len(want) {
		t.Fatalf("sources = %+v", s.Sources)
	}
	for i := range want {
		if s.Sources[i] != want[i] || s.Citations[i] != want[i].Link {
			t.Errorf("source %d = %+v, want %+v", i, s.Sources[i], want[i])
		}
	}
	if strings.Contains(s.Content, "[[") || !strings.Contains(s.Content, "range-over-func") {
		t.Errorf("content = %q", s.Content)
	}
	r := srv.Requests()[0]
	if r.Method != http.MethodPost || r.Path != "/v1/responses" || r.Header.Get("Authorization") != "Bearer "+key {
		t.Errorf("request %s %s %v", r.Method, r.Path, r.Header)
	}
	var body struct {
		Model        string
		Instructions string
		Input        []struct{ Role, Content string }
		Tools        []map[string]any
		Store        *bool
		Search       any `json:"search_parameters"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatal(err)
	}
	if body.Model != DefaultModel || len(body.Input) != 1 || body.Input[0].Content != "go" || body.Search != nil || body.Store == nil || *body.Store ||
		len(body.Tools) != 1 || body.Tools[0]["type"] != "x_search" || body.Tools[0]["from_date"] != "2024-01-01" || body.Tools[0]["to_date"] != "2024-01-31" ||
		body.Tools[0]["allowed_x_handles"].([]any)[0] != "golang" {
		t.Errorf("body %s", r.Body)
	}
	if _, ok := body.Tools[0]["excluded_x_handles"]; ok {
		t.Errorf("empty exclusions sent: %s", r.Body)
	}
	// What the tool has no filter for is asked of the model.
	if !strings.Contains(body.Instructions, "at least 100 views") || !strings.Contains(body.Instructions, fmt.Sprintf("at most %d posts", MaxResults)) {
		t.Errorf("instructions %q", body.Instructions)
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
		{apitest.Reply{Body: `{"output":[`}, "not the expected JSON", ErrBadResponse},
		{apitest.Reply{Body: `{"status":"incomplete","output":[{"type":"custom_tool_call"}]}`}, "no message", ErrBadResponse},
		{apitest.Reply{Body: `{"status":"failed","output":[],"error":{"message":"x_search is unavailable"}}`}, "x_search is unavailable", ErrBadResponse},
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
		_, _ = io.WriteString(w, answer([][2]string{{"@a: one", "https://x.com/a/status/1"}, {"@b: two", "https://x.com/b/status/2"}}))
	}))
	defer srv.Close()
	c := New(Config{APIKey: key, URL: srv.URL, RetryBackoff: -1})
	now := time.Date(2025, 3, 20, 23, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	counts := map[string]int{}
	res, err := Run(t.Context(), c, Request{Queries: []string{"good", "bad"}, IncludeHandles: []string{"@Golang", " "}, Now: now}, func(p multiquery.Progress) {
		mu.Lock()
		defer mu.Unlock()
		if p.Status != multiquery.StatusStarted {
			counts[p.Query] = p.ResultsCount
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.DateRange != (DateRange{"2025-03-05", "2025-03-20"}) || res.Handles.Included[0] != "golang" ||
		len(res.Searches[0].Sources) != 2 || res.Searches[0].Sources[1].Text != "@b: two" || res.Searches[1].Error == "" || res.Searches[1].Query != "bad" {
		t.Errorf("result %+v", res)
	}
	// A query's progress counts its posts.
	if counts["good"] != 2 || counts["bad"] != 0 {
		t.Errorf("results counted %v, want good 2, bad 0", counts)
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
