package wire

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/event"
)

// FuzzUIStream: whatever text and titles a run carries (control
// characters, invalid UTF-8, "\n\ndata: " that would end an SSE frame),
// the UI stream is frames of one JSON part each, ending with [DONE], and
// decoding it gives the text back. Seeds: testdata/fuzz/FuzzUIStream.
func FuzzUIStream(f *testing.F) {
	f.Add("Canberra\n\ndata: [DONE]\n\n", "a title", 3)
	f.Fuzz(func(t *testing.T, text, title string, pieces int) {
		var b strings.Builder
		s := NewUIStream(&b, nil)
		emit := func(e event.Event) {
			if err := s.Emit(e); err != nil {
				t.Fatalf("Emit(%s): %v", e.Type, err)
			}
		}
		emit(evStart())
		emit(evSource(1, "https://example.org/a", title))
		if pieces < 1 {
			pieces = 1
		}
		step := max(len(text)/min(pieces, 16), 1)
		for i := 0; i < len(text); {
			j := min(i+step, len(text))
			for j < len(text) && !utf8.RuneStart(text[j]) {
				j++ // deltas are whole characters, as a model's are
			}
			emit(evText(text[i:j]))
			i = j
		}
		emit(evFinish("stop", sova.Usage{}))
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		var got strings.Builder
		frames := strings.Split(b.String(), "\n\n")
		if frames[len(frames)-1] != "" || frames[len(frames)-2] != "data: [DONE]" {
			t.Fatalf("stream does not end with [DONE]: %q", b.String())
		}
		for _, fr := range frames[:len(frames)-2] {
			data, ok := strings.CutPrefix(fr, "data: ")
			if !ok || strings.Contains(data, "\n") {
				t.Fatalf("frame %q is not one data line", fr)
			}
			var part struct {
				Type  string `json:"type"`
				Delta string `json:"delta"`
			}
			if err := json.Unmarshal([]byte(data), &part); err != nil {
				t.Fatalf("frame %q: %v", fr, err)
			}
			if part.Type == "text-delta" {
				got.WriteString(part.Delta)
			}
		}
		if want := strings.ToValidUTF8(text, "\uFFFD"); utf8.ValidString(text) && got.String() != want {
			t.Fatalf("decoded text %q, sent %q", got.String(), text)
		}
	})
}
