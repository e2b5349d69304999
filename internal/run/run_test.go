package run

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/store"
)

// scripted is a mode whose behaviour each test sets.
type scripted struct {
	run func(ctx context.Context, in mode.Input, sink event.Sink) (*mode.Result, error)
}

func (s scripted) ID() string          { return "scripted" }
func (s scripted) Description() string { return "test mode" }
func (s scripted) Run(ctx context.Context, in mode.Input, sink event.Sink) (*mode.Result, error) {
	return s.run(ctx, in, sink)
}

type titler struct {
	title string
	err   error
}

func (t titler) Title(context.Context, string, string) (string, error) { return t.title, t.err }

func newService(t *testing.T, m scripted, tt Titler, timeout time.Duration) (*Service, store.Store) {
	t.Helper()
	st, err := store.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "sova.db"))
	if err != nil {
		t.Fatal(err)
	}
	reg, err := mode.NewRegistry(m)
	if err != nil {
		t.Fatal(err)
	}
	svc := NewService(Options{Store: st, Modes: reg, Titler: tt, Timeout: timeout, MaxQuestionChars: 50})
	t.Cleanup(func() {
		_ = svc.Close(context.Background())
		_ = st.Close()
	})
	return svc, st
}

func answer(text string) scripted {
	return scripted{run: func(_ context.Context, in mode.Input, sink event.Sink) (*mode.Result, error) {
		sink.Emit(event.Event{Type: event.TypeTextDelta, Text: text})
		return &mode.Result{Text: text, FinishReason: "stop", Model: "m"}, nil
	}}
}

func TestPrepareRejectsBadInput(t *testing.T) {
	svc, st := newService(t, answer("ok"), nil, 0)
	user := func(s string) []llm.Message { return []llm.Message{{Role: "user", Content: s}} }
	tests := []struct {
		name string
		req  Request
		want error
	}{
		{"unknown mode", Request{Mode: "nope", Messages: user("hi"), Persist: true}, ErrUnknownMode},
		{"no messages", Request{Mode: "scripted", Persist: true}, ErrEmptyQuestion},
		{"blank", Request{Mode: "scripted", Messages: user(" \n"), Persist: true}, ErrEmptyQuestion},
		{"last is assistant", Request{Mode: "scripted", Messages: []llm.Message{{Role: "assistant", Content: "x"}}, Persist: true}, ErrEmptyQuestion},
		{"too long", Request{Mode: "scripted", Messages: user(strings.Repeat("я", 51)), Persist: true}, ErrTooLong},
	}
	for _, tt := range tests {
		if _, err := svc.Prepare(context.Background(), tt.req); !errors.Is(err, tt.want) {
			t.Errorf("%s: err = %v, want %v", tt.name, err, tt.want)
		}
	}
	if chats, _ := st.ListChats(context.Background(), store.LocalUserID, 10, 0); len(chats) != 0 {
		t.Errorf("rejected requests stored %d chats", len(chats))
	}
}

func TestExecuteStoresAnswerAndTitle(t *testing.T) {
	svc, st := newService(t, answer("Canberra."), titler{title: "Capital of Australia"}, 0)
	ctx := context.Background()
	p, err := svc.Prepare(ctx, Request{Mode: "scripted", Messages: []llm.Message{{Role: "user", Content: "Capital of Australia?"}}, Persist: true})
	if err != nil {
		t.Fatal(err)
	}
	var rec event.Recorder
	o := svc.Execute(ctx, p, &rec)
	if o.Err != nil {
		t.Fatal(o.Err)
	}
	evs := rec.Events()
	if evs[0].Type != event.TypeStart || evs[len(evs)-1].Type != event.TypeFinish || evs[len(evs)-1].Finish.Reason != "stop" {
		t.Errorf("events: first %s last %s", evs[0].Type, evs[len(evs)-1].Type)
	}
	_ = svc.Close(ctx) // waits for the title
	chat, _ := st.GetChat(ctx, store.LocalUserID, p.ChatID)
	msgs, _ := st.ListMessages(ctx, store.LocalUserID, p.ChatID)
	if chat.Title != "Capital of Australia" || len(msgs) != 2 || msgs[1].Content != "Canberra." || msgs[1].ID != p.MessageID {
		t.Errorf("chat %+v, messages %+v", chat, msgs)
	}
}

func TestFailedRunKeepsStoreConsistent(t *testing.T) {
	tests := []struct {
		name       string
		mode       scripted
		timeout    time.Duration
		wantReason string
		wantErr    string
	}{
		{"mode error", scripted{run: func(_ context.Context, _ mode.Input, sink event.Sink) (*mode.Result, error) {
			sink.Emit(event.Event{Type: event.TypeTextDelta, Text: "partial"})
			return nil, errors.New("model endpoint answered 401")
		}}, 0, "error", "401"},
		{"timeout", scripted{run: func(ctx context.Context, _ mode.Input, _ event.Sink) (*mode.Result, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}}, 50 * time.Millisecond, "error", "SOVA_RUN_TIMEOUT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc, st := newService(t, tt.mode, titler{err: errors.New("no")}, tt.timeout)
			ctx := context.Background()
			p, err := svc.Prepare(ctx, Request{Mode: "scripted", Messages: []llm.Message{{Role: "user", Content: "q"}}, Persist: true})
			if err != nil {
				t.Fatal(err)
			}
			var rec event.Recorder
			o := svc.Execute(ctx, p, &rec)
			if o.Err == nil || !strings.Contains(o.Err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", o.Err, tt.wantErr)
			}
			if errs := rec.Filter(event.TypeError); len(errs) != 1 {
				t.Errorf("error events = %d", len(errs))
			}
			msgs, _ := st.ListMessages(ctx, store.LocalUserID, p.ChatID)
			if len(msgs) != 2 || msgs[1].FinishReason != tt.wantReason || msgs[1].Error == "" {
				t.Errorf("messages after failure: %+v", msgs)
			}
			_ = svc.Close(ctx)
			if chat, _ := st.GetChat(ctx, store.LocalUserID, p.ChatID); chat.Title != "" {
				t.Errorf("a failed run titled the chat %q", chat.Title)
			}
		})
	}
}

func TestTitleFallsBackToQuestion(t *testing.T) {
	svc, st := newService(t, answer("ok"), titler{err: errors.New("model down")}, 0)
	ctx := context.Background()
	p, _ := svc.Prepare(ctx, Request{Mode: "scripted", Messages: []llm.Message{{Role: "user", Content: "Why is   the sky blue?"}}, Persist: true})
	svc.Execute(ctx, p, event.Discard)
	_ = svc.Close(ctx)
	if chat, _ := st.GetChat(ctx, store.LocalUserID, p.ChatID); chat.Title != "Why is the sky blue?" {
		t.Errorf("title = %q", chat.Title)
	}
}
