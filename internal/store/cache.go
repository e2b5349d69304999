package store

import (
	"context"
	"fmt"
	"time"

	"github.com/sova-ai/sova"
)

func checkCachePut(kind, key string, value []byte, ttl time.Duration) error {
	switch {
	case kind == "" || key == "":
		return fmt.Errorf("store: cache put: %w: empty kind or key", sova.ErrInvalid)
	case ttl <= 0:
		return fmt.Errorf("store: cache put: %w: ttl %s", sova.ErrInvalid, ttl)
	case len(value) > sova.MaxCacheValueBytes:
		return fmt.Errorf("store: cache put: %w: value of %d bytes is over %d", sova.ErrInvalid, len(value), sova.MaxCacheValueBytes)
	}
	return nil
}

var _ sova.CacheStore = (*DB)(nil)

// CacheGet implements sova.CacheStore.
func (s *DB) CacheGet(ctx context.Context, kind, key string) ([]byte, bool, error) {
	var v []byte
	err := s.queryRow(ctx, `SELECT value FROM cache_entries WHERE kind = ? AND key = ? AND expires_at > ?`,
		kind, key, s.d.time(time.Now().UTC())).Scan(&v)
	if isNoRows(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("store: cache get: %w", err)
	}
	return v, true, nil
}

// CachePut implements sova.CacheStore.
func (s *DB) CachePut(ctx context.Context, kind, key string, value []byte, ttl time.Duration) error {
	if err := checkCachePut(kind, key, value, ttl); err != nil {
		return err
	}
	now := time.Now().UTC()
	_, err := s.exec(ctx, `INSERT INTO cache_entries (kind, key, value, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (kind, key) DO UPDATE SET value = excluded.value, created_at = excluded.created_at,
			expires_at = excluded.expires_at`,
		kind, key, value, s.d.time(now), s.d.time(now.Add(ttl)))
	if err != nil {
		return fmt.Errorf("store: cache put: %w", err)
	}
	return nil
}

// CachePurge implements sova.CacheStore.
func (s *DB) CachePurge(ctx context.Context, now time.Time) (int64, error) {
	n, err := rowsChanged(s.exec(ctx, `DELETE FROM cache_entries WHERE expires_at <= ?`, s.d.time(now.UTC())))
	if err != nil {
		return 0, fmt.Errorf("store: cache purge: %w", err)
	}
	return n, nil
}
