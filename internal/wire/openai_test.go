package wire

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/event/eventtest"
)

func encodeChunks(t *testing.T, includeUsage bool, events []event.Event, opts ...ChunkOption) string {
	t.Helper()
	var b strings.Builder
	s := NewChunkStream(&b, nil, "chatcmpl-run_1", "run_1", time.Unix(1700000000, 0), includeUsage, opts...)
	for _, e := range events {
		if err := s.Emit(e); err != nil {
			t.Fatalf("Emit(%s): %v", e.Type, err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestChunkStreamFrames(t *testing.T) {
	const (
		head   = `{"id":"chatcmpl-run_1","object":"chat.completion.chunk","created":1700000000,"model":"run_1","choices":`
		role   = head + `[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`
		stop   = head + `[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]}`
		length = head + `[{"index":0,"delta":{},"logprobs":null,"finish_reason":"length"}]}`
		done   = "[DONE]"
	)
	content := func(s string) string {
		return head + `[{"index":0,"delta":{"content":` + s + `},"logprobs":null,"finish_reason":null}]}`
	}
	reasoning := func(s string) string {
		return head + `[{"index":0,"delta":{"reasoning_content":` + s + `},"logprobs":null,"finish_reason":null}]}`
	}
	tests := []struct {
		name         string
		includeUsage bool
		opts         []ChunkOption
		events       []event.Event
		want         string
	}{
		{
			name:   "answer without usage; progress is not content",
			events: sampleRun(),
			want: frames(role,
				content(`"Go added generics in 1.18 [1]. "`),
				content(`"Type parameters <T any> are constrained by interfaces [2]."`),
				content(`" Ясно & \"quoted\" [1][2]."`),
				stop, done),
		},
		{
			name:         "usage chunk has empty choices",
			includeUsage: true,
			events:       []event.Event{evStart(), evText("hi"), evFinish(event.FinishStop, sova.Usage{InputTokens: 3000, OutputTokens: 456})},
			want: frames(role, content(`"hi"`), stop,
				head+`[],"usage":{"prompt_tokens":3000,"completion_tokens":456,"total_tokens":3456}}`, done),
		},
		{
			name:         "usage falls back to the last usage event; length",
			includeUsage: true,
			events:       []event.Event{evText("a"), evUsage(5, 6), {Type: event.TypeFinish, Finish: &event.Finish{Reason: event.FinishLength}}},
			want: frames(role, content(`"a"`), length,
				head+`[],"usage":{"prompt_tokens":5,"completion_tokens":6,"total_tokens":11}}`, done),
		},
		{
			name:   "cancelled maps to stop",
			events: []event.Event{evStart(), {Type: event.TypeFinish, Finish: &event.Finish{Reason: event.FinishCancelled}}},
			want:   frames(role, stop, done),
		},
		{
			name:         "error frame, then only [DONE]",
			includeUsage: true,
			events:       errorRun(),
			want: frames(role, content(`"Partial"`),
				`{"error":{"message":"model endpoint returned 503","type":"server_error","code":"llm_unavailable"}}`, done),
		},
		{
			name:   "finish with reason error and no error event",
			events: []event.Event{evStart(), {Type: event.TypeFinish, Finish: &event.Finish{Reason: event.FinishError}}},
			want:   frames(role, `{"error":{"message":"run failed","type":"server_error","code":null}}`, done),
		},
		{
			name:   "progress mirrored as reasoning",
			opts:   []ChunkOption{WithProgress(ProgressReasoning)},
			events: []event.Event{evStart(), evStatus("search", "Searching the web", ""), evQuery(1, 0, 2, event.QueryCompleted, "go", intp(8), ""), evSource(0, "https://a.example/", "A"), evText("x"), evFinish(event.FinishStop, sova.Usage{})},
			want: frames(role,
				reasoning(`"→ Searching the web\n"`),
				reasoning(`"  ✓ [1/2] \"go\" — 8 results (searxng)\n"`),
				content(`"x"`), stop, done),
		},
		{
			name: "no events: only [DONE]",
			want: frames(done),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := encodeChunks(t, tt.includeUsage, tt.events, tt.opts...); got != tt.want {
				t.Errorf("frames differ\n got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

// TestChunkStreamDecodes reassembles a stream the way an OpenAI client
// does: concatenated content equals the answer.
func TestChunkStreamDecodes(t *testing.T) {
	var rec eventtest.Recorder
	for _, e := range sampleRun() {
		rec.Emit(e)
	}
	out := encodeChunks(t, true, sampleRun())
	var text strings.Builder
	var role, finish string
	var usage *CompletionUsage
	for _, f := range strings.Split(strings.TrimSuffix(out, "\n\n"), "\n\n") {
		body := strings.TrimPrefix(f, "data: ")
		if body == "[DONE]" {
			break
		}
		var c ChatCompletionChunk
		if err := json.Unmarshal([]byte(body), &c); err != nil {
			t.Fatal(err)
		}
		if c.Object != ObjectChatCompletionChunk || c.Model != "run_1" {
			t.Fatalf("chunk %s", body)
		}
		if c.Usage != nil {
			usage = c.Usage
		}
		for _, ch := range c.Choices {
			if ch.Delta.Role != "" {
				role = ch.Delta.Role
			}
			if ch.Delta.Content != nil {
				text.WriteString(*ch.Delta.Content)
			}
			if ch.FinishReason != nil {
				finish = *ch.FinishReason
			}
		}
	}
	if role != "assistant" || finish != "stop" || text.String() != rec.Text() {
		t.Errorf("role %q finish %q text %q", role, finish, text.String())
	}
	if usage == nil || usage.TotalTokens != 3456 {
		t.Errorf("usage %+v", usage)
	}
}

func TestChunkStreamClosed(t *testing.T) {
	var b strings.Builder
	s := NewChunkStream(&b, nil, "id", "m", time.Unix(0, 0), false)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Emit(evText("x")); !errors.Is(err, ErrClosed) {
		t.Errorf("Emit after Close = %v", err)
	}
	if b.String() != "data: [DONE]\n\n" {
		t.Errorf("wrote %q", b.String())
	}
}

func TestCompletion(t *testing.T) {
	tests := []struct {
		reason, want string
		usage        sova.Usage
		wantUsage    CompletionUsage
	}{
		{event.FinishStop, "stop", sova.Usage{InputTokens: 10, OutputTokens: 5, TotalTokens: 15}, CompletionUsage{10, 5, 15}},
		{event.FinishLength, "length", sova.Usage{InputTokens: 1, OutputTokens: 2}, CompletionUsage{1, 2, 3}},
		{event.FinishCancelled, "stop", sova.Usage{}, CompletionUsage{}},
		{"", "stop", sova.Usage{}, CompletionUsage{}},
		{"content_filter", "content_filter", sova.Usage{}, CompletionUsage{}},
	}
	for _, tt := range tests {
		t.Run(tt.reason, func(t *testing.T) {
			c := Completion("chatcmpl-1", "deep_research", time.Unix(1700000000, 0), "answer [1]", tt.reason, tt.usage)
			b, err := json.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			u, _ := json.Marshal(tt.wantUsage)
			want := `{"id":"chatcmpl-1","object":"chat.completion","created":1700000000,"model":"deep_research",` +
				`"choices":[{"index":0,"message":{"role":"assistant","content":"answer [1]"},"logprobs":null,"finish_reason":"` + tt.want + `"}],` +
				`"usage":` + string(u) + `}`
			if string(b) != want {
				t.Errorf("got  %s\nwant %s", b, want)
			}
		})
	}
}
