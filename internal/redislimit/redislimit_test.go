package redislimit_test

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

	"github.com/redis/go-redis/v9"

	"github.com/sova-ai/sova/internal/redislimit"
)

// node is one Sova node's connection to the shared Redis.
type node struct {
	client  *redis.Client
	cluster *redislimit.Cluster
}

// shared is one Redis under a key prefix of the test's own.
type shared struct {
	t      *testing.T
	opt    *redis.Options
	prefix string
}

// openShared connects to SOVA_TEST_REDIS_URL; it skips the test without
// it, and removes the test's keys at its end.
func openShared(t *testing.T) *shared {
	t.Helper()
	url := os.Getenv("SOVA_TEST_REDIS_URL")
	if url == "" {
		t.Skip("Redis tests skipped: set SOVA_TEST_REDIS_URL (e.g. redis://127.0.0.1:6379/0)")
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	s := &shared{t: t, opt: opt, prefix: "sova-test:" + hex.EncodeToString(b[:]) + ":"}
	t.Cleanup(func() {
		c := redis.NewClient(opt)
		defer c.Close()
		for _, pattern := range []string{s.prefix + "*", "rate:" + s.prefix + "*"} {
			if keys, _ := c.Keys(context.Background(), pattern).Result(); len(keys) > 0 {
				_ = c.Del(context.Background(), keys...).Err()
			}
		}
	})
	return s
}

// node connects one more node, with leases of lease (0: the default).
func (s *shared) node(lease time.Duration) node {
	c := redis.NewClient(s.opt)
	s.t.Cleanup(func() { _ = c.Close() })
	return node{client: c, cluster: redislimit.New(c, redislimit.Options{Prefix: s.prefix, Lease: lease})}
}

func nodes(t *testing.T, n int, lease time.Duration) []node {
	s := openShared(t)
	out := make([]node, n)
	for i := range out {
		out[i] = s.node(lease)
	}
	return out
}

// TestSemaphoreAcrossNodes: three nodes hammering one key with two places
// never hold more than two at once, and each gets its turn.
func TestSemaphoreAcrossNodes(t *testing.T) {
	ns := nodes(t, 3, time.Second)
	var holding, peak, done atomic.Int64
	var wg sync.WaitGroup
	for i := range 30 {
		sem := ns[i%3].cluster.Semaphore()
		wg.Go(func() {
			l, err := sem.Acquire(t.Context(), "k", 2)
			if err != nil {
				t.Error(err)
				return
			}
			n := holding.Add(1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			time.Sleep(5 * time.Millisecond)
			holding.Add(-1)
			l.Release()
			done.Add(1)
		})
	}
	wg.Wait()
	if done.Load() != 30 || peak.Load() != 2 {
		t.Errorf("%d of 30 done, at most %d at once; want all, never more than 2", done.Load(), peak.Load())
	}
	if n, err := ns[0].cluster.Held(t.Context(), "k"); err != nil || n != 0 {
		t.Errorf("Held after all released = %d, %v", n, err)
	}
}

func TestSemaphoreLeases(t *testing.T) {
	const lease = 300 * time.Millisecond
	net := openShared(t)
	ctx := t.Context()
	a, b := net.node(lease).cluster, net.node(lease).cluster

	// A live holder keeps its place past its first lease: it renews.
	release, ok, err := a.TryHold(ctx, "renewed", 1)
	if err != nil || !ok {
		t.Fatalf("TryHold = %v, %v", ok, err)
	}
	time.Sleep(3 * lease)
	if _, ok, err := b.TryHold(ctx, "renewed", 1); err != nil || ok {
		t.Fatalf("another node took a place its live holder renews (ok %v, err %v)", ok, err)
	}
	release()
	release() // a second release changes nothing
	if r, ok, err := b.TryHold(ctx, "renewed", 1); err != nil || !ok {
		t.Fatalf("after the release: %v, %v", ok, err)
	} else {
		r()
	}

	// A node that dies (here: its connection closes, so it renews
	// nothing) frees its places when their leases end, while a live node
	// keeps its own (and so the key) alive.
	live, _, err := a.TryHold(ctx, "dead", 3)
	if err != nil {
		t.Fatal(err)
	}
	defer live()
	dead := net.node(lease)
	r1, ok1, err1 := dead.cluster.TryHold(ctx, "dead", 3)
	r2, ok2, err2 := dead.cluster.TryHold(ctx, "dead", 3)
	if !ok1 || !ok2 || err1 != nil || err2 != nil {
		t.Fatalf("the doomed node's places: %v %v %v %v", ok1, ok2, err1, err2)
	}
	_ = dead.client.Close()
	t.Cleanup(func() { r1(); r2() })
	if n, err := a.Held(ctx, "dead"); err != nil || n != 3 {
		t.Fatalf("Held = %d, %v; want the dead node's 2 and the live one's", n, err)
	}
	start := time.Now()
	wctx, cancel := context.WithTimeout(ctx, 10*lease)
	defer cancel()
	var got []func()
	for range 2 {
		free, err := b.Acquire(wctx, "dead", 3)
		if err != nil {
			t.Fatalf("the dead node's places never freed: %v", err)
		}
		got = append(got, free)
	}
	if waited := time.Since(start); waited < lease/2 {
		t.Errorf("got the places after %s, before the dead node's lease (%s) ended", waited, lease)
	}
	if n, err := a.Held(ctx, "dead"); err != nil || n != 3 {
		t.Errorf("Held = %d, %v; want the live node's and the 2 taken over", n, err)
	}
	for _, f := range got {
		f()
	}

	// Acquire ends with its context while every place is taken.
	hold, _, _ := a.TryHold(ctx, "full", 1)
	defer hold()
	cctx, cancel2 := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel2()
	if _, err := b.Acquire(cctx, "full", 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Acquire on a full key = %v, want the deadline", err)
	}
}

// TestRateAcrossNodes: three nodes sharing 20 events a second with a
// burst of 2 get the burst at once, then one event per 50 ms between
// them all.
func TestRateAcrossNodes(t *testing.T) {
	ns := nodes(t, 3, 0)
	const events = 12
	start := time.Now()
	var wg sync.WaitGroup
	for i := range events {
		c := ns[i%3].cluster
		wg.Go(func() {
			if err := c.Wait(t.Context(), "r", 20, 2); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	// 2 at once, then 10 more at 50 ms apart: 500 ms at least.
	if d := time.Since(start); d < 450*time.Millisecond {
		t.Errorf("%d events at 20/s (burst 2) on three nodes took %s, want >= 500ms", events, d)
	}
	// A wait that would outlast the deadline fails at once.
	if err := ns[0].cluster.Wait(t.Context(), "slow", 0.5, 1); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if err := ns[1].cluster.Wait(ctx, "slow", 0.5, 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Wait past the deadline = %v", err)
	}
	if ctx.Err() != nil {
		t.Error("Wait slept until the deadline instead of failing at once")
	}
}

// BenchmarkQuerySlot is what the shared limits add to one search query
// at least: a slot taken and given back, and the rate checked.
func BenchmarkQuerySlot(b *testing.B) {
	url := os.Getenv("SOVA_TEST_REDIS_URL")
	if url == "" {
		b.Skip("set SOVA_TEST_REDIS_URL")
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		b.Fatal(err)
	}
	c := redis.NewClient(opt)
	defer c.Close()
	var r [6]byte
	_, _ = rand.Read(r[:])
	prefix := "sova-bench:" + hex.EncodeToString(r[:]) + ":"
	cl := redislimit.New(c, redislimit.Options{Prefix: prefix})
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		free, err := cl.Acquire(ctx, "k", 1000)
		if err != nil {
			b.Fatal(err)
		}
		if err := cl.Wait(ctx, "k", 1e6, 1000); err != nil {
			b.Fatal(err)
		}
		free()
	}
	b.StopTimer()
	_ = c.Del(ctx, prefix+"sem:k", "rate:"+prefix+"rate:k").Err()
}
