package server_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/app"
	"github.com/sova-ai/sova/internal/config"
	"github.com/sova-ai/sova/internal/server"
	"github.com/sova-ai/sova/internal/sovatest"
)

// metricsServer is a server over fakes with /metrics on, behind token
// when it is set.
func metricsServer(t *testing.T, token string) (*httptest.Server, *app.App) {
	t.Helper()
	arts := sovatest.DefaultArticles()
	model := sovatest.NewModel(t)
	site := sovatest.NewSite(t, arts)
	sx := sovatest.NewSearXNG(t, site, arts)
	cfg, err := config.FromEnv(sovatest.Env(model, sx, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.New(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(server.New(server.Options{Service: a.Service, Store: a.Store, Auth: testAuth(a),
		Version: "test", Metrics: a.Metrics.Handler(), MetricsToken: token}))
	t.Cleanup(func() {
		srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = a.Close(ctx)
	})
	return srv, a
}

func scrape(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url+"/metrics", nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestMetricsAfterSearchRun(t *testing.T) {
	srv, a := metricsServer(t, "")
	resp, err := http.Post(srv.URL+"/api/search", "application/json", strings.NewReader(
		`{"id":"chat-m","group":"search","messages":[{"id":"m1","role":"user","parts":[{"type":"text","text":"How did presidents describe the economy in the 1930s?"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("search: status %d", resp.StatusCode)
	}
	model := a.Config.Model
	want := []string{
		`sova_runs_started_total{kind="new",mode="search"} 1`,
		`sova_runs_finished_total{mode="search",outcome="completed"} 1`,
		`sova_runs_running{mode="search"} 0`,
		`sova_model_calls_total{model="` + model + `",outcome="ok"}`,
		`sova_model_call_duration_seconds_count{model="` + model + `"}`,
		`sova_model_tokens_total{kind="completion",model="` + model + `"}`,
		`sova_search_calls_total{outcome="ok",provider="searxng"}`,
		`sova_search_call_duration_seconds_bucket{provider="searxng",le="+Inf"}`,
		`sova_page_reads_total{outcome="ok"}`,
		`sova_run_events_waiting 0`,
		`go_goroutines`,
	}
	// The run's end is recorded just after its last event streams.
	deadline := time.Now().Add(5 * time.Second)
	for {
		code, body := scrape(t, srv.URL, "")
		if code != http.StatusOK {
			t.Fatalf("GET /metrics: status %d: %s", code, body)
		}
		var missing []string
		for _, w := range want {
			if !strings.Contains(body, w) {
				missing = append(missing, w)
			}
		}
		if len(missing) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("series missing from /metrics: %q\n%s", missing, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestMetricsToken(t *testing.T) {
	srv, _ := metricsServer(t, "s3cret")
	for _, tt := range []struct {
		name, token string
		want        int
	}{
		{"no token", "", http.StatusUnauthorized},
		{"wrong token", "other", http.StatusUnauthorized},
		{"the token", "s3cret", http.StatusOK},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, body := scrape(t, srv.URL, tt.token)
			if code != tt.want {
				t.Fatalf("status %d, want %d: %s", code, tt.want, body)
			}
			if code == http.StatusOK && !strings.Contains(body, "sova_run_events_waiting") {
				t.Errorf("no sova series: %s", body)
			}
		})
	}
}
