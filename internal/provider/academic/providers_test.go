package academic

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
)

const (
	openAlexKey = "oa-KEY-7f3a9c"
	exaKey      = "exa-SECRET-0123456789"
)

// testConfig points every provider at srv, with fast retries and no arXiv
// pacing.
func testConfig(srv *apitest.Server) Config {
	return Config{
		OpenAlexURL: srv.URL + "/", ArxivURL: srv.URL, ExaURL: srv.URL,
		HTTPClient: srv.Client(), RetryBackoff: time.Millisecond, ArxivInterval: -1,
	}
}

// providerCase is one answer of a fake provider and what Search must make
// of it.
type providerCase struct {
	name     string
	reply    apitest.Reply
	deadline time.Duration // caller's context deadline; 0 = none
	want     func(t *testing.T, papers []Paper)
	wantErr  []string // substrings of the error; nil = success
	wantIs   error
	wantCode int
}

// errorCases are the failures every provider must report the same way.
func errorCases(malformed string) []providerCase {
	return []providerCase{
		{
			name:    "5xx",
			reply:   apitest.Reply{Status: 503, Body: "<html><body>503 Service Temporarily Unavailable</body></html>", Header: map[string]string{"Content-Type": "text/html"}},
			wantErr: []string{"HTTP 503 Service Unavailable", "Temporarily Unavailable"}, wantCode: 503,
		},
		{
			name:    "429",
			reply:   apitest.Reply{Status: 429, Body: `{"error":"Too many requests"}`, Header: map[string]string{"Retry-After": "2"}},
			wantErr: []string{"HTTP 429"}, wantIs: ErrRateLimited, wantCode: 429,
		},
		{
			name:     "timeout",
			reply:    apitest.Reply{Delay: 5 * time.Second, Body: "{}"},
			deadline: 80 * time.Millisecond,
			wantErr:  []string{"stopped"}, wantIs: context.DeadlineExceeded,
		},
		{
			name:    "malformed",
			reply:   apitest.Reply{Body: malformed},
			wantErr: []string{"it starts with"}, wantIs: ErrBadResponse,
		},
	}
}

func runProviderCases(t *testing.T, newSearcher func(cfg Config) Searcher, query string, limit int, cases []providerCase, checkReq func(t *testing.T, r apitest.Request)) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := apitest.New(t, apitest.Always(tc.reply))
			s := newSearcher(testConfig(srv))
			ctx := t.Context()
			if tc.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.deadline)
				defer cancel()
			}
			papers, err := s.Search(ctx, query, limit)
			reqs := srv.Requests()
			if len(reqs) == 0 {
				t.Fatal("the fake received no request")
			}
			if checkReq != nil {
				checkReq(t, reqs[0])
			}
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("Search: %v", err)
				}
				if papers == nil {
					t.Error("papers is nil, want a (possibly empty) slice")
				}
				tc.want(t, papers)
				return
			}
			if err == nil {
				t.Fatalf("Search = %+v, want an error", papers)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, s.Name()+": ") {
				t.Errorf("error %q does not start with the provider name", msg)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
			for _, secret := range []string{openAlexKey, exaKey} {
				if strings.Contains(msg, secret) {
					t.Errorf("error %q leaks a key", msg)
				}
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

func TestOpenAlex(t *testing.T) {
	newOA := func(cfg Config) Searcher {
		cfg.OpenAlexAPIKey, cfg.OpenAlexMailto = openAlexKey, "admin@example.org"
		return NewOpenAlex(cfg)
	}
	cases := []providerCase{
		{
			name:  "works",
			reply: apitest.Reply{Body: apitest.Fixture(t, "openalex_works.json")},
			want: func(t *testing.T, papers []Paper) {
				if len(papers) != 3 {
					t.Fatalf("got %d papers, want 3", len(papers))
				}
				want0 := Paper{
					URL:   "https://doi.org/10.7717/peerj.4375",
					Title: "The state of OA: a large-scale analysis of the prevalence and impact of Open Access articles",
					Summary: "Despite growing interest in Open Access (OA) to scholarly literature, there is an unmet need " +
						"for data in the field.",
					Authors:       []string{"Heather Piwowar", "Jason Priem", "Stefanie Haustein"},
					PublishedDate: "2018-02-13", Year: 2018, Venue: "PeerJ", DOI: "10.7717/peerj.4375",
					PDFURL: "https://peerj.com/articles/4375.pdf", Citations: 1187, Source: "openalex",
				}
				if !reflect.DeepEqual(papers[0], want0) {
					t.Errorf("paper 0 =\n%+v\nwant\n%+v", papers[0], want0)
				}
				p1 := papers[1]
				if p1.Title != "Scaling laws for neural language models & data" || p1.DOI != "" ||
					p1.URL != "https://example.org/papers/scaling-laws?utm_source=openalex" || p1.Venue != "" || p1.Summary != "" || p1.Year != 2020 {
					t.Errorf("paper 1 = %+v", p1)
				}
				if p2 := papers[2]; p2.DOI != "10.48550/arxiv.1706.03762" || p2.PDFURL != "https://arxiv.org/pdf/1706.03762" || p2.Citations != 98210 {
					t.Errorf("paper 2 = %+v", p2)
				}
			},
		},
		{
			name:  "empty",
			reply: apitest.Reply{Body: apitest.Fixture(t, "openalex_empty.json")},
			want: func(t *testing.T, papers []Paper) {
				if len(papers) != 0 {
					t.Errorf("papers = %+v", papers)
				}
			},
		},
		{
			name:    "error body",
			reply:   apitest.Reply{Status: 400, Body: apitest.Fixture(t, "openalex_error.json")},
			wantErr: []string{"openalex: the service answered", "HTTP 400 Bad Request: Invalid query parameters error.: per-page is not a valid"}, wantCode: 400,
		},
		{
			name:    "bad key echoed",
			reply:   apitest.Reply{Status: 403, Body: `{"error":"Forbidden","message":"api_key ` + openAlexKey + ` is not valid"}`},
			wantErr: []string{"api_key [redacted] is not valid", "check OPENALEX_API_KEY"}, wantCode: 403,
		},
		{
			name:    "no results list",
			reply:   apitest.Reply{Body: `{"meta":{"count":0}}`},
			wantErr: []string{"no results list"}, wantIs: ErrBadResponse,
		},
	}
	cases = append(cases, errorCases(`{"meta":{"count":3},"results":[{"id":"https://openalex.org/W1","display_name":`)...)
	runProviderCases(t, newOA, " open access prevalence ", 5, cases, func(t *testing.T, r apitest.Request) {
		if r.Method != http.MethodGet || r.Path != "/works" {
			t.Errorf("request = %s %s", r.Method, r.Path)
		}
		want := map[string]string{
			"search": "open access prevalence", "per-page": "5", "select": openAlexSelect,
			"mailto": "admin@example.org", "api_key": openAlexKey,
		}
		for k, v := range want {
			if got := r.Query.Get(k); got != v {
				t.Errorf("query %s = %q, want %q", k, got, v)
			}
		}
		if r.Header.Get("User-Agent") != apiclient.DefaultUserAgent {
			t.Errorf("User-Agent = %q", r.Header.Get("User-Agent"))
		}
	})
}

func TestArxiv(t *testing.T) {
	cases := []providerCase{
		{
			name:  "feed",
			reply: apitest.Reply{Body: apitest.Fixture(t, "arxiv_feed.xml"), Header: map[string]string{"Content-Type": "application/atom+xml"}},
			want: func(t *testing.T, papers []Paper) {
				if len(papers) != 2 {
					t.Fatalf("got %d papers, want 2", len(papers))
				}
				want0 := Paper{
					URL:   "https://arxiv.org/abs/1706.03762",
					Title: "Attention Is All You Need",
					Summary: "The dominant sequence transduction models are based on complex recurrent or convolutional " +
						"neural networks. We propose a new simple network architecture, the Transformer, based solely on attention mechanisms.",
					Authors:       []string{"Ashish Vaswani", "Noam Shazeer", "Niki Parmar"},
					PublishedDate: "2017-06-12", Year: 2017, Venue: "arXiv (cs.CL)",
					PDFURL: "https://arxiv.org/pdf/1706.03762v7", Source: "arxiv",
				}
				if !reflect.DeepEqual(papers[0], want0) {
					t.Errorf("paper 0 =\n%+v\nwant\n%+v", papers[0], want0)
				}
				want1 := Paper{
					URL:           "https://arxiv.org/abs/hep-ex/0307015",
					Title:         "Multi-Electron Production at High Transverse Momenta in ep Collisions at HERA",
					Summary:       "Multi-electron production is studied at high electron transverse momentum in positron- and electron-proton collisions using the H1 detector at HERA.",
					Authors:       []string{"H1 Collaboration"},
					PublishedDate: "2003-07-07", Year: 2003, Venue: "Eur.Phys.J. C31 (2003) 17-29",
					DOI: "10.1140/epjc/s2003-01326-x", PDFURL: "https://arxiv.org/pdf/hep-ex/0307015v1", Source: "arxiv",
				}
				if !reflect.DeepEqual(papers[1], want1) {
					t.Errorf("paper 1 =\n%+v\nwant\n%+v", papers[1], want1)
				}
			},
		},
		{
			name:  "empty feed",
			reply: apitest.Reply{Body: apitest.Fixture(t, "arxiv_empty.xml")},
			want: func(t *testing.T, papers []Paper) {
				if len(papers) != 0 {
					t.Errorf("papers = %+v", papers)
				}
			},
		},
		{
			name:    "error entry",
			reply:   apitest.Reply{Body: apitest.Fixture(t, "arxiv_error.xml")},
			wantErr: []string{"arXiv rejected the query", "incorrect id format for 1234.12345v5"},
		},
		{
			name:    "html instead of a feed",
			reply:   apitest.Reply{Body: "<html><body>Rate exceeded.</body></html>", Header: map[string]string{"Content-Type": "text/html"}},
			wantErr: []string{"not an Atom feed", "Rate exceeded."}, wantIs: ErrBadResponse,
		},
	}
	cases = append(cases, errorCases(`<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><entry><title>Attention`)...)
	runProviderCases(t, func(cfg Config) Searcher { return NewArxiv(cfg) }, "attention in transformer models", 7, cases, func(t *testing.T, r apitest.Request) {
		if r.Method != http.MethodGet || r.Path != "/api/query" {
			t.Errorf("request = %s %s", r.Method, r.Path)
		}
		want := map[string]string{
			"search_query": "all:attention AND all:transformer AND all:models", "start": "0",
			"max_results": "7", "sortBy": "relevance", "sortOrder": "descending",
		}
		for k, v := range want {
			if got := r.Query.Get(k); got != v {
				t.Errorf("query %s = %q, want %q", k, got, v)
			}
		}
	})
}

func TestArxivQuery(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"ti:transformer AND au:vaswani", "ti:transformer AND au:vaswani"},
		{"cat:cs.CL", "cat:cs.CL"},
		{"What are the latest papers on self-supervised learning?", `all:"self-supervised" AND all:learning`},
		{"GPT-4 vs. Llama 3.1 evaluation", `all:"gpt-4" AND all:llama AND all:"3.1" AND all:evaluation`},
		{"the of", "all:the AND all:of"},
		{"one two three four five six seven eight nine", "all:one AND all:two AND all:three AND all:four AND all:five AND all:six AND all:seven AND all:eight"},
		{"квантовые вычисления", "all:квантовые AND all:вычисления"},
	}
	for _, tc := range tests {
		if got := ArxivQuery(tc.in); got != tc.want {
			t.Errorf("ArxivQuery(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestArxivPacing(t *testing.T) {
	srv := apitest.New(t, apitest.Always(apitest.Reply{Body: apitest.Fixture(t, "arxiv_empty.xml")}))
	cfg := testConfig(srv)
	cfg.ArxivInterval = 150 * time.Millisecond
	a := NewArxiv(cfg)
	start := time.Now()
	for range 2 {
		if _, err := a.Search(t.Context(), "x", 1); err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(start); d < 140*time.Millisecond {
		t.Errorf("two requests took %s, want them spaced by 150ms", d)
	}
}

func TestExa(t *testing.T) {
	cases := []providerCase{
		{
			name:  "papers",
			reply: apitest.Reply{Body: apitest.Fixture(t, "exa_papers.json")},
			want: func(t *testing.T, papers []Paper) {
				if len(papers) != 3 {
					t.Fatalf("got %d papers, want 3: %+v", len(papers), papers)
				}
				want0 := Paper{
					URL:           "https://arxiv.org/abs/2307.06435",
					Title:         "A Comprehensive Overview of Large Language Models",
					Summary:       "This survey reviews the architectures, training data and evaluation of large language models, and lists open problems.",
					Authors:       []string{"Humza Naveed, Asad Ullah Khan, Shi Qiu"},
					PublishedDate: "2023-07-12", Year: 2023, Venue: "arXiv",
					PDFURL: "https://arxiv.org/pdf/2307.06435", Source: "exa",
				}
				if !reflect.DeepEqual(papers[0], want0) {
					t.Errorf("paper 0 =\n%+v\nwant\n%+v", papers[0], want0)
				}
				if p := papers[1]; p.DOI != "10.1145/3641289" || p.Authors != nil || p.Year != 2024 {
					t.Errorf("paper 1 = %+v", p)
				}
			},
		},
		{
			name:  "empty",
			reply: apitest.Reply{Body: `{"requestId":"x","results":[]}`},
			want: func(t *testing.T, papers []Paper) {
				if len(papers) != 0 {
					t.Errorf("papers = %+v", papers)
				}
			},
		},
		{
			name:    "bad key",
			reply:   apitest.Reply{Status: 401, Body: apitest.Fixture(t, "exa_error.json")},
			wantErr: []string{"HTTP 401 Unauthorized: Invalid API key (INVALID_API_KEY) (check EXA_API_KEY)"}, wantCode: 401,
		},
		{
			name:    "no credits",
			reply:   apitest.Reply{Status: 402, Body: `{"error":"Insufficient credits for key ` + exaKey + `"}`},
			wantErr: []string{"no credits left", "[redacted]"}, wantIs: ErrRateLimited, wantCode: 402,
		},
	}
	cases = append(cases, errorCases(`{"results":[{"url":"https://x"`)...)
	newExa := func(cfg Config) Searcher {
		cfg.ExaAPIKey = exaKey
		return New(cfg)
	}
	runProviderCases(t, newExa, "large language model surveys", 10, cases, func(t *testing.T, r apitest.Request) {
		if r.Method != http.MethodPost || r.Path != "/search" {
			t.Errorf("request = %s %s", r.Method, r.Path)
		}
		if r.Header.Get("X-Api-Key") != exaKey || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("headers = %v", r.Header)
		}
		var body map[string]any
		if err := json.Unmarshal(r.Body, &body); err != nil {
			t.Fatal(err)
		}
		want := map[string]any{
			"query": "large language model surveys", "type": "auto", "numResults": float64(10),
			"category": "research paper",
			"contents": map[string]any{"summary": map[string]any{"query": "Abstract of the Paper"}},
		}
		if !reflect.DeepEqual(body, want) {
			t.Errorf("body = %v, want %v", body, want)
		}
	})
}

func TestExaNeedsKey(t *testing.T) {
	_, err := NewExa(Config{}).Search(t.Context(), "x", 1)
	if err == nil || !strings.Contains(err.Error(), "EXA_API_KEY") {
		t.Errorf("err = %v", err)
	}
}

func TestNewSelects(t *testing.T) {
	if n := New(Config{}).Name(); n != "openalex+arxiv" {
		t.Errorf("keyless searcher = %q", n)
	}
	if n := New(Config{ExaAPIKey: " k "}).Name(); n != "exa" {
		t.Errorf("searcher with a key = %q", n)
	}
}
