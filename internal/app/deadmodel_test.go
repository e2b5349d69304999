package app

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/egress"
	"github.com/sova-ai/sova/internal/event/eventtest"
	"github.com/sova-ai/sova/internal/llm/llmtest"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/sovatest"
)

// A model endpoint that answers only 5xx fails a search run within
// seconds, with an error that says the model endpoint is at fault and
// leaves its address to the log: the endpoint's breaker stops the run's
// many model calls after one call has used up its retries.
func TestSearchRunFailsFastOnDeadModel(t *testing.T) {
	arts := sovatest.DefaultArticles()
	site := sovatest.NewSite(t, arts)
	sx := sovatest.NewSearXNG(t, site, arts)
	model := sovatest.NewModel(t)
	model.Handle(func(*llmtest.Request) llmtest.Reply { return llmtest.Fail(503, "upstream overloaded") })
	vars := sovatest.Env(model, sx, t.TempDir())
	delete(vars, "SOVA_LLM_MAX_RETRIES") // the default retries
	a, err := New(t.Context(), mustConfig(t, vars), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close(context.Background()) })
	m, ok := a.Service.Modes().Get("search")
	if !ok {
		t.Fatal("search is not registered")
	}
	var rec eventtest.Recorder
	start := time.Now()
	_, err = m.Run(t.Context(), mode.Input{Question: "How did presidents describe the economy in the 1930s?", Now: time.Now()}, &rec)
	elapsed := time.Since(start)
	if err == nil {
		t.Fatal("the run succeeded against a model endpoint that answers only 503")
	}
	if elapsed > 5*time.Second {
		t.Errorf("the run failed after %s, want under 5s", elapsed)
	}
	if !errors.Is(err, egress.ErrOpen) || !strings.Contains(err.Error(), "model endpoint") {
		t.Errorf("error %q does not say the model endpoint's calls are paused", err)
	}
	u, _ := url.Parse(model.URL())
	if strings.Contains(err.Error(), u.Host) {
		t.Errorf("error %q names the endpoint's address", err)
	}
	if n := model.Count(); n > 8 {
		t.Errorf("%d model requests, want the first call's attempts and few more", n)
	}
	t.Logf("failed after %s and %d model requests: %v", elapsed, model.Count(), err)
}
