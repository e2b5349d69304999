package search

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/event/eventtest"
	"github.com/sova-ai/sova/internal/mode"
)

// TestModelSetupErrorStopsTheRun: a key the model endpoint refuses stops
// the run at the first model call, with an error naming the endpoint and
// the setting, before any search; the search (down as well here) is not
// blamed.
func TestModelSetupErrorStopsTheRun(t *testing.T) {
	e := newSearchEnv(t)
	e.model.RequireKey("the-right-key")
	e.sx.Fail.Store(503)
	start := time.Now()
	var rec eventtest.Recorder
	_, err := e.mode(t).Run(context.Background(), mode.Input{Question: "How did presidents describe the economy?", Now: time.Now()}, &rec)
	if err == nil {
		t.Fatal("the run succeeded")
	}
	if msg := err.Error(); !strings.Contains(msg, "model endpoint") || !strings.Contains(msg, "SOVA_LLM_API_KEY") || strings.Contains(msg, "web search") {
		t.Errorf("error %q, want it to name the model endpoint and SOVA_LLM_API_KEY", msg)
	}
	if q := e.sx.Queries(); len(q) > 0 {
		t.Errorf("the run searched %q after the model refused the key", q)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the error came after %s", d)
	}
}
