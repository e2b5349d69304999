package wire

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sova-ai/sova"
	"github.com/sova-ai/sova/internal/event"
)

func render(t *testing.T, lang string, events ...event.Event) string {
	t.Helper()
	var b strings.Builder
	term := NewTerminal(&b, false)
	term.SetLanguage(lang)
	for _, e := range events {
		if err := term.Emit(e); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// A Russian question gets Russian progress lines: the terminal's own words
// and the modes' status messages, values kept.
func TestTerminalRussian(t *testing.T) {
	got := render(t, "ru",
		evStart(),
		evStatus("rewrite", "Rewriting the question", ""),
		evStatus("rewrite", "Rewritten query", "экономика 1930-х"),
		evStatus("search", "Searching, iteration 1 of 2", ""),
		evQuery(1, 0, 2, event.QueryCompleted, "экономика", intp(8), ""),
		evQuery(1, 1, 2, event.QueryCompleted, "рузвельт", intp(21), ""),
		evStatus("rerank", "24 distinct results, 5 best kept", ""),
		evStatus("read", "Reading 5 pages", ""),
		evPage("https://a.example/", event.PageReading, 0, ""),
		evPage("https://a.example/", event.PageRead, 12345, ""),
		evStatus("synthesize", "Writing the answer", ""),
		evStatus("research", `agent_1 could not finish "Банки"`, ""),
		evStatus("custom", "A message no table knows", ""),
		evFinish(event.FinishStop, sova.Usage{InputTokens: 3000, OutputTokens: 456, TotalTokens: 3456}),
	)
	want := `● search · gpt-4o-mini
→ Переформулирую вопрос
→ Запрос переформулирован: "экономика 1930-х"
→ Поиск, итерация 1 из 2
  ✓ [1/2] "экономика" — 8 результатов (searxng)
  ✓ [2/2] "рузвельт" — 21 результат (searxng)
→ Разных результатов: 24, оставлены лучшие: 5
→ Читаю страницы: 5
  ⟳ читаю https://a.example/
  ✓ прочитано https://a.example/ — 12,345 симв.
→ Пишу ответ
→ agent_1 не смог завершить "Банки"
→ A message no table knows
✓ Готово за 4.2s · 3,456 токенов (3,000 на входе, 456 на выходе)
`
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	// English stays as it was.
	if en := render(t, "en", evStatus("read", "Reading 5 pages", "")); en != "→ Reading 5 pages\n" {
		t.Errorf("English: %q", en)
	}
}

// A rewrite that failed is a warning, never printed as the rewritten query.
func TestTerminalWarning(t *testing.T) {
	failed := event.Event{Type: event.TypeStatus, Time: t0(), Status: &event.Status{
		Stage: "rewrite", Message: "Could not rewrite the question; searching for it as asked",
		Detail: "structured output: giving up after 6 attempts", Level: event.LevelWarning,
	}}
	for lang, want := range map[string]string{
		"en": "⚠ Could not rewrite the question; searching for it as asked: structured output: giving up after 6 attempts\n",
		"ru": "⚠ Не удалось переформулировать вопрос; ищу как есть: structured output: giving up after 6 attempts\n",
	} {
		got := render(t, lang, failed)
		if got != want {
			t.Errorf("%s: got %q, want %q", lang, got, want)
		}
		if strings.Contains(got, "Rewritten") || strings.Contains(got, "переформулирован:") {
			t.Errorf("%s: a failed rewrite shown as the rewritten query: %q", lang, got)
		}
	}
}

func TestRuPlural(t *testing.T) {
	for n, want := range map[int]string{0: "0 заметок", 1: "1 заметка", 3: "3 заметки", 5: "5 заметок", 11: "11 заметок", 12: "12 заметок", 21: "21 заметка", 22: "22 заметки", 111: "111 заметок", 1001: "1,001 заметка"} {
		if got := ruPlural(n, "заметка", "заметки", "заметок"); got != want {
			t.Errorf("ruPlural(%d) = %q, want %q", n, got, want)
		}
	}
}

// Every status message a mode writes has a Russian translation: the test
// reads the modes' source for calls of mode.Status, mode.Warn and the
// modes' own status helper, and for the search groups' Working lines.
func TestEveryModeStatusIsTranslated(t *testing.T) {
	known := map[string]bool{}
	for _, m := range ruMessages {
		known[m.en] = true
	}
	found := 0
	root := filepath.Join("..", "mode")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				if !isStatusCall(n.Fun) || len(n.Args) < 3 {
					return true
				}
				if msg, ok := formatOf(n.Args[2]); ok {
					found++
					if !known[msg] {
						t.Errorf("%s: status %q has no Russian translation (internal/wire/terminal_lang.go)", path, msg)
					}
				}
			case *ast.KeyValueExpr:
				if id, ok := n.Key.(*ast.Ident); ok && id.Name == "Working" {
					if msg, ok := formatOf(n.Value); ok {
						found++
						if !known[msg] {
							t.Errorf("%s: Working %q has no Russian translation", path, msg)
						}
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found < 40 {
		t.Errorf("found only %d status messages in the modes; the scan misses calls", found)
	}
}

func isStatusCall(fun ast.Expr) bool {
	switch f := fun.(type) {
	case *ast.SelectorExpr:
		x, ok := f.X.(*ast.Ident)
		return ok && x.Name == "mode" && (f.Sel.Name == "Status" || f.Sel.Name == "Warn")
	case *ast.Ident:
		return f.Name == "status"
	}
	return false
}

// formatOf returns the literal text or fmt.Sprintf format of a message.
func formatOf(e ast.Expr) (string, bool) {
	switch v := e.(type) {
	case *ast.BasicLit:
		if v.Kind == token.STRING {
			s, err := strconv.Unquote(v.Value)
			return s, err == nil
		}
	case *ast.CallExpr:
		if sel, ok := v.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Sprintf" && len(v.Args) > 0 {
			return formatOf(v.Args[0])
		}
	}
	return "", false
}
