// Package limits keeps the daily limits of seed 000 §6.2: messages a day
// per role (anonymous visitors counted per address), a separate daily
// counter for the long modes (extreme, deep_research), and a cap on one
// user's long runs going at once. Counters live behind one small
// interface, Counter: in the store (StoreCounter) or in Redis
// (RedisCounter) when SOVA_REDIS_URL is set. Both refuse an addition that
// would pass the limit in one atomic step, so concurrent requests cannot
// both take the last unit. The long runs going are counted by Places: in
// the process (LocalPlaces), or across nodes through Redis.
package limits

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Key names one counter: whose (a user id; anonymous visitors' ids stand
// for their address), what ("messages", "extreme") and when (a UTC day,
// YYYY-MM-DD).
type Key struct {
	Subject, Counter, Period string
}

// Counter counts units per key.
type Counter interface {
	// Add adds n to the key's count unless that would take it over limit
	// (limit < 0: no limit), atomically. It returns the count after the
	// call and whether n was added. ttl is how long the count must be kept
	// at least (a Redis key expires then; the store keeps it).
	Add(ctx context.Context, k Key, n, limit int64, ttl time.Duration) (int64, bool, error)
	// Get returns the key's count (0 when there is none).
	Get(ctx context.Context, k Key) (int64, error)
}

// UsageStore is the part of the store StoreCounter uses (sova.AccountStore).
type UsageStore interface {
	AddUsage(ctx context.Context, subject, counter, period string, n, limit int64) (int64, bool, error)
	Usage(ctx context.Context, subject, counter, period string) (int64, error)
}

// StoreCounter keeps counters in the store's usage_counters table.
type StoreCounter struct{ Store UsageStore }

// Add implements Counter; the store's statement checks and adds at once.
func (c StoreCounter) Add(ctx context.Context, k Key, n, limit int64, _ time.Duration) (int64, bool, error) {
	return c.Store.AddUsage(ctx, k.Subject, k.Counter, k.Period, n, limit)
}

// Get implements Counter.
func (c StoreCounter) Get(ctx context.Context, k Key) (int64, error) {
	return c.Store.Usage(ctx, k.Subject, k.Counter, k.Period)
}

// addScript adds ARGV[1] to KEYS[1] unless that passes ARGV[2] (a limit
// below zero is none), and sets the key to expire in ARGV[3] seconds when
// it has no expiry yet. Redis runs a script alone, so the check and the
// addition cannot interleave with another request's.
var addScript = redis.NewScript(`
local c = tonumber(redis.call('GET', KEYS[1]) or '0')
local n = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
if limit >= 0 and c + n > limit then
  return {c, 0}
end
c = redis.call('INCRBY', KEYS[1], n)
local ttl = tonumber(ARGV[3])
if ttl > 0 and redis.call('TTL', KEYS[1]) == -1 then
  redis.call('EXPIRE', KEYS[1], ttl)
end
return {c, 1}
`)

// RedisCounter keeps counters in Redis, one key per counter
// (Prefix + subject:counter:period) that expires after its period.
type RedisCounter struct {
	Client redis.UniversalClient
	// Prefix starts every key; "" is "sova:usage:".
	Prefix string
}

// NewRedis connects to a redis:// or rediss:// URL and checks that the
// server answers.
func NewRedis(ctx context.Context, rawURL string) (*RedisCounter, error) {
	opt, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, fmt.Errorf("SOVA_REDIS_URL: %w", err)
	}
	c := redis.NewClient(opt)
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := c.Ping(pctx).Err(); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("SOVA_REDIS_URL: the Redis server does not answer: %w", err)
	}
	return &RedisCounter{Client: c}, nil
}

// Close closes the connection.
func (c *RedisCounter) Close() error { return c.Client.Close() }

func (c *RedisCounter) key(k Key) string {
	p := c.Prefix
	if p == "" {
		p = "sova:usage:"
	}
	return p + k.Subject + ":" + k.Counter + ":" + k.Period
}

// Add implements Counter.
func (c *RedisCounter) Add(ctx context.Context, k Key, n, limit int64, ttl time.Duration) (int64, bool, error) {
	secs := int64(ttl / time.Second)
	if ttl > 0 && secs == 0 {
		secs = 1
	}
	res, err := addScript.Run(ctx, c.Client, []string{c.key(k)}, n, limit, secs).Int64Slice()
	if err != nil {
		return 0, false, fmt.Errorf("redis: counting %s: %w", k.Counter, err)
	}
	if len(res) != 2 {
		return 0, false, fmt.Errorf("redis: counting %s: unexpected answer %v", k.Counter, res)
	}
	return res[0], res[1] == 1, nil
}

// Get implements Counter.
func (c *RedisCounter) Get(ctx context.Context, k Key) (int64, error) {
	n, err := c.Client.Get(ctx, c.key(k)).Int64()
	if err == redis.Nil {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("redis: reading %s: %w", k.Counter, err)
	}
	return n, nil
}
