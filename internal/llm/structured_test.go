package llm_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
)

type verdict struct {
	Reasoning  string   `json:"reasoning" jsonschema:"why"`
	Answer     string   `json:"answer"`
	KeyPoints  []string `json:"key_points"`
	Confidence float64  `json:"confidence"`
	Note       string   `json:"note,omitempty"`
}

func (v verdict) Validate() error {
	if v.Confidence < 0 || v.Confidence > 1 {
		return fmt.Errorf("confidence %v is outside [0, 1]", v.Confidence)
	}
	return nil
}

const goodVerdict = `{"reasoning":"r","answer":"42","key_points":["a","b"],"confidence":0.9,"note":""}`

func wantVerdict() verdict {
	return verdict{Reasoning: "r", Answer: "42", KeyPoints: []string{"a", "b"}, Confidence: 0.9}
}

// rejectSchema answers like an endpoint without json_schema support.
func rejectSchema() llmtest.Reply {
	return llmtest.Reply{Status: 400, ErrorBody: llmtest.ErrorJSON("invalid_request_error", "",
		"response_format.type 'json_schema' is not supported by this server")}
}

// rejectObject answers like a FastAPI server without json_object support.
func rejectObject() llmtest.Reply {
	return llmtest.Reply{Status: 422, ErrorBody: `{"detail":[{"loc":["body","response_format","type"],"msg":"unexpected value; permitted: 'text'"}]}`}
}

func TestStructuredValidFirstTime(t *testing.T) {
	srv := llmtest.New(t)
	srv.Enqueue(llmtest.Reply{Content: goodVerdict, Usage: llmtest.Tokens(50, 20)})
	c := newClient(t, srv)
	var m llm.Meter
	got, resp, err := llm.Structured[verdict](llm.WithMeter(context.Background(), &m), c, ask("meaning of life?"))
	if err != nil {
		t.Fatal(err)
	}
	if !equalVerdict(got, wantVerdict()) || resp.Content != goodVerdict {
		t.Errorf("got %+v resp %+v", got, resp)
	}
	r := srv.Last()
	rf := r.ResponseFormat
	if rf == nil || rf.Type != llm.FormatJSONSchema || !rf.Strict || r.SchemaName() != "verdict" {
		t.Fatalf("response_format = %+v", rf)
	}
	schema := r.Schema()
	if schema["type"] != "object" || schema["additionalProperties"] != false {
		t.Errorf("schema = %v", schema)
	}
	// Strict mode: every property required, in field order.
	req, _ := schema["required"].([]any)
	if fmt.Sprint(req) != "[reasoning answer key_points confidence note]" {
		t.Errorf("required = %v", req)
	}
	// The wire schema keeps field order, which decides the order models write fields in.
	body := string(r.Body)
	if i, j := strings.Index(body, `"reasoning":{`), strings.Index(body, `"answer":{`); i < 0 || j < 0 || i > j {
		t.Errorf("property order lost in %s", body)
	}
	if m.Calls() != 1 || m.Total().TotalTokens != 70 {
		t.Errorf("meter %+v / %d", m.Total(), m.Calls())
	}
}

func equalVerdict(a, b verdict) bool {
	return a.Reasoning == b.Reasoning && a.Answer == b.Answer && slices.Equal(a.KeyPoints, b.KeyPoints) &&
		a.Confidence == b.Confidence && a.Note == b.Note
}

func TestStructuredReask(t *testing.T) {
	tests := []struct {
		name     string
		first    string
		wantInAs string // in the re-ask message
	}{
		{"missing field", `{"reasoning":"r","answer":"42","confidence":0.9}`, "key_points"},
		{"wrong type", `{"reasoning":"r","answer":42,"key_points":[],"confidence":0.9}`, "answer"},
		{"extra field", `{"reasoning":"r","answer":"42","key_points":[],"confidence":0.9,"mood":"happy"}`, "mood"},
		{"Validate method", `{"reasoning":"r","answer":"42","key_points":[],"confidence":7}`, "confidence 7 is outside [0, 1]"},
		{"not JSON", `I think the answer is 42.`, "not a JSON object"},
		{"empty", ``, "empty"},
		{"array", `["a"]`, "not an object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Enqueue(
				llmtest.Reply{Content: tt.first, Usage: llmtest.Tokens(10, 10)},
				llmtest.Reply{Content: goodVerdict, Usage: llmtest.Tokens(30, 10)},
			)
			c := newClient(t, srv)
			var m llm.Meter
			got, _, err := llm.Structured[verdict](llm.WithMeter(context.Background(), &m), c, ask("q"))
			if err != nil {
				t.Fatal(err)
			}
			if !equalVerdict(got, wantVerdict()) {
				t.Errorf("got %+v", got)
			}
			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("requests = %d", len(reqs))
			}
			msgs := reqs[1].Messages
			if len(msgs) != 4 || msgs[2].Role != llm.RoleAssistant || msgs[2].Content != tt.first {
				t.Fatalf("re-ask messages = %+v", msgs)
			}
			reask := reqs[1].LastUser()
			if !strings.Contains(reask, tt.wantInAs) || !strings.Contains(reask, "corrected JSON") {
				t.Errorf("re-ask %q lacks %q", reask, tt.wantInAs)
			}
			if m.Calls() != 2 || m.Total().TotalTokens != 60 {
				t.Errorf("meter %+v / %d calls, want both attempts", m.Total(), m.Calls())
			}
		})
	}
}

func TestStructuredGivesUp(t *testing.T) {
	srv := llmtest.New(t)
	srv.Handle(func(*llmtest.Request) llmtest.Reply { return llmtest.Text(`{"answer":"no"}`) })
	c := newClient(t, srv, func(c *llm.Config) { c.MaxStructuredRetries = 2 })
	_, resp, err := llm.Structured[verdict](context.Background(), c, ask("q"))
	if err == nil || !strings.Contains(err.Error(), "no valid reply after 3 attempts") || !strings.Contains(err.Error(), "reasoning") {
		t.Fatalf("err = %v", err)
	}
	if srv.Count() != 3 || resp == nil || resp.Content != `{"answer":"no"}` {
		t.Errorf("requests %d resp %+v", srv.Count(), resp)
	}
}

func TestStructuredExtractsWithoutReask(t *testing.T) {
	tests := []struct {
		name  string
		reply string
	}{
		{"fenced", "```json\n" + goodVerdict + "\n```"},
		{"prose around", "Sure! Here it is: " + goodVerdict + " Hope that helps {:"},
		{"fence and prose", "Example {like this}.\n```\n" + goodVerdict + "\n```\nDone."},
		// Repaired rather than asked again:
		{"truncated tail", strings.TrimSuffix(goodVerdict, "}")},
		{"cut-off fence", "```json\n" + strings.TrimSuffix(goodVerdict, "}")},
		{"trailing commas", strings.ReplaceAll(strings.ReplaceAll(goodVerdict, "]", ",]"), "}", ",}")},
		{"single quotes", strings.ReplaceAll(goodVerdict, `"`, `'`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Enqueue(llmtest.Text(tt.reply))
			c := newClient(t, srv)
			got, _, err := llm.Structured[verdict](context.Background(), c, ask("q"))
			if err != nil || !equalVerdict(got, wantVerdict()) || srv.Count() != 1 {
				t.Fatalf("got %+v err %v requests %d", got, err, srv.Count())
			}
		})
	}
}

func TestStructuredFallsBackToJSONObject(t *testing.T) {
	srv := llmtest.New(t)
	srv.Handle(func(r *llmtest.Request) llmtest.Reply {
		if r.Format() == llm.FormatJSONSchema {
			return rejectSchema()
		}
		return llmtest.Text(goodVerdict)
	})
	c := newClient(t, srv)
	for i := range 2 {
		got, _, err := llm.Structured[verdict](context.Background(), c, ask("q"))
		if err != nil || !equalVerdict(got, wantVerdict()) {
			t.Fatalf("call %d: got %+v err %v", i, got, err)
		}
	}
	reqs := srv.Requests()
	var formats []string
	for _, r := range reqs {
		formats = append(formats, r.Format())
	}
	if want := []string{"json_schema", "json_object", "json_object"}; !slices.Equal(formats, want) {
		t.Errorf("formats = %v, want %v (rejection remembered)", formats, want)
	}
	sys := reqs[1].System()
	if !strings.HasPrefix(sys, "You are terse.") || !strings.Contains(sys, `"key_points"`) || !strings.Contains(sys, "JSON") {
		t.Errorf("system prompt does not carry the schema: %q", sys)
	}
	if n := countRole(reqs[1].Messages, llm.RoleSystem); n != 1 {
		t.Errorf("%d system messages, want the schema merged into one", n)
	}
	// The memory is per model: another model starts with json_schema again.
	srv.Handle(func(r *llmtest.Request) llmtest.Reply { return llmtest.Text(goodVerdict) })
	req := ask("q")
	req.Model = "other-model"
	if _, _, err := llm.Structured[verdict](context.Background(), c, req); err != nil {
		t.Fatal(err)
	}
	if f := srv.Last().Format(); f != llm.FormatJSONSchema {
		t.Errorf("other model used %q", f)
	}
}

func countRole(msgs []llm.Message, role string) int {
	n := 0
	for _, m := range msgs {
		if m.Role == role {
			n++
		}
	}
	return n
}

func TestStructuredFallsBackToText(t *testing.T) {
	srv := llmtest.New(t)
	srv.Handle(func(r *llmtest.Request) llmtest.Reply {
		switch r.Format() {
		case llm.FormatJSONSchema:
			return rejectSchema()
		case llm.FormatJSONObject:
			return rejectObject()
		}
		return llmtest.Text("Here you go:\n```json\n" + goodVerdict + "\n```")
	})
	c := newClient(t, srv)
	var deltas []string
	for i := range 2 {
		got, _, err := llm.Structured[verdict](context.Background(), c, llm.Request{
			Messages: []llm.Message{{Role: llm.RoleUser, Content: "q"}},
		}, llm.WithStreamDeltas(func(attempt int, d string) { deltas = append(deltas, fmt.Sprint(attempt)) }))
		if err != nil || !equalVerdict(got, wantVerdict()) {
			t.Fatalf("call %d: got %+v err %v", i, got, err)
		}
	}
	var formats []string
	for _, r := range srv.Requests() {
		formats = append(formats, r.Format())
	}
	if want := []string{"json_schema", "json_object", "", ""}; !slices.Equal(formats, want) {
		t.Errorf("formats = %v, want %v", formats, want)
	}
	last := srv.Last()
	if last.Messages[0].Role != llm.RoleSystem || !strings.Contains(last.System(), `"confidence"`) {
		t.Errorf("no schema system message added: %+v", last.Messages)
	}
	if len(deltas) == 0 || slices.ContainsFunc(deltas, func(s string) bool { return s != "1" }) {
		t.Errorf("delta attempts = %v, want all 1", deltas)
	}
}

func TestStructuredInvalidSchemaNotDowngraded(t *testing.T) {
	srv := llmtest.New(t)
	srv.Enqueue(llmtest.Reply{Status: 400, ErrorBody: llmtest.ErrorJSON("invalid_request_error", "",
		"Invalid schema for response_format 'verdict': In context=(), 'additionalProperties' is required")})
	c := newClient(t, srv)
	_, _, err := llm.Structured[verdict](context.Background(), c, ask("q"))
	var ae *llm.APIError
	if !errors.As(err, &ae) || ae.StatusCode != 400 || srv.Count() != 1 {
		t.Fatalf("err = %v, requests %d", err, srv.Count())
	}
}

func TestStructuredStreamDeltas(t *testing.T) {
	srv := llmtest.New(t)
	bad := `{"reasoning":"r","answer":"42","key_points":[],"confidence":2}`
	srv.Enqueue(llmtest.Text(bad), llmtest.Text(goodVerdict))
	c := newClient(t, srv)
	texts := map[int]*strings.Builder{}
	got, _, err := llm.Structured[verdict](context.Background(), c, ask("q"),
		llm.WithStreamDeltas(func(attempt int, d string) {
			if texts[attempt] == nil {
				texts[attempt] = &strings.Builder{}
			}
			texts[attempt].WriteString(d)
		}),
		llm.WithSchemaName("chat answer!"))
	if err != nil || !equalVerdict(got, wantVerdict()) {
		t.Fatalf("got %+v err %v", got, err)
	}
	if len(texts) != 2 || texts[1].String() != bad || texts[2].String() != goodVerdict {
		t.Errorf("streamed attempts = %v", texts)
	}
	for _, r := range srv.Requests() {
		if !r.Stream || r.SchemaName() != "chat_answer" {
			t.Errorf("stream=%v schema name %q", r.Stream, r.SchemaName())
		}
	}
}

func TestStructuredNeedsStruct(t *testing.T) {
	srv := llmtest.New(t)
	c := newClient(t, srv)
	_, _, err := llm.Structured[[]string](context.Background(), c, ask("q"))
	if err == nil || !strings.Contains(err.Error(), "needs a struct type") {
		t.Fatalf("err = %v", err)
	}
}

func TestStructuredRefusal(t *testing.T) {
	srv := llmtest.New(t)
	srv.Enqueue(llmtest.Reply{ErrorBody: `{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":"I can't help with that."},"finish_reason":"stop"}]}`})
	c := newClient(t, srv)
	_, resp, err := llm.Structured[verdict](context.Background(), c, ask("q"))
	if err == nil || !strings.Contains(err.Error(), "refused: I can't help with that.") || resp == nil || srv.Count() != 1 {
		t.Fatalf("err = %v resp %+v", err, resp)
	}
}
