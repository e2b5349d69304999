package auth

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// ThrottleOptions bound sign-in attempts: per account name and per client
// address, each a token bucket (in memory, per process).
type ThrottleOptions struct {
	// PerAccount attempts in a burst, then one every PerAccountEvery
	// (default 5, then one a minute).
	PerAccount      int
	PerAccountEvery time.Duration
	// PerIP attempts in a burst, then one every PerIPEvery (default 20,
	// then one every 10 s).
	PerIP      int
	PerIPEvery time.Duration
}

type throttle struct {
	opt     ThrottleOptions
	now     func() time.Time
	mu      sync.Mutex
	account map[string]*rate.Limiter
	ip      map[string]*rate.Limiter
}

// maxTracked bounds the limiters kept; past it, the full ones (idle long
// enough to have refilled) are dropped.
const maxTracked = 10000

func newThrottle(opt ThrottleOptions, now func() time.Time) *throttle {
	if opt.PerAccount <= 0 {
		opt.PerAccount = 5
	}
	if opt.PerAccountEvery <= 0 {
		opt.PerAccountEvery = time.Minute
	}
	if opt.PerIP <= 0 {
		opt.PerIP = 20
	}
	if opt.PerIPEvery <= 0 {
		opt.PerIPEvery = 10 * time.Second
	}
	return &throttle{opt: opt, now: now, account: map[string]*rate.Limiter{}, ip: map[string]*rate.Limiter{}}
}

func (t *throttle) limiter(m map[string]*rate.Limiter, key string, every time.Duration, burst int) *rate.Limiter {
	l, ok := m[key]
	if !ok {
		if len(m) >= maxTracked {
			now := t.now()
			for k, v := range m {
				if v.TokensAt(now) >= float64(v.Burst()) {
					delete(m, k)
				}
			}
		}
		l = rate.NewLimiter(rate.Every(every), burst)
		m[key] = l
	}
	return l
}

// allow takes an attempt for both the account and the address; it
// returns how long to wait when either has none left (taking nothing).
func (t *throttle) allow(name, ip string) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	la := t.limiter(t.account, name, t.opt.PerAccountEvery, t.opt.PerAccount)
	li := t.limiter(t.ip, ip, t.opt.PerIPEvery, t.opt.PerIP)
	ra, ri := la.ReserveN(now, 1), li.ReserveN(now, 1)
	wait := max(ra.DelayFrom(now), ri.DelayFrom(now))
	if wait > 0 {
		ra.CancelAt(now)
		ri.CancelAt(now)
		return wait
	}
	return 0
}

// succeeded forgets an account's failed attempts after a sign-in.
func (t *throttle) succeeded(name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.account, name)
}
