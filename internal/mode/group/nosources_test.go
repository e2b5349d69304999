package group

import (
	"strings"
	"testing"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/event/eventtest"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/sovatest"
)

// TestGroupThatFoundNothingSaysSo: when the group's tools find no source
// (the providers down), the answer starts with the unverified note, the
// run's status says so, and the model is told there is nothing to cite;
// a run whose tools found sources has no note.
func TestGroupThatFoundNothingSaysSo(t *testing.T) {
	for _, down := range []bool{true, false} {
		t.Run(map[bool]string{true: "providers down", false: "sources found"}[down], func(t *testing.T) {
			e := newTestEnv(t)
			if down {
				e.prov.Fail(sovatest.OpenAlex, sovatest.ProviderReply{Status: 503})
				e.prov.Fail(sovatest.Arxiv, sovatest.ProviderReply{Status: 503})
			}
			e.model.Handle(func(r *llmtest.Request) llmtest.Reply {
				if r.Index == 0 {
					return llmtest.Calls(llm.ToolCall{ID: "a", Name: "academic_search", Arguments: `{"queries":["attention"]}`})
				}
				return llmtest.Text("According to the sources, transformers use attention [1].")
			})
			var rec eventtest.Recorder
			res, err := e.mode(t, "academic").Run(t.Context(), input("How do transformers use attention?"), &rec)
			if err != nil {
				t.Fatal(err)
			}
			note := mode.UnverifiedNote(mode.LanguageOf(input("How do transformers use attention?")), true)
			unverified := false
			for _, ev := range rec.Filter(event.TypeStatus) {
				if ev.Status != nil && ev.Status.Stage == mode.StageUnverified {
					unverified = true
				}
			}
			told := strings.Contains(e.model.Last().LastUser(), "no source could be read")
			if !down {
				if strings.HasPrefix(res.Text, note) || unverified || told || len(res.Sources) == 0 {
					t.Errorf("sources were found, yet: text %q, status %v, told %v, sources %d", res.Text, unverified, told, len(res.Sources))
				}
				return
			}
			if !strings.HasPrefix(res.Text, note) || !unverified || !told || len(res.Sources) != 0 {
				t.Errorf("text %q, unverified status %v, model told %v, sources %d", res.Text, unverified, told, len(res.Sources))
			}
			if strings.Contains(res.Text, "[1]") {
				t.Errorf("the answer cites a source that does not exist: %q", res.Text)
			}
		})
	}
}
