package reddit

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/apiclient"
	"github.com/sova-ai/sova/internal/apiclient/apitest"
	"github.com/sova-ai/sova/internal/multiquery"
)

const tavilyKey = "tvly-SECRET-abc123"

func testClient(srv *apitest.Server, key string) *Client {
	return New(Config{
		RedditURL: srv.URL + "/", TavilyURL: srv.URL, TavilyAPIKey: key,
		HTTPClient: srv.Client(), RetryBackoff: time.Millisecond,
	})
}

type searchCase struct {
	name     string
	query    Query
	reply    apitest.Reply
	deadline time.Duration
	want     func(t *testing.T, posts []Post, r apitest.Request)
	wantErr  []string
	wantIs   error
	wantCode int
}

func runSearchCases(t *testing.T, key string, cases []searchCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := apitest.New(t, apitest.Always(tc.reply))
			ctx := t.Context()
			if tc.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.deadline)
				defer cancel()
			}
			posts, err := testClient(srv, key).Search(ctx, tc.query)
			reqs := srv.Requests()
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("Search: %v", err)
				}
				if posts == nil {
					t.Error("posts is nil, want a (possibly empty) slice")
				}
				tc.want(t, posts, reqs[0])
				return
			}
			if err == nil {
				t.Fatalf("Search = %+v, want an error", posts)
			}
			msg := err.Error()
			for _, w := range tc.wantErr {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
			if strings.Contains(msg, tavilyKey) {
				t.Errorf("error %q leaks the key", msg)
			}
			if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
				t.Errorf("errors.Is(%v, %v) = false", err, tc.wantIs)
			}
			var ae *apiclient.Error
			if tc.wantCode != 0 && (!errors.As(err, &ae) || ae.Status != tc.wantCode) {
				t.Errorf("status of %v is not %d", err, tc.wantCode)
			}
		})
	}
}

func failureCases(provider, malformed string) []searchCase {
	q := Query{Text: "sqlc vs gorm"}
	return []searchCase{
		{
			name: "5xx", query: q,
			reply:   apitest.Reply{Status: 502, Body: "<html>502 Bad Gateway</html>", Header: map[string]string{"Content-Type": "text/html"}},
			wantErr: []string{provider + ": the service answered", "HTTP 502 Bad Gateway"}, wantCode: 502,
		},
		{
			name: "429", query: q,
			reply:   apitest.Reply{Status: 429, Body: `{"message": "Too Many Requests", "error": 429}`, Header: map[string]string{"X-Ratelimit-Reset": "311"}},
			wantErr: []string{"HTTP 429 Too Many Requests"}, wantIs: ErrRateLimited, wantCode: 429,
		},
		{
			name: "timeout", query: q,
			reply:    apitest.Reply{Delay: 5 * time.Second},
			deadline: 80 * time.Millisecond,
			wantErr:  []string{provider + ": request stopped", "stopped"}, wantIs: context.DeadlineExceeded,
		},
		{
			name: "malformed", query: q,
			reply:   apitest.Reply{Body: malformed},
			wantErr: []string{provider + ": the answer is not the expected JSON"}, wantIs: ErrBadResponse,
		},
	}
}

func TestRedditSearch(t *testing.T) {
	cases := []searchCase{
		{
			name:  "posts",
			query: Query{Text: " sqlc vs gorm ", TimeRange: "Month", Sort: "top", MaxResults: 5},
			reply: apitest.Reply{Body: apitest.Fixture(t, "search.json")},
			want: func(t *testing.T, posts []Post, r apitest.Request) {
				if r.Path != "/search.json" {
					t.Errorf("path = %s", r.Path)
				}
				want := map[string]string{"q": "sqlc vs gorm", "t": "month", "sort": "top", "limit": "5", "raw_json": "1", "type": "link", "restrict_sr": ""}
				for k, v := range want {
					if got := r.Query.Get(k); got != v {
						t.Errorf("query %s = %q, want %q", k, got, v)
					}
				}
				if r.Header.Get("User-Agent") != DefaultUserAgent {
					t.Errorf("User-Agent = %q", r.Header.Get("User-Agent"))
				}
				if len(posts) != 3 {
					t.Fatalf("got %d posts, want 3", len(posts))
				}
				want0 := Post{
					ID: "1d2k7fz", Title: "sqlc vs GORM in 2024 — what are you using?",
					URL:       "https://www.reddit.com/r/golang/comments/1d2k7fz/sqlc_vs_gorm_in_2024_what_are_you_using/",
					Subreddit: "golang", Author: "gopher_kate", Score: 184, NumComments: 97,
					Created:      time.Date(2024, 5, 28, 8, 0, 0, 0, time.UTC),
					Content:      "We're starting a new service and debating sqlc vs GORM vs plain database/sql. What has worked for you in production?",
					IsRedditPost: true, Source: "reddit",
				}
				if !reflect.DeepEqual(posts[0], want0) {
					t.Errorf("post 0 =\n%+v\nwant\n%+v", posts[0], want0)
				}
				if p := posts[1]; p.LinkURL != "https://go.dev/doc/go1.23" || p.Subreddit != "programming" || p.Score != 1021 || p.Content != "" {
					t.Errorf("link post = %+v", p)
				}
				if p := posts[2]; p.Content != "" || !p.NSFW {
					t.Errorf("removed post = %+v", p)
				}
			},
		},
		{
			name:  "subreddit in the query",
			query: Query{Text: "best ORM r/golang"},
			reply: apitest.Reply{Body: apitest.Fixture(t, "search_empty.json")},
			want: func(t *testing.T, posts []Post, r apitest.Request) {
				if r.Path != "/r/golang/search.json" || r.Query.Get("q") != "best ORM" || r.Query.Get("restrict_sr") != "1" ||
					r.Query.Get("t") != "week" || r.Query.Get("sort") != "relevance" || r.Query.Get("limit") != "20" {
					t.Errorf("request = %s %v", r.Path, r.Query)
				}
				if len(posts) != 0 {
					t.Errorf("posts = %+v", posts)
				}
			},
		},
		{
			name:  "subreddit alone",
			query: Query{Text: "/r/golang", TimeRange: "all"},
			reply: apitest.Reply{Body: apitest.Fixture(t, "search_empty.json")},
			want: func(t *testing.T, _ []Post, r apitest.Request) {
				if r.Path != "/r/golang/top.json" || r.Query.Get("t") != "all" || r.Query.Has("q") {
					t.Errorf("request = %s %v", r.Path, r.Query)
				}
			},
		},
		{
			name:    "private subreddit",
			query:   Query{Text: "x", Subreddit: "r/secretclub"},
			reply:   apitest.Reply{Status: 403, Body: apitest.Fixture(t, "private.json")},
			wantErr: []string{"reddit: ", "HTTP 403 Forbidden: Forbidden (private)"}, wantCode: 403,
		},
		{
			name:    "blocked",
			query:   Query{Text: "x"},
			reply:   apitest.Reply{Status: 403, Body: apitest.Fixture(t, "blocked.html"), Header: map[string]string{"Content-Type": "text/html"}},
			wantErr: []string{"refuses anonymous API requests", "TAVILY_API_KEY"}, wantCode: 403,
		},
		{
			name:    "not a listing",
			query:   Query{Text: "x"},
			reply:   apitest.Reply{Body: `{"kind": "t5", "data": {}}`},
			wantErr: []string{"not a listing"}, wantIs: ErrBadResponse,
		},
	}
	cases = append(cases, failureCases("reddit", `{"kind": "Listing", "data": {"children": [{"kind": "t3", "data": {"title": `)...)
	runSearchCases(t, "", cases)
}

func TestTavilySearch(t *testing.T) {
	cases := []searchCase{
		{
			name:  "posts",
			query: Query{Text: "sqlc vs gorm", TimeRange: "year", MaxResults: 50},
			reply: apitest.Reply{Body: apitest.Fixture(t, "tavily_reddit.json")},
			want: func(t *testing.T, posts []Post, r apitest.Request) {
				if r.Method != http.MethodPost || r.Path != "/search" || r.Header.Get("Authorization") != "Bearer "+tavilyKey {
					t.Errorf("request = %s %s %v", r.Method, r.Path, r.Header)
				}
				var body map[string]any
				if err := json.Unmarshal(r.Body, &body); err != nil {
					t.Fatal(err)
				}
				want := map[string]any{
					"query": "sqlc vs gorm", "max_results": float64(20), "search_depth": "advanced", "topic": "general",
					"time_range": "year", "chunks_per_source": float64(5), "include_domains": []any{"reddit.com"},
					"include_raw_content": "markdown",
				}
				if !reflect.DeepEqual(body, want) {
					t.Errorf("body = %v\nwant %v", body, want)
				}
				if len(posts) != 3 {
					t.Fatalf("got %d posts, want 3", len(posts))
				}
				want0 := Post{
					ID: "1d2k7fz", Title: "sqlc vs GORM in 2024 — what are you using? : r/golang",
					URL:       "https://www.reddit.com/r/golang/comments/1d2k7fz/sqlc_vs_gorm_in_2024_what_are_you_using/",
					Subreddit: "golang", Created: time.Date(2024, 5, 28, 8, 0, 0, 0, time.UTC),
					Content:      "We're starting a new service and debating sqlc vs GORM vs plain database/sql.",
					IsRedditPost: true,
					Comments: []Comment{
						{Author: "pgx_fan", Body: "sqlc + pgx. You write SQL, it generates type-safe Go."},
						{Author: "orm_enjoyer", Body: "GORM is fine for CRUD-heavy admin apps."},
					},
					Relevance: 0.91, Source: "tavily",
				}
				if !reflect.DeepEqual(posts[0], want0) {
					t.Errorf("post 0 =\n%+v\nwant\n%+v", posts[0], want0)
				}
				if p := posts[1]; p.IsRedditPost || p.Subreddit != "golang" || p.ID != "" || p.Comments != nil {
					t.Errorf("subreddit page = %+v", p)
				}
				if p := posts[2]; p.Subreddit != "rust" || !p.Created.Equal(time.Date(2024, 4, 10, 0, 0, 0, 0, time.UTC)) {
					t.Errorf("post 2 = %+v", p)
				}
			},
		},
		{
			name:  "subreddit filter, all time",
			query: Query{Text: "r/golang sqlc vs gorm", TimeRange: "all"},
			reply: apitest.Reply{Body: apitest.Fixture(t, "tavily_reddit.json")},
			want: func(t *testing.T, posts []Post, r apitest.Request) {
				var body map[string]any
				_ = json.Unmarshal(r.Body, &body)
				if body["query"] != "r/golang sqlc vs gorm" || body["time_range"] != nil {
					t.Errorf("body = %v", body)
				}
				if len(posts) != 2 || posts[0].Subreddit != "golang" || posts[1].Subreddit != "golang" {
					t.Errorf("posts = %+v", posts)
				}
			},
		},
		{
			name:  "empty",
			query: Query{Text: "zzqxv"},
			reply: apitest.Reply{Body: `{"query":"zzqxv","results":[],"response_time":0.5}`},
			want: func(t *testing.T, posts []Post, _ apitest.Request) {
				if len(posts) != 0 {
					t.Errorf("posts = %+v", posts)
				}
			},
		},
		{
			name:    "bad key",
			query:   Query{Text: "x"},
			reply:   apitest.Reply{Status: 401, Body: `{"detail": {"error": "Unauthorized: missing or invalid API key ` + tavilyKey + `."}}`},
			wantErr: []string{"tavily: ", "HTTP 401 Unauthorized: Unauthorized: missing or invalid API key [redacted]. (check TAVILY_API_KEY)"}, wantCode: 401,
		},
		{
			name:    "plan limit",
			query:   Query{Text: "x"},
			reply:   apitest.Reply{Status: 432, Body: `{"detail": {"error": "This request exceeds your plan's set usage limit."}}`},
			wantErr: []string{"HTTP 432", "usage limit"}, wantIs: ErrRateLimited, wantCode: 432,
		},
	}
	cases = append(cases, failureCases("tavily", `{"results": [{"url": "https://www.reddit.com/r/golang/`)...)
	runSearchCases(t, tavilyKey, cases)
}

func TestReadPost(t *testing.T) {
	srv := apitest.New(t, apitest.Always(apitest.Reply{Body: apitest.Fixture(t, "post_comments.json")}))
	p, err := testClient(srv, tavilyKey).ReadPost(t.Context(), "see https://old.reddit.com/r/golang/comments/1D2K7FZ/sqlc_vs_gorm/?utm_source=share", 3)
	if err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	if r.Path != "/comments/1d2k7fz.json" || r.Query.Get("sort") != "top" || r.Query.Get("limit") != "3" || r.Query.Get("depth") != "1" {
		t.Errorf("request = %s %v", r.Path, r.Query)
	}
	if p.Title != "sqlc vs GORM in 2024 — what are you using?" || p.Score != 184 || p.NumComments != 97 || p.Source != "reddit" {
		t.Errorf("post = %+v", p)
	}
	want := []Comment{
		{Author: "pgx_fan", Body: "sqlc + pgx. You write SQL, it generates type-safe Go. No reflection magic at runtime.", Score: 212,
			Created: time.Unix(1716884000, 0).UTC(), URL: "https://www.reddit.com/r/golang/comments/1d2k7fz/sqlc_vs_gorm_in_2024_what_are_you_using/l5zr1bb/"},
		{Author: "orm_enjoyer", Body: "GORM is fine for CRUD-heavy admin apps; it gets in the way for complex queries.", Score: 48,
			Created: time.Unix(1716886000, 0).UTC(), URL: "https://www.reddit.com/r/golang/comments/1d2k7fz/sqlc_vs_gorm_in_2024_what_are_you_using/l60a4ee/"},
	}
	if !reflect.DeepEqual(p.Comments, want) {
		t.Errorf("comments =\n%+v\nwant\n%+v", p.Comments, want)
	}
}

func TestReadPostErrors(t *testing.T) {
	tests := []struct {
		name    string
		url     string
		reply   apitest.Reply
		wantErr string
		wantIs  error
	}{
		{name: "not a post URL", url: "https://www.reddit.com/r/golang/", wantErr: "is not a Reddit post URL"},
		{name: "empty answer", url: "https://redd.it/1d2k7fz", reply: apitest.Reply{Body: `[]`}, wantErr: "holds no post", wantIs: ErrBadResponse},
		{name: "malformed", url: "https://redd.it/1d2k7fz", reply: apitest.Reply{Body: `[{"kind":"Listing","data":{"children":[{"kind":"t3","data":{"score":"high"}}]}}]`}, wantErr: "post 1d2k7fz is malformed", wantIs: ErrBadResponse},
		{name: "not found", url: "https://redd.it/1d2k7fz", reply: apitest.Reply{Status: 404, Body: `{"message": "Not Found", "error": 404}`}, wantErr: "HTTP 404 Not Found: Not Found"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := apitest.New(t, apitest.Always(tc.reply))
			_, err := testClient(srv, "").ReadPost(t.Context(), tc.url, 0)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
			if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
				t.Errorf("errors.Is(%v, %v) = false", err, tc.wantIs)
			}
		})
	}
}

func TestRun(t *testing.T) {
	srv := apitest.New(t, func(r *http.Request) apitest.Reply {
		switch {
		case r.URL.Path == "/comments/1d2k7fz.json":
			return apitest.Reply{Body: apitest.Fixture(t, "post_comments.json")}
		case r.URL.Query().Get("q") == "broken":
			return apitest.Reply{Status: 403, Body: apitest.Fixture(t, "private.json")}
		}
		return apitest.Reply{Body: apitest.Fixture(t, "search.json")}
	})
	var events []multiquery.Progress
	res, err := Run(t.Context(), testClient(srv, ""), Request{
		Queries:    []string{"sqlc vs gorm", "https://www.reddit.com/r/golang/comments/1d2k7fz/sqlc_vs_gorm/", "broken"},
		MaxResults: []int{2},
		TimeRanges: []string{"day"},
	}, func(p multiquery.Progress) { events = append(events, p) })
	if err != nil {
		t.Fatal(err)
	}
	s := res.Searches
	if len(s) != 3 || s[0].TimeRange != "day" || len(s[0].Results) != 2 || s[0].Error != "" {
		t.Errorf("search 0 = %+v", s[0])
	}
	if len(s[1].Results) != 1 || len(s[1].Results[0].Comments) != 2 || s[1].TimeRange != "week" {
		t.Errorf("search 1 = %+v", s[1])
	}
	if s[2].Results == nil || len(s[2].Results) != 0 || !strings.Contains(s[2].Error, "Forbidden (private)") {
		t.Errorf("search 2 = %+v", s[2])
	}
	final := map[int]multiquery.Progress{}
	for _, e := range events {
		if e.Status != multiquery.StatusStarted {
			final[e.Index] = e
		}
	}
	if len(events) != 6 || final[0].ResultsCount != 2 || final[1].ResultsCount != 1 || final[2].Status != multiquery.StatusError {
		t.Errorf("events = %+v", events)
	}
}

func TestRunValidation(t *testing.T) {
	c := New(Config{})
	tests := []struct {
		req  Request
		want string
	}{
		{Request{}, "at least one query"},
		{Request{Queries: []string{strings.Repeat("я", 201)}}, "longer than 200"},
		{Request{Queries: []string{"a", "b"}, TimeRanges: []string{"", "decade"}}, `query 2: reddit: unsupported time range "decade"`},
	}
	for _, tc := range tests {
		if _, err := Run(t.Context(), c, tc.req, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Run(%+v) err = %v, want %q", tc.req, err, tc.want)
		}
	}
	if _, err := c.Search(t.Context(), Query{Text: "x", Sort: "random"}); err == nil {
		t.Error("bad sort accepted")
	}
	if _, err := c.Search(t.Context(), Query{Text: "  "}); err == nil {
		t.Error("empty query accepted")
	}
}

func TestDetectSubreddit(t *testing.T) {
	tests := []struct{ in, sub, rest string }{
		{"best ORM r/golang", "golang", "best ORM"},
		{"/r/AskHistorians why did Rome fall", "AskHistorians", "why did Rome fall"},
		{"what does (r/rust) think", "rust", "what does think"},
		{"no subreddit here", "", "no subreddit here"},
		{"https://www.reddit.com/r/golang/", "", "https://www.reddit.com/r/golang/"},
		{"tr/ee is not one", "", "tr/ee is not one"},
	}
	for _, tc := range tests {
		sub, rest := DetectSubreddit(tc.in)
		if sub != tc.sub || rest != tc.rest {
			t.Errorf("DetectSubreddit(%q) = %q, %q; want %q, %q", tc.in, sub, rest, tc.sub, tc.rest)
		}
	}
}

func TestPostID(t *testing.T) {
	tests := []struct {
		in string
		id string
		ok bool
	}{
		{"https://www.reddit.com/r/golang/comments/1d2k7fz/sqlc_vs_gorm/", "1d2k7fz", true},
		{"old.reddit.com/r/golang/comments/1D2K7FZ", "1d2k7fz", true},
		{"read https://reddit.com/comments/abc123 please", "abc123", true},
		{"https://redd.it/1d2k7fz", "1d2k7fz", true},
		{"https://www.reddit.com/r/golang/", "", false},
		{"sqlc vs gorm", "", false},
	}
	for _, tc := range tests {
		id, ok := PostID(tc.in)
		if id != tc.id || ok != tc.ok {
			t.Errorf("PostID(%q) = %q, %v", tc.in, id, ok)
		}
	}
}

func TestCommentsFromText(t *testing.T) {
	text := "Edit: this line is not a comment at all\nalice: I think the second option is better\n" +
		"> **bob_42**: quoted reply with enough text\nshort: no\nhttps://example.com: not a name\n"
	got := CommentsFromText(text)
	want := []Comment{
		{Author: "alice", Body: "I think the second option is better"},
		{Author: "bob_42", Body: "quoted reply with enough text"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("CommentsFromText =\n%+v\nwant\n%+v", got, want)
	}
}
