// Package webcache keeps what retrieval fetched from the web — search
// answers by query and read pages by URL — in the store for a while, so a
// question repeated within the TTL makes no second network call for the
// same query or URL. It implements search.ResultCache and wraps a
// fetch.Reader. The cache never fails a run: a store error is logged and
// treated as a miss.
package webcache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/fetch"
	"github.com/sova-ai/sova/internal/search"
)

// purgeEvery is how many writes pass between purges of expired entries.
const purgeEvery = 256

// Options configures a Cache.
type Options struct {
	// SearchTTL is how long search answers are kept (<= 0: not cached).
	SearchTTL time.Duration
	// PageTTL is how long read pages are kept (<= 0: not cached).
	PageTTL time.Duration
	Logger  *slog.Logger
}

// Cache is the web cache over a store. It is safe for concurrent use.
type Cache struct {
	st   sova.CacheStore
	opts Options
	log  *slog.Logger

	searchHits, searchMisses atomic.Int64
	pageHits, pageMisses     atomic.Int64
	writes                   atomic.Int64
}

// New returns a cache over st.
func New(st sova.CacheStore, opts Options) *Cache {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Cache{st: st, opts: opts, log: log}
}

// Stats counts lookups since the cache was made.
type Stats struct {
	SearchHits, SearchMisses int64
	PageHits, PageMisses     int64
}

// Stats returns the hit and miss counts so far.
func (c *Cache) Stats() Stats {
	return Stats{
		SearchHits: c.searchHits.Load(), SearchMisses: c.searchMisses.Load(),
		PageHits: c.pageHits.Load(), PageMisses: c.pageMisses.Load(),
	}
}

var _ search.ResultCache = (*Cache)(nil)

// GetResults implements search.ResultCache.
func (c *Cache) GetResults(ctx context.Context, key string) ([]search.Result, bool) {
	if c.opts.SearchTTL <= 0 {
		return nil, false
	}
	var res []search.Result
	if !c.get(ctx, sova.CacheSearch, key, &res) {
		c.searchMisses.Add(1)
		return nil, false
	}
	c.searchHits.Add(1)
	return res, true
}

// PutResults implements search.ResultCache.
func (c *Cache) PutResults(ctx context.Context, key string, results []search.Result) {
	if c.opts.SearchTTL <= 0 {
		return
	}
	c.put(ctx, sova.CacheSearch, key, results, c.opts.SearchTTL)
}

// Reader returns next with read pages cached by URL. Only pages read
// successfully are kept; URLs that differ only in tracking parameters,
// "www.", the scheme or a trailing slash share an entry. With no page TTL
// it returns next itself.
func (c *Cache) Reader(next fetch.Reader) fetch.Reader {
	if c.opts.PageTTL <= 0 {
		return next
	}
	return &reader{c: c, next: next}
}

type reader struct {
	c    *Cache
	next fetch.Reader
}

func (r *reader) Fetch(ctx context.Context, url string) (*fetch.Page, error) {
	key := search.NormalizeURL(url)
	var p fetch.Page
	if r.c.get(ctx, sova.CachePage, key, &p) {
		r.c.pageHits.Add(1)
		return &p, nil
	}
	r.c.pageMisses.Add(1)
	page, err := r.next.Fetch(ctx, url)
	if err != nil {
		return page, err
	}
	r.c.put(ctx, sova.CachePage, key, page, r.c.opts.PageTTL)
	return page, nil
}

func (c *Cache) get(ctx context.Context, kind, key string, v any) bool {
	b, found, err := c.st.CacheGet(ctx, kind, hash(key))
	if err != nil {
		if ctx.Err() == nil {
			c.log.Warn("web cache read failed", "kind", kind, "err", err)
		}
		return false
	}
	if !found {
		return false
	}
	if err := json.Unmarshal(b, v); err != nil {
		c.log.Warn("web cache entry unreadable", "kind", kind, "err", err)
		return false
	}
	return true
}

func (c *Cache) put(ctx context.Context, kind, key string, v any, ttl time.Duration) {
	b, err := json.Marshal(v)
	if err != nil {
		c.log.Warn("web cache entry cannot be encoded", "kind", kind, "err", err)
		return
	}
	if len(b) > sova.MaxCacheValueBytes {
		return
	}
	// The run may be over by the time the page is read; the entry is
	// still worth keeping.
	ctx = context.WithoutCancel(ctx)
	if err := c.st.CachePut(ctx, kind, hash(key), b, ttl); err != nil {
		c.log.Warn("web cache write failed", "kind", kind, "err", err)
		return
	}
	if c.writes.Add(1)%purgeEvery == 0 {
		if _, err := c.st.CachePurge(ctx, time.Now()); err != nil {
			c.log.Warn("web cache purge failed", "err", err)
		}
	}
}

// Purge deletes expired entries; servers call it at start.
func (c *Cache) Purge(ctx context.Context) (int64, error) {
	return c.st.CachePurge(ctx, time.Now())
}

// hash keeps queries and URLs out of the database in clear and bounds the
// key length.
func hash(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}
