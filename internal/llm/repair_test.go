package llm

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestRepairJSON(t *testing.T) {
	tests := []struct {
		name, in, want string
		ok             bool
	}{
		{"fenced", "```json\n{\"a\": 1, \"b\": [1, 2]}\n```", `{"a":1,"b":[1,2]}`, true},
		{"fence cut off", "```json\n{\"a\": \"x\"", `{"a":"x"}`, true},
		{"prose around", "Here you go: {\"a\": true} Hope this helps!", `{"a":true}`, true},
		{"prose with braces before", "Format {like this}: {\"a\": 1}", `{"a":1}`, true},
		{"trailing commas", `{"a": [1, 2,], "b": {"c": 3,},}`, `{"a":[1,2],"b":{"c":3}}`, true},
		{"doubled comma", `{"a": 1,, "b": 2}`, `{"a":1,"b":2}`, true},
		{"single quotes", `{'a': 'it is "quoted"', 'b': ['x', 'y']}`, `{"a":"it is \"quoted\"","b":["x","y"]}`, true},
		{"escaped single quote", `{'a': 'it\'s'}`, `{"a":"it's"}`, true},
		{"ambiguous apostrophe", `{'a': 'it's'}`, ``, false},
		{"python literals", `{"a": True, "b": None, "c": False}`, `{"a":true,"b":null,"c":false}`, true},
		{"cut in a string", `{"a": 1, "b": "hello wor`, `{"a":1,"b":"hello wor"}`, true},
		{"cut after a key", `{"a": 1, "b": `, `{"a":1}`, true},
		{"cut in a key", `{"a": 1, "bc`, `{"a":1}`, true},
		{"cut in a literal", `{"a": 1, "b": tr`, `{"a":1}`, true},
		{"cut in a number", `{"a": 1, "b": 12`, `{"a":1}`, true},
		{"cut after a literal", `{"a": 1, "b": false`, `{"a":1,"b":false}`, true},
		{"cut in nested", `{"a": {"b": [1, {"c": "d`, `{"a":{"b":[1,{"c":"d"}]}}`, true},
		{"cut after a comma", `{"a": [1, 2, `, `{"a":[1,2]}`, true},
		{"cut in an escape", `{"a": "x\`, `{"a":"x"}`, true},
		{"raw newline in a string", "{\"a\": \"line 1\nline 2\"}", `{"a":"line 1\nline 2"}`, true},
		{"unicode kept", `{"a": "Рузвельт \u00e9"`, `{"a":"Рузвельт \u00e9"}`, true},
		{"missing comma", `{"a": 1 "b": 2}`, ``, false},
		{"unquoted key", `{a: 1}`, ``, false},
		{"no object", `just words`, ``, false},
		{"array only", `[1, 2]`, ``, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := repairJSON(tt.in)
			if ok != tt.ok || got != tt.want {
				t.Errorf("repairJSON(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}

// Truncating a valid object anywhere gives either a repair that is valid
// JSON or a refusal, never a panic or invalid output.
func TestRepairJSONAnyCut(t *testing.T) {
	full := `{"reasoning_steps": ["Look at what is known.", "It's \"quoted\"\n"], "n": -1.5e3, "ok": true, "nested": {"list": [{"x": null}, []], "s": "Рузвельт"}}`
	for i := range len(full) {
		out, ok := repairJSON(full[:i])
		if ok && !validObject(out) {
			t.Errorf("cut at %d: %q is not a JSON object", i, out)
		}
	}
	if out, ok := repairJSON(full); !ok || !validObject(out) {
		t.Errorf("the whole object: %q, %v", out, ok)
	}
}

func validObject(s string) bool {
	var m map[string]any
	return json.Unmarshal([]byte(s), &m) == nil
}

// A reply whose outer object was cut off still holds complete nested
// objects; the repaired outer object is the reply, not the first nested
// object that happens to be whole.
func TestDecodeStructuredPrefersTheRepairedReply(t *testing.T) {
	type step struct {
		Situation string `json:"situation"`
		Function  struct {
			Tool string `json:"tool"`
		} `json:"function"`
		Done bool `json:"done"`
	}
	k := &core{schemas: map[schemaKey]*schemaInfo{}}
	sch, err := schemaFor[step](k, "")
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeStructured[step](`{"situation": "s", "function": {"tool": "web_search"}, "done": false`, sch)
	if err != nil || got.Situation != "s" || got.Function.Tool != "web_search" {
		t.Fatalf("got %+v, %v", got, err)
	}
	// When nothing validates, the error is about the whole reply.
	_, err = decodeStructured[step](`{"situation": "s", "function": {"tool": "web_search"}`, sch)
	if err == nil || !strings.Contains(err.Error(), "done") {
		t.Errorf("err = %v, want the missing field of the outer object", err)
	}
}
