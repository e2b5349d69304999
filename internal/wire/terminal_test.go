package wire

import (
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova"
	"github.com/sova-ai/sova/internal/event"
)

func TestTerminal(t *testing.T) {
	tests := []struct {
		name   string
		color  bool
		events []event.Event
		want   string
	}{
		{
			name:   "search run",
			events: sampleRun(),
			want: `● search · gpt-4o-mini
→ Rewriting the query
→ Rewritten query: "go generics tutorial"
→ Searching the web
  ⟳ [1/2] "go generics tutorial"
  ⟳ [2/2] "golang type parameters"
  ✓ [1/2] "go generics tutorial" — 8 results (searxng)
  ✗ [2/2] "golang type parameters" — searxng: timeout after 10s
  ⟳ [1/1] "go generics constraints"
  ✓ [1/1] "go generics constraints" — 1 result (searxng)
→ Reading pages
  ⟳ reading https://go.dev/doc/tutorial/generics
  ⟳ reading https://go.dev/blog/intro-generics
  ⟳ reading https://example.com/spam
  ✓ read https://go.dev/doc/tutorial/generics — 12,345 chars
  ✗ failed https://example.com/spam — 403 Forbidden
  ✓ read https://go.dev/blog/intro-generics — 8,000 chars
→ Writing the answer
✓ Done in 4.2s · 3,456 tokens (3,000 in, 456 out)
`,
		},
		{
			name:   "error run",
			events: errorRun(),
			want: `● search · gpt-4o-mini
→ Searching the web
  ⟳ [1/1] "q"
  ✗ [1/1] "q" — searxng: connection refused
✗ Error: model endpoint returned 503 [llm_unavailable]
✗ Failed in 4.2s · 12 tokens (10 in, 2 out)
`,
		},
		{
			name: "images, stage detail, long query, usage event, length, no start",
			events: []event.Event{
				evStatus("rerank", "Ranking results", "top 5 of 24"),
				{Type: event.TypeQuery, Query: &event.Query{Query: strings.Repeat("a", 130) + "\nb", Index: 0, Total: 1, Status: event.QueryCompleted, ResultsCount: intp(1200), ImagesCount: intp(3)}},
				evUsage(100, 20),
				{Type: event.TypeFinish, Finish: &event.Finish{Reason: event.FinishLength}},
			},
			want: `→ Ranking results: top 5 of 24
  ✓ [1/1] "` + strings.Repeat("a", 119) + `…" — 1,200 results, 3 images
⚠ Stopped at the length limit · 120 tokens (100 in, 20 out)
`,
		},
		{
			name:   "cancelled",
			events: []event.Event{{Type: event.TypeStart, Time: t0(), Start: &event.Start{Mode: "chat"}}, {Type: event.TypeFinish, Time: t0().Add(1500 * time.Millisecond), Finish: &event.Finish{Reason: event.FinishCancelled}}},
			want:   "● chat\n⚠ Cancelled in 1.5s\n",
		},
		{
			name:   "colour",
			color:  true,
			events: []event.Event{evQuery(0, 0, 1, event.QueryCompleted, "q", intp(2), ""), evPage("https://a.example/", event.PageFailed, 0, "")},
			want: "\x1b[32m  ✓ \x1b[0m[1/1] \"q\"\x1b[2m — 2 results (searxng)\x1b[0m\n" +
				"\x1b[31m  ✗ \x1b[0mfailed https://a.example/\x1b[31m — failed\x1b[0m\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			term := NewTerminal(&b, tt.color)
			for _, e := range tt.events {
				if err := term.Emit(e); err != nil {
					t.Fatal(err)
				}
			}
			if err := term.Close(); err != nil {
				t.Fatal(err)
			}
			if got := b.String(); got != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
			if !tt.color && strings.Contains(b.String(), "\x1b") {
				t.Error("escape codes without colour")
			}
			if strings.Contains(b.String(), "Go added generics") {
				t.Error("the answer text leaked into progress")
			}
		})
	}
}

func TestThousandsAndClip(t *testing.T) {
	tests := []struct{ got, want string }{
		{thousands(0), "0"},
		{thousands(999), "999"},
		{thousands(1000), "1,000"},
		{thousands(1234567), "1,234,567"},
		{thousands(-12345), "-12,345"},
		{clip("a  b\n c", 10), "a b c"},
		{clip("абвгдеёжзи", 5), "абвг…"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

// The CLI's list of sources says which ones the run never read.
func TestSourceLine(t *testing.T) {
	read := sova.Source{Number: 1, URL: "https://a.example/", Title: "A"}
	snippet := sova.Source{Number: 2, URL: "https://b.example/", SnippetOnly: true}
	for _, tt := range []struct {
		src  sova.Source
		lang string
		want string
	}{
		{read, "en", "[1] A — https://a.example/"},
		{snippet, "en", "[2] https://b.example/ — https://b.example/ (search snippet only: the page was not read)"},
		{snippet, "ru", "[2] https://b.example/ — https://b.example/ (только фрагмент из поиска: страница не прочитана)"},
	} {
		if got := SourceLine(tt.src, tt.lang); got != tt.want {
			t.Errorf("SourceLine(%+v, %s) = %q, want %q", tt.src, tt.lang, got, tt.want)
		}
	}
}
