package search

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestThrottleQueuesInsteadOfFailing fires 20 queries at once at a SearXNG
// limited to 2 concurrent requests: all succeed, and the server never sees
// more than 2 at a time.
func TestThrottleQueuesInsteadOfFailing(t *testing.T) {
	var inFlight, peak, served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		if n > 2 {
			// What an upstream engine does to a burst: refuse it.
			http.Error(w, "Too Many Requests", http.StatusTooManyRequests)
			return
		}
		time.Sleep(15 * time.Millisecond)
		served.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"results": []map[string]any{
			{"url": "https://example.com/" + r.URL.Query().Get("q"), "title": "t", "content": "c"},
		}})
	}))
	t.Cleanup(srv.Close)

	p := Throttle(NewSearXNG(srv.URL, srv.Client(), WithRetryBackoff(time.Hour)), Limits{Concurrent: 2})
	var wg sync.WaitGroup
	errs := make([]error, 20)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := p.Search(context.Background(), Query{Text: "q" + string(rune('a'+i))})
			if err == nil && len(res) != 1 {
				err = errors.New("no result")
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("query %d failed: %v", i, err)
		}
	}
	if served.Load() != 20 || peak.Load() != 2 {
		t.Errorf("served %d, peak in flight %d; want 20 served, never more than 2 (and 2 used)", served.Load(), peak.Load())
	}
}

func TestThrottleRate(t *testing.T) {
	f := &gateProvider{}
	p := Throttle(f, Limits{PerSecond: 50, Burst: 1})
	start := time.Now()
	for range 6 {
		if _, err := p.Search(context.Background(), Query{Text: "q"}); err != nil {
			t.Fatal(err)
		}
	}
	// One at once, then one every 20ms: at least 100ms for six.
	if d := time.Since(start); d < 90*time.Millisecond {
		t.Errorf("6 queries at 50/s with burst 1 took %s", d)
	}
}

func TestThrottleWaitEndsWithContext(t *testing.T) {
	block := make(chan struct{})
	f := &gateProvider{block: block}
	p := Throttle(f, Limits{Concurrent: 1})
	go func() { _, _ = p.Search(context.Background(), Query{Text: "first"}) }()
	for f.calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := p.Search(ctx, Query{Text: "second"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want the context's deadline", err)
	}
	close(block)
	if f.calls.Load() != 1 {
		t.Errorf("the waiting query reached the provider")
	}
}

func TestThrottleWithoutLimitsIsTheProvider(t *testing.T) {
	f := &gateProvider{}
	if p := Throttle(f, Limits{}); p != Provider(f) {
		t.Errorf("Throttle with no limits wrapped the provider")
	}
	if p := Throttle(f, Limits{Concurrent: 1}); p.Name() != "gate" {
		t.Errorf("Name = %q", p.Name())
	}
}

func TestParseLimits(t *testing.T) {
	tests := []struct {
		in      string
		want    Limits
		wantErr bool
	}{
		{"2", Limits{Concurrent: 2}, false},
		{"2:1.5", Limits{Concurrent: 2, PerSecond: 1.5}, false},
		{" 4:2:8 ", Limits{Concurrent: 4, PerSecond: 2, Burst: 8}, false},
		{"0", Limits{}, false},
		{"", Limits{}, true},
		{"x", Limits{}, true},
		{"-1", Limits{}, true},
		{"2:fast", Limits{}, true},
		{"1:2:3:4", Limits{}, true},
	}
	for _, tt := range tests {
		got, err := ParseLimits(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseLimits(%q) = %+v, %v", tt.in, got, err)
		}
		if err == nil {
			if back, _ := ParseLimits(got.String()); back != got {
				t.Errorf("%+v does not round-trip through %q", got, got.String())
			}
		}
	}
}

type gateProvider struct {
	calls atomic.Int64
	block chan struct{}
}

func (c *gateProvider) Name() string { return "gate" }

func (c *gateProvider) Search(ctx context.Context, q Query) ([]Result, error) {
	c.calls.Add(1)
	if c.block != nil {
		<-c.block
	}
	return []Result{{URL: "https://example.com/" + q.Text}}, nil
}

func TestPrivateInstance(t *testing.T) {
	for _, tc := range []struct {
		url  string
		want bool
	}{
		{"http://127.0.0.1:8888", true},
		{"http://localhost:8080/", true},
		{"http://searx.localhost", true},
		{"http://[::1]:8888", true},
		{"http://10.0.0.5", true},
		{"http://192.168.1.20:8080", true},
		{"http://172.16.3.4", true},
		{"http://[fd00::1]", true},
		{"https://93.184.216.34", false},
		{"https://searx.example.invalid", false}, // does not resolve: public
		{"not a url", false},
	} {
		if got := PrivateInstance(context.Background(), tc.url); got != tc.want {
			t.Errorf("PrivateInstance(%q) = %v, want %v", tc.url, got, tc.want)
		}
	}
}

// coordinator is a Coordinator in memory; fail makes every call fail as
// an unreachable Redis does.
type coordinator struct {
	fail             bool
	acquired, waited atomic.Int64
	released         atomic.Int64
	lastKey          atomic.Value
	lastN, lastBurst atomic.Int64
	lastRate         atomic.Value
}

func (c *coordinator) Acquire(_ context.Context, key string, n int) (func(), error) {
	if c.fail {
		return nil, errors.New("redis: connection refused")
	}
	c.acquired.Add(1)
	c.lastKey.Store(key)
	c.lastN.Store(int64(n))
	return func() { c.released.Add(1) }, nil
}

func (c *coordinator) Wait(_ context.Context, key string, perSecond float64, burst int) error {
	if c.fail {
		return errors.New("redis: connection refused")
	}
	c.waited.Add(1)
	c.lastRate.Store(perSecond)
	c.lastBurst.Store(int64(burst))
	return nil
}

// TestThrottleShared: with a coordinator, every query takes its slot and
// its rate there (under the provider's key, with its limits) and gives the
// slot back; a coordinator that fails leaves the queries to this process's
// limits, and says so once.
func TestThrottleShared(t *testing.T) {
	for _, tc := range []struct {
		name string
		fail bool
	}{{"shared", false}, {"unreachable", true}} {
		t.Run(tc.name, func(t *testing.T) {
			c := &coordinator{fail: tc.fail}
			var logs strings.Builder
			f := &gateProvider{}
			p := ThrottleShared(f, Limits{Concurrent: 2, PerSecond: 1000}, c, slog.New(slog.NewTextHandler(&logs, nil)))
			if !p.(*Throttled).Shared() {
				t.Fatal("not shared")
			}
			var wg sync.WaitGroup
			for range 10 {
				wg.Go(func() {
					if _, err := p.Search(context.Background(), Query{Text: "q"}); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			if f.calls.Load() != 10 {
				t.Errorf("%d queries reached the provider, want 10", f.calls.Load())
			}
			warnings := strings.Count(logs.String(), "level=WARN")
			if tc.fail {
				if warnings != 1 || c.acquired.Load() != 0 {
					t.Errorf("%d warnings, %d shared slots; want one warning and none", warnings, c.acquired.Load())
				}
				return
			}
			if c.acquired.Load() != 10 || c.released.Load() != 10 || c.waited.Load() != 10 || warnings != 0 {
				t.Errorf("shared: %d slots taken, %d given back, %d rate waits, %d warnings; want 10, 10, 10, 0",
					c.acquired.Load(), c.released.Load(), c.waited.Load(), warnings)
			}
			if c.lastKey.Load() != "search:gate" || c.lastN.Load() != 2 || c.lastRate.Load() != 1000.0 || c.lastBurst.Load() != 2 {
				t.Errorf("asked for key %v, %d slots, rate %v, burst %d", c.lastKey.Load(), c.lastN.Load(), c.lastRate.Load(), c.lastBurst.Load())
			}
		})
	}
}
