package server_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/app"
	"github.com/sova-ai/sova/internal/config"
	"github.com/sova-ai/sova/internal/server"
	"github.com/sova-ai/sova/internal/sovatest"
	"github.com/sova-ai/sova/internal/store/storetest"
)

// BenchmarkServerLoad measures Sova at load from outside, over real HTTP
// with the real store: N distinct `search` questions at once (N from
// SOVA_BENCH_RUNS, a comma-separated list, default 200), each reading
// pages no other run reads, against a model that answers after 500 ms, a
// search engine after 100 ms and pages after 50 ms. While the N runs are
// in flight, probe requests (new questions, one every 20 ms) time the
// first byte of their stream. It reports p50 and p99 of the N runs over a
// lone run, the process's CPU per run (the in-process fakes included),
// first-byte p50/p99 of the probes and the runs that failed. On
// PostgreSQL it runs when SOVA_TEST_DATABASE_URL is set.
//
//	SOVA_BENCH_RUNS=200,500 go test -run '^$' -bench ServerLoad -benchtime 1x -timeout 30m ./internal/server/
func BenchmarkServerLoad(b *testing.B) {
	counts := []int{200}
	if v := os.Getenv("SOVA_BENCH_RUNS"); v != "" {
		counts = nil
		for f := range strings.SplitSeq(v, ",") {
			if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && n > 0 {
				counts = append(counts, n)
			}
		}
	}
	for _, engine := range []string{"sqlite", "postgres"} {
		for _, n := range counts {
			b.Run(fmt.Sprintf("%s/runs=%d", engine, n), func(b *testing.B) { benchServerLoad(b, engine, n) })
		}
	}
}

func benchServerLoad(b *testing.B, engine string, runs int) {
	extra := map[string]string{}
	if engine == "postgres" {
		dsn := storetest.PostgresDSN(b)
		// The default pool (16), not the tests' small one.
		u, err := url.Parse(dsn)
		if err != nil {
			b.Fatal(err)
		}
		q := u.Query()
		q.Del("pool_max_conns")
		u.RawQuery = q.Encode()
		extra["SOVA_DATABASE_URL"] = u.String()
	}
	if v := os.Getenv("SOVA_BENCH_MAX_RUNNING"); v != "" {
		extra["SOVA_MAX_RUNNING"] = v
	}
	e := newLoadEnv(b, extra)
	// Hundreds of streams at once: the default transport keeps only 2
	// idle connections per host, so it would close and reopen them.
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1000}}
	probe := func(i int) (time.Duration, *http.Response, error) {
		body := fmt.Sprintf(`{"group":"search","messages":[{"role":"user","content":"How did presidents describe the economy in the 1930s, case %d?"}]}`, i)
		start := time.Now()
		resp, err := client.Post(e.srv.URL+"/api/search", "application/json", strings.NewReader(body))
		if err != nil {
			return 0, nil, err
		}
		one := make([]byte, 1)
		if _, err := io.ReadFull(resp.Body, one); err != nil {
			resp.Body.Close()
			return 0, nil, err
		}
		return time.Since(start), resp, nil
	}
	// finish reads a stream to its end and says whether the run answered.
	finish := func(resp *http.Response) error {
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			msg, _ := io.ReadAll(resp.Body)
			return fmt.Errorf("HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(msg))
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var failed string
		finished := false
		for sc.Scan() {
			line := sc.Text()
			if strings.Contains(line, `"type":"error"`) {
				failed = line
			}
			if strings.Contains(line, `"type":"finish"`) {
				finished = true
			}
		}
		if failed != "" {
			return fmt.Errorf("stream error: %s", failed)
		}
		if !finished {
			return fmt.Errorf("stream ended without finish: %v", sc.Err())
		}
		return nil
	}
	run := func(i int) (time.Duration, error) {
		start := time.Now()
		_, resp, err := probe(i)
		if err != nil {
			return 0, err
		}
		err = finish(resp)
		return time.Since(start), err
	}
	var lone []float64
	for i := range 3 {
		d, err := run(-1 - i)
		if err != nil {
			b.Fatal(err)
		}
		lone = append(lone, d.Seconds())
	}
	slices.Sort(lone)
	alone := lone[1]
	var p50, p99, cpu, fb50, fb99, failed []float64
	round := 0
	b.ResetTimer()
	for b.Loop() {
		round++
		walls := make([]time.Duration, runs)
		var errs atomic.Int64
		var firstErr sync.Once
		var started sync.WaitGroup
		started.Add(runs)
		cpu0 := sovatest.CPUTime()
		var wg sync.WaitGroup
		for i := range runs {
			wg.Go(func() {
				begin := time.Now()
				_, resp, err := probe(round*100000 + i)
				started.Done()
				if err == nil {
					err = finish(resp)
				}
				walls[i] = time.Since(begin)
				if err != nil {
					errs.Add(1)
					firstErr.Do(func() { b.Logf("run %d: %v", i, err) })
				}
			})
		}
		// Probes while all N are in flight: each a new question whose
		// first byte is timed, then read to its end.
		started.Wait()
		const probes = 50
		firsts := make([]time.Duration, probes)
		var pw sync.WaitGroup
		for i := range probes {
			time.Sleep(20 * time.Millisecond)
			pw.Go(func() {
				d, resp, err := probe(round*100000 + 90000 + i)
				if err == nil {
					err = finish(resp)
				}
				firsts[i] = d
				if err != nil {
					errs.Add(1)
					firstErr.Do(func() { b.Logf("probe %d: %v", i, err) })
				}
			})
		}
		wg.Wait()
		pw.Wait()
		cpu = append(cpu, float64(sovatest.CPUTime()-cpu0)/float64(runs+probes)/1e6)
		slices.Sort(walls)
		slices.Sort(firsts)
		p50 = append(p50, walls[runs/2].Seconds())
		p99 = append(p99, walls[runs*99/100].Seconds())
		fb50 = append(fb50, float64(firsts[probes/2].Microseconds())/1000)
		fb99 = append(fb99, float64(firsts[probes*99/100].Microseconds())/1000)
		failed = append(failed, float64(errs.Load()))
	}
	b.ReportMetric(alone, "lone-s")
	b.ReportMetric(slices.Max(p50)/alone, "p50/lone")
	b.ReportMetric(slices.Max(p99)/alone, "p99/lone")
	b.ReportMetric(slices.Max(cpu), "cpu-ms/run")
	b.ReportMetric(slices.Max(fb50), "first-byte-p50-ms")
	b.ReportMetric(slices.Max(fb99), "first-byte-p99-ms")
	b.ReportMetric(slices.Max(failed), "errors")
}

// newLoadEnv is newEnvTB with 600 distinct real-size pages, the SearXNG
// fake answering each query with 8 of them, and the latencies of the
// load benchmark.
func newLoadEnv(t testing.TB, extra map[string]string) *env {
	t.Helper()
	real, from := sovatest.RealArticles(t, 6)
	many := make([]sovatest.Article, 600)
	for i := range many {
		a := real[i%len(real)]
		a.Slug = fmt.Sprintf("%s-%d", a.Slug, i)
		a.Title = fmt.Sprintf("%s, part %d", a.Title, i)
		many[i] = a
	}
	t.Logf("pages: %s", from)
	e := &env{model: sovatest.NewModel(t)}
	e.model.Latency = 500 * time.Millisecond
	e.site = sovatest.NewSite(t, many)
	e.site.SetDelay(50 * time.Millisecond)
	e.sx = sovatest.NewSearXNG(t, e.site, many)
	e.sx.Window = 8
	e.sx.SetDelay(100 * time.Millisecond)
	vars := sovatest.Env(e.model, e.sx, t.TempDir())
	for k, v := range extra {
		vars[k] = v
	}
	cfg, err := config.FromEnv(vars)
	if err != nil {
		t.Fatal(err)
	}
	// Warnings and errors, the first few shown at the end.
	logs := &syncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	a, err := app.New(context.Background(), cfg, logger)
	if err != nil {
		t.Fatal(err)
	}
	e.app, e.user = a, userOf(t, a)
	if a.Images != nil {
		a.Images.Client = sovatest.Offline(a.Images.Client)
	}
	e.srv = httptest.NewServer(server.New(server.Options{Service: a.Service, Store: a.Store, Auth: testAuth(a), MaxBodyBytes: cfg.MaxRequestBodyBytes, Version: "test", Images: a.Images, Logger: logger}))
	t.Cleanup(func() {
		e.srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = a.Close(ctx)
		if out := logs.String(); out != "" {
			t.Logf("%d lines logged; the first:\n%.3000s", strings.Count(out, "\n"), out)
		}
	})
	return e
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
