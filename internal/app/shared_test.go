package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/limits"
	"github.com/sova-ai/sova/internal/redislimit"
	"github.com/sova-ai/sova/internal/search"
	"github.com/sova-ai/sova/internal/store"
	"github.com/sova-ai/sova/internal/store/storetest"
)

// testRedis is SOVA_TEST_REDIS_URL under a key prefix of the test's own
// (removed at its end); the test is skipped without it.
type testRedis struct {
	t      *testing.T
	url    string
	opt    *redis.Options
	prefix string
}

func newTestRedis(t *testing.T) *testRedis {
	t.Helper()
	url := os.Getenv("SOVA_TEST_REDIS_URL")
	if url == "" {
		t.Skip("Redis tests skipped: set SOVA_TEST_REDIS_URL (e.g. redis://127.0.0.1:6379/0)")
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	r := &testRedis{t: t, url: url, opt: opt, prefix: "sova-test:" + hex.EncodeToString(b[:]) + ":"}
	t.Cleanup(func() {
		c := redis.NewClient(opt)
		defer c.Close()
		for _, pattern := range []string{r.prefix + "*", "rate:" + r.prefix + "*"} {
			if keys, _ := c.Keys(context.Background(), pattern).Result(); len(keys) > 0 {
				_ = c.Del(context.Background(), keys...).Err()
			}
		}
	})
	return r
}

// node is what one node's openShared builds, on a connection of its own.
func (r *testRedis) node(lease time.Duration) (*redis.Client, shared) {
	c := redis.NewClient(r.opt)
	r.t.Cleanup(func() { _ = c.Close() })
	return c, shared{
		redis:   &limits.RedisCounter{Client: c, Prefix: r.prefix + "usage:"},
		cluster: redislimit.New(c, redislimit.Options{Prefix: r.prefix, Lease: lease}),
	}
}

// fakeSearXNG speaks SearXNG's JSON and refuses, as a public instance's
// upstream engines do, a request beyond the second in flight.
type fakeSearXNG struct {
	*httptest.Server
	inFlight, peak, served, refused atomic.Int64
	firstServed                     atomic.Int64 // UnixNano of the first request served
}

func newFakeSearXNG(t *testing.T) *fakeSearXNG {
	f := &fakeSearXNG{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := f.inFlight.Add(1)
		defer f.inFlight.Add(-1)
		for p := f.peak.Load(); n > p && !f.peak.CompareAndSwap(p, n); p = f.peak.Load() {
		}
		if n > 2 {
			f.refused.Add(1)
			http.Error(w, "Too Many Requests", http.StatusTooManyRequests)
			return
		}
		f.firstServed.CompareAndSwap(0, time.Now().UnixNano())
		time.Sleep(10 * time.Millisecond)
		f.served.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"query": r.URL.Query().Get("q"), "results": []map[string]any{
			{"url": "https://example.com/" + r.URL.Query().Get("q"), "title": "t", "content": "c", "engine": "fake"},
		}})
	}))
	t.Cleanup(f.Close)
	return f
}

// Three nodes, each building its providers as New does, on one Redis, in
// front of one SearXNG that takes 2 requests at once: many concurrent
// searches on all three nodes all succeed, and the instance never sees a
// third request in flight. Then a node dies holding both slots: the
// others' searches wait until its leases end, then go on.
func TestSearchLimitsAcrossNodes(t *testing.T) {
	const lease = 400 * time.Millisecond
	rd := newTestRedis(t)
	sx := newFakeSearXNG(t)
	cfg := mustConfig(t, map[string]string{
		"SOVA_SEARCH_PROVIDER": "searxng", "SOVA_SEARXNG_URL": sx.URL, "SOVA_SEARCH_LIMITS": "searxng=2",
	})
	var chains []*search.Chain
	for range 3 {
		_, sh := rd.node(lease)
		chain, err := providers(cfg, sh.coordinator(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if th := throttledOf(chain.Providers[0]); th == nil || !th.Shared() {
			t.Fatal("the node's searxng is not held to the shared limits")
		}
		chains = append(chains, chain)
	}
	search30 := func(tag string) []error {
		errs := make([]error, 30)
		var wg sync.WaitGroup
		for i := range errs {
			wg.Go(func() {
				res, err := chains[i%3].Search(t.Context(), search.Query{Text: tag + strconv.Itoa(i)})
				if err == nil && len(res) != 1 {
					err = errors.New("no result")
				}
				errs[i] = err
			})
		}
		wg.Wait()
		return errs
	}
	for i, err := range search30("q") {
		if err != nil {
			t.Errorf("search %d: %v", i, err)
		}
	}
	if sx.served.Load() != 30 || sx.peak.Load() != 2 || sx.refused.Load() != 0 {
		t.Fatalf("served %d, refused %d, peak in flight %d; want 30 served, never more than 2 at once",
			sx.served.Load(), sx.refused.Load(), sx.peak.Load())
	}

	// A node takes both slots and dies: its connection closes, so it
	// renews nothing and releases nothing.
	deadClient, dead := rd.node(lease)
	for range 2 {
		free, ok, err := dead.cluster.TryHold(t.Context(), "search:searxng", 2)
		if err != nil || !ok {
			t.Fatalf("the doomed node's slot: %v, %v", ok, err)
		}
		t.Cleanup(free)
	}
	_ = deadClient.Close()
	sx.firstServed.Store(0)
	start := time.Now()
	for i, err := range search30("after") {
		if err != nil {
			t.Errorf("search %d after the node died: %v", i, err)
		}
	}
	if first := time.Unix(0, sx.firstServed.Load()); first.Sub(start) < lease/2 {
		t.Errorf("a search reached the instance %s after the start, while the dead node's slots (lease %s) were held",
			first.Sub(start), lease)
	}
	if sx.served.Load() != 60 || sx.peak.Load() != 2 {
		t.Errorf("served %d, peak %d; want 60, never more than 2", sx.served.Load(), sx.peak.Load())
	}
}

func throttledOf(p search.Provider) *search.Throttled {
	for {
		if th, ok := p.(*search.Throttled); ok {
			return th
		}
		u, ok := p.(interface{ Unwrap() search.Provider })
		if !ok {
			return nil
		}
		p = u.Unwrap()
	}
}

// Without Redis the providers keep their limits in the process.
func TestSearchLimitsWithoutRedis(t *testing.T) {
	cfg := mustConfig(t, map[string]string{
		"SOVA_SEARCH_PROVIDER": "searxng", "SOVA_SEARXNG_URL": "http://127.0.0.1:1", "SOVA_SEARCH_LIMITS": "searxng=2",
	})
	sh, err := openShared(t.Context(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	chain, err := providers(cfg, sh.coordinator(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if th := throttledOf(chain.Providers[0]); th == nil || th.Shared() {
		t.Error("without SOVA_REDIS_URL the limits must be the process's own")
	}
}

// The daily limits and the cap on long runs going at once hold across
// nodes: three nodes' limiters on one Redis, and three on one PostgreSQL
// without Redis, admit exactly the limit of one user's concurrent
// requests spread over them.
func TestQuotasAcrossNodes(t *testing.T) {
	const messages, tries = 7, 45
	cfg := mustConfig(t, map[string]string{
		"SOVA_LIMIT_FREE_MESSAGES": strconv.Itoa(messages), "SOVA_LIMIT_CONCURRENT_LONG_RUNS": "2",
	})
	for _, backend := range []string{"redis", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			var nodes []*limits.Limiter
			var rd *testRedis
			if backend == "redis" {
				rd = newTestRedis(t)
			}
			dsn := ""
			if backend == "postgres" {
				dsn = storetest.PostgresDSN(t)
			}
			for range 3 {
				var sh shared
				if rd != nil {
					_, sh = rd.node(time.Second)
				}
				st := storetest.SQLite(t)
				if dsn != "" {
					st = openPostgres(t, dsn)
				}
				nodes = append(nodes, newLimiter(cfg, st, sh))
			}
			fay := sova.User{ID: "fay", Role: sova.RoleFree}
			var admitted, refused atomic.Int64
			var wg sync.WaitGroup
			for i := range tries {
				wg.Go(func() {
					_, err := nodes[i%3].Admit(t.Context(), fay, "search")
					switch {
					case err == nil:
						admitted.Add(1)
					case errors.Is(err, limits.ErrRateLimited):
						refused.Add(1)
					default:
						t.Error(err)
					}
				})
			}
			wg.Wait()
			if admitted.Load() != messages || refused.Load() != tries-messages {
				t.Errorf("%d admitted, %d refused of %d; want exactly %d admitted", admitted.Load(), refused.Load(), tries, messages)
			}
			if u, err := nodes[1].Usage(t.Context(), fay); err != nil || u.Messages.Used != messages || u.Messages.Left != 0 {
				t.Errorf("usage on another node = %+v, %v", u, err)
			}
			if backend != "redis" {
				return
			}
			// Long runs going at once: a pro user has 2 places in all,
			// whichever nodes the runs start on.
			pat := sova.User{ID: "pat", Role: sova.RolePro}
			var releases []func()
			var mu sync.Mutex
			var capped atomic.Int64
			for i := range 12 {
				wg.Go(func() {
					release, err := nodes[i%3].Admit(t.Context(), pat, "deep_research")
					var ex *limits.Exceeded
					switch {
					case err == nil:
						mu.Lock()
						releases = append(releases, release)
						mu.Unlock()
					case errors.As(err, &ex) && ex.Counter == "concurrent":
						capped.Add(1)
					default:
						t.Error(err)
					}
				})
			}
			wg.Wait()
			if len(releases) != 2 || capped.Load() != 10 {
				t.Fatalf("%d long runs admitted at once on three nodes, %d capped; want 2 and 10", len(releases), capped.Load())
			}
			if u, err := nodes[2].Usage(t.Context(), pat); err != nil || u.Running != 2 || u.Concurrent != 2 {
				t.Errorf("usage on the third node = %+v, %v; want 2 of 2 long runs going", u, err)
			}
			releases[0]()
			release, err := nodes[2].Admit(t.Context(), pat, "extreme")
			if err != nil {
				t.Fatalf("after one ended on node 1, node 3 refused: %v", err)
			}
			release()
			releases[1]()
		})
	}
}

func openPostgres(t *testing.T, dsn string) *store.DB {
	t.Helper()
	st, err := store.OpenPostgres(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}
