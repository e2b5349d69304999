package egress

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Defaults for zero BreakerConfig fields.
const (
	DefaultBreakerFailures = 5
	DefaultBreakerCooldown = 30 * time.Second
)

// ErrOpen is matched by the error of a call refused at once because its
// endpoint failed too often lately. Callers do not retry it.
var ErrOpen = errors.New("endpoint failing, calls paused")

// OpenError is a call the breaker refused without sending it.
type OpenError struct {
	Endpoint string        // what failed, as the caller names it
	Failures int           // consecutive failures that opened the breaker
	Left     time.Duration // until the next call is let through
	Last     error         // the last failure
}

func (e *OpenError) Error() string {
	s := fmt.Sprintf("%s failed %d times in a row; not calling it again for %s", e.Endpoint, e.Failures, e.Left.Round(100*time.Millisecond))
	if e.Last != nil {
		s += " (last failure: " + e.Last.Error() + ")"
	}
	return s
}

// Is makes errors.Is(err, ErrOpen) true.
func (e *OpenError) Is(target error) bool { return target == ErrOpen }

// Unwrap returns the last failure, so that its kind still matches.
func (e *OpenError) Unwrap() error { return e.Last }

// BreakerConfig tunes a Breaker.
type BreakerConfig struct {
	// Failures is how many failures in a row open the breaker (default 5).
	Failures int
	// Cooldown is how long an open breaker refuses calls before one is
	// let through to try again (default 30s).
	Cooldown time.Duration
	// Now is the clock (tests); nil: time.Now.
	Now func() time.Time
}

// Breaker remembers, per endpoint, failures in a row. After
// Config.Failures of them every call to that endpoint fails at once
// (Allow returns an *OpenError) until Cooldown has passed; then one call
// is let through: its success closes the breaker, its failure opens it
// for another Cooldown. It is safe for concurrent use; the zero value is
// not usable, use NewBreaker.
type Breaker struct {
	cfg BreakerConfig

	mu     sync.Mutex
	states map[string]*breakerState
}

type breakerState struct {
	failures  int
	openUntil time.Time
	probing   bool // a call is trying the endpoint after a cool-down
	last      error
	opened    chan struct{} // closed when the breaker opens
}

// NewBreaker returns a Breaker with cfg's defaults filled in.
func NewBreaker(cfg BreakerConfig) *Breaker {
	if cfg.Failures <= 0 {
		cfg.Failures = DefaultBreakerFailures
	}
	if cfg.Cooldown <= 0 {
		cfg.Cooldown = DefaultBreakerCooldown
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Breaker{cfg: cfg, states: map[string]*breakerState{}}
}

// Allow returns nil when a call to endpoint may be sent, and an
// *OpenError when the endpoint failed too often lately.
func (b *Breaker) Allow(endpoint string) error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.states[endpoint]
	if s == nil || s.failures < b.cfg.Failures {
		return nil
	}
	now := b.cfg.Now()
	if now.Before(s.openUntil) || s.probing {
		left := s.openUntil.Sub(now)
		if s.probing {
			left = max(left, 0)
		}
		return &OpenError{Endpoint: endpoint, Failures: s.failures, Left: left, Last: s.last}
	}
	s.probing = true
	return nil
}

// Record notes the outcome of a call Allow let through. Only failures
// that say something about the endpoint count (see Counts): a refused
// request or a cancelled call neither opens nor closes the breaker.
func (b *Breaker) Record(endpoint string, err error) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.states[endpoint]
	if err == nil {
		delete(b.states, endpoint)
		return
	}
	if !Counts(err) {
		if s != nil {
			s.probing = false
		}
		return
	}
	if s == nil {
		s = &breakerState{}
		b.states[endpoint] = s
	}
	s.failures++
	s.last = err
	s.probing = false
	if s.failures >= b.cfg.Failures {
		s.openUntil = b.cfg.Now().Add(b.cfg.Cooldown)
		if s.opened == nil {
			s.opened = make(chan struct{})
		}
		select {
		case <-s.opened:
		default:
			close(s.opened)
		}
	}
}

// Sleep waits for d, until ctx is done, or until the breaker of endpoint
// opens, so that a call waiting to retry learns at once that the
// endpoint is given up on. It reports whether d elapsed.
func (b *Breaker) Sleep(ctx context.Context, endpoint string, d time.Duration) bool {
	if b == nil {
		return Sleep(ctx, d)
	}
	b.mu.Lock()
	s := b.states[endpoint]
	if s == nil {
		s = &breakerState{}
		b.states[endpoint] = s
	}
	if s.opened == nil {
		s.opened = make(chan struct{})
	}
	opened := s.opened
	b.mu.Unlock()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-opened:
		return false
	case <-t.C:
		return true
	}
}

// Counts reports whether a failure says the endpoint is unwell: no answer,
// or a 5xx or 429 one. A refusal of the request itself (401, 404, 400)
// says the endpoint is up.
func Counts(err error) bool {
	if errors.Is(err, ErrOpen) {
		return false
	}
	k := KindOf(err)
	return k == ErrTransient || k == ErrRateLimited
}
