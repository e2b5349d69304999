package search

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"

	"golang.org/x/time/rate"
)

// Limits bounds how hard one provider is used, across all runs of a
// server. Queries over the limits wait their turn instead of failing:
// meta-search instances and keyless engines block an address that fires
// many queries at once, and paid APIs answer 429 past their plan's rate.
type Limits struct {
	// Concurrent is the most queries in flight at once (<= 0: no limit).
	Concurrent int
	// PerSecond is the sustained rate of queries (<= 0: no limit).
	PerSecond float64
	// Burst is how many queries may start at once after a quiet spell
	// when PerSecond is set (<= 0: Concurrent, or 1).
	Burst int
}

// DefaultLimits are the limits of the built-in providers when
// SOVA_SEARCH_LIMITS does not name them: gentle on shared or free
// services, within the published rates of the paid ones.
var DefaultLimits = map[string]Limits{
	"searxng":    {Concurrent: 3, PerSecond: 3},
	"duckduckgo": {Concurrent: 1, PerSecond: 1},
	"wikipedia":  {Concurrent: 4, PerSecond: 10},
	"tavily":     {Concurrent: 5, PerSecond: 10},
	"exa":        {Concurrent: 5, PerSecond: 5},
	"brave":      {Concurrent: 1, PerSecond: 1},
}

// String renders l the way ParseLimits reads it.
func (l Limits) String() string {
	s := strconv.Itoa(max(0, l.Concurrent))
	if l.PerSecond > 0 {
		s += ":" + strconv.FormatFloat(l.PerSecond, 'g', -1, 64)
		if l.Burst > 0 {
			s += ":" + strconv.Itoa(l.Burst)
		}
	}
	return s
}

// ParseLimits reads "concurrent[:per-second[:burst]]", for example "2",
// "2:1.5" or "4:2:4". "0" means no limit.
func ParseLimits(s string) (Limits, error) {
	parts := strings.Split(strings.TrimSpace(s), ":")
	if len(parts) > 3 || parts[0] == "" {
		return Limits{}, fmt.Errorf("limits %q: use concurrent[:per-second[:burst]], for example 2:1.5", s)
	}
	var l Limits
	var err error
	if l.Concurrent, err = strconv.Atoi(parts[0]); err != nil || l.Concurrent < 0 {
		return Limits{}, fmt.Errorf("limits %q: concurrent queries must be a whole number >= 0", s)
	}
	if len(parts) > 1 {
		if l.PerSecond, err = strconv.ParseFloat(parts[1], 64); err != nil || l.PerSecond < 0 {
			return Limits{}, fmt.Errorf("limits %q: queries per second must be a number >= 0", s)
		}
	}
	if len(parts) > 2 {
		if l.Burst, err = strconv.Atoi(parts[2]); err != nil || l.Burst < 0 {
			return Limits{}, fmt.Errorf("limits %q: burst must be a whole number >= 0", s)
		}
	}
	return l, nil
}

// Coordinator shares a provider's limits between the nodes of a cluster
// (internal/redislimit keeps them in Redis). Keys name one provider.
type Coordinator interface {
	// Acquire waits for one of key's n query slots, shared by every node,
	// and returns what frees it.
	Acquire(ctx context.Context, key string, n int) (release func(), err error)
	// Wait waits until key's shared rate allows one more query.
	Wait(ctx context.Context, key string, perSecond float64, burst int) error
}

// Throttled is a Provider whose queries are held to Limits. It is safe for
// concurrent use; build one per provider and share it between runs.
type Throttled struct {
	p       Provider
	limits  Limits
	burst   int
	slots   chan struct{} // nil: no concurrency limit
	limiter *rate.Limiter // nil: no rate limit

	// shared, when set, holds the limits across nodes; the local slots
	// stay in front of it (no node queues more than its share at Redis),
	// and the local rate stands in while it fails.
	shared   Coordinator
	log      *slog.Logger
	degraded atomic.Bool // shared failed last time (logged once per spell)
}

// Throttle returns p held to l in this process. With no limits set it
// returns p itself.
func Throttle(p Provider, l Limits) Provider { return ThrottleShared(p, l, nil, nil) }

// ThrottleShared returns p held to l across every node that shares c (nil:
// in this process). Should c fail, queries are held to l in this process
// and logger says so once. With no limits set it returns p itself.
func ThrottleShared(p Provider, l Limits, c Coordinator, logger *slog.Logger) Provider {
	if l.Concurrent <= 0 && l.PerSecond <= 0 {
		return p
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	t := &Throttled{p: p, limits: l, shared: c, log: logger}
	if l.Concurrent > 0 {
		t.slots = make(chan struct{}, l.Concurrent)
	}
	if l.PerSecond > 0 {
		t.burst = l.Burst
		if t.burst <= 0 {
			t.burst = max(1, l.Concurrent)
		}
		t.limiter = rate.NewLimiter(rate.Limit(l.PerSecond), t.burst)
	}
	return t
}

// Name returns the wrapped provider's name.
func (t *Throttled) Name() string { return t.p.Name() }

// Limits returns the limits t applies.
func (t *Throttled) Limits() Limits { return t.limits }

// Shared reports whether t holds its limits across nodes.
func (t *Throttled) Shared() bool { return t.shared != nil }

// Unwrap returns the throttled provider.
func (t *Throttled) Unwrap() Provider { return t.p }

// Search waits for a free slot and for the rate limiter, then runs q. It
// fails only when ctx ends while it waits (or when the wait the rate
// requires would outlast ctx's deadline).
func (t *Throttled) Search(ctx context.Context, q Query) ([]Result, error) {
	release, err := t.wait(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	return t.p.Search(ctx, q)
}

// wait takes a slot and waits for the rate; release frees the slot.
func (t *Throttled) wait(ctx context.Context) (release func(), err error) {
	release = func() {}
	if t.slots != nil {
		select {
		case t.slots <- struct{}{}:
			release = func() { <-t.slots }
		case <-ctx.Done():
			return nil, &Error{Provider: t.Name(), Message: "cancelled while waiting for a free query slot", Err: ctx.Err()}
		}
	}
	local := t.shared == nil
	if !local && t.slots != nil {
		free, err := t.shared.Acquire(ctx, "search:"+t.Name(), t.limits.Concurrent)
		switch {
		case err == nil:
			t.recovered()
			unlock := release
			release = func() { free(); unlock() }
		case ctx.Err() != nil:
			release()
			return nil, &Error{Provider: t.Name(), Message: "cancelled while waiting for a free query slot", Err: ctx.Err()}
		default:
			t.fail(err)
			local = true
		}
	}
	if t.limiter == nil {
		return release, nil
	}
	if !local {
		err := t.shared.Wait(ctx, "search:"+t.Name(), t.limits.PerSecond, t.burst)
		switch {
		case err == nil:
			t.recovered()
			return release, nil
		case ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
			release()
			return nil, &Error{Provider: t.Name(), Message: "cancelled while waiting for the query rate limit", Err: err}
		default:
			t.fail(err)
		}
	}
	if err := t.limiter.Wait(ctx); err != nil {
		release()
		return nil, &Error{Provider: t.Name(), Message: "cancelled while waiting for the query rate limit", Err: err}
	}
	return release, nil
}

func (t *Throttled) fail(err error) {
	if t.degraded.CompareAndSwap(false, true) {
		t.log.Warn("the shared search limits are unreachable; holding queries to this node's limits", "provider", t.Name(), "err", err)
	}
}

func (t *Throttled) recovered() {
	if t.degraded.CompareAndSwap(true, false) {
		t.log.Info("the shared search limits are reachable again", "provider", t.Name())
	}
}

// PrivateInstance reports whether rawURL names a server on this machine
// or a private network: localhost, a loopback, private (RFC 1918, RFC
// 4193) or link-local address, or a host name whose addresses are all
// such (a container's service name). Politeness limits protect shared
// public instances; a SearXNG instance the admin runs privately needs
// none (docs/configuration.md). A name that does not resolve within ctx
// counts as public.
func PrivateInstance(ctx context.Context, rawURL string) bool {
	u, err := url.Parse(rawURL)
	if err != nil || u.Hostname() == "" {
		return false
	}
	host := strings.ToLower(u.Hostname())
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return privateAddr(ip)
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		return false
	}
	for _, a := range addrs {
		if !privateAddr(a) {
			return false
		}
	}
	return true
}

func privateAddr(ip netip.Addr) bool {
	ip = ip.Unmap()
	return ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast()
}
