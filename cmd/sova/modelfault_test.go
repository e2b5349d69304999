package main

import (
	"strings"
	"testing"
	"time"
)

// With a key the model endpoint refuses, or an endpoint that cannot be
// reached, `sova ask` fails within 2 s (the process's whole life, start-up
// included) and says that the model endpoint is at fault and which
// setting to fix; it never blames the web search.
func TestAskNamesTheModelEndpointAtOnce(t *testing.T) {
	w := newWorld(t)
	w.model.RequireKey("test-key")
	for _, f := range []struct {
		name, setting string
		env           []string
	}{
		{"wrong key", "SOVA_LLM_API_KEY", w.envWith("SOVA_LLM_API_KEY", "wrong-key")},
		{"unreachable", "SOVA_LLM_BASE_URL", w.envWith("SOVA_LLM_BASE_URL", closedPortURL(t))},
	} {
		for _, mode := range []string{"search", "extreme", "deep_research"} {
			start := time.Now()
			out, errOut, err := w.sovaEnv(t, f.env, "ask", "--mode", mode, "--no-save", "How did presidents describe the economy in the 1930s?")
			took := time.Since(start)
			t.Logf("%s, %s: exit %d after %s: %s", f.name, mode, exitCode(err), took.Round(time.Millisecond), strings.TrimSpace(errOut))
			if err == nil {
				t.Errorf("%s, %s: sova ask succeeded: %s", f.name, mode, out)
				continue
			}
			if !strings.Contains(errOut, "model endpoint") || !strings.Contains(errOut, f.setting) || strings.Contains(errOut, "web search") ||
				strings.Contains(errOut, "wrong-key") {
				t.Errorf("%s, %s: stderr %q, want the model endpoint and %s named", f.name, mode, errOut, f.setting)
			}
			if took > 2*time.Second {
				t.Errorf("%s, %s: the error came after %s, want under 2s", f.name, mode, took)
			}
		}
	}
}
