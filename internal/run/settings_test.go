package run

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/store"
)

// The person's settings reach the mode (instructions, language, their
// time zone over the request's), and the history is pruned on the way.
func TestSettingsAndPruningReachTheMode(t *testing.T) {
	st, err := store.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "sova.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var got mode.Input
	reg, _ := mode.NewRegistry(scripted{run: func(_ context.Context, in mode.Input, _ event.Sink) (*mode.Result, error) {
		got = in
		return &mode.Result{Text: "ok", FinishReason: "stop"}, nil
	}})
	svc := NewService(Options{Store: st, Modes: reg, Settings: st, Prune: mode.SeedPruning, Model: "gpt-4o-mini"})
	defer svc.Close(context.Background())
	if err := st.PutUserSettings(context.Background(), testUser, sova.UserSettings{
		CustomInstructions: "Always answer in verse.", Language: "de", TimeZone: "Asia/Tokyo",
		Preferences: map[string]string{"interview.role": "Head of research; call me Anna", "interview.completed": "true"},
	}); err != nil {
		t.Fatal(err)
	}
	var msgs []llm.Message
	for i := range 12 {
		role := llm.RoleUser
		content := "question"
		if i%2 == 1 {
			role, content = llm.RoleAssistant, "<Thought>hmm</Thought>answer"
		}
		msgs = append(msgs, llm.Message{Role: role, Content: content})
	}
	msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: "last question"})
	p, err := svc.Prepare(userCtx(t), Request{Mode: "scripted", Messages: msgs, Timezone: "Europe/Berlin"})
	if err != nil {
		t.Fatal(err)
	}
	if out := svc.Execute(userCtx(t), p, event.Discard); out.Err != nil {
		t.Fatal(out.Err)
	}
	if got.Instructions != "Always answer in verse." || got.Language != "de" || got.Timezone != "Asia/Tokyo" {
		t.Errorf("input = instructions %q, language %q, tz %q", got.Instructions, got.Language, got.Timezone)
	}
	if len(got.History) != 4 || got.History[1].Content != "answer" {
		t.Errorf("history = %+v; want the first and the last 3 before the question, thoughts stripped", got.History)
	}
	// The interview's preferences reach the prompt with the instructions.
	if p := mode.Personal(got); !strings.Contains(p, "Always answer in verse.") || !strings.Contains(p, "call me Anna") || strings.Contains(p, "completed") {
		t.Errorf("Personal = %q", p)
	}
	if l := mode.LanguageOf(got); l.Name != "German" {
		t.Errorf("LanguageOf = %+v", l)
	}

	// Without settings: the request's time zone, the question's language.
	other := sova.WithUser(context.Background(), sova.User{ID: "bob"})
	p, err = svc.Prepare(other, Request{Mode: "scripted", Messages: msgs[len(msgs)-1:], Timezone: "Europe/Berlin"})
	if err != nil {
		t.Fatal(err)
	}
	svc.Execute(other, p, event.Discard)
	if mode.Personal(got) != "" || got.Instructions != "" || got.Language != "" || got.Timezone != "Europe/Berlin" || mode.LanguageOf(got).Code != "en" {
		t.Errorf("bob's input = %+v", got)
	}
}
