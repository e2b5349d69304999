package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/event/eventtest"
)

// encodeUI runs events through a UIStream and returns the bytes written.
func encodeUI(t *testing.T, events []event.Event) string {
	t.Helper()
	var b strings.Builder
	s := NewUIStream(&b, nil)
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

// frames joins chunks the way the wire carries them.
func frames(chunks ...string) string {
	var b strings.Builder
	for _, c := range chunks {
		b.WriteString("data: " + c + "\n\n")
	}
	return b.String()
}

func TestUIStreamFrames(t *testing.T) {
	const done = "[DONE]"
	tests := []struct {
		name   string
		events []event.Event
		want   string
	}{
		{
			name:   "start",
			events: []event.Event{evStart()},
			want: frames(
				`{"type":"start","messageId":"msg_1","messageMetadata":{"runId":"run_1","chatId":"chat_1","mode":"search","model":"gpt-4o-mini"}}`,
				`{"type":"start-step"}`, done),
		},
		{
			name:   "start without message id uses the run id",
			events: []event.Event{{Type: event.TypeStart, Start: &event.Start{RunID: "run_9", Mode: "chat"}}},
			want: frames(
				`{"type":"start","messageId":"run_9","messageMetadata":{"runId":"run_9","mode":"chat"}}`,
				`{"type":"start-step"}`, done),
		},
		{
			name:   "second start is ignored",
			events: []event.Event{evStart(), evStart()},
			want: frames(
				`{"type":"start","messageId":"msg_1","messageMetadata":{"runId":"run_1","chatId":"chat_1","mode":"search","model":"gpt-4o-mini"}}`,
				`{"type":"start-step"}`, done),
		},
		{
			name:   "status has one part per stage",
			events: []event.Event{evStatus("rewrite", "Rewriting", ""), evStatus("rewrite", "Rewriting", "new q"), evStatus("read", "", "")},
			want: frames(
				`{"type":"data-status","id":"status-rewrite","data":{"stage":"rewrite","message":"Rewriting"}}`,
				`{"type":"data-status","id":"status-rewrite","data":{"stage":"rewrite","message":"Rewriting","detail":"new q"}}`,
				`{"type":"data-status","id":"status-read","data":{"stage":"read","message":"read"}}`, done),
		},
		{
			name: "query started, completed and failed keep the seed shape",
			events: []event.Event{
				evQuery(1, 0, 3, event.QueryStarted, "a", nil, ""),
				{Type: event.TypeQuery, Query: &event.Query{Query: "a", Index: 0, Total: 3, Status: event.QueryCompleted, ResultsCount: intp(8), ImagesCount: intp(2), Iteration: 1, Provider: "tavily"}},
				evQuery(2, 2, 3, event.QueryError, "c", nil, "timeout"),
			},
			want: frames(
				`{"type":"data-query_completion","id":"query-1-0","data":{"query":"a","index":0,"total":3,"status":"started","iteration":1}}`,
				`{"type":"data-query_completion","id":"query-1-0","data":{"query":"a","index":0,"total":3,"status":"completed","resultsCount":8,"imagesCount":2,"iteration":1}}`,
				`{"type":"data-query_completion","id":"query-2-2","data":{"query":"c","index":2,"total":3,"status":"error","error":"timeout","iteration":2}}`, done),
		},
		{
			name:   "zero results are reported, not omitted",
			events: []event.Event{evQuery(0, 1, 2, event.QueryCompleted, "b", intp(0), "")},
			want: frames(
				`{"type":"data-query_completion","id":"query-0-1","data":{"query":"b","index":1,"total":2,"status":"completed","resultsCount":0,"iteration":0}}`, done),
		},
		{
			name: "candidate sources are data, cited ones source-url once",
			events: []event.Event{
				{Type: event.TypeSource, Source: &sova.Source{URL: "https://a.example/", Title: "A", Snippet: "s", Kind: sova.SourceWeb, Favicon: "https://a.example/f.ico"}},
				evSource(3, "https://a.example/", "A"),
				evSource(3, "https://a.example/", "A"),
				{Type: event.TypeSource, Source: &sova.Source{Number: 4, URL: "https://b.example/"}},
			},
			want: frames(
				`{"type":"data-source","id":"source-https://a.example/","data":{"url":"https://a.example/","title":"A","snippet":"s","kind":"web","favicon":"https://a.example/f.ico"}}`,
				`{"type":"source-url","sourceId":"3","url":"https://a.example/","title":"A"}`,
				`{"type":"source-url","sourceId":"4","url":"https://b.example/"}`, done),
		},
		{
			name: "a cited source never read says so in its provider metadata and in the finish",
			events: []event.Event{
				{Type: event.TypeSource, Source: &sova.Source{Number: 1, URL: "https://a.example/", Title: "A", SnippetOnly: true}},
				{Type: event.TypeFinish, Finish: &event.Finish{Reason: event.FinishStop, Sources: []sova.Source{
					{Number: 1, URL: "https://a.example/", Title: "A", SnippetOnly: true},
					{Number: 2, URL: "https://b.example/", Title: "B"},
				}}},
			},
			want: frames(
				`{"type":"source-url","sourceId":"1","url":"https://a.example/","title":"A","providerMetadata":{"sova":{"snippetOnly":true}}}`,
				`{"type":"source-url","sourceId":"2","url":"https://b.example/","title":"B"}`,
				`{"type":"finish","finishReason":"stop","messageMetadata":{"finishReason":"stop","usage":{"inputTokens":0,"outputTokens":0,"totalTokens":0},"sources":[{"number":1,"url":"https://a.example/","title":"A","snippetOnly":true},{"number":2,"url":"https://b.example/","title":"B"}]}}`, done),
		},
		{
			name:   "pages are updated in place by url",
			events: []event.Event{evPage("https://a.example/", event.PageReading, 0, ""), evPage("https://a.example/", event.PageRead, 1200, ""), evPage("https://b.example/", event.PageFailed, 0, "403")},
			want: frames(
				`{"type":"data-page","id":"page-https://a.example/","data":{"url":"https://a.example/","state":"reading"}}`,
				`{"type":"data-page","id":"page-https://a.example/","data":{"url":"https://a.example/","state":"read","chars":1200}}`,
				`{"type":"data-page","id":"page-https://b.example/","data":{"url":"https://b.example/","state":"failed","error":"403"}}`, done),
		},
		{
			name:   "text opens once; empty deltas are dropped; no HTML escaping",
			events: []event.Event{evText("a <b> & [1]"), evText(""), evText("\n\"c\"")},
			want: frames(
				`{"type":"text-start","id":"text-0"}`,
				`{"type":"text-delta","id":"text-0","delta":"a <b> & [1]"}`,
				`{"type":"text-delta","id":"text-0","delta":"\n\"c\""}`, done),
		},
		{
			name:   "usage is transient",
			events: []event.Event{evUsage(10, 5)},
			want:   frames(`{"type":"data-usage","data":{"inputTokens":10,"outputTokens":5,"totalTokens":15},"transient":true}`, done),
		},
		{
			name: "mode data",
			events: []event.Event{
				{Type: event.TypeData, Data: &event.Data{Name: "extreme_search", ID: "plan", Value: json.RawMessage(`{"kind":"plan","status":{"title":"Plan"}}`)}},
				{Type: event.TypeData, Data: &event.Data{Name: "note", Value: json.RawMessage(`"hi"`), Transient: true}},
				{Type: event.TypeData, Data: &event.Data{Name: "empty"}},
			},
			want: frames(
				`{"type":"data-extreme_search","id":"plan","data":{"kind":"plan","status":{"title":"Plan"}}}`,
				`{"type":"data-note","data":"hi","transient":true}`,
				`{"type":"data-empty","data":null}`, done),
		},
		{
			name:   "finish closes text and step, adds cited sources, metadata",
			events: []event.Event{evStart(), evText("x [1]"), evSource(1, srcGo().URL, srcGo().Title), evFinish(event.FinishStop, sova.Usage{InputTokens: 7, OutputTokens: 3}, srcGo(), srcBlog())},
			want: frames(
				`{"type":"start","messageId":"msg_1","messageMetadata":{"runId":"run_1","chatId":"chat_1","mode":"search","model":"gpt-4o-mini"}}`,
				`{"type":"start-step"}`,
				`{"type":"text-start","id":"text-0"}`,
				`{"type":"text-delta","id":"text-0","delta":"x [1]"}`,
				`{"type":"source-url","sourceId":"1","url":"https://go.dev/doc/tutorial/generics","title":"Tutorial: Getting started with generics"}`,
				`{"type":"text-end","id":"text-0"}`,
				`{"type":"source-url","sourceId":"2","url":"https://go.dev/blog/intro-generics","title":"An Introduction To Generics"}`,
				`{"type":"finish-step"}`,
				`{"type":"finish","finishReason":"stop","messageMetadata":{"finishReason":"stop","usage":{"inputTokens":7,"outputTokens":3,"totalTokens":10},"model":"gpt-4o-mini","sources":[`+
					`{"number":1,"url":"https://go.dev/doc/tutorial/generics","title":"Tutorial: Getting started with generics","kind":"web"},`+
					`{"number":2,"url":"https://go.dev/blog/intro-generics","title":"An Introduction To Generics","kind":"web"}]}}`, done),
		},
		{
			name:   "finish takes the last usage event when its own is empty; events after finish are dropped",
			events: []event.Event{evUsage(4, 1), {Type: event.TypeFinish, Finish: &event.Finish{Reason: event.FinishLength}}, evText("late")},
			want: frames(
				`{"type":"data-usage","data":{"inputTokens":4,"outputTokens":1,"totalTokens":5},"transient":true}`,
				`{"type":"finish","finishReason":"length","messageMetadata":{"finishReason":"length","usage":{"inputTokens":4,"outputTokens":1,"totalTokens":5}}}`, done),
		},
		{
			name:   "error run: error chunk, then finish with reason error",
			events: errorRun(),
			want: frames(
				`{"type":"start","messageId":"msg_1","messageMetadata":{"runId":"run_1","chatId":"chat_1","mode":"search","model":"gpt-4o-mini"}}`,
				`{"type":"start-step"}`,
				`{"type":"data-status","id":"status-search","data":{"stage":"search","message":"Searching the web"}}`,
				`{"type":"data-query_completion","id":"query-1-0","data":{"query":"q","index":0,"total":1,"status":"started","iteration":1}}`,
				`{"type":"data-query_completion","id":"query-1-0","data":{"query":"q","index":0,"total":1,"status":"error","error":"connection refused","iteration":1}}`,
				`{"type":"text-start","id":"text-0"}`,
				`{"type":"text-delta","id":"text-0","delta":"Partial"}`,
				`{"type":"error","errorText":"model endpoint returned 503"}`,
				`{"type":"text-end","id":"text-0"}`,
				`{"type":"finish-step"}`,
				`{"type":"finish","finishReason":"error","messageMetadata":{"finishReason":"error","usage":{"inputTokens":10,"outputTokens":2,"totalTokens":12},"model":"gpt-4o-mini"}}`, done),
		},
		{
			name:   "cancelled run aborts and finishes interrupted",
			events: []event.Event{evStart(), {Type: event.TypeFinish, Finish: &event.Finish{Reason: event.FinishCancelled}}},
			want: frames(
				`{"type":"start","messageId":"msg_1","messageMetadata":{"runId":"run_1","chatId":"chat_1","mode":"search","model":"gpt-4o-mini"}}`,
				`{"type":"start-step"}`,
				`{"type":"abort","reason":"cancelled"}`,
				`{"type":"finish-step"}`,
				`{"type":"finish","finishReason":"interrupted","messageMetadata":{"finishReason":"cancelled","usage":{"inputTokens":0,"outputTokens":0,"totalTokens":0}}}`, done),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := encodeUI(t, tt.events); got != tt.want {
				t.Errorf("frames differ\n got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func TestUIStreamInvalidEvents(t *testing.T) {
	tests := []struct {
		name string
		ev   event.Event
	}{
		{"status without payload", event.Event{Type: event.TypeStatus}},
		{"data without name", event.Event{Type: event.TypeData, Data: &event.Data{Value: json.RawMessage(`1`)}}},
		{"data with invalid JSON", event.Event{Type: event.TypeData, Data: &event.Data{Name: "x", Value: json.RawMessage(`{`)}}},
		{"unknown type", event.Event{Type: "bogus"}},
		{"finish without payload", event.Event{Type: event.TypeFinish}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			s := NewUIStream(&b, nil)
			if err := s.Emit(tt.ev); !errors.Is(err, ErrInvalidEvent) {
				t.Fatalf("Emit = %v, want ErrInvalidEvent", err)
			}
			if b.Len() != 0 {
				t.Errorf("an invalid event wrote %q", b.String())
			}
			// The stream goes on.
			if err := s.Emit(evText("ok")); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestUIStreamCloseAndFlush(t *testing.T) {
	var b strings.Builder
	flushes := 0
	s := NewUIStream(&b, func() { flushes++ })
	if err := s.Emit(evStart()); err != nil {
		t.Fatal(err)
	}
	if flushes != 1 {
		t.Errorf("start (two frames) flushed %d times, want 1", flushes)
	}
	if err := s.KeepAlive(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Emit(evText("x")); !errors.Is(err, ErrClosed) {
		t.Errorf("Emit after Close = %v, want ErrClosed", err)
	}
	if n := strings.Count(b.String(), "data: [DONE]\n\n"); n != 1 {
		t.Errorf("[DONE] written %d times", n)
	}
	if !strings.Contains(b.String(), "\n\n: keep-alive\n\n") {
		t.Errorf("no keep-alive comment in %q", b.String())
	}
}

type failWriter struct{ n int }

func (f *failWriter) Write(p []byte) (int, error) {
	f.n++
	return 0, errors.New("broken pipe")
}

func TestUIStreamWriteErrorIsSticky(t *testing.T) {
	w := &failWriter{}
	s := NewUIStream(w, nil)
	for i := 0; i < 3; i++ {
		if err := s.Emit(evText("x")); err == nil || errors.Is(err, ErrInvalidEvent) {
			t.Fatalf("Emit %d = %v, want the write error", i, err)
		}
	}
	if w.n != 1 {
		t.Errorf("wrote %d times after the first failure, want 1 attempt", w.n)
	}
}

func TestSetUIStreamHeaders(t *testing.T) {
	h := http.Header{}
	SetUIStreamHeaders(h)
	want := map[string]string{
		"Content-Type":                  "text/event-stream",
		"Cache-Control":                 "no-cache",
		"Connection":                    "keep-alive",
		"X-Vercel-Ai-Ui-Message-Stream": "v1",
		"X-Accel-Buffering":             "no",
	}
	for k, v := range want {
		if got := h.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if len(h) != len(want) {
		t.Errorf("headers %v, want exactly %v", h, want)
	}
}

// TestUIStreamConcurrentEmit checks that frames from parallel emitters are
// never interleaved and the stream still validates.
func TestUIStreamConcurrentEmit(t *testing.T) {
	var b strings.Builder
	s := NewUIStream(&b, nil)
	if err := s.Emit(evStart()); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				url := fmt.Sprintf("https://e%d.example/%d", g, i)
				_ = s.Emit(evPage(url, event.PageReading, 0, ""))
				_ = s.Emit(evQuery(1, g, 8, event.QueryCompleted, "q", intp(i), ""))
				_ = s.Emit(evText("t"))
			}
		}()
	}
	wg.Wait()
	if err := s.Emit(evFinish(event.FinishStop, sova.Usage{})); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for i, f := range strings.Split(strings.TrimSuffix(out, "\n\n"), "\n\n") {
		body, ok := strings.CutPrefix(f, "data: ")
		if !ok {
			t.Fatalf("frame %d is not a data frame: %q", i, f)
		}
		if body != "[DONE]" && !json.Valid([]byte(body)) {
			t.Fatalf("frame %d is not JSON: %q", i, body)
		}
	}
	if strings.Count(out, `"type":"text-start"`) != 1 {
		t.Errorf("text-start sent %d times", strings.Count(out, `"type":"text-start"`))
	}
	sum, stderr, err := runValidator(t, out, "-")
	if err != nil {
		t.Fatalf("validator rejected the stream: %v\n%s", err, stderr)
	}
	if sum.TextLength != 8*50 {
		t.Errorf("text length %d, want %d", sum.TextLength, 8*50)
	}
}

// TestUIStreamWithAISDK feeds encoded runs to the real AI SDK parser.
func TestUIStreamWithAISDK(t *testing.T) {
	var sample eventtest.Recorder
	for _, e := range sampleRun() {
		sample.Emit(e)
	}
	tests := []struct {
		name       string
		events     []event.Event
		args       []string
		text       string
		sourceURLs int
		dataTypes  []string
		reason     string
		errors     []string
	}{
		{
			name:       "search run",
			events:     sampleRun(),
			text:       sample.Text(),
			sourceURLs: 2,
			dataTypes:  []string{"data-page", "data-query_completion", "data-source", "data-status", "data-usage"},
			reason:     "stop",
		},
		{
			name:      "error run",
			events:    errorRun(),
			args:      []string{"--allow-error"},
			text:      "Partial",
			dataTypes: []string{"data-query_completion", "data-status"},
			reason:    "error",
			errors:    []string{"model endpoint returned 503"},
		},
		{
			name:   "cancelled run",
			events: []event.Event{evStart(), evText("so far"), {Type: event.TypeFinish, Finish: &event.Finish{Reason: event.FinishCancelled}}},
			text:   "so far",
			reason: "interrupted",
		},
		{
			name:   "bare finish",
			events: []event.Event{{Type: event.TypeFinish, Finish: &event.Finish{}}},
			reason: "stop",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			aisdk(t)
			t.Parallel()
			path := filepath.Join(t.TempDir(), "stream.sse")
			if err := os.WriteFile(path, []byte(encodeUI(t, tt.events)), 0o600); err != nil {
				t.Fatal(err)
			}
			sum, stderr, err := runValidator(t, "", append(tt.args, path)...)
			if err != nil {
				t.Fatalf("validator rejected the stream: %v\n%s", err, stderr)
			}
			if sum.TextLength != len([]rune(tt.text)) || (sum.Text != "" && sum.Text != tt.text) {
				t.Errorf("text %q (%d), want %q", sum.Text, sum.TextLength, tt.text)
			}
			if sum.SourceURLs != tt.sourceURLs {
				t.Errorf("source-url parts %d, want %d", sum.SourceURLs, tt.sourceURLs)
			}
			if strings.Join(sum.DataTypes, ",") != strings.Join(tt.dataTypes, ",") {
				t.Errorf("data types %v, want %v", sum.DataTypes, tt.dataTypes)
			}
			if !sum.Finish || sum.FinishReason != tt.reason {
				t.Errorf("finish %v %q, want %q", sum.Finish, sum.FinishReason, tt.reason)
			}
			if strings.Join(sum.Errors, "|") != strings.Join(tt.errors, "|") {
				t.Errorf("errors %v, want %v", sum.Errors, tt.errors)
			}
		})
	}

	t.Run("search run metadata", func(t *testing.T) {
		t.Parallel()
		sum, stderr, err := runValidator(t, encodeUI(t, sampleRun()), "-")
		if err != nil {
			t.Fatalf("validator: %v\n%s", err, stderr)
		}
		var md struct {
			RunID        string        `json:"runId"`
			Mode         string        `json:"mode"`
			FinishReason string        `json:"finishReason"`
			Usage        sova.Usage    `json:"usage"`
			Sources      []sova.Source `json:"sources"`
		}
		if err := json.Unmarshal(sum.Metadata, &md); err != nil {
			t.Fatal(err)
		}
		if md.RunID != "run_1" || md.Mode != "search" || md.FinishReason != "stop" || md.Usage.TotalTokens != 3456 || len(md.Sources) != 2 {
			t.Errorf("message metadata %s", sum.Metadata)
		}
		if sum.MessageID != "msg_1" {
			t.Errorf("message id %q", sum.MessageID)
		}
		// Parts, not frames: 4 stages, 3 query ids (2 + 1 per
		// iteration), 3 candidate sources, 3 pages.
		if want := 4 + 3 + 3 + 3; sum.DataParts != want {
			t.Errorf("data parts %d, want %d: stable ids must update parts in place", sum.DataParts, want)
		}
	})
}

// TestValidatorRejects proves the validator is not a rubber stamp: each
// broken stream must fail it.
func TestValidatorRejects(t *testing.T) {
	good := encodeUI(t, []event.Event{evStart(), evText("hi"), evFinish(event.FinishStop, sova.Usage{})})
	tests := []struct {
		name   string
		stream string
		args   []string
		stderr string
	}{
		{"extra field", strings.Replace(good, `"delta":"hi"`, `"delta":"hi","extra":true`, 1), nil, `field "extra" is not declared`},
		{"wrong field type", strings.Replace(good, `"delta":"hi"`, `"delta":5`, 1), nil, "delta"},
		{"delta before start", strings.Replace(good, frames(`{"type":"text-start","id":"text-0"}`), "", 1), nil, "missing text part"},
		{"unknown chunk type", strings.Replace(good, `{"type":"start-step"}`, `{"type":"step"}`, 1), nil, "unknown chunk type"},
		{"bad finish reason", strings.Replace(good, `"finishReason":"stop","messageMetadata"`, `"finishReason":"done","messageMetadata"`, 1), nil, "finishReason"},
		{"not JSON", strings.Replace(good, `{"type":"start-step"}`, `{"type":`, 1), nil, "JSON"},
		{"no [DONE]", strings.TrimSuffix(good, frames("[DONE]")), nil, "[DONE]"},
		{"no finish", strings.Replace(good, frames(`{"type":"finish","finishReason":"stop","messageMetadata":{"finishReason":"stop","usage":{"inputTokens":0,"outputTokens":0,"totalTokens":0},"model":"gpt-4o-mini"}}`), "", 1), nil, "no finish chunk"},
		{"error chunk", encodeUI(t, errorRun()), nil, "error chunk: model endpoint returned 503"},
		{"error chunk does not excuse a bad chunk", strings.Replace(encodeUI(t, errorRun()), `"delta":"Partial"`, `"delta":"Partial","x":1`, 1), []string{"--allow-error"}, `field "x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.stream == good {
				t.Fatal("the test case did not break the stream")
			}
			_, stderr, err := runValidator(t, tt.stream, append(tt.args, "-")...)
			if err == nil {
				t.Fatalf("validator accepted a broken stream:\n%s", tt.stream)
			}
			if !strings.Contains(stderr, tt.stderr) {
				t.Errorf("stderr %q does not mention %q", stderr, tt.stderr)
			}
		})
	}
}

// TestValidatorOverHTTP serves a stream the way the server will and lets
// the validator fetch it with the AI SDK's DefaultChatTransport.
func TestValidatorOverHTTP(t *testing.T) {
	tests := []struct {
		name    string
		headers bool
		status  int
		ok      bool
		stderr  string
	}{
		{"with headers", true, http.StatusOK, true, ""},
		{"without the protocol header", false, http.StatusOK, false, "x-vercel-ai-ui-message-stream"},
		{"server error", true, http.StatusInternalServerError, false, "boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			aisdk(t)
			t.Parallel()
			bodies := make(chan []byte, 1)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got, err := io.ReadAll(r.Body)
				select {
				case bodies <- got:
				default:
				}
				if err != nil || r.Method != http.MethodPost {
					http.Error(w, "bad request", http.StatusBadRequest)
					return
				}
				if tt.status != http.StatusOK {
					http.Error(w, `{"error":{"message":"boom"}}`, tt.status)
					return
				}
				if tt.headers {
					SetUIStreamHeaders(w.Header())
				} else {
					w.Header().Set("Content-Type", "text/event-stream")
				}
				s := NewUIStream(w, w.(http.Flusher).Flush)
				for _, e := range sampleRun() {
					if err := s.Emit(e); err != nil {
						return
					}
				}
				_ = s.Close()
			}))
			defer srv.Close()
			body := `{"id":"chat_1","group":"search","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"go generics?"}]}]}`
			sum, stderr, err := runValidator(t, "", "--url", srv.URL+"/api/search", "--body", body)
			if !tt.ok {
				if err == nil {
					t.Fatal("validator accepted the response")
				}
				if !strings.Contains(stderr, tt.stderr) {
					t.Errorf("stderr %q does not mention %q", stderr, tt.stderr)
				}
				return
			}
			if err != nil {
				t.Fatalf("validator: %v\n%s", err, stderr)
			}
			if sum.SourceURLs != 2 || !sum.Finish {
				t.Errorf("summary %+v", sum)
			}
			gotBody := <-bodies
			var sent, want any
			_ = json.Unmarshal(gotBody, &sent)
			_ = json.Unmarshal([]byte(body), &want)
			if fmt.Sprint(sent) != fmt.Sprint(want) {
				t.Errorf("server got body %s, want %s", gotBody, body)
			}
		})
	}
}
