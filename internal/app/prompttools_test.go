package app

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/event/eventtest"
	"github.com/sova-ai/sova/internal/lang"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/sovatest"
	"github.com/sova-ai/sova/internal/spaces"
)

// TestToolModesOnAnEndpointWithoutNativeTools runs every mode whose model
// calls tools (each search group, extreme, deep_research, docs) against a
// model served without native tool calling, as Ollama serves many: a
// request with a tools field is refused with a 400, and the model writes
// its calls as text, in turn as Hermes/Qwen <tool_call> tags after prose,
// a ```json fenced object, Mistral's [TOOL_CALLS], Llama's <function=…>,
// a bare JSON object and a fenced object after a sentence. With SOVA_LLM_TOOL_CALLING=prompt no request
// carries tools; with auto, the first refusal switches the model over.
// Every run must end with an answer citing pages that were read, with no
// call text in it.
func TestToolModesOnAnEndpointWithoutNativeTools(t *testing.T) {
	for _, setting := range []string{"prompt", "auto"} {
		t.Run(setting, func(t *testing.T) {
			arts := sovatest.DefaultArticles()
			site := sovatest.NewSite(t, arts)
			sx := sovatest.NewSearXNG(t, site, arts)
			prov := sovatest.NewProviders(t)
			model := sovatest.NewModel(t)
			model.NoNativeTools = true
			vars := sovatest.Env(model, sx, t.TempDir())
			for k, v := range sovatest.ProviderEnv(prov) {
				vars[k] = v
			}
			vars["XAI_API_KEY"] = "xai-test-key"
			vars["SOVA_DOCS_WEB_SEARCH"] = "false"
			vars["SOVA_LLM_TOOL_CALLING"] = setting
			a, err := New(t.Context(), mustConfig(t, vars), nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = a.Close(context.Background()) })
			const user = "local"
			sp, err := a.Spaces.CreateSpace(t.Context(), user, "Economy", "notes on the economy of the 1930s")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.Spaces.Add(t.Context(), user, sp.ID, []spaces.File{
				spaces.BytesFile("banks.md", []byte("# Banks\n\nRoosevelt said in 1933 that sound banks would reopen after the bank holiday.\n")),
				spaces.BytesFile("speeches.md", []byte("# Speeches\n\nPresidents in the 1930s described the economy as a passing storm, then as a system to repair.\n")),
			}, spaces.AddOptions{}); err != nil {
				t.Fatal(err)
			}
			questions := []string{"How did presidents describe the economy in the 1930s?", "What did Roosevelt say about banks in 1933?"}
			modes := []string{"web", "academic", "youtube", "reddit", "code", "x", "stocks", "crypto", "extreme", "deep_research", "docs"}
			runs := 0
			for _, id := range modes {
				m, ok := a.Service.Modes().Get(id)
				if !ok {
					t.Fatalf("mode %s is not registered", id)
				}
				for _, q := range questions {
					runs++
					before := siteHits(site, arts)
					ctx, cancel := context.WithTimeout(sova.WithUser(context.Background(), sova.User{ID: user}), 2*time.Minute)
					var rec eventtest.Recorder
					res, err := m.Run(ctx, mode.Input{UserID: user, Question: q, RunID: fmt.Sprintf("p-%s-%d", id, runs), Now: time.Now()}, &rec)
					cancel()
					if err != nil {
						t.Errorf("%s %q: %v", id, q, err)
						continue
					}
					for _, mark := range []string{"<tool_call>", "[TOOL_CALLS]", "<function=", `"arguments"`, "```json"} {
						if strings.Contains(res.Text, mark) {
							t.Errorf("%s %q: the call text %q shows in the answer: %q", id, q, mark, res.Text)
						}
					}
					if strings.HasPrefix(res.Text, mode.UnverifiedNote(lang.English, true)) || strings.HasPrefix(res.Text, mode.UnverifiedNote(lang.English, false)) {
						t.Errorf("%s %q: nothing was read: %q", id, q, res.Text)
					} else if why := citesWhatWasRead(res, site, before); why != "" {
						t.Errorf("%s %q %s: %q", id, q, why, res.Text)
					}
				}
			}
			withTools := 0
			for _, r := range model.Requests() {
				if len(r.Tools) > 0 {
					withTools++
				}
			}
			mis := model.Misbehaved()
			t.Logf("%d runs; calls written as text %v; %d requests carried tools (refused)", runs, mis, withTools)
			switch {
			case setting == "prompt" && withTools > 0:
				t.Errorf("%d requests carried a tools field with SOVA_LLM_TOOL_CALLING=prompt", withTools)
			case setting == "auto" && (withTools == 0 || withTools > 4):
				t.Errorf("%d requests carried a tools field: the first refusal should switch each model to the prompt", withTools)
			}
			for _, f := range []string{sovatest.TextCallHermes, sovatest.TextCallFenced, sovatest.TextCallMistral, sovatest.TextCallLlama, sovatest.TextCallBare, sovatest.TextCallProse} {
				if mis["text:"+f] == 0 {
					t.Errorf("no call was written in the %s format: %v", f, mis)
				}
			}
		})
	}
}
