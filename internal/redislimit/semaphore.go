// Package redislimit keeps limits that every Sova node sharing one Redis
// holds together: counted semaphores whose places are leases that expire
// unless their holder renews them (a node that dies frees its places
// within one lease), and rates (GCRA, github.com/go-redis/redis_rate).
// Every expiry is measured with the Redis server's clock, so the nodes'
// clocks need not agree.
package redislimit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultLease is how long a place stays taken without a renewal: how
// long the places of a node that died stay taken at most. Holders renew
// every third of it.
const DefaultLease = 15 * time.Second

// Semaphore gives out at most n places per key across every node that
// uses the same Redis. A key's places are the members of one sorted set,
// each scored with the time its lease ends.
type Semaphore struct {
	client redis.UniversalClient
	prefix string
	lease  time.Duration
	log    *slog.Logger
}

// Options tune a Semaphore or a Rate.
type Options struct {
	// Prefix starts every Redis key; "" is "sova:".
	Prefix string
	// Lease is how long a place is kept without renewal; 0 is DefaultLease.
	Lease time.Duration
	// Logger reports renewals that fail; nil discards.
	Logger *slog.Logger
}

func (o Options) prefix() string {
	if o.Prefix == "" {
		return "sova:"
	}
	return o.Prefix
}

// NewSemaphore returns a semaphore on c.
func NewSemaphore(c redis.UniversalClient, o Options) *Semaphore {
	s := &Semaphore{client: c, prefix: o.prefix() + "sem:", lease: o.Lease, log: o.Logger}
	if s.lease <= 0 {
		s.lease = DefaultLease
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	return s
}

// nowMS is the Redis server's clock in milliseconds. Scripts that read
// TIME and then write ask for effects replication (the default from Redis
// 5; older servers need the call).
const nowMS = `
redis.replicate_commands()
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`

// acquireScript takes a place for ARGV[1] among at most ARGV[2], leased
// for ARGV[3] ms, after dropping the leases that ended. A token that holds
// a place already (a retried call) keeps it. The key itself expires with
// the longest lease, so an abandoned semaphore leaves nothing behind.
var acquireScript = redis.NewScript(nowMS + `
local lease = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then
  return 0
end
redis.call('ZADD', KEYS[1], now + lease, ARGV[1])
if redis.call('PTTL', KEYS[1]) < lease then
  redis.call('PEXPIRE', KEYS[1], lease)
end
return 1
`)

// renewScript extends ARGV[1]'s lease to ARGV[2] ms from now, unless it
// has ended (then the place may be another's already: 0).
var renewScript = redis.NewScript(nowMS + `
local lease = tonumber(ARGV[2])
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score or tonumber(score) <= now then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return 0
end
redis.call('ZADD', KEYS[1], now + lease, ARGV[1])
if redis.call('PTTL', KEYS[1]) < lease then
  redis.call('PEXPIRE', KEYS[1], lease)
end
return 1
`)

// heldScript counts the leases that have not ended.
var heldScript = redis.NewScript(nowMS + `
return redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf')
`)

// Lease is one place taken. Its holder renews it in the background until
// Release.
type Lease struct {
	s          *Semaphore
	key, token string
	stop       context.CancelFunc
	done       chan struct{}
	once       sync.Once
}

// TryAcquire takes one of key's n places at once; nil when all are taken.
func (s *Semaphore) TryAcquire(ctx context.Context, key string, n int) (*Lease, error) {
	var b [12]byte
	_, _ = rand.Read(b[:])
	token := hex.EncodeToString(b[:])
	ok, err := acquireScript.Run(ctx, s.client, []string{s.prefix + key}, token, n, s.lease.Milliseconds()).Int()
	if err != nil {
		return nil, fmt.Errorf("redis: taking a place of %s: %w", key, err)
	}
	if ok != 1 {
		return nil, nil
	}
	// The renewals outlive the request that took the place: the place is
	// the holder's until Release.
	rctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	l := &Lease{s: s, key: key, token: token, stop: stop, done: make(chan struct{})}
	go l.renew(rctx)
	return l, nil
}

// Poll bounds the pause between two tries of Acquire: waiters are not
// told of a free place, they look again.
const (
	minPoll = 5 * time.Millisecond
	maxPoll = 100 * time.Millisecond
)

// Acquire waits for one of key's n places. It fails when ctx ends first or
// Redis fails.
func (s *Semaphore) Acquire(ctx context.Context, key string, n int) (*Lease, error) {
	pause := minPoll
	for {
		l, err := s.TryAcquire(ctx, key, n)
		if err != nil || l != nil {
			return l, err
		}
		// Jitter keeps the waiters of several nodes from trying in step.
		t := time.NewTimer(pause/2 + mrand.N(pause))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, context.Cause(ctx)
		case <-t.C:
		}
		pause = min(pause*2, maxPoll)
	}
}

// Held returns how many of key's places are taken now.
func (s *Semaphore) Held(ctx context.Context, key string) (int, error) {
	n, err := heldScript.Run(ctx, s.client, []string{s.prefix + key}).Int()
	if err != nil {
		return 0, fmt.Errorf("redis: counting the places of %s: %w", key, err)
	}
	return n, nil
}

// renew extends the lease every third of its length until Release. A
// lease found ended (Redis unreachable for longer than a lease) is given
// up: the place may be another's by then.
func (l *Lease) renew(ctx context.Context) {
	defer close(l.done)
	t := time.NewTicker(l.s.lease / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		rctx, cancel := context.WithTimeout(ctx, l.s.lease/3)
		ok, err := renewScript.Run(rctx, l.s.client, []string{l.s.prefix + l.key}, l.token, l.s.lease.Milliseconds()).Int()
		cancel()
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			l.s.log.Warn("renewing a shared limit's place failed; retrying", "key", l.key, "err", err)
		case ok != 1:
			l.s.log.Warn("a shared limit's place expired before it was renewed; it no longer counts", "key", l.key)
			return
		}
	}
}

// Release gives the place back and stops renewing it. It is safe to call
// more than once; it waits up to 5 s for Redis (after that the place
// frees itself when its lease ends).
func (l *Lease) Release() {
	l.once.Do(func() {
		l.stop()
		<-l.done
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := l.s.client.ZRem(ctx, l.s.prefix+l.key, l.token).Err(); err != nil && !errors.Is(err, redis.Nil) {
			l.s.log.Warn("giving back a shared limit's place failed; it frees itself when its lease ends", "key", l.key, "err", err)
		}
	})
}
