package egress

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func TestBreaker(t *testing.T) {
	clk := &clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	b := NewBreaker(BreakerConfig{Failures: 3, Cooldown: 10 * time.Second, Now: clk.Now})
	const ep = "the model endpoint"
	fail := &Error{Kind: ErrTransient, Err: errors.New("503")}

	// Refusals of the request say the endpoint is up: they never open it.
	for range 5 {
		if err := b.Allow(ep); err != nil {
			t.Fatalf("allow after 4xx: %v", err)
		}
		b.Record(ep, &Error{Kind: ErrInvalid, Err: errors.New("400")})
	}
	// A success in between resets the count.
	b.Record(ep, fail)
	b.Record(ep, fail)
	b.Record(ep, nil)
	b.Record(ep, fail)
	b.Record(ep, fail)
	if err := b.Allow(ep); err != nil {
		t.Fatalf("2 failures in a row opened the breaker: %v", err)
	}
	b.Record(ep, fail)
	err := b.Allow(ep)
	if !errors.Is(err, ErrOpen) || !errors.Is(err, ErrTransient) || !strings.Contains(err.Error(), "failed 3 times in a row") || !strings.Contains(err.Error(), ep) {
		t.Fatalf("open breaker: %v", err)
	}
	if b.Allow("another endpoint") != nil {
		t.Fatal("one endpoint's failures opened another's breaker")
	}
	// After the cool-down one call tries; others still fail at once.
	clk.Add(10 * time.Second)
	if err := b.Allow(ep); err != nil {
		t.Fatalf("probe after the cool-down refused: %v", err)
	}
	if err := b.Allow(ep); !errors.Is(err, ErrOpen) {
		t.Fatalf("second call during the probe: %v", err)
	}
	b.Record(ep, fail) // the probe failed: another cool-down
	if err := b.Allow(ep); !errors.Is(err, ErrOpen) {
		t.Fatalf("after a failed probe: %v", err)
	}
	clk.Add(10 * time.Second)
	if err := b.Allow(ep); err != nil {
		t.Fatal(err)
	}
	b.Record(ep, nil) // the probe succeeded: closed
	if err := b.Allow(ep); err != nil {
		t.Fatalf("after a successful probe: %v", err)
	}
}

// A call waiting to retry wakes when another call opens the breaker.
func TestBreakerSleepWakesOnOpen(t *testing.T) {
	b := NewBreaker(BreakerConfig{Failures: 2, Cooldown: time.Minute})
	b.Record("ep", &Error{Kind: ErrTransient})
	done := make(chan bool)
	go func() { done <- b.Sleep(context.Background(), "ep", time.Minute) }()
	time.Sleep(20 * time.Millisecond)
	b.Record("ep", &Error{Kind: ErrTransient})
	select {
	case elapsed := <-done:
		if elapsed {
			t.Fatal("Sleep says the wait elapsed")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Sleep did not wake when the breaker opened")
	}
}

func TestKindOfStatus(t *testing.T) {
	for status, want := range map[int]error{200: nil, 301: nil, 400: ErrInvalid, 401: ErrAuth, 403: ErrAuth, 404: ErrNotFound, 410: ErrNotFound,
		422: ErrInvalid, 429: ErrRateLimited, 500: ErrTransient, 502: ErrTransient, 503: ErrTransient} {
		if got := KindOfStatus(status); got != want {
			t.Errorf("KindOfStatus(%d) = %v, want %v", status, got, want)
		}
	}
}
