package llm

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

func TestExtractJSONObject(t *testing.T) {
	tests := []struct {
		name, in, want string
		ok             bool
	}{
		{"bare", `{"a":1}`, `{"a":1}`, true},
		{"json fence", "```json\n{\"a\":1}\n```", `{"a":1}`, true},
		{"plain fence", "Result:\n```\n{\"a\":{\"b\":[1,2]}}\n```\nbye", `{"a":{"b":[1,2]}}`, true},
		{"fence on one line", "```json {\"a\":1} ```", `{"a":1}`, true},
		{"unclosed fence", "```json\n{\"a\":1}", `{"a":1}`, true},
		{"prose", `The answer is {"a":"x}y"} as requested.`, `{"a":"x}y"}`, true},
		{"escaped quote", `x {"a":"say \"}\""} y`, `{"a":"say \"}\""}`, true},
		{"stray brace first", `Use {braces. Then {"a":1}`, `{"a":1}`, true},
		{"invalid then valid", `{not json} and {"a":2}`, `{"a":2}`, true},
		{"fence preferred over prose example", "e.g. {\"a\":0}\n```json\n{\"a\":1}\n```", `{"a":1}`, true},
		{"none", `no json here`, "", false},
		{"truncated", `{"a": [1, 2`, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := extractJSONObject(tt.in)
			if ok != tt.ok || got != tt.want {
				t.Errorf("extractJSONObject(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestMakeStrict(t *testing.T) {
	type inner struct {
		B string `json:"b"`
		A *int   `json:"a,omitempty"`
	}
	type outer struct {
		Z     string            `json:"z"`
		Y     []inner           `json:"y,omitempty"`
		X     inner             `json:"x"`
		Ptr   *inner            `json:"ptr"`
		Extra map[string]string `json:"extra,omitempty"`
	}
	s, err := jsonschema.For[outer](nil)
	if err != nil {
		t.Fatal(err)
	}
	makeStrict(s)
	raw, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Required             []string `json:"required"`
		AdditionalProperties any      `json:"additionalProperties"`
		Properties           map[string]struct {
			Required             []string `json:"required"`
			AdditionalProperties any      `json:"additionalProperties"`
			Items                *struct {
				Required             []string `json:"required"`
				AdditionalProperties any      `json:"additionalProperties"`
			} `json:"items"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	check := func(where string, req []string, ap any, want ...string) {
		t.Helper()
		if len(req) != len(want) {
			t.Errorf("%s: required = %v, want %v", where, req, want)
			return
		}
		for i := range want {
			if req[i] != want[i] {
				t.Errorf("%s: required = %v, want %v", where, req, want)
			}
		}
		if ap != false {
			t.Errorf("%s: additionalProperties = %v, want false", where, ap)
		}
	}
	check("root", got.Required, got.AdditionalProperties, "z", "y", "x", "ptr", "extra")
	check("x", got.Properties["x"].Required, got.Properties["x"].AdditionalProperties, "b", "a")
	check("ptr", got.Properties["ptr"].Required, got.Properties["ptr"].AdditionalProperties, "b", "a")
	items := got.Properties["y"].Items
	if items == nil {
		t.Fatal("no items for y")
	}
	check("y.items", items.Required, items.AdditionalProperties, "b", "a")
	// A map keeps its value schema: strict mode cannot express maps.
	if ap, ok := got.Properties["extra"].AdditionalProperties.(map[string]any); !ok || ap["type"] != "string" {
		t.Errorf("extra.additionalProperties = %v", got.Properties["extra"].AdditionalProperties)
	}
}

func TestBackoff(t *testing.T) {
	k := &core{cfg: Config{BackoffBase: 100 * time.Millisecond, BackoffMax: time.Second}}
	for attempt := range 40 {
		ceiling := min(time.Second, 100*time.Millisecond<<min(attempt, 20))
		for range 50 {
			if d := k.backoff(attempt, errors.New("x")); d < 0 || d > ceiling {
				t.Fatalf("attempt %d: backoff %s outside [0, %s]", attempt, d, ceiling)
			}
		}
	}
	tests := []struct {
		retryAfter time.Duration
		want       time.Duration
	}{
		{3 * time.Second, 3 * time.Second}, // above BackoffMax: still honoured
		{5 * time.Minute, maxRetryAfter},   // capped
		{10 * time.Millisecond, 10 * time.Millisecond},
	}
	for _, tt := range tests {
		if got := k.backoff(0, &APIError{StatusCode: 429, RetryAfter: tt.retryAfter}); got != tt.want {
			t.Errorf("Retry-After %s: backoff %s, want %s", tt.retryAfter, got, tt.want)
		}
	}
}

func TestSchemaName(t *testing.T) {
	tests := map[string]string{
		"verdict":                "verdict",
		"chat answer!":           "chat_answer",
		"pair[int,string]":       "pair_int_string",
		"":                       "response",
		"???":                    "response",
		string(make([]byte, 70)): "response",
	}
	for in, want := range tests {
		if got := schemaName(in); got != want {
			t.Errorf("schemaName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDecodeStructuredIntegers(t *testing.T) {
	type counts struct {
		N    int   `json:"n"`
		List []int `json:"list"`
	}
	k := &core{schemas: map[schemaKey]*schemaInfo{}}
	sch, err := schemaFor[counts](k, "")
	if err != nil {
		t.Fatal(err)
	}
	if sch.name != "counts" {
		t.Errorf("name = %q", sch.name)
	}
	got, err := decodeStructured[counts](`{"n": 3, "list": [1, 2]}`, sch)
	if err != nil || got.N != 3 || len(got.List) != 2 {
		t.Fatalf("got %+v err %v", got, err)
	}
	if _, err := decodeStructured[counts](`{"n": 3.5, "list": null}`, sch); err == nil {
		t.Error("3.5 accepted as an integer")
	}
	again, _ := schemaFor[counts](k, "")
	if again != sch {
		t.Error("schema not cached")
	}
}

func TestRetryable(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"429", &APIError{StatusCode: 429}, true},
		{"500", &APIError{StatusCode: 500}, true},
		{"529", &APIError{StatusCode: 529}, true},
		{"400", &APIError{StatusCode: 400}, false},
		{"401", &APIError{StatusCode: 401}, false},
		{"408", &APIError{StatusCode: 408}, false},
		{"stream server error", &APIError{Type: "server_error"}, true},
		{"stream invalid request", &APIError{Type: "invalid_request_error"}, false},
		{"transport", &transportError{err: errors.New("reset")}, true},
		{"bad response", &badResponseError{detail: "x"}, true},
		{"other", errors.New("x"), false},
	}
	for _, tt := range tests {
		if got := retryable(tt.err); got != tt.want {
			t.Errorf("%s: retryable = %v, want %v", tt.name, got, tt.want)
		}
	}
}
