package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// TestModelFaultsNamedAtOnce: a wrong key, a model the endpoint does not
// serve or an unreachable endpoint stop every mode at once, with an error
// that names the model endpoint and the setting to fix, never one that
// blames the web search.
func TestModelFaultsNamedAtOnce(t *testing.T) {
	faults := []struct {
		name    string
		env     map[string]string
		setting string
	}{
		{name: "wrong key", env: map[string]string{"SOVA_LLM_API_KEY": "wrong-key"}, setting: "SOVA_LLM_API_KEY"},
		{name: "unreachable", env: map[string]string{"SOVA_LLM_BASE_URL": "http://127.0.0.1:1/v1"}, setting: "SOVA_LLM_BASE_URL"},
	}
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			e := newEnv(t, f.env)
			e.model.RequireKey("test-key")
			for _, group := range []string{"search", "deep_search", "web", "academic", "stocks", "extreme", "deep_research", "sgr_agent"} {
				start := time.Now()
				resp := e.post(t, "/api/search", fmt.Sprintf(`{"id":"c-%s","group":%q,"messages":[{"id":"m1","role":"user","parts":[{"type":"text","text":"How did presidents describe the economy in the 1930s?"}]}]}`, group, group))
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				took := time.Since(start)
				var errText string
				for _, line := range strings.Split(string(body), "\n") {
					var c map[string]any
					if json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &c) == nil && c["type"] == "error" {
						errText, _ = c["errorText"].(string)
					}
				}
				if !strings.Contains(errText, "model endpoint") || !strings.Contains(errText, f.setting) || strings.Contains(errText, "web search") {
					t.Errorf("%s: error %q, want it to name the model endpoint and %s", group, errText, f.setting)
				}
				if took > 2*time.Second {
					t.Errorf("%s: the error came after %s", group, took)
				}
			}
			// The OpenAI-compatible API says the same, streamed or not.
			for _, model := range []string{"search", "extreme", "sgr_agent"} {
				for _, stream := range []bool{false, true} {
					start := time.Now()
					resp := e.post(t, "/v1/chat/completions", fmt.Sprintf(`{"model":%q,"stream":%t,"messages":[{"role":"user","content":"How did presidents describe the economy in the 1930s?"}]}`, model, stream))
					body, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					took := time.Since(start)
					text := string(body)
					if (!stream && resp.StatusCode < 400) || !strings.Contains(text, "model endpoint") || !strings.Contains(text, f.setting) ||
						strings.Contains(text, "web search") || strings.Contains(text, "wrong-key") {
						t.Errorf("/v1/chat/completions %s (stream %t): HTTP %d %s, want the model endpoint and %s named", model, stream, resp.StatusCode, text, f.setting)
					}
					if took > 2*time.Second {
						t.Errorf("/v1/chat/completions %s (stream %t): the error came after %s", model, stream, took)
					}
				}
			}
		})
	}
}
