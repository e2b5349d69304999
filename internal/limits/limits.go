package limits

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/sova-ai/sova"
)

// Counter names.
const (
	Messages = "messages"
	// Extreme counts runs of the long modes (Config.LongModes), apart from
	// the messages they also are.
	Extreme = "extreme"
)

// Unlimited is a limit that is never reached.
const Unlimited = -1

// Quota is one role's daily limits; Unlimited (-1) is none.
type Quota struct {
	Messages int64
	Extreme  int64
}

// Config sets the limits. Admins have none.
type Config struct {
	Free, Pro, Anonymous Quota
	// LongModes are the mode ids counted as Extreme and capped by
	// Concurrent.
	LongModes []string
	// Concurrent caps one user's long runs going at once (0: no cap).
	Concurrent int
	// Places is where the long runs going are counted: nil is this
	// process; a shared one (redislimit.Cluster) holds the cap across
	// every node that uses it.
	Places Places
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// Logger gets the counts given up on (nil: none).
	Logger *slog.Logger
}

// ErrRateLimited is what every refusal Is.
var ErrRateLimited = errors.New("rate limited")

// Exceeded is a refusal: which limit, and when to try again.
type Exceeded struct {
	Counter    string // Messages, Extreme, or "concurrent"
	Limit      int64
	Role       string
	RetryAfter time.Duration
	Resets     time.Time // zero for the concurrency cap
}

func (e *Exceeded) Error() string {
	switch e.Counter {
	case Messages:
		return fmt.Sprintf("the daily limit of %d messages is used up; it resets at %s", e.Limit, e.Resets.Format(time.RFC3339))
	case Extreme:
		return fmt.Sprintf("the daily limit of %d long runs (extreme, deep research) is used up; it resets at %s", e.Limit, e.Resets.Format(time.RFC3339))
	default:
		return fmt.Sprintf("%d long runs of yours are going already; wait until one ends", e.Limit)
	}
}

// Is makes an Exceeded match ErrRateLimited.
func (e *Exceeded) Is(target error) bool { return target == ErrRateLimited }

// concurrentRetry is the Retry-After of the concurrency cap: a long run
// takes minutes, so a client is told to come back in a little while.
const concurrentRetry = 30 * time.Second

// Places counts what is going at once under a cap, per key.
type Places interface {
	// TryHold takes one of key's n places at once; ok is false when all
	// are taken. release gives the place back (more calls do nothing).
	TryHold(ctx context.Context, key string, n int) (release func(), ok bool, err error)
	// Held returns how many of key's places are taken.
	Held(ctx context.Context, key string) (int, error)
}

// Limiter admits runs under the limits.
type Limiter struct {
	cfg     Config
	counter Counter
}

// New returns a Limiter counting with c.
func New(cfg Config, c Counter) *Limiter {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Places == nil {
		cfg.Places = &LocalPlaces{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Limiter{cfg: cfg, counter: c}
}

// Counter is where the limits count (for the usage report).
func (l *Limiter) Counter() Counter { return l.counter }

// quota is the role's limits; ok is false for a role without any.
func (l *Limiter) quota(role string) (Quota, bool) {
	switch role {
	case sova.RoleAdmin:
		return Quota{}, false
	case sova.RolePro:
		return l.cfg.Pro, true
	case sova.RoleAnonymous:
		return l.cfg.Anonymous, true
	default: // free, and a role this version does not know
		return l.cfg.Free, true
	}
}

// Long reports whether a mode is one of the long modes.
func (l *Limiter) Long(modeID string) bool { return slices.Contains(l.cfg.LongModes, modeID) }

// day is the UTC day of t and when it ends.
func day(t time.Time) (string, time.Time) {
	t = t.UTC()
	start := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	return start.Format(time.DateOnly), start.AddDate(0, 0, 1)
}

// Admit counts a run of modeID for u, or refuses it with an *Exceeded.
// release must be called once the run has ended (it frees the run's place
// under the concurrency cap); it is never nil when err is nil.
func (l *Limiter) Admit(ctx context.Context, u sova.User, modeID string) (release func(), err error) {
	q, limited := l.quota(u.Role)
	if !limited {
		return func() {}, nil
	}
	now := l.cfg.Now()
	period, resets := day(now)
	ttl := resets.Sub(now) + time.Hour
	long := l.Long(modeID)
	release = func() {}
	if long && l.cfg.Concurrent > 0 {
		free, ok, err := l.cfg.Places.TryHold(ctx, placesKey(u.ID), l.cfg.Concurrent)
		if err != nil {
			return nil, &Unavailable{Counter: "concurrent long runs", RetryAfter: unavailableRetry, Err: fmt.Errorf("counting the long runs going: %w", err)}
		}
		if !ok {
			return nil, &Exceeded{Counter: "concurrent", Limit: int64(l.cfg.Concurrent), Role: u.Role, RetryAfter: concurrentRetry}
		}
		release = free
	}
	refuse := func(counter string, limit int64) error {
		release()
		return &Exceeded{Counter: counter, Limit: limit, Role: u.Role, RetryAfter: resets.Sub(now), Resets: resets}
	}
	msgKey := Key{Subject: u.ID, Counter: Messages, Period: period}
	msgCounted, err := l.count(ctx, u, msgKey, q.Messages, ttl)
	if err != nil {
		release()
		return nil, err
	}
	if !msgCounted {
		return nil, refuse(Messages, q.Messages)
	}
	if long {
		ok, err := l.count(ctx, u, Key{Subject: u.ID, Counter: Extreme, Period: period}, q.Extreme, ttl)
		if err != nil || !ok {
			// The message was counted for a run that does not start.
			if _, _, uerr := l.add(ctx, msgKey, -1, Unlimited, ttl); uerr != nil {
				l.cfg.Logger.Warn("taking back a message counted for a run that did not start failed", "user", u.ID, "err", uerr)
			}
			release()
			if err != nil {
				return nil, err
			}
			return nil, refuse(Extreme, q.Extreme)
		}
	}
	return release, nil
}

// count adds one unit under k unless that passes limit; ok is false when
// it would. A counter that does not answer refuses with Unavailable where
// there is a limit to keep, and lets the unit go uncounted where there is
// none (ok true).
func (l *Limiter) count(ctx context.Context, u sova.User, k Key, limit int64, ttl time.Duration) (ok bool, err error) {
	_, ok, err = l.add(ctx, k, 1, limit, ttl)
	if err == nil {
		return ok, nil
	}
	if limit < 0 {
		l.cfg.Logger.Warn("usage not counted: the counter does not answer; the question goes on", "user", u.ID, "counter", k.Counter, "err", err)
		return true, nil
	}
	l.cfg.Logger.Error("a limit could not be checked: the counter does not answer; the question is refused (503)", "user", u.ID, "counter", k.Counter, "err", err)
	return false, &Unavailable{Counter: k.Counter, RetryAfter: unavailableRetry, Err: fmt.Errorf("counting %s: %w", k.Counter, err)}
}

// placesKey names a user's long runs going.
func placesKey(userID string) string { return "longruns:" + userID }

// LocalPlaces counts places in this process.
type LocalPlaces struct {
	mu   sync.Mutex
	held map[string]int
}

// TryHold implements Places.
func (p *LocalPlaces) TryHold(_ context.Context, key string, n int) (func(), bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.held[key] >= n {
		return nil, false, nil
	}
	if p.held == nil {
		p.held = map[string]int{}
	}
	p.held[key]++
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			if p.held[key]--; p.held[key] <= 0 {
				delete(p.held, key)
			}
		})
	}, true, nil
}

// Held implements Places.
func (p *LocalPlaces) Held(_ context.Context, key string) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.held[key], nil
}

// Left is what one counter leaves today.
type Left struct {
	Used  int64 `json:"used"`
	Limit int64 `json:"limit"` // -1: unlimited
	Left  int64 `json:"left"`  // -1: unlimited
	// Resets is when the day's count starts again (the next UTC midnight).
	Resets time.Time `json:"resets"`
}

// Usage is what the limits leave a user today (GET /api/me).
type Usage struct {
	Messages Left `json:"messages"`
	Extreme  Left `json:"extreme"`
	// Running and Concurrent are the long runs going now and their cap
	// (0: none).
	Running    int `json:"running"`
	Concurrent int `json:"concurrent"`
}

// Usage returns what u's limits leave today; nil for a user without limits.
func (l *Limiter) Usage(ctx context.Context, u sova.User) (*Usage, error) {
	q, limited := l.quota(u.Role)
	if !limited {
		return nil, nil
	}
	period, resets := day(l.cfg.Now())
	left := func(counter string, limit int64) (Left, error) {
		n, err := l.counter.Get(ctx, Key{Subject: u.ID, Counter: counter, Period: period})
		if err != nil {
			return Left{}, err
		}
		out := Left{Used: n, Limit: limit, Left: Unlimited, Resets: resets}
		if limit >= 0 {
			out.Left = max(limit-n, 0)
		}
		return out, nil
	}
	var out Usage
	var err error
	if out.Messages, err = left(Messages, q.Messages); err != nil {
		return nil, err
	}
	if out.Extreme, err = left(Extreme, q.Extreme); err != nil {
		return nil, err
	}
	if out.Running, err = l.cfg.Places.Held(ctx, placesKey(u.ID)); err != nil {
		return nil, err
	}
	out.Concurrent = l.cfg.Concurrent
	return &out, nil
}
