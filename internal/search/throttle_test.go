package search

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
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
