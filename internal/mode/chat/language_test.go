package chat

import (
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/event/eventtest"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
	"github.com/sova-ai/sova/internal/mode"
)

// The chat mode asks for the answer in the question's language and heads
// the key points in it, for the languages beyond Russian and English.
func TestAnswersInTheQuestionsLanguage(t *testing.T) {
	srv := llmtest.New(t)
	srv.Handle(func(r *llmtest.Request) llmtest.Reply {
		return llmtest.Text(`{"reasoning":"r","answer":"A.","key_points":["p"]}`)
	})
	c, err := llm.New(llm.Config{BaseURL: srv.URL(), APIKey: "k", Model: "m", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	m := New(Config{HistoryLimit: 4, MaxTokens: 1000}, c)
	for _, tt := range []struct{ question, name, heading string }{
		{"Was ist die Hauptstadt von Australien?", "German", "Das Wichtigste"},
		{"Quelle est la capitale de l'Australie ?", "French", "Points clés"},
		{"¿Cuál es la capital de Australia?", "Spanish", "Puntos clave"},
		{"Яка столиця Австралії?", "Ukrainian", "Головне"},
		{"Какая столица у Австралии?", "Russian", "Главное"},
		{"What is the capital of Australia?", "English", "Key points"},
	} {
		rec := &eventtest.Recorder{}
		res, err := m.Run(t.Context(), mode.Input{Question: tt.question, Now: time.Now()}, rec)
		if err != nil {
			t.Fatal(err)
		}
		if sys := srv.Last().System(); !strings.Contains(sys, "in "+tt.name+", the language") {
			t.Errorf("%q: prompt does not ask for %s:\n%s", tt.question, tt.name, sys)
		}
		if !strings.Contains(res.Text, "**"+tt.heading+"**") {
			t.Errorf("%q: answer %q lacks the heading %q", tt.question, res.Text, tt.heading)
		}
	}
}
