package store

import (
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
