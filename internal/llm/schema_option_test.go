package llm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
)

// choice is decoded from a schema built at run time: a union of actions,
// told apart by "tool".
type choice struct {
	Thought string          `json:"thought"`
	Action  json.RawMessage `json:"action"`
}

// unionSchema allows the actions named in tools, each an object with a
// one-value "tool" enum and its own fields.
func unionSchema(tools ...string) *jsonschema.Schema {
	var branches []*jsonschema.Schema
	for _, name := range tools {
		branches = append(branches, &jsonschema.Schema{
			Type: "object",
			Properties: map[string]*jsonschema.Schema{
				"tool":  {Type: "string", Enum: []any{name}},
				"input": {Type: "string"},
			},
			PropertyOrder: []string{"tool", "input"},
			Required:      []string{"tool", "input"},
		})
	}
	return &jsonschema.Schema{
		Type: "object",
		Properties: map[string]*jsonschema.Schema{
			"thought": {Type: "string"},
			"action":  {AnyOf: branches},
		},
		PropertyOrder: []string{"thought", "action"},
		Required:      []string{"thought", "action"},
	}
}

func TestStructuredWithSchema(t *testing.T) {
	tests := []struct {
		name    string
		tools   []string
		replies []string
		want    string // the action accepted
		calls   int
	}{
		{
			name:    "allowed action accepted",
			tools:   []string{"search", "answer"},
			replies: []string{`{"thought":"t","action":{"tool":"search","input":"q"}}`},
			want:    `{"tool":"search","input":"q"}`,
			calls:   1,
		},
		{
			name:  "withdrawn action is re-asked",
			tools: []string{"answer"},
			replies: []string{
				`{"thought":"t","action":{"tool":"search","input":"q"}}`,
				`{"thought":"t","action":{"tool":"answer","input":"42"}}`,
			},
			want:  `{"tool":"answer","input":"42"}`,
			calls: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(t)
			for _, r := range tt.replies {
				srv.Enqueue(llmtest.Text(r))
			}
			c := newClient(t, srv)
			sch := unionSchema(tt.tools...)
			before, _ := json.Marshal(sch)
			got, _, err := llm.Structured[choice](context.Background(), c, ask("go"), llm.WithSchema(sch), llm.WithSchemaName("NextStep"))
			if err != nil {
				t.Fatal(err)
			}
			if string(got.Action) != tt.want || srv.Count() != tt.calls {
				t.Errorf("action %s after %d calls, want %s after %d", got.Action, srv.Count(), tt.want, tt.calls)
			}
			r := srv.Requests()[0]
			if r.SchemaName() != "NextStep" || !r.ResponseFormat.Strict {
				t.Fatalf("response_format %+v", r.ResponseFormat)
			}
			// Strict form: the branches are closed objects with every field required.
			branches := r.Schema()["properties"].(map[string]any)["action"].(map[string]any)["anyOf"].([]any)
			if len(branches) != len(tt.tools) {
				t.Fatalf("anyOf = %v", branches)
			}
			for i, b := range branches {
				br := b.(map[string]any)
				enum := br["properties"].(map[string]any)["tool"].(map[string]any)["enum"]
				if br["additionalProperties"] != false || fmt.Sprint(br["required"]) != "[tool input]" || fmt.Sprint(enum) != "["+tt.tools[i]+"]" {
					t.Errorf("branch %d = %v", i, br)
				}
			}
			if !strings.Contains(string(r.Body), `"properties":{"thought":`) {
				t.Errorf("property order lost: %s", r.Body)
			}
			if after, _ := json.Marshal(sch); string(after) != string(before) {
				t.Errorf("the caller's schema was changed:\n%s\n%s", before, after)
			}
			if tt.calls > 1 && !strings.Contains(srv.Last().LastUser(), "does not match the schema") {
				t.Errorf("re-ask does not say why: %q", srv.Last().LastUser())
			}
		})
	}
}
