package sgr

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// jsonFields lists the JSON names of a struct's fields, in order.
func jsonFields(v any) []string {
	t := reflect.TypeOf(v)
	var out []string
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		out = append(out, name)
	}
	return out
}

// The written-out schema and the Go types that decode replies must agree.
func TestSchemaMatchesTypes(t *testing.T) {
	types := map[string]any{
		ToolClarification: ClarificationArgs{}, ToolGeneratePlan: GeneratePlanArgs{}, ToolAdaptPlan: AdaptPlanArgs{},
		ToolWebSearch: WebSearchArgs{}, ToolExtract: ExtractArgs{}, ToolCreateReport: CreateReportArgs{}, ToolFinalAnswer: FinalAnswerArgs{},
	}
	for _, tool := range allTools {
		s := toolSchema(tool)
		if got, want := s.PropertyOrder, jsonFields(types[tool]); !slices.Equal(got, want) {
			t.Errorf("%s: schema properties %v, Go fields %v", tool, got, want)
		}
		if !slices.Equal(s.Required, s.PropertyOrder) {
			t.Errorf("%s: not every property is required: %v", tool, s.Required)
		}
	}
	s := nextStepSchema(allTools)
	if got, want := s.PropertyOrder, jsonFields(NextStep{}); !slices.Equal(got, want) {
		t.Errorf("NextStep: schema properties %v, Go fields %v", got, want)
	}
	if got, want := s.PropertyOrder[:len(s.PropertyOrder)-1], jsonFields(Reasoning{}); !slices.Equal(got, want) {
		t.Errorf("Reasoning fields %v, want %v", want, got)
	}
}

func TestSchemaValidatesReplies(t *testing.T) {
	resolved, err := nextStepSchema([]string{ToolWebSearch, ToolFinalAnswer}).Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	base := func(fn string) string {
		return `{"reasoning_steps":["a","b"],"current_situation":"s","plan_status":"p","enough_data":false,` +
			`"remaining_steps":["r"],"task_completed":false,"function":` + fn + `}`
	}
	tests := []struct {
		name  string
		reply string
		ok    bool
	}{
		{"search", base(`{"tool":"web_search","reasoning":"r","query":"q","max_results":5}`), true},
		{"final", base(`{"tool":"final_answer","reasoning":"r","completed_steps":["x"],"answer":"a","status":"completed"}`), true},
		{"withdrawn tool", base(`{"tool":"clarification","reasoning":"r","unclear_terms":["x"],"assumptions":["a","b"],"questions":["q"]}`), false},
		{"too many results", base(`{"tool":"web_search","reasoning":"r","query":"q","max_results":50}`), false},
		{"bad status", base(`{"tool":"final_answer","reasoning":"r","completed_steps":["x"],"answer":"a","status":"maybe"}`), false},
		{"one reasoning step", strings.Replace(base(`{"tool":"web_search","reasoning":"r","query":"q","max_results":5}`), `["a","b"]`, `["a"]`, 1), false},
		{"missing field", base(`{"tool":"web_search","reasoning":"r","max_results":5}`), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v any
			if err := json.Unmarshal([]byte(tt.reply), &v); err != nil {
				t.Fatal(err)
			}
			if err := resolved.Validate(v); (err == nil) != tt.ok {
				t.Errorf("Validate = %v, want ok=%v", err, tt.ok)
			}
		})
	}
}

func TestFunctionDecoding(t *testing.T) {
	tests := []struct {
		name    string
		fn      string
		want    any
		errPart string // from decoding or Validate
	}{
		{"search", `{"tool":"web_search","reasoning":"r","query":"go","max_results":3}`, &WebSearchArgs{Tool: "web_search", Reasoning: "r", Query: "go", MaxResults: 3}, ""},
		{"extract", `{"tool":"extract_page_content","reasoning":"r","urls":["https://go.dev/"]}`, &ExtractArgs{Tool: "extract_page_content", Reasoning: "r", URLs: []string{"https://go.dev/"}}, ""},
		{"unknown tool", `{"tool":"rm_rf"}`, nil, `unknown tool "rm_rf"`},
		{"empty query", `{"tool":"web_search","reasoning":"r","query":"  ","max_results":3}`, nil, "query must not be empty"},
		{"not a web address", `{"tool":"extract_page_content","reasoning":"r","urls":["file:///etc/passwd"]}`, nil, "is not an http(s) URL"},
		{"no questions", `{"tool":"clarification","reasoning":"r","unclear_terms":[],"assumptions":[],"questions":[" "]}`, nil, "questions must not be empty"},
		{"empty report", `{"tool":"create_report","reasoning":"r","title":"t","user_request_language_reference":"q","content":"","confidence":"low"}`, nil, "content must not be empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var n NextStep
			err := json.Unmarshal([]byte(`{"function":`+tt.fn+`}`), &n)
			if err == nil {
				err = n.Validate()
			}
			if tt.errPart != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errPart) {
					t.Fatalf("err = %v, want %q", err, tt.errPart)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(n.Function.Args, tt.want) {
				t.Errorf("args = %+v, want %+v", n.Function.Args, tt.want)
			}
			// The call shown to clients is the function as the model wrote it.
			b, _ := json.Marshal(n.Function)
			if string(b) != tt.fn {
				t.Errorf("marshalled %s, want %s", b, tt.fn)
			}
		})
	}
}
