package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sova-ai/sova"

	"github.com/jackc/pgx/v5"
)

var _ sova.CacheStore = (*Postgres)(nil)

// CacheGet implements CacheStore.
func (s *Postgres) CacheGet(ctx context.Context, kind, key string) ([]byte, bool, error) {
	var v []byte
	err := s.pool.QueryRow(ctx, `SELECT value FROM cache_entries WHERE kind = $1 AND key = $2 AND expires_at > $3`,
		kind, key, time.Now().UTC()).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("store: cache get: %w", err)
	}
	return v, true, nil
}

// CachePut implements CacheStore.
func (s *Postgres) CachePut(ctx context.Context, kind, key string, value []byte, ttl time.Duration) error {
	if err := checkCachePut(kind, key, value, ttl); err != nil {
		return err
	}
	now := time.Now().UTC()
	_, err := s.pool.Exec(ctx, `INSERT INTO cache_entries (kind, key, value, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (kind, key) DO UPDATE SET value = excluded.value, created_at = excluded.created_at,
			expires_at = excluded.expires_at`,
		kind, key, value, now, now.Add(ttl))
	if err != nil {
		return fmt.Errorf("store: cache put: %w", err)
	}
	return nil
}

// CachePurge implements CacheStore.
func (s *Postgres) CachePurge(ctx context.Context, now time.Time) (int64, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM cache_entries WHERE expires_at <= $1`, now.UTC())
	if err != nil {
		return 0, fmt.Errorf("store: cache purge: %w", err)
	}
	return tag.RowsAffected(), nil
}
