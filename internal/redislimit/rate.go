package redislimit

import (
	"context"
	"fmt"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
)

// Rate holds keys to a rate shared by every node on the same Redis: the
// generic cell rate algorithm of redis_rate, which is the token bucket of
// golang.org/x/time/rate (a sustained rate, a burst after a quiet spell)
// kept in one Redis key.
type Rate struct {
	limiter *redis_rate.Limiter
	prefix  string
}

// NewRate returns a shared rate limiter on c.
func NewRate(c redis.UniversalClient, o Options) *Rate {
	return &Rate{limiter: redis_rate.NewLimiter(c), prefix: o.prefix() + "rate:"}
}

// limit is perSecond with burst as redis_rate counts it: one event per
// 1/perSecond (so fractional rates such as 1.5 a second hold exactly).
func limit(perSecond float64, burst int) redis_rate.Limit {
	return redis_rate.Limit{Rate: 1, Period: time.Duration(float64(time.Second) / perSecond), Burst: max(burst, 1)}
}

// Wait waits until key's rate allows one more event and counts it. Like
// rate.Limiter.Wait it fails at once when the wait would outlast ctx's
// deadline.
func (r *Rate) Wait(ctx context.Context, key string, perSecond float64, burst int) error {
	l := limit(perSecond, burst)
	for {
		res, err := r.limiter.Allow(ctx, r.prefix+key, l)
		if err != nil {
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			return fmt.Errorf("redis: rate of %s: %w", key, err)
		}
		if res.Allowed > 0 {
			return nil
		}
		wait := max(res.RetryAfter, time.Millisecond)
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return fmt.Errorf("rate of %s: the wait of %s would outlast the deadline: %w", key, wait.Round(time.Millisecond), context.DeadlineExceeded)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return context.Cause(ctx)
		case <-t.C:
		}
	}
}
