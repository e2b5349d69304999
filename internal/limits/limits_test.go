package limits_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/limits"
	"github.com/sova-ai/sova/internal/store"
	"github.com/sova-ai/sova/internal/store/storetest"
)

// RedisURLEnv names the Redis server the Redis tests run against.
const redisURLEnv = "SOVA_TEST_REDIS_URL"

// counters are the Counter implementations, each on a fresh database.
var counters = []struct {
	name string
	open func(t *testing.T) limits.Counter
}{
	{"sqlite", func(t *testing.T) limits.Counter { return limits.StoreCounter{Store: storetest.SQLite(t)} }},
	{"postgres", func(t *testing.T) limits.Counter { return limits.StoreCounter{Store: storetest.Postgres(t)} }},
	{"redis", openRedis},
}

func openRedis(t *testing.T) limits.Counter {
	t.Helper()
	url := os.Getenv(redisURLEnv)
	if url == "" {
		t.Skipf("Redis tests skipped: set %s (e.g. redis://127.0.0.1:6379/0)", redisURLEnv)
	}
	c, err := limits.NewRedis(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	c.Prefix = "sova-test:" + hex.EncodeToString(b[:]) + ":"
	t.Cleanup(func() {
		ctx := context.Background()
		keys, _ := c.Client.Keys(ctx, c.Prefix+"*").Result()
		if len(keys) > 0 {
			_ = c.Client.Del(ctx, keys...).Err()
		}
		_ = c.Close()
	})
	return c
}

func TestCounter(t *testing.T) {
	for _, c := range counters {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctr := c.open(t)
			ctx := t.Context()
			k := limits.Key{Subject: "ann", Counter: limits.Messages, Period: "2025-01-31"}
			if n, err := ctr.Get(ctx, k); err != nil || n != 0 {
				t.Fatalf("Get of a new key = %d, %v", n, err)
			}
			for i := int64(1); i <= 3; i++ {
				if n, ok, err := ctr.Add(ctx, k, 1, 3, time.Hour); err != nil || !ok || n != i {
					t.Fatalf("Add %d = %d, %v, %v", i, n, ok, err)
				}
			}
			if n, ok, err := ctr.Add(ctx, k, 1, 3, time.Hour); err != nil || ok || n != 3 {
				t.Fatalf("Add over the limit = %d, %v, %v; want 3, refused", n, ok, err)
			}
			if n, ok, err := ctr.Add(ctx, k, -1, limits.Unlimited, time.Hour); err != nil || !ok || n != 2 {
				t.Fatalf("Add -1 = %d, %v, %v", n, ok, err)
			}
			if n, ok, err := ctr.Add(ctx, k, 5, limits.Unlimited, time.Hour); err != nil || !ok || n != 7 {
				t.Fatalf("Add without a limit = %d, %v, %v", n, ok, err)
			}
			other := k
			other.Period = "2025-02-01"
			if n, _ := ctr.Get(ctx, other); n != 0 {
				t.Errorf("another day's count = %d", n)
			}
			other = k
			other.Subject = "bob"
			if n, ok, err := ctr.Add(ctx, other, 1, 0, time.Hour); err != nil || ok || n != 0 {
				t.Errorf("a limit of 0 = %d, %v, %v; want refused", n, ok, err)
			}
		})
	}
}

// TestCounterConcurrent: many requests at once take exactly the limit.
func TestCounterConcurrent(t *testing.T) {
	for _, c := range counters {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctr := c.open(t)
			k := limits.Key{Subject: "ann", Counter: limits.Messages, Period: "2025-01-31"}
			const limit, tries = 25, 80
			var admitted atomic.Int64
			var wg sync.WaitGroup
			for range tries {
				wg.Go(func() {
					_, ok, err := ctr.Add(t.Context(), k, 1, limit, time.Hour)
					if err != nil {
						t.Error(err)
					}
					if ok {
						admitted.Add(1)
					}
				})
			}
			wg.Wait()
			if got := admitted.Load(); got != limit {
				t.Errorf("%d of %d concurrent additions admitted, want exactly %d", got, tries, limit)
			}
			if n, err := ctr.Get(t.Context(), k); err != nil || n != limit {
				t.Errorf("count = %d, %v; want %d", n, err, limit)
			}
		})
	}
}

func TestRedisKeyExpires(t *testing.T) {
	c := openRedis(t).(*limits.RedisCounter)
	k := limits.Key{Subject: "ann", Counter: limits.Messages, Period: "2025-01-31"}
	if _, _, err := c.Add(t.Context(), k, 1, 10, 90*time.Second); err != nil {
		t.Fatal(err)
	}
	ttl, err := c.Client.TTL(t.Context(), c.Prefix+"ann:messages:2025-01-31").Result()
	if err != nil || ttl <= 0 || ttl > 90*time.Second {
		t.Errorf("TTL = %v, %v; want up to 90s", ttl, err)
	}
}

func newLimiter(t *testing.T, now time.Time) *limits.Limiter {
	return limits.New(limits.Config{
		Free:      limits.Quota{Messages: 3, Extreme: 1},
		Pro:       limits.Quota{Messages: limits.Unlimited, Extreme: limits.Unlimited},
		Anonymous: limits.Quota{Messages: 2, Extreme: 0},
		LongModes: []string{"extreme", "deep_research"}, Concurrent: 2,
		Now: func() time.Time { return now },
	}, limits.StoreCounter{Store: storetest.SQLite(t)})
}

func TestLimiter(t *testing.T) {
	now := time.Date(2025, 1, 31, 22, 0, 0, 0, time.UTC)
	l := newLimiter(t, now)
	ctx := t.Context()
	free := sova.User{ID: "f", Role: sova.RoleFree}
	admit := func(u sova.User, mode string) error {
		release, err := l.Admit(ctx, u, mode)
		if err == nil {
			release()
		}
		return err
	}
	// A free user: 1 long run, 3 messages in all.
	if err := admit(free, "deep_research"); err != nil {
		t.Fatal(err)
	}
	err := admit(free, "extreme")
	var ex *limits.Exceeded
	if !errors.As(err, &ex) || ex.Counter != limits.Extreme || !errors.Is(err, limits.ErrRateLimited) {
		t.Fatalf("second long run: %v, want the extreme limit", err)
	}
	if ex.RetryAfter != 2*time.Hour || !ex.Resets.Equal(time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("retry after %s, resets %s", ex.RetryAfter, ex.Resets)
	}
	// The refused long run did not use a message.
	for i := range 2 {
		if err := admit(free, "search"); err != nil {
			t.Fatalf("message %d: %v", i+2, err)
		}
	}
	if err := admit(free, "search"); !errors.As(err, &ex) || ex.Counter != limits.Messages || ex.Limit != 3 {
		t.Fatalf("fourth message: %v, want the message limit", err)
	}
	u, err := l.Usage(ctx, free)
	if err != nil || u.Messages.Used != 3 || u.Messages.Left != 0 || u.Extreme.Used != 1 || u.Extreme.Limit != 1 {
		t.Errorf("usage = %+v, %v", u, err)
	}
	// Pro and admin are not limited; anonymous visitors have their own.
	for range 10 {
		if err := admit(sova.User{ID: "p", Role: sova.RolePro}, "deep_research"); err != nil {
			t.Fatal(err)
		}
		if err := admit(sova.User{ID: "a", Role: sova.RoleAdmin}, "search"); err != nil {
			t.Fatal(err)
		}
	}
	if u, _ := l.Usage(ctx, sova.User{ID: "a", Role: sova.RoleAdmin}); u != nil {
		t.Errorf("admin usage = %+v, want none", u)
	}
	anon := sova.User{ID: "anon-1", Role: sova.RoleAnonymous}
	if err := admit(anon, "extreme"); !errors.As(err, &ex) || ex.Counter != limits.Extreme {
		t.Errorf("anonymous long run: %v", err)
	}
	// The next day starts again.
	l2 := limits.New(limits.Config{Free: limits.Quota{Messages: 3, Extreme: 1}, Now: func() time.Time { return now.Add(3 * time.Hour) }},
		limits.StoreCounter{Store: storetest.SQLite(t)})
	if err := admit2(l2, free); err != nil {
		t.Errorf("next day: %v", err)
	}
}

func admit2(l *limits.Limiter, u sova.User) error {
	_, err := l.Admit(context.Background(), u, "search")
	return err
}

func TestLimiterConcurrentLongRuns(t *testing.T) {
	l := newLimiter(t, time.Now())
	ctx := t.Context()
	pro := sova.User{ID: "p", Role: sova.RolePro}
	r1, err := l.Admit(ctx, pro, "deep_research")
	if err != nil {
		t.Fatal(err)
	}
	r2, err := l.Admit(ctx, pro, "extreme")
	if err != nil {
		t.Fatal(err)
	}
	var ex *limits.Exceeded
	if _, err := l.Admit(ctx, pro, "deep_research"); !errors.As(err, &ex) || ex.Counter != "concurrent" || ex.RetryAfter <= 0 {
		t.Fatalf("third long run at once: %v", err)
	}
	if _, err := l.Admit(ctx, pro, "search"); err != nil {
		t.Errorf("a short run is not capped: %v", err)
	}
	if _, err := l.Admit(ctx, sova.User{ID: "q", Role: sova.RolePro}, "deep_research"); err != nil {
		t.Errorf("another user's long run: %v", err)
	}
	r1()
	r1() // a second release changes nothing
	if _, err := l.Admit(ctx, pro, "deep_research"); err != nil {
		t.Errorf("after one ended: %v", err)
	}
	if _, err := l.Admit(ctx, pro, "deep_research"); err == nil {
		t.Error("a double release freed two places")
	}
	r2()
}

// TestLimiterConcurrentMessages: a free user's requests at once are
// admitted exactly up to the limit.
func TestLimiterConcurrentMessages(t *testing.T) {
	l := newLimiter(t, time.Now())
	var ok atomic.Int64
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if _, err := l.Admit(t.Context(), sova.User{ID: "f", Role: sova.RoleFree}, "search"); err == nil {
				ok.Add(1)
			} else if !errors.Is(err, limits.ErrRateLimited) {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if ok.Load() != 3 {
		t.Errorf("%d admitted, want 3", ok.Load())
	}
}

// The usage report shows the messages and long runs the limits counted,
// also when they count in Redis rather than in the store.
func TestReportReadsTheLimitsCounter(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	for _, c := range counters {
		t.Run(c.name, func(t *testing.T) {
			counter := c.open(t)
			st := storetest.SQLite(t)
			if sc, ok := counter.(limits.StoreCounter); ok {
				st = sc.Store.(*store.DB) // the limits count in the store the report reads
			}
			ctx := t.Context()
			// What a run records in the store, and what admitting it counted.
			if _, _, err := st.AddUsage(ctx, "ann", "runs", "2026-11-24", 3, -1); err != nil {
				t.Fatal(err)
			}
			if _, _, err := counter.Add(ctx, limits.Key{Subject: "ann", Counter: limits.Messages, Period: "2026-11-24"}, 3, -1, time.Hour); err != nil {
				t.Fatal(err)
			}
			if _, _, err := counter.Add(ctx, limits.Key{Subject: "ann", Counter: limits.Extreme, Period: "2026-11-24"}, 1, -1, time.Hour); err != nil {
				t.Fatal(err)
			}
			rows, err := limits.Report(ctx, st, "", 1, now, counter)
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != 1 || rows[0].Runs != 3 || rows[0].Messages != 3 || rows[0].Extreme != 1 {
				t.Errorf("report %+v", rows)
			}
		})
	}
}
