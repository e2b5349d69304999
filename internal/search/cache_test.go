package search

import (
	"context"
	"errors"
	"testing"
)

// mapCache is a ResultCache in memory.
type mapCache struct {
	m          map[string][]Result
	hits, puts int
}

func (c *mapCache) GetResults(_ context.Context, key string) ([]Result, bool) {
	r, ok := c.m[key]
	if ok {
		c.hits++
	}
	return r, ok
}

func (c *mapCache) PutResults(_ context.Context, key string, res []Result) {
	c.puts++
	c.m[key] = res
}

func TestChainCache(t *testing.T) {
	a := &fakeProvider{name: "a", err: errors.New("down")}
	b := &fakeProvider{name: "b", res: []Result{{URL: "https://x.example"}}}
	cache := &mapCache{m: map[string][]Result{}}
	chain := NewChain(a, b)
	chain.Cache = cache
	run := chain.WithFailover(func(string, error, string) {})

	for i := range 3 {
		res, err := run.Search(t.Context(), Query{Text: "Tidal  Power"})
		if err != nil || len(res) != 1 || res[0].Provider != "b" {
			t.Fatalf("search %d: %v, %v", i, res, err)
		}
	}
	// The same question in other case and spacing is the same query.
	if _, err := run.Search(t.Context(), Query{Text: "tidal power"}); err != nil {
		t.Fatal(err)
	}
	if a.calls != 1 || b.calls != 1 || cache.hits != 3 || cache.puts != 1 {
		t.Errorf("calls a=%d b=%d, cache hits %d puts %d; want providers asked once", a.calls, b.calls, cache.hits, cache.puts)
	}

	// A failure is not cached.
	b.err = errors.New("down too")
	if _, err := run.Search(t.Context(), Query{Text: "other"}); err == nil {
		t.Fatal("want an error")
	}
	b.err = nil
	if _, err := run.Search(t.Context(), Query{Text: "other"}); err != nil {
		t.Fatal(err)
	}
	if b.calls != 3 {
		t.Errorf("b.calls = %d, want the failed query asked again", b.calls)
	}
}

func TestCacheKey(t *testing.T) {
	base := Query{Text: "Tidal power", IncludeDomains: []string{"b.example", "www.a.example"}}
	same := []Query{
		{Text: " tidal   POWER ", IncludeDomains: []string{"a.example", "b.example"}},
		{Text: "tidal power", MaxResults: DefaultMaxResults, IncludeDomains: []string{"https://a.example/", "b.example"}},
	}
	for _, q := range same {
		if CacheKey("p", q) != CacheKey("p", base) {
			t.Errorf("%+v and %+v should share a key", q, base)
		}
	}
	differ := []Query{
		{Text: "tidal power plant", IncludeDomains: base.IncludeDomains},
		{Text: "tidal power", MaxResults: 5, IncludeDomains: base.IncludeDomains},
		{Text: "tidal power", Language: "ru", IncludeDomains: base.IncludeDomains},
		{Text: "tidal power", TimeRange: "week", IncludeDomains: base.IncludeDomains},
		{Text: "tidal power"},
		{Text: "tidal power", IncludeDomains: base.IncludeDomains, ExcludeDomains: []string{"c.example"}},
	}
	for _, q := range differ {
		if CacheKey("p", q) == CacheKey("p", base) {
			t.Errorf("%+v must not share %+v's key", q, base)
		}
	}
	if CacheKey("p", base) == CacheKey("q", base) {
		t.Error("providers must not share keys")
	}
}
