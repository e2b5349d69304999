package egress

import (
	"context"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RetryAfter reads the wait a server asked for: Retry-After-Ms
// (milliseconds, as OpenAI sends it), Retry-After (seconds or an HTTP
// date), else X-Ratelimit-Reset (seconds, as Reddit sends it). It returns
// 0 when the answer asks for no wait or says it in a form not understood.
// This is Sova's only reader of these headers.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if secs, err := strconv.ParseFloat(v, 64); err == nil {
			if secs > 0 {
				return time.Duration(secs * float64(time.Second))
			}
			return 0
		}
		if t, err := http.ParseTime(v); err == nil {
			if t.After(now) {
				return t.Sub(now)
			}
			return 0
		}
	}
	if v := strings.TrimSpace(h.Get("X-Ratelimit-Reset")); v != "" {
		if secs, err := strconv.ParseFloat(v, 64); err == nil && secs > 0 && secs < 24*3600 {
			return time.Duration(secs * float64(time.Second))
		}
	}
	return 0
}

// Backoff is the wait before retry number attempt+1: exponential from base
// with full jitter (a uniform draw in [0, min(ceiling, base·2^attempt)]),
// so that clients that failed together do not retry together.
func Backoff(attempt int, base, ceiling time.Duration) time.Duration {
	limit := ceiling
	if attempt < 30 {
		if d := base << attempt; d > 0 && d < limit {
			limit = d
		}
	}
	if limit <= 0 {
		return 0
	}
	return rand.N(limit + 1)
}

// Sleep waits for d or until ctx is done; it reports whether d elapsed.
func Sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
