package app

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/sova-ai/sova/internal/config"
	"github.com/sova-ai/sova/internal/limits"
	"github.com/sova-ai/sova/internal/redislimit"
	"github.com/sova-ai/sova/internal/search"
	"github.com/sova-ai/sova/internal/store"
)

// shared is what the nodes of a cluster hold together through Redis
// (SOVA_REDIS_URL): the limits' counters, the places of users' long runs
// and the search providers' query slots and rates. Its zero value, without
// Redis, keeps all of that per process (the counters in the store).
type shared struct {
	redis   *limits.RedisCounter // nil without Redis
	cluster *redislimit.Cluster
}

// openShared connects to SOVA_REDIS_URL when it is set.
func openShared(ctx context.Context, cfg *config.Config, logger *slog.Logger) (shared, error) {
	if cfg.RedisURL == "" {
		return shared{}, nil
	}
	rc, err := limits.NewRedis(ctx, cfg.RedisURL)
	if err != nil {
		return shared{}, err
	}
	return shared{redis: rc, cluster: redislimit.New(rc.Client, redislimit.Options{Logger: logger})}, nil
}

// Redis is the shared Redis for health checks; nil without one.
func (a *App) Redis() interface {
	Ping(ctx context.Context) error
} {
	if a.shared.redis == nil {
		return nil
	}
	return redisPing{a.shared.redis}
}

type redisPing struct{ c *limits.RedisCounter }

func (p redisPing) Ping(ctx context.Context) error {
	if err := p.c.Client.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("redis: %w", err)
	}
	return nil
}

// coordinator is what holds the search providers' limits across nodes;
// nil (per process) without Redis.
func (s shared) coordinator() search.Coordinator {
	if s.cluster == nil {
		return nil
	}
	return s.cluster
}

// close releases the Redis connection.
func (s shared) close() error {
	if s.redis == nil {
		return nil
	}
	return s.redis.Close()
}

// newLimiter builds the limits of SOVA_LIMIT_*: counted in Redis when
// SOVA_REDIS_URL is set (several servers then share one count, and one cap
// on a user's long runs going at once), in the store otherwise (shared by
// the nodes of one PostgreSQL; the cap then counts per process).
func newLimiter(cfg *config.Config, st store.Store, sh shared) *limits.Limiter {
	lc := LimitsConfig(cfg)
	var counter limits.Counter = limits.StoreCounter{Store: st}
	if sh.redis != nil {
		counter, lc.Places = sh.redis, sh.cluster
	}
	return limits.New(lc, counter)
}

// LimitsConfig is the limits' part of the configuration.
func LimitsConfig(cfg *config.Config) limits.Config {
	return limits.Config{
		Free:       limits.Quota{Messages: int64(cfg.LimitFreeMessages), Extreme: int64(cfg.LimitFreeExtreme)},
		Pro:        limits.Quota{Messages: int64(cfg.LimitProMessages), Extreme: int64(cfg.LimitProExtreme)},
		Anonymous:  limits.Quota{Messages: int64(cfg.LimitAnonymousMessages), Extreme: int64(cfg.LimitAnonymousExtreme)},
		LongModes:  cfg.LimitLongModes,
		Concurrent: cfg.LimitConcurrentLongRuns,
	}
}
