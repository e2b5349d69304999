package search

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/event/eventtest"
	"github.com/sova-ai/sova/internal/llm/llmtest"
	"github.com/sova-ai/sova/internal/mode"
)

// TestModelSetupErrorStopsTheRun: a key the model endpoint refuses stops
// the run at the first model call, with an error naming the endpoint and
// the setting, before any search; the search (down as well here) is not
// blamed.
func TestModelSetupErrorStopsTheRun(t *testing.T) {
	for _, tc := range []struct {
		name, setting string
		fault         func(e *searchEnv)
	}{
		{"wrong key", "SOVA_LLM_API_KEY", func(e *searchEnv) { e.model.RequireKey("the-right-key") }},
		{"unknown model", "SOVA_FAST_MODEL", func(e *searchEnv) {
			e.model.Handle(func(*llmtest.Request) llmtest.Reply {
				return llmtest.FailWith(404, "invalid_request_error", "model_not_found", "The model `fast-model` does not exist")
			})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newSearchEnv(t)
			tc.fault(e)
			e.sx.Fail.Store(503)
			start := time.Now()
			var rec eventtest.Recorder
			_, err := e.mode(t).Run(context.Background(), mode.Input{Question: "How did presidents describe the economy?", Now: time.Now()}, &rec)
			if err == nil {
				t.Fatal("the run succeeded")
			}
			if msg := err.Error(); !strings.Contains(msg, "model endpoint") || !strings.Contains(msg, tc.setting) || strings.Contains(msg, "web search") {
				t.Errorf("error %q, want it to name the model endpoint and %s", msg, tc.setting)
			}
			if q := e.sx.Queries(); len(q) > 0 {
				t.Errorf("the run searched %q after the model endpoint failed", q)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("the error came after %s", d)
			}
		})
	}
}
