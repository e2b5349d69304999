package sova

import (
	"context"
	"time"
)

// Cache kinds used by retrieval.
const (
	CacheSearch = "search" // search answers, by provider and query
	CachePage   = "page"   // read pages, by URL
)

// MaxCacheValueBytes bounds one cached value.
const MaxCacheValueBytes = 4 << 20

// CacheStore keeps copies of web content for a while. Unlike the rest of
// the store it is not scoped by user: what it holds is public (search
// engine answers, pages anyone can read) and its keys are hashes.
type CacheStore interface {
	// CacheGet returns the value stored under (kind, key) unless it has
	// expired; found is false for a missing or expired entry.
	CacheGet(ctx context.Context, kind, key string) (value []byte, found bool, err error)
	// CachePut stores value under (kind, key) for ttl, replacing what was
	// there. A value over MaxCacheValueBytes or a ttl <= 0 is ErrInvalid.
	CachePut(ctx context.Context, kind, key string, value []byte, ttl time.Duration) error
	// CachePurge deletes the entries that expired before now and reports
	// how many.
	CachePurge(ctx context.Context, now time.Time) (int64, error)
}
