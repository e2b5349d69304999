package wire

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sova-ai/sova/internal/event"
)

func TestTerminalExtremeData(t *testing.T) {
	tests := []struct {
		name, value, want string
	}{
		{"plan being written", `{"kind":"plan","status":{"title":"Planning the research"}}`, ""},
		{"plan", `{"kind":"plan","status":{"title":"Research plan ready"},"plan":[{"title":"Growth","todos":["GDP by decade","New Deal"]}]}`,
			"→ Research plan\n  ▸ Growth\n    · GDP by decade\n    · New Deal\n"},
		{"plan completed", `{"kind":"plan","status":{"title":"Research completed"},"plan":[{"title":"Growth","todos":["a"]}]}`, ""},
		{"query started", `{"kind":"query","queryId":"q","query":"GDP","status":"started","sources":[]}`, ""},
		{"query completed", `{"kind":"query","queryId":"q","query":"GDP by decade","status":"completed","sources":[{},{}]}`,
			"  ⌕ \"GDP by decade\" — 2 sources\n"},
		{"query failed", `{"kind":"query","query":"GDP","status":"error","error":"searxng: 403"}`, "  ⌕ \"GDP\" — failed: searxng: 403\n"},
		{"source", `{"kind":"source","queryId":"q","source":{"url":"u"}}`, ""},
		{"x completed", `{"kind":"x_search","query":"New Deal","status":"completed","result":{"content":"c","citations":[],"sources":[{}]}}`,
			"  ⌕ X: \"New Deal\" — 1 post\n"},
		{"code running", `{"kind":"code","title":"Chart","code":"x","status":"running"}`, ""},
		{"code completed", `{"kind":"code","title":"Chart","status":"completed","result":{"stdout":"","stderr":"","exitCode":0},"charts":[{}]}`,
			"  ▶ Chart — ran, 1 chart\n"},
		{"code failed", `{"kind":"code","title":"Chart","status":"error","result":{"stdout":"","stderr":"boom","exitCode":1}}`,
			"  ▶ Chart — exit status 1\n"},
		{"malformed", `"oops"`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			e := event.Event{Type: event.TypeData, Time: t0(), Data: &event.Data{Name: "extreme_search", ID: "x", Value: json.RawMessage(tt.value)}}
			if err := NewTerminal(&b, false).Emit(e); err != nil {
				t.Fatal(err)
			}
			if b.String() != tt.want {
				t.Errorf("got\n%q\nwant\n%q", b.String(), tt.want)
			}
		})
	}
}
