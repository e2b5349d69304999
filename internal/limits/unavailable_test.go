package limits_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/limits"
)

// flakyCounter fails its first failures additions (a connection dropped
// by a failover), or every one while down, as a Redis client does.
type flakyCounter struct {
	mu       sync.Mutex
	failures int
	down     bool
	calls    int
	counts   map[limits.Key]int64
}

var errDial = errors.New("dial tcp 10.1.2.3:6379: connect: connection refused")

func (c *flakyCounter) Add(_ context.Context, k limits.Key, n, limit int64, _ time.Duration) (int64, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	if c.down || c.failures > 0 {
		c.failures--
		return 0, false, errDial
	}
	if c.counts == nil {
		c.counts = map[limits.Key]int64{}
	}
	if limit >= 0 && c.counts[k]+n > limit {
		return c.counts[k], false, nil
	}
	c.counts[k] += n
	return c.counts[k], true, nil
}

func (c *flakyCounter) Get(_ context.Context, k limits.Key) (int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.down {
		return 0, errDial
	}
	return c.counts[k], nil
}

func (c *flakyCounter) total(counter string) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var n int64
	for k, v := range c.counts {
		if k.Counter == counter {
			n += v
		}
	}
	return n
}

var quotas = limits.Config{
	Free:      limits.Quota{Messages: 5, Extreme: 1},
	Pro:       limits.Quota{Messages: limits.Unlimited, Extreme: 3},
	LongModes: []string{"extreme"},
}

// A counter that drops a connection for a moment costs a retry, not the
// question nor the count: the message is counted once.
func TestCountRetried(t *testing.T) {
	c := &flakyCounter{failures: 2}
	l := limits.New(quotas, c)
	release, err := l.Admit(t.Context(), sova.User{ID: "fay", Role: sova.RoleFree}, "chat")
	if err != nil {
		t.Fatalf("admit over a flaky counter: %v", err)
	}
	release()
	if got := c.total(limits.Messages); got != 1 || c.calls != 3 {
		t.Errorf("counted %d messages in %d calls, want 1 in 3", got, c.calls)
	}
}

// A counter that stays down: what has a limit is refused with Unavailable
// (its message names no address), what has none goes on uncounted.
func TestCounterDown(t *testing.T) {
	c := &flakyCounter{down: true}
	l := limits.New(quotas, c)
	ctx := t.Context()
	cases := []struct {
		name, role, mode string
		refused          bool
	}{
		{"free message", sova.RoleFree, "chat", true},
		{"pro message, no limit", sova.RolePro, "chat", false},
		{"pro long run, limited", sova.RolePro, "extreme", true},
		{"admin", sova.RoleAdmin, "extreme", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			release, err := l.Admit(ctx, sova.User{ID: "u-" + tc.role, Role: tc.role}, tc.mode)
			var down *limits.Unavailable
			switch {
			case tc.refused && !errors.As(err, &down):
				t.Fatalf("admit: %v, want Unavailable", err)
			case tc.refused:
				if down.RetryAfter <= 0 || strings.Contains(down.Error(), "10.1.2.3") || !errors.Is(err, errDial) {
					t.Errorf("refusal %q (retry after %s) names the address or lost its cause", down.Error(), down.RetryAfter)
				}
				if errors.Is(err, limits.ErrRateLimited) {
					t.Error("an unavailable counter reads as a limit used up")
				}
			case err != nil:
				t.Fatalf("admit with no limit to keep: %v", err)
			default:
				release()
			}
		})
	}
}
