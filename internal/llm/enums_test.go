package llm_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
)

type level string

func (level) Enum() []string { return []string{"high", "medium", "low"} }

type assessment struct {
	Complexity level   `json:"complexity" jsonschema:"how hard the question is"`
	Per        []level `json:"per_part"`
	Summary    string  `json:"summary"`
}

// TestStructuredClosedSets: a field whose values are a closed set is an
// enum in the schema sent (json_schema, and the schema in the prompt of an
// endpoint that refuses it); a value spelt loosely is mapped to the set's,
// and one outside it is re-asked with the allowed values, never accepted.
func TestStructuredClosedSets(t *testing.T) {
	t.Run("enum sent, loose value mapped", func(t *testing.T) {
		srv := llmtest.New(t)
		srv.Enqueue(llmtest.Text(`{"complexity": "High ", "per_part": ["LOW", "Medium"], "summary": "High "}`))
		c := newClient(t, srv)
		got, _, err := llm.Structured[assessment](t.Context(), c, ask("how hard?"))
		if err != nil {
			t.Fatal(err)
		}
		if got.Complexity != "high" || !slices.Equal(got.Per, []level{"low", "medium"}) || got.Summary != "High " {
			t.Errorf("got %+v", got)
		}
		props := srv.Last().Schema()["properties"].(map[string]any)
		enum, _ := props["complexity"].(map[string]any)["enum"].([]any)
		items, _ := props["per_part"].(map[string]any)["items"].(map[string]any)["enum"].([]any)
		if len(enum) != 3 || enum[0] != "high" || len(items) != 3 {
			t.Errorf("schema sent %v", props)
		}
		if srv.Count() != 1 {
			t.Errorf("%d requests: a loose spelling was re-asked", srv.Count())
		}
	})
	t.Run("value outside the set re-asked", func(t *testing.T) {
		srv := llmtest.New(t)
		srv.Enqueue(llmtest.Text(`{"complexity": "высокая", "per_part": [], "summary": "s"}`),
			llmtest.Text(`{"complexity": "high", "per_part": [], "summary": "s"}`))
		c := newClient(t, srv)
		got, _, err := llm.Structured[assessment](t.Context(), c, ask("how hard?"))
		if err != nil {
			t.Fatal(err)
		}
		if got.Complexity != "high" || srv.Count() != 2 {
			t.Errorf("got %+v after %d requests", got, srv.Count())
		}
		if u := srv.Last().LastUser(); !strings.Contains(u, "высокая") || !strings.Contains(u, "high") {
			t.Errorf("the re-ask does not name the value and the set: %q", u)
		}
	})
	t.Run("no json_schema: enum in the prompt", func(t *testing.T) {
		srv := llmtest.New(t)
		srv.Enqueue(rejectSchema(), llmtest.Text("Sure:\n```json\n{\"complexity\": \"LOW\", \"per_part\": [], \"summary\": \"s\"}\n```"))
		c := newClient(t, srv)
		got, _, err := llm.Structured[assessment](t.Context(), c, ask("how hard?"))
		if err != nil {
			t.Fatal(err)
		}
		if got.Complexity != "low" {
			t.Errorf("got %+v", got)
		}
		if r := srv.Last(); r.Format() == llm.FormatJSONSchema || !strings.Contains(r.System(), `"enum":["high","medium","low"]`) {
			t.Errorf("second request: format %q, system %q", r.Format(), r.System())
		}
	})
}
