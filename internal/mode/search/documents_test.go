package search

import (
	"encoding/json"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/event/eventtest"
	"github.com/sova-ai/sova/internal/llm/llmtest"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/sovatest"
)

const spaceUser = "local" // the user of sovatest.Projects

// TestSearchWithSpaces runs the search pipeline with a document space: the
// passages found are given to the answer beside the pages read and cited
// as documents.
func TestSearchWithSpaces(t *testing.T) {
	docSpaces, docSpace := sovatest.Projects(t)
	e := newSearchEnv(t)
	var docNumber atomic.Int32
	e.model.Handle(func(r *llmtest.Request) llmtest.Reply {
		if strings.Contains(r.System(), "answers from web sources") {
			// Find the number the document passage was given.
			for _, line := range strings.Split(r.LastUser(), "\n") {
				if strings.HasPrefix(line, "URL: sova://spaces/") {
					break
				}
				if strings.HasPrefix(line, "[") {
					n := 0
					for _, c := range line[1:] {
						if c < '0' || c > '9' {
							break
						}
						n = n*10 + int(c-'0')
					}
					docNumber.Store(int32(n))
				}
			}
			return llmtest.Reply{Content: "Web [1]. Documents [" + itoa(int(docNumber.Load())) + "].", Usage: llmtest.Tokens(10, 10)}
		}
		return e.model.Respond(r)
	})
	m := e.mode(t).WithDocuments(docSpaces, 3)
	in := mode.Input{UserID: spaceUser, Question: "How did presidents describe the Vostok budget?", Spaces: []string{docSpace.ID}, Now: time.Now()}
	var rec eventtest.Recorder
	res, err := m.Run(t.Context(), in, &rec)
	if err != nil {
		t.Fatal(err)
	}
	kinds := []string{}
	for _, s := range res.Sources {
		kinds = append(kinds, s.Kind)
	}
	if !slices.Equal(kinds, []string{sova.SourceWeb, sova.SourceDocument}) || res.Sources[1].Number != 2 ||
		!strings.HasPrefix(res.Sources[1].URL, "sova://spaces/") {
		t.Errorf("sources = %+v", res.Sources)
	}
	var steps searchSteps
	if err := json.Unmarshal(res.Steps, &steps); err != nil || steps.Documents == nil || len(steps.Documents.Passages) == 0 {
		t.Errorf("steps.documents = %+v (%v)", steps.Documents, err)
	}
	if !m.SearchesDocuments() {
		t.Error("SearchesDocuments = false")
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
