package metrics

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestNilRecordsNothing(t *testing.T) {
	var m *Metrics
	m.RunStarted("chat", false)
	m.RunFinished("chat", "completed")
	m.ModelCall("gpt", time.Second, 1, 2, false)
	m.SearchCall("searxng", time.Second, true)
	m.PageRead(time.Second, false)
	if err := m.Gauge("x", "x", func() float64 { return 1 }); err != nil {
		t.Fatal(err)
	}
}

func TestSeries(t *testing.T) {
	m := New()
	m.ModelCall("gpt", 1500*time.Millisecond, 10, 3, false)
	m.ModelCall("gpt", time.Second, 0, 0, true)
	m.SearchCall("brave", 200*time.Millisecond, true)
	m.RunStarted("search", true)
	m.ModelCall(`q"x\y`, time.Second, 0, 0, false) // a model name the exposition format must escape
	if err := m.Gauge("sova_test_depth", "depth", func() float64 { return 7 }); err != nil {
		t.Fatal(err)
	}
	if err := m.Gauge("sova_test_depth", "depth", func() float64 { return 7 }); err == nil {
		t.Error("a gauge registered twice must be an error")
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		`sova_model_calls_total{model="gpt",outcome="ok"} 1`,
		`sova_model_calls_total{model="gpt",outcome="error"} 1`,
		`sova_model_tokens_total{kind="prompt",model="gpt"} 10`,
		`sova_model_tokens_total{kind="completion",model="gpt"} 3`,
		`sova_model_call_duration_seconds_bucket{model="gpt",le="1"} 1`,
		`sova_model_call_duration_seconds_count{model="gpt"} 2`,
		`sova_search_calls_total{outcome="error",provider="brave"} 1`,
		`sova_runs_started_total{kind="continued",mode="search"} 1`,
		`sova_runs_running{mode="search"} 1`,
		`sova_test_depth 7`,
		"# TYPE sova_model_call_duration_seconds histogram",
		"# HELP sova_runs_running Runs executing on this node now, by mode.",
		"# TYPE sova_test_depth gauge",
		`sova_model_calls_total{model="q\"x\\y",outcome="ok"} 1`,
		"go_goroutines ",
		"process_resident_memory_bytes ",
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("missing %s", want)
		}
	}
}
