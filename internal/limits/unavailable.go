package limits

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// Counting with retries. A counter in Redis or the store can drop a
// connection for a moment (a failover, a restart); one attempt would turn
// that into a lost count or a refused question. What has no limit (a pro
// account's messages) is only counted for the report: when the counter
// stays unreachable the question goes on uncounted. What has a limit
// cannot be checked: the question is refused with Unavailable, which the
// server answers 503 with Retry-After.

// countAttempts is how often one addition is tried; countBackoff the
// first pause between tries, doubled after each.
const (
	countAttempts = 3
	countBackoff  = 100 * time.Millisecond
	// countTimeout bounds all the tries of one addition: a counter that
	// hangs must not hold the question for long.
	countTimeout = 3 * time.Second
)

// unavailableRetry is the Retry-After of an Unavailable: a counter that
// failed over answers again within seconds.
const unavailableRetry = 10 * time.Second

// Unavailable refuses a question whose limit could not be checked: the
// counters do not answer. Its message names no address; Unwrap gives the
// cause for the log.
type Unavailable struct {
	Counter    string
	RetryAfter time.Duration
	Err        error
}

func (e *Unavailable) Error() string {
	return fmt.Sprintf("the %s limit cannot be checked now (the usage counters do not answer); try again in %s", e.Counter, e.RetryAfter)
}

// Unwrap returns the counter's error.
func (e *Unavailable) Unwrap() error { return e.Err }

// Adder is what AddWithRetry adds with: a Counter's Add.
type Adder func(ctx context.Context, n, limit int64) (int64, bool, error)

// AddWithRetry calls add up to countAttempts times while it fails, pausing
// between tries, within countTimeout and ctx.
func AddWithRetry(ctx context.Context, n, limit int64, add Adder) (int64, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, countTimeout)
	defer cancel()
	pause := countBackoff
	var err error
	for i := range countAttempts {
		var got int64
		var ok bool
		if got, ok, err = add(ctx, n, limit); err == nil {
			return got, ok, nil
		}
		if i == countAttempts-1 {
			break
		}
		select {
		case <-ctx.Done():
			return 0, false, fmt.Errorf("%w (after %d tries: %v)", err, i+1, ctx.Err())
		case <-time.After(pause):
		}
		pause *= 2
	}
	return 0, false, fmt.Errorf("%w (after %d tries)", err, countAttempts)
}

// add counts n under k with retries.
func (l *Limiter) add(ctx context.Context, k Key, n, limit int64, ttl time.Duration) (int64, bool, error) {
	return AddWithRetry(ctx, n, limit, func(ctx context.Context, n, limit int64) (int64, bool, error) {
		return l.counter.Add(ctx, k, n, limit, ttl)
	})
}

// SetLogger sets where the counts given up on are logged; call it before
// the Limiter is used.
func (l *Limiter) SetLogger(lg *slog.Logger) {
	if lg != nil {
		l.cfg.Logger = lg
	}
}
