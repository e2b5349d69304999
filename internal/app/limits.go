package app

import (
	"context"

	"github.com/sova-ai/sova/internal/config"
	"github.com/sova-ai/sova/internal/limits"
	"github.com/sova-ai/sova/internal/store"
)

// newLimiter builds the limits of SOVA_LIMIT_*: counted in Redis when
// SOVA_REDIS_URL is set (several servers then share one count), in the
// store otherwise. closeFn releases the Redis connection.
func newLimiter(ctx context.Context, cfg *config.Config, st store.Store) (l *limits.Limiter, closeFn func() error, err error) {
	var counter limits.Counter = limits.StoreCounter{Store: st}
	closeFn = func() error { return nil }
	if cfg.RedisURL != "" {
		rc, err := limits.NewRedis(ctx, cfg.RedisURL)
		if err != nil {
			return nil, nil, err
		}
		counter, closeFn = rc, rc.Close
	}
	return limits.New(LimitsConfig(cfg), counter), closeFn, nil
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
