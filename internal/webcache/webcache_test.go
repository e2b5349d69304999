package webcache_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/event/eventtest"
	"github.com/sova-ai/sova/internal/fetch"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
	"github.com/sova-ai/sova/internal/mode"
	searchmode "github.com/sova-ai/sova/internal/mode/search"
	"github.com/sova-ai/sova/internal/search"
	"github.com/sova-ai/sova/internal/sovatest"
	"github.com/sova-ai/sova/internal/store"
	"github.com/sova-ai/sova/internal/store/storetest"
	"github.com/sova-ai/sova/internal/webcache"
)

func openStore(t *testing.T) store.Store {
	t.Helper()
	st, err := store.OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "sova.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// TestRepeatedSearchMakesNoNetworkCalls runs the same search twice against
// the fake SearXNG and site: the second run sends no query and reads no
// page over the network.
func TestRepeatedSearchMakesNoNetworkCalls(t *testing.T) {
	arts := sovatest.DefaultArticles()
	site := sovatest.NewSite(t, arts)
	sx := sovatest.NewSearXNG(t, site, arts)
	model := sovatest.NewModel(t)
	// Follow-up queries that do not depend on the request number, as a
	// model asked the same thing twice would write them.
	model.Handle(func(r *llmtest.Request) llmtest.Reply {
		if r.SchemaName() == "SearchQueries" && strings.Contains(r.LastUser(), "follow-up") {
			return llmtest.Reply{Content: `{"queries":["banking crisis 1933 radio","farm prices 1932"]}`}
		}
		return model.Respond(r)
	})
	client, err := llm.New(llm.Config{BaseURL: model.URL(), APIKey: "k", Model: "main", FastModel: "fast"})
	if err != nil {
		t.Fatal(err)
	}

	cache := webcache.New(openStore(t), webcache.Options{SearchTTL: time.Hour, PageTTL: time.Hour})
	chain := search.NewChain(search.NewSearXNG(sx.URL, nil))
	chain.Cache = cache
	reader := cache.Reader(fetch.New(fetch.Config{AllowHosts: []string{"127.0.0.1"}}))
	m := searchmode.New(searchmode.Config{
		ID: "search", Queries: 3, Iterations: 2, MaxResults: 8, RerankTopK: 6, ScrapeTopN: 4,
		Concurrency: 4, AnswerWords: "400-600", HistoryLimit: 10,
	}, client, client.Fast(), chain, reader)

	siteHits := func() int64 {
		var n int64
		for _, a := range arts {
			n += site.Hits("/a/" + a.Slug)
		}
		return n
	}
	ask := func() *mode.Result {
		var rec eventtest.Recorder
		res, err := m.Run(context.Background(), mode.Input{Question: "How did presidents describe the economy in the 1930s?", Now: time.Now()}, &rec)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}

	first := ask()
	queries1, pages1 := len(sx.Queries()), siteHits()
	after1 := cache.Stats()
	second := ask()
	queries2, pages2 := len(sx.Queries())-queries1, siteHits()-pages1
	after2 := cache.Stats()

	t.Logf("first run: %d SearXNG queries, %d page fetches; second run: %d queries, %d page fetches; "+
		"second-run cache hits: %d searches, %d pages",
		queries1, pages1, queries2, pages2, after2.SearchHits-after1.SearchHits, after2.PageHits-after1.PageHits)
	if queries1 == 0 || pages1 == 0 {
		t.Fatalf("the first run made no network calls (%d queries, %d pages)", queries1, pages1)
	}
	if queries2 != 0 || pages2 != 0 {
		t.Errorf("second run made %d SearXNG queries and %d page fetches, want none", queries2, pages2)
	}
	if after2.SearchHits-after1.SearchHits != int64(queries1) || after2.PageHits-after1.PageHits != pages1 {
		t.Errorf("cache stats after the first run %+v, after the second %+v", after1, after2)
	}
	if first.Text != second.Text || len(first.Sources) != len(second.Sources) {
		t.Errorf("the cached run answered differently")
	}
}

func TestCacheTTLAndFailures(t *testing.T) {
	res := []search.Result{{URL: "https://a.example", Title: "A", Images: []string{"https://a.example/i.png"}}}

	t.Run("round trip", func(t *testing.T) {
		c := webcache.New(openStore(t), webcache.Options{SearchTTL: time.Hour})
		c.PutResults(t.Context(), "k", res)
		got, ok := c.GetResults(t.Context(), "k")
		if !ok || len(got) != 1 || got[0].Images[0] != res[0].Images[0] {
			t.Fatalf("got %+v, %v", got, ok)
		}
		if _, ok := c.GetResults(t.Context(), "other"); ok {
			t.Error("unknown key found")
		}
		if s := c.Stats(); s.SearchHits != 1 || s.SearchMisses != 1 {
			t.Errorf("stats = %+v", s)
		}
	})
	t.Run("expired", func(t *testing.T) {
		c := webcache.New(openStore(t), webcache.Options{SearchTTL: 30 * time.Millisecond})
		c.PutResults(t.Context(), "k", res)
		time.Sleep(60 * time.Millisecond)
		if _, ok := c.GetResults(t.Context(), "k"); ok {
			t.Error("expired answer returned")
		}
	})
	t.Run("disabled", func(t *testing.T) {
		st := openStore(t)
		c := webcache.New(st, webcache.Options{})
		c.PutResults(t.Context(), "k", res)
		if _, ok := c.GetResults(t.Context(), "k"); ok {
			t.Error("a cache with no TTL kept an answer")
		}
		r := &countingReader{}
		if c.Reader(r) != fetch.Reader(r) {
			t.Error("a cache with no page TTL wrapped the reader")
		}
	})
	t.Run("store failures are misses", func(t *testing.T) {
		c := webcache.New(brokenStore{}, webcache.Options{SearchTTL: time.Hour, PageTTL: time.Hour})
		c.PutResults(t.Context(), "k", res)
		if _, ok := c.GetResults(t.Context(), "k"); ok {
			t.Error("hit from a broken store")
		}
		r := &countingReader{}
		p, err := c.Reader(r).Fetch(t.Context(), "https://a.example/")
		if err != nil || p == nil || r.calls != 1 {
			t.Errorf("read through a broken cache: %v, %v, %d calls", p, err, r.calls)
		}
	})
	t.Run("pages by normalised URL, failures not kept", func(t *testing.T) {
		c := webcache.New(openStore(t), webcache.Options{PageTTL: time.Hour})
		r := &countingReader{}
		cr := c.Reader(r)
		for _, u := range []string{"https://www.a.example/p?utm_source=x", "http://a.example/p/", "https://a.example/p"} {
			p, err := cr.Fetch(t.Context(), u)
			if err != nil || p.Title != "page 1" {
				t.Fatalf("%s: %+v, %v", u, p, err)
			}
		}
		r.fail = true
		for range 2 {
			if _, err := cr.Fetch(t.Context(), "https://a.example/other"); err == nil {
				t.Fatal("want the reader's error")
			}
		}
		if r.calls != 3 {
			t.Errorf("reader called %d times, want 1 for the cached page and 2 for the failing one", r.calls)
		}
	})
}

type countingReader struct {
	calls int
	fail  bool
}

func (r *countingReader) Fetch(_ context.Context, url string) (*fetch.Page, error) {
	r.calls++
	if r.fail {
		return nil, errors.New("unreachable")
	}
	return &fetch.Page{URL: url, Title: "page 1", Markdown: "text", Chars: 4}, nil
}

type brokenStore struct{}

func (brokenStore) CacheGet(context.Context, string, string) ([]byte, bool, error) {
	return nil, false, errors.New("disk on fire")
}

func (brokenStore) CachePut(context.Context, string, string, []byte, time.Duration) error {
	return errors.New("disk on fire")
}

func (brokenStore) CachePurge(context.Context, time.Time) (int64, error) { return 0, nil }

// TestCacheSharedAcrossNodes: two nodes' caches over one PostgreSQL
// database (each with its own connection pool, as two servers have): a
// page read and a search answered through node A are hits on node B,
// which makes no network call for them.
func TestCacheSharedAcrossNodes(t *testing.T) {
	arts := sovatest.DefaultArticles()
	site := sovatest.NewSite(t, arts)
	sx := sovatest.NewSearXNG(t, site, arts)
	dsn := storetest.PostgresDSN(t)
	type node struct {
		cache  *webcache.Cache
		reader fetch.Reader
		chain  *search.Chain
	}
	var nodes []node
	for range 2 {
		st, err := store.OpenPostgres(t.Context(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		c := webcache.New(st, webcache.Options{SearchTTL: time.Hour, PageTTL: time.Hour})
		chain := search.NewChain(search.NewSearXNG(sx.URL, nil))
		chain.Cache = c
		nodes = append(nodes, node{cache: c, reader: c.Reader(fetch.New(fetch.Config{AllowHosts: []string{"127.0.0.1"}})), chain: chain})
	}
	a, b := nodes[0], nodes[1]
	page := site.URL + "/a/" + arts[0].Slug
	pa, err := a.reader.Fetch(t.Context(), page)
	if err != nil || site.Hits("/a/"+arts[0].Slug) != 1 {
		t.Fatalf("node A read: %v, %d fetches", err, site.Hits("/a/"+arts[0].Slug))
	}
	ra, err := a.chain.Search(t.Context(), search.Query{Text: "fireside chat banking"})
	if err != nil || len(sx.Queries()) != 1 {
		t.Fatalf("node A search: %v, %d queries", err, len(sx.Queries()))
	}

	pb, err := b.reader.Fetch(t.Context(), page)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := b.chain.Search(t.Context(), search.Query{Text: "Fireside chat banking"})
	if err != nil {
		t.Fatal(err)
	}
	if n := site.Hits("/a/" + arts[0].Slug); n != 1 {
		t.Errorf("node B fetched the page again: %d fetches", n)
	}
	if n := len(sx.Queries()); n != 1 {
		t.Errorf("node B searched again: %d queries", n)
	}
	if st := b.cache.Stats(); st.PageHits != 1 || st.SearchHits != 1 {
		t.Errorf("node B's cache stats %+v, want a page hit and a search hit", st)
	}
	if pb.Content != pa.Content || pb.Title != pa.Title || len(rb) != len(ra) || len(ra) == 0 || rb[0].URL != ra[0].URL {
		t.Errorf("node B's cached answers differ from what node A read")
	}
}
