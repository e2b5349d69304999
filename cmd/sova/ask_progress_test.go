package main

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/llm/llmtest"
)

// sovaCombined runs sova with stdout and stderr on one stream, as a
// terminal shows them.
func (w *world) sovaCombined(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, args...)
	cmd.Env = w.env()
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	if err := cmd.Run(); err != nil {
		t.Fatalf("sova %v: %v\n%s", args, err, b.String())
	}
	return b.String()
}

// A Russian question whose rewrite fails: the progress is Russian, the
// failed rewrite is a warning (never "Rewritten query: <the error>"), and
// the closing line starts a line of its own after the answer.
func TestAskProgressOnATerminal(t *testing.T) {
	w := newWorld(t)
	w.model.Handle(func(r *llmtest.Request) llmtest.Reply {
		if r.SchemaName() == "QueryRewrite" {
			return llmtest.Text("I cannot answer in JSON today.")
		}
		return w.model.Respond(r)
	})
	out := w.sovaCombined(t, "ask", "--mode", "search", "--no-save", "Как президенты описывали экономику в 1930-х?")
	for _, want := range []string{"→ Переформулирую вопрос", "⚠ Не удалось переформулировать вопрос; ищу как есть", "результат", "→ Пишу ответ"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{"Rewritten query", "Запрос переформулирован:", "Rewriting the question", "Writing the answer"} {
		if strings.Contains(out, bad) {
			t.Errorf("output has %q:\n%s", bad, out)
		}
	}
	i := strings.Index(out, "✓ Готово")
	if i < 0 {
		t.Fatalf("no closing line:\n%s", out)
	}
	if i == 0 || out[i-1] != '\n' {
		t.Errorf("the closing line is glued to the answer: %q", out[max(0, i-40):min(len(out), i+20)])
	}

	// An English question keeps English progress.
	w.model.Handle(w.model.Respond)
	out = w.sovaCombined(t, "ask", "--mode", "search", "--no-save", "How did presidents describe the economy in the 1930s?")
	if !strings.Contains(out, "→ Rewritten query: ") || !strings.Contains(out, "\n✓ Done in ") {
		t.Errorf("English progress:\n%s", out)
	}
}
