package academic

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/sova-ai/sova/internal/apiclient/apitest"
	"github.com/sova-ai/sova/internal/multiquery"
)

// fakeSearcher answers from a map and records the limits it was asked for.
type fakeSearcher struct {
	name    string
	answers map[string][]Paper
	errs    map[string]error
	mu      sync.Mutex
	limits  map[string]int
}

func (f *fakeSearcher) Name() string { return f.name }

func (f *fakeSearcher) Search(_ context.Context, q string, limit int) ([]Paper, error) {
	f.mu.Lock()
	if f.limits == nil {
		f.limits = map[string]int{}
	}
	f.limits[q] = limit
	f.mu.Unlock()
	if err := f.errs[q]; err != nil {
		return nil, err
	}
	return append([]Paper(nil), f.answers[q]...), nil
}

func TestRun(t *testing.T) {
	s := &fakeSearcher{
		name: "fake",
		answers: map[string][]Paper{
			"llm": {
				{URL: "https://arxiv.org/abs/2307.06435v2", Title: "Overview of LLMs [PDF]", Summary: "Summary: A survey.", Source: "fake"},
				{URL: "http://www.arxiv.org/abs/2307.06435v2/#section", Title: "dup by URL"},
				{URL: "https://arxiv.org/pdf/2307.06435", Title: "dup by arXiv id"},
				{URL: "https://doi.org/10.1145/ABC", Title: "Paper B"},
				{URL: "https://publisher.example/b", DOI: "10.1145/abc", Title: "dup by DOI"},
				{URL: "", Title: "no URL"},
				{URL: "https://example.org/c", Title: "Paper C"},
			},
		},
		errs: map[string]error{"broken": errors.New("fake: HTTP 503")},
	}
	var events []multiquery.Progress
	res, err := Run(t.Context(), s, Request{Queries: []string{" llm ", "broken", "nothing"}, MaxResults: []int{2}},
		func(p multiquery.Progress) { events = append(events, p) })
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if s.limits["llm"] != 2 || s.limits["nothing"] != DefaultMaxResults {
		t.Errorf("limits = %v", s.limits)
	}
	want := Result{Searches: []Search{
		{Query: "llm", Results: []Paper{
			{URL: "https://arxiv.org/abs/2307.06435v2", Title: "Overview of LLMs", Summary: "A survey.", Source: "fake"},
			{URL: "https://doi.org/10.1145/ABC", Title: "Paper B"},
		}},
		{Query: "broken", Results: []Paper{}, Error: "fake: HTTP 503"},
		{Query: "nothing", Results: []Paper{}},
	}}
	if !reflect.DeepEqual(res, want) {
		t.Errorf("Run =\n%+v\nwant\n%+v", res, want)
	}
	final := map[int]multiquery.Progress{}
	for _, e := range events {
		if e.Status != multiquery.StatusStarted {
			final[e.Index] = e
		}
	}
	if len(events) != 6 || final[0].ResultsCount != 2 || final[1].Status != multiquery.StatusError || final[2].Status != multiquery.StatusCompleted {
		t.Errorf("events = %+v", events)
	}
}

func TestRunFails(t *testing.T) {
	s := &fakeSearcher{errs: map[string]error{"a": errors.New("down a"), "b": errors.New("down b")}}
	if _, err := Run(t.Context(), s, Request{Queries: []string{"a", "b"}}, nil); err == nil || !strings.Contains(err.Error(), "down b") {
		t.Errorf("all failed: err = %v", err)
	}
	if _, err := Run(t.Context(), s, Request{}, nil); err == nil {
		t.Error("no queries: want an error")
	}
	if _, err := Run(t.Context(), s, Request{Queries: make([]string, 6)}, nil); err == nil {
		t.Error("6 queries: want an error")
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := Run(ctx, &fakeSearcher{}, Request{Queries: []string{"x"}}, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v", err)
	}
}

// TestRunKeyless runs the pipeline over OpenAlex and arXiv fakes: the paper
// both know (by DOI 10.48550/arXiv.1706.03762 and by its arXiv page) is
// kept once.
func TestRunKeyless(t *testing.T) {
	srv := apitest.New(t, func(r *http.Request) apitest.Reply {
		if r.URL.Path == "/works" {
			return apitest.Reply{Body: apitest.Fixture(t, "openalex_works.json")}
		}
		return apitest.Reply{Body: apitest.Fixture(t, "arxiv_feed.xml")}
	})
	res, err := Run(t.Context(), New(testConfig(srv)), Request{Queries: []string{"attention"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range res.Searches[0].Results {
		got = append(got, p.Source+" "+p.URL)
	}
	want := []string{
		"openalex https://doi.org/10.7717/peerj.4375",
		"arxiv https://arxiv.org/abs/1706.03762",
		"openalex https://example.org/papers/scaling-laws?utm_source=openalex",
		"arxiv https://arxiv.org/abs/hep-ex/0307015",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("results =\n%q\nwant\n%q", got, want)
	}
}

func TestMergePartialFailure(t *testing.T) {
	ok := &fakeSearcher{name: "ok", answers: map[string][]Paper{"q": {{URL: "https://a", Title: "A"}, {URL: "https://b", Title: "B"}}}}
	bad := &fakeSearcher{name: "bad", errs: map[string]error{"q": errors.New("bad: HTTP 429")}}
	papers, err := Merge(bad, ok).Search(t.Context(), "q", 1)
	if err != nil || len(papers) != 1 || papers[0].Title != "A" {
		t.Errorf("Search = %+v, %v", papers, err)
	}
	bad2 := &fakeSearcher{name: "bad2", errs: map[string]error{"q": errors.New("bad2: HTTP 500")}}
	if _, err := Merge(bad, bad2).Search(t.Context(), "q", 5); err == nil || !strings.Contains(err.Error(), "bad: HTTP 429") || !strings.Contains(err.Error(), "bad2: HTTP 500") {
		t.Errorf("both failed: err = %v", err)
	}
}

// TestRunExaDedupe runs the pipeline over the Exa fake: the same arXiv
// page under another spelling of its URL is dropped.
func TestRunExaDedupe(t *testing.T) {
	srv := apitest.New(t, apitest.Always(apitest.Reply{Body: apitest.Fixture(t, "exa_papers.json")}))
	cfg := testConfig(srv)
	cfg.ExaAPIKey = exaKey
	res, err := Run(t.Context(), New(cfg), Request{Queries: []string{"llm surveys"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(res.Searches[0].Results); n != 2 {
		t.Errorf("got %d results, want 2: %+v", n, res.Searches[0].Results)
	}
}

func TestCleaning(t *testing.T) {
	titles := map[string]string{
		"Attention Is All You Need [PDF]": "Attention Is All You Need",
		"A [survey] of things":            "A [survey] of things",
		"Title [v2] [arXiv:1706.03762]  ": "Title",
		"[PDF]":                           "[PDF]",
		"Plain":                           "Plain",
		"Deep <i>learning</i> &amp; more": "Deep learning & more",
	}
	for in, want := range titles {
		if got := CleanTitle(cleanText(in)); got != want {
			t.Errorf("title %q -> %q, want %q", in, got, want)
		}
	}
	summaries := map[string]string{
		"Summary: The paper shows X.": "The paper shows X.",
		"  summary :  lower case":     "lower case",
		"No prefix. Summary: inside.": "No prefix. Summary: inside.",
		"":                            "",
	}
	for in, want := range summaries {
		if got := CleanSummary(in); got != want {
			t.Errorf("summary %q -> %q, want %q", in, got, want)
		}
	}
}

func TestNormalizeURL(t *testing.T) {
	tests := map[string]string{
		"HTTP://WWW.Example.org:80/a/b/?utm_source=x&b=2&a=1#frag": "https://example.org/a/b?a=1&b=2",
		"https://example.org": "https://example.org",
		"not a url ":          "not a url",
	}
	for in, want := range tests {
		if got := NormalizeURL(in); got != want {
			t.Errorf("NormalizeURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestReconstructAbstract(t *testing.T) {
	got := ReconstructAbstract(map[string][]int{"b": {1, 3}, "a": {0}, "c": {2}, "end.": {4}})
	if got != "a b c b end." {
		t.Errorf("got %q", got)
	}
	if ReconstructAbstract(nil) != "" {
		t.Error("nil index")
	}
}
