package llm

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"
)

// backoff is the wait before retry number attempt+1: exponential with full
// jitter (a uniform draw in [0, min(max, base·2^attempt)]), so that clients
// that failed together do not retry together. A wait the server asked for
// (Retry-After) wins over it, even when longer than BackoffMax, up to
// max(BackoffMax, 60s).
func (k *core) backoff(attempt int, err error) time.Duration {
	var ae *APIError
	if errors.As(err, &ae) && ae.RetryAfter > 0 {
		return min(ae.RetryAfter, max(k.cfg.BackoffMax, maxRetryAfter))
	}
	ceiling := k.cfg.BackoffMax
	if attempt < 30 {
		if d := k.cfg.BackoffBase << attempt; d > 0 && d < ceiling {
			ceiling = d
		}
	}
	return rand.N(ceiling + 1)
}

// sleep waits for d or until ctx is done, whichever comes first.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}
