package search

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// slowSearXNG answers every query after 100ms with one result named after
// the query, and with 500 for queries containing "fail".
func slowSearXNG(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(100 * time.Millisecond):
		case <-r.Context().Done():
			return
		}
		q := r.URL.Query().Get("q")
		if strings.Contains(q, "fail") {
			http.Error(w, "engine crashed", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"query":"` + q + `","number_of_results":0,"results":[{"url":"https://example.com/` + q +
			`","title":"` + q + `","content":"c","engine":"google","engines":["google"],"score":1,"category":"general"}],` +
			`"answers":[],"corrections":[],"infoboxes":[],"suggestions":[],"unresponsive_engines":[]}`))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestFanOutRunsInParallel(t *testing.T) {
	srv := slowSearXNG(t)
	p := NewSearXNG(srv.URL, srv.Client(), fast())
	queries := []Query{{Text: "one"}, {Text: "two"}, {Text: "three"}}

	var started, done atomic.Int32
	start := time.Now()
	got := FanOut(t.Context(), p, queries, 3,
		func(i int, q Query) { started.Add(1) },
		func(i int, q Query, n int, err error) {
			if err != nil || n != 1 {
				t.Errorf("query %d (%s): n=%d err=%v", i, q.Text, n, err)
			}
			done.Add(1)
		})
	elapsed := time.Since(start)

	if elapsed >= 250*time.Millisecond {
		t.Errorf("3 queries of 100ms took %s; they did not run in parallel", elapsed)
	}
	if started.Load() != 3 || done.Load() != 3 {
		t.Errorf("hooks: started %d, done %d; want 3, 3", started.Load(), done.Load())
	}
	for i, q := range queries {
		if len(got[i]) != 1 || got[i][0].Title != q.Text {
			t.Errorf("results[%d] = %+v, want the result of %q", i, got[i], q.Text)
		}
	}
}

func TestFanOutFailureDoesNotStopOthers(t *testing.T) {
	srv := slowSearXNG(t)
	p := NewSearXNG(srv.URL, srv.Client(), fast())
	queries := []Query{{Text: "alpha"}, {Text: "please fail"}, {Text: "gamma"}}

	// The hooks use no locking: FanOut serialises them, and -race checks it.
	errs := make(map[int]error)
	counts := make(map[int]int)
	got := FanOut(t.Context(), p, queries, 0, nil, func(i int, q Query, n int, err error) {
		errs[i], counts[i] = err, n
	})

	if len(errs) != 3 {
		t.Fatalf("onDone called for %d queries, want 3", len(errs))
	}
	if errs[1] == nil || !strings.Contains(errs[1].Error(), "HTTP 500") {
		t.Errorf("failing query error = %v, want the HTTP 500", errs[1])
	}
	if got[1] != nil {
		t.Errorf("failing query results = %v, want nil", got[1])
	}
	for _, i := range []int{0, 2} {
		if errs[i] != nil || counts[i] != 1 || len(got[i]) != 1 {
			t.Errorf("query %d: err=%v n=%d results=%d; want it unaffected", i, errs[i], counts[i], len(got[i]))
		}
	}
}

// countingProvider records the peak number of concurrent searches.
type countingProvider struct {
	inFlight, peak atomic.Int32
}

func (c *countingProvider) Name() string { return "counting" }

func (c *countingProvider) Search(ctx context.Context, q Query) ([]Result, error) {
	n := c.inFlight.Add(1)
	defer c.inFlight.Add(-1)
	for {
		p := c.peak.Load()
		if n <= p || c.peak.CompareAndSwap(p, n) {
			break
		}
	}
	select {
	case <-time.After(20 * time.Millisecond):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return []Result{{URL: "https://example.com/" + q.Text}}, nil
}

func TestFanOutRespectsLimit(t *testing.T) {
	p := &countingProvider{}
	queries := make([]Query, 8)
	for i := range queries {
		queries[i] = Query{Text: string(rune('a' + i))}
	}
	got := FanOut(t.Context(), p, queries, 2, nil, nil)
	if peak := p.peak.Load(); peak != 2 {
		t.Errorf("peak concurrency = %d, want 2", peak)
	}
	for i := range got {
		if len(got[i]) != 1 {
			t.Errorf("results[%d] = %v", i, got[i])
		}
	}
}

func TestFanOutCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var started atomic.Int32
	var failed int
	got := FanOut(ctx, &countingProvider{}, []Query{{Text: "a"}, {Text: "b"}}, 1,
		func(int, Query) { started.Add(1) },
		func(i int, q Query, n int, err error) {
			if errors.Is(err, context.Canceled) {
				failed++
			}
		})
	if started.Load() != 0 || failed != 2 || len(got) != 2 || got[0] != nil || got[1] != nil {
		t.Errorf("started %d, failed %d, results %v; want 0, 2, [nil nil]", started.Load(), failed, got)
	}
	if len(FanOut(t.Context(), &countingProvider{}, nil, 3, nil, nil)) != 0 {
		t.Error("FanOut of no queries returned results")
	}
}
