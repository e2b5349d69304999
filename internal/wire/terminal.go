package wire

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/event"
)

// ANSI styles. Only used when colour is on.
const (
	ansiReset  = "\x1b[0m"
	ansiBold   = "\x1b[1m"
	ansiDim    = "\x1b[2m"
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiCyan   = "\x1b[36m"
)

// Terminal renders a run's progress for people, one line per step, meant
// for stderr while the answer goes to stdout. It never prints answer text
// or sources (the caller prints those). Lines are only appended, never
// rewritten, so the output stays readable when piped into a log.
//
//	→ Rewritten query: "go generics tutorial"
//	  ⟳ [2/3] "go generics"
//	  ✓ [2/3] "go generics" — 8 results
//	  ✗ [3/3] "golang generics" — searxng: timeout
//	  ⟳ reading https://go.dev/doc/tutorial/generics
//	  ✓ read https://go.dev/doc/tutorial/generics — 12,345 chars
//	⚙ Searching the web for "go generics"
//	  ✓ web_search: 8 results
//	✓ Done in 4.2s · 3,456 tokens (3,000 in, 456 out)
type Terminal struct {
	mu     sync.Mutex
	w      io.Writer
	color  bool
	start  time.Time
	usage  sova.Usage
	closed bool
	lang   string // the question's language (SetLanguage, terminal_lang.go)
}

// NewTerminal returns a progress renderer writing to w; color turns on ANSI
// colours (callers decide, e.g. from isatty and NO_COLOR).
func NewTerminal(w io.Writer, color bool) *Terminal {
	return &Terminal{w: w, color: color}
}

// Emit renders one event; events that concern no person (text, sources,
// mode data other than deep research's) print nothing. Safe for
// concurrent use.
func (t *Terminal) Emit(e event.Event) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return ErrClosed
	}
	var b bytes.Buffer
	t.render(&b, e)
	if b.Len() == 0 {
		return nil
	}
	_, err := t.w.Write(b.Bytes())
	return err
}

// Close marks the renderer closed; it owns nothing to release.
func (t *Terminal) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	return nil
}

var _ Encoder = (*Terminal)(nil)

func (t *Terminal) style(code, s string) string {
	if !t.color || s == "" {
		return s
	}
	return code + s + ansiReset
}

func (t *Terminal) render(b *bytes.Buffer, e event.Event) {
	line := func(parts ...string) {
		for _, p := range parts {
			b.WriteString(p)
		}
		b.WriteByte('\n')
	}
	switch e.Type {
	case event.TypeStart:
		if e.Start == nil {
			return
		}
		t.start = e.Time
		desc := e.Start.Mode
		if e.Start.Model != "" {
			desc += " · " + e.Start.Model
		}
		if desc != "" {
			line(t.style(ansiDim, "● "+desc))
		}

	case event.TypeStatus:
		st := e.Status
		if st == nil {
			return
		}
		msg := t.translate(st.Message)
		if msg == "" {
			msg = st.Stage
		}
		w := t.words()
		switch {
		case st.Level == event.LevelWarning:
			// A step failed and the run went on another way: a warning,
			// never shown as the step's result.
			tail := ""
			if st.Detail != "" {
				tail = ": " + clip(st.Detail, 200)
			}
			line(t.style(ansiYellow, "⚠ "+msg), t.style(ansiDim, tail))
		case st.Stage == "rewrite" && st.Detail != "":
			line(t.style(ansiCyan, "→ "), w.rewritten+": ", quote(clip(st.Detail, 200)))
		case st.Detail != "":
			line(t.style(ansiCyan, "→ "), t.style(ansiBold, msg), t.style(ansiDim, ": "+clip(st.Detail, 200)))
		default:
			line(t.style(ansiCyan, "→ "), t.style(ansiBold, msg))
		}

	case event.TypeQuery:
		q := e.Query
		if q == nil {
			return
		}
		head := "[" + strconv.Itoa(q.Index+1) + "/" + strconv.Itoa(q.Total) + "] " + quote(clip(q.Query, 120))
		switch q.Status {
		case event.QueryStarted:
			line(t.style(ansiDim, "  ⟳ "+head))
		case event.QueryCompleted:
			tail := " — " + t.words().results(derefInt(q.ResultsCount))
			if n := derefInt(q.ImagesCount); n > 0 {
				tail += ", " + t.words().images(n)
			}
			if q.Provider != "" {
				tail += " (" + q.Provider + ")"
			}
			line(t.style(ansiGreen, "  ✓ "), head, t.style(ansiDim, tail))
		case event.QueryError:
			why := q.Error
			if why == "" {
				why = "failed"
			}
			if q.Provider != "" {
				why = q.Provider + ": " + why
			}
			line(t.style(ansiRed, "  ✗ "), head, t.style(ansiRed, " — "+clip(why, 200)))
		}

	case event.TypePage:
		p := e.Page
		if p == nil {
			return
		}
		u := clip(p.URL, 100)
		w := t.words()
		switch p.State {
		case event.PageReading:
			line(t.style(ansiDim, "  ⟳ "+w.reading+" "+u))
		case event.PageRead:
			line(t.style(ansiGreen, "  ✓ "), w.read+" ", u, t.style(ansiDim, " — "+thousands(p.Chars)+" "+w.chars))
		case event.PageFailed:
			why := p.Error
			if why == "" {
				why = w.failed
			}
			line(t.style(ansiRed, "  ✗ "), w.failed+" ", u, t.style(ansiRed, " — "+clip(why, 200)))
		}

	case event.TypeToolCall:
		tc := e.ToolCall
		if tc == nil {
			return
		}
		what := tc.Title
		if what == "" {
			what = tc.Name
			if len(tc.Input) > 0 && string(tc.Input) != "{}" {
				what += " " + clip(string(tc.Input), 160)
			}
		}
		line(t.style(ansiCyan, "⚙ "), clip(what, 200))

	case event.TypeToolResult:
		tr := e.ToolResult
		if tr == nil {
			return
		}
		if tr.Error != "" {
			line(t.style(ansiRed, "  ✗ "), tr.Name, t.style(ansiRed, ": "+clip(tr.Error, 200)))
			return
		}
		if first, _, _ := strings.Cut(strings.TrimSpace(tr.Text), "\n"); first != "" {
			line(t.style(ansiGreen, "  ✓ "), tr.Name, t.style(ansiDim, ": "+clip(first, 160)))
		}

	case event.TypeData:
		if e.Data != nil {
			t.renderData(line, e.Data)
		}

	case event.TypeUsage:
		if e.Usage != nil {
			t.usage = *e.Usage
		}

	case event.TypeError:
		if e.Error == nil {
			return
		}
		msg := e.Error.Message
		if e.Error.Code != "" {
			msg += " [" + e.Error.Code + "]"
		}
		line(t.style(ansiRed, t.words().errorWord+msg))

	case event.TypeFinish:
		f := e.Finish
		if f == nil {
			return
		}
		usage := f.Usage
		if usage == (sova.Usage{}) {
			usage = t.usage
		}
		var took string
		if !t.start.IsZero() && !e.Time.IsZero() && !e.Time.Before(t.start) {
			took = e.Time.Sub(t.start).Round(100 * time.Millisecond).String()
		}
		var head string
		w := t.words()
		switch f.Reason {
		case event.FinishLength:
			head = t.style(ansiYellow, w.length)
		case event.FinishCancelled:
			head = t.style(ansiYellow, w.cancelled)
		case event.FinishError:
			head = t.style(ansiRed, w.failedRun)
		default:
			head = t.style(ansiGreen, w.done)
		}
		if took != "" {
			head += w.in + took
		}
		if u := usage.WithTotal(); u.TotalTokens > 0 {
			head += t.style(ansiDim, " · "+thousands(u.TotalTokens)+" "+w.tokens+" ("+
				thousands(u.InputTokens)+" "+w.tokensIn+", "+thousands(u.OutputTokens)+" "+w.tokensOut+")")
		}
		line(head)
	}
}

// quote wraps s in double quotes as people write them; Go quoting would
// escape quotes and show backslashes.
func quote(s string) string { return "\"" + s + "\"" }

func derefInt(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return thousands(n) + " " + word + "s"
}

// thousands formats n with comma separators: 12345 → "12,345".
func thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// clip shortens s to at most n runes, ending with "…", and puts it on one
// line so that a stray newline cannot break the layout.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// SourceLine is a source as a line of a terminal's list of sources:
// "[n] title — url", and after a source the run never read (its snippet
// is all the answer had of it) a note saying so, in Russian when language
// is "ru". The CLI prints the list under the answer.
func SourceLine(s sova.Source, language string) string {
	title := s.Title
	if title == "" {
		title = s.URL
	}
	line := "[" + strconv.Itoa(s.Number) + "] " + title + " — " + s.URL
	if s.SnippetOnly {
		line += " " + SnippetOnlyNote(language)
	}
	return line
}

// SnippetOnlyNote is the note after a source the run never read.
func SnippetOnlyNote(language string) string {
	if language == "ru" {
		return "(только фрагмент из поиска: страница не прочитана)"
	}
	return "(search snippet only: the page was not read)"
}
