package app

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/config"
	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/event/eventtest"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/search"
	"github.com/sova-ai/sova/internal/sovatest"
)

func mustConfig(t *testing.T, vars map[string]string) *config.Config {
	t.Helper()
	cfg, err := config.FromEnv(vars)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestProvidersChain(t *testing.T) {
	tests := []struct {
		name    string
		vars    map[string]string
		want    string
		wantErr string
	}{
		{"fresh install searches without keys", nil, "chain(keyless)", ""},
		{"auto takes what is configured", map[string]string{
			"SOVA_SEARXNG_URL": "http://searx.lan", "EXA_API_KEY": "e", "BRAVE_API_KEY": "b",
		}, "chain(searxng,exa,brave,keyless)", ""},
		{"explicit provider then auto", map[string]string{
			"SOVA_SEARCH_PROVIDER": "tavily", "TAVILY_API_KEY": "t", "SOVA_SEARCH_FALLBACK": "auto",
		}, "chain(tavily,keyless)", ""},
		{"single keyless engines", map[string]string{"SOVA_SEARCH_PROVIDER": "duckduckgo", "SOVA_SEARCH_FALLBACK": "wikipedia"},
			"chain(duckduckgo,wikipedia)", ""},
		{"searxng without URL", map[string]string{"SOVA_SEARCH_PROVIDER": "searxng"}, "", "SOVA_SEARXNG_URL"},
		{"exa without key", map[string]string{"SOVA_SEARCH_PROVIDER": "exa"}, "", "EXA_API_KEY"},
		{"brave without key", map[string]string{"SOVA_SEARCH_PROVIDER": "brave"}, "", "BRAVE_API_KEY"},
		{"unknown provider", map[string]string{"SOVA_SEARCH_PROVIDER": "bing"}, "", "available: auto, searxng, tavily, exa, brave, keyless"},
		{"bad limits", map[string]string{"SOVA_SEARCH_LIMITS": "searxng=two"}, "", "SOVA_SEARCH_LIMITS: searxng"},
		{"limits for an unknown provider", map[string]string{"SOVA_SEARCH_LIMITS": "bing=2"}, "", `unknown provider "bing"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chain, err := Providers(mustConfig(t, tt.vars))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if chain.Name() != tt.want {
				t.Errorf("chain = %s, want %s", chain.Name(), tt.want)
			}
		})
	}
}

func TestProvidersAreThrottled(t *testing.T) {
	chain, err := Providers(mustConfig(t, map[string]string{
		"SOVA_SEARCH_PROVIDER": "searxng", "SOVA_SEARXNG_URL": "http://searx.lan", "SOVA_SEARCH_FALLBACK": "brave",
		"BRAVE_API_KEY": "b", "SOVA_SEARCH_LIMITS": "searxng=2:0.5",
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]search.Limits{"searxng": {Concurrent: 2, PerSecond: 0.5}, "brave": search.DefaultLimits["brave"]}
	for _, p := range chain.Providers {
		if got := limitsOf(p); got == nil || *got != want[p.Name()] {
			t.Errorf("%s: limits %+v, want %+v", p.Name(), got, want[p.Name()])
		}
	}
}

// limitsOf returns the limits a provider of the chain is held to (nil:
// none), looking through the wrappers (search.Shared).
func limitsOf(p search.Provider) *search.Limits {
	for {
		if th, ok := p.(*search.Throttled); ok {
			l := th.Limits()
			return &l
		}
		u, ok := p.(interface{ Unwrap() search.Provider })
		if !ok {
			return nil
		}
		p = u.Unwrap()
	}
}

// A SearXNG instance on this machine or a private network is not held to
// the politeness limits meant for public instances, unless
// SOVA_SEARCH_LIMITS names it.
func TestPrivateSearXNGIsNotThrottled(t *testing.T) {
	for _, tc := range []struct {
		url, limits string
		want        *search.Limits
	}{
		{"http://127.0.0.1:8888", "", nil},
		{"http://192.168.1.10:8080", "", nil},
		{"http://127.0.0.1:8888", "searxng=2:1", &search.Limits{Concurrent: 2, PerSecond: 1}},
		{"https://93.184.216.34", "", &search.Limits{Concurrent: 3, PerSecond: 3}},
	} {
		vars := map[string]string{"SOVA_SEARCH_PROVIDER": "searxng", "SOVA_SEARXNG_URL": tc.url}
		if tc.limits != "" {
			vars["SOVA_SEARCH_LIMITS"] = tc.limits
		}
		chain, err := Providers(mustConfig(t, vars))
		if err != nil {
			t.Fatal(err)
		}
		got := limitsOf(chain.Providers[0])
		if (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
			t.Errorf("%s %q: limits %+v, want %+v", tc.url, tc.limits, got, tc.want)
		}
	}
}

// TestKeylessDefaultFindsResults points the keyless default at local
// servers speaking DuckDuckGo's HTML and Wikipedia's JSON: with no search
// setting at all, a query gets web results.
func TestKeylessDefaultFindsResults(t *testing.T) {
	ddg := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<html><body><div id="links" class="results">
<div class="result results_links web-result"><h2 class="result__title"><a class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Ftides.example%2F">Tides</a></h2>
<a class="result__snippet" href="x">All about tides.</a></div></div></body></html>`))
	}))
	t.Cleanup(ddg.Close)
	wp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"pages": []map[string]any{{"key": "Tide", "title": "Tide", "excerpt": "rise and fall"}}})
	}))
	t.Cleanup(wp.Close)
	chain, err := Providers(mustConfig(t, map[string]string{"SOVA_DUCKDUCKGO_URL": ddg.URL, "SOVA_WIKIPEDIA_URL": wp.URL}))
	if err != nil {
		t.Fatal(err)
	}
	res, err := chain.Search(context.Background(), search.Query{Text: "tides"})
	if err != nil || len(res) != 2 || res[0].URL != "https://tides.example/" || res[1].URL != wp.URL+"/wiki/Tide" {
		t.Fatalf("results = %+v, %v", res, err)
	}
}

// TestDeepSearchFromConfiguration builds Sova from the default settings
// (plus the fakes) and runs deep_search: six iterations, the wider
// breadth, answers of 800-1200 words.
func TestDeepSearchFromConfiguration(t *testing.T) {
	arts := sovatest.DefaultArticles()
	site := sovatest.NewSite(t, arts)
	sx := sovatest.NewSearXNG(t, site, arts)
	model := sovatest.NewModel(t)
	vars := sovatest.Env(model, sx, t.TempDir())
	vars["SOVA_SEARCH_CACHE_TTL"], vars["SOVA_PAGE_CACHE_TTL"] = "1h", "24h" // the defaults
	a, err := New(t.Context(), mustConfig(t, vars), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close(context.Background()) })
	m, ok := a.Service.Modes().Get("deep_search")
	if !ok {
		t.Fatal("deep_search is not registered")
	}
	var rec eventtest.Recorder
	res, err := m.Run(context.Background(), mode.Input{Question: "How did presidents describe the economy in the 1930s?", Now: time.Now()}, &rec)
	if err != nil {
		t.Fatal(err)
	}
	if q := len(sx.Queries()); q != 13 {
		t.Errorf("%d queries, want 3 + 5×2 over 6 iterations", q)
	}
	read := 0
	for _, ev := range rec.Filter(event.TypePage) {
		if ev.Page.State == event.PageRead {
			read++
		}
	}
	if read != 6 || res.Text == "" {
		t.Errorf("read %d pages (all 6 the fake web has, within SOVA_BALANCED_SCRAPE_TOP_N=8), answer %q", read, res.Text)
	}
	found := false
	for _, r := range model.Requests() {
		if strings.Contains(r.System(), "answer of 800-1200 words") {
			found = true
		}
	}
	if !found {
		t.Error("no synthesis request asked for 800-1200 words")
	}
	if s := a.WebCache.Stats(); s.SearchMisses != 13 || s.PageMisses < 6 {
		t.Errorf("web cache stats %+v: every query and page of a first run is a miss", s)
	}
}
