package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/sova-ai/sova"
)

var _ sova.CacheStore = (*SQLite)(nil)

// CacheGet implements CacheStore.
func (s *SQLite) CacheGet(ctx context.Context, kind, key string) ([]byte, bool, error) {
	var v []byte
	err := s.db.QueryRowContext(ctx, `SELECT value FROM cache_entries WHERE kind = ? AND key = ? AND expires_at > ?`,
		kind, key, time.Now().UnixMilli()).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("store: cache get: %w", sqliteErr(err))
	}
	return v, true, nil
}

// CachePut implements CacheStore.
func (s *SQLite) CachePut(ctx context.Context, kind, key string, value []byte, ttl time.Duration) error {
	if err := checkCachePut(kind, key, value, ttl); err != nil {
		return err
	}
	now := time.Now()
	_, err := s.db.ExecContext(ctx, `INSERT INTO cache_entries (kind, key, value, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (kind, key) DO UPDATE SET value = excluded.value, created_at = excluded.created_at,
			expires_at = excluded.expires_at`,
		kind, key, value, now.UnixMilli(), now.Add(ttl).UnixMilli())
	if err != nil {
		return fmt.Errorf("store: cache put: %w", sqliteErr(err))
	}
	return nil
}

// CachePurge implements CacheStore.
func (s *SQLite) CachePurge(ctx context.Context, now time.Time) (int64, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM cache_entries WHERE expires_at <= ?`, now.UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("store: cache purge: %w", sqliteErr(err))
	}
	n, _ := res.RowsAffected()
	return n, nil
}
