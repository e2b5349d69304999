package run

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova"

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
		{"chat id too long", Request{ChatID: strings.Repeat("a", 129), Mode: "scripted", Messages: user("hi"), Persist: true}, ErrInvalidChatID},
		{"chat id a path", Request{ChatID: "../../etc/passwd", Mode: "scripted", Messages: user("hi"), Persist: true}, ErrInvalidChatID},
		{"chat id markup", Request{ChatID: "<b>x</b>", Mode: "scripted", Messages: user("hi"), Persist: true}, ErrInvalidChatID},
		{"chat id not stored", Request{ChatID: "a b", Mode: "scripted", Messages: user("hi")}, ErrInvalidChatID},
	}
	for _, tt := range tests {
		if _, err := svc.Prepare(context.Background(), tt.req); !errors.Is(err, tt.want) {
			t.Errorf("%s: err = %v, want %v", tt.name, err, tt.want)
		}
	}
	if chats, _ := st.ListChats(context.Background(), sova.LocalUserID, 10, 0); len(chats) != 0 {
		t.Errorf("rejected requests stored %d chats", len(chats))
	}
}

func TestValidChatID(t *testing.T) {
	for id, want := range map[string]bool{
		"":                                     false,
		"aB3dE5gH7jK9mN1p":                     true, // the AI SDK's generateId
		"0f8fad5b-d9cb-469f-a165-70867728950e": true, // a UUID, as Sova makes them
		"chat_1":                               true,
		strings.Repeat("x", MaxChatIDLen):      true,
		strings.Repeat("x", MaxChatIDLen+1):    false,
		"a/b":                                  false,
		"a.b":                                  false,
		"a b":                                  false,
		"a\nb":                                 false,
		"é":                                    false,
		"<x>":                                  false,
	} {
		if got := ValidChatID(id); got != want {
			t.Errorf("ValidChatID(%.20q) = %v, want %v", id, got, want)
		}
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
	chat, _ := st.GetChat(ctx, sova.LocalUserID, p.ChatID)
	msgs, _ := st.ListMessages(ctx, sova.LocalUserID, p.ChatID)
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
			msgs, _ := st.ListMessages(ctx, sova.LocalUserID, p.ChatID)
			if len(msgs) != 2 || msgs[1].FinishReason != tt.wantReason || msgs[1].Error == "" {
				t.Errorf("messages after failure: %+v", msgs)
			}
			_ = svc.Close(ctx)
			if chat, _ := st.GetChat(ctx, sova.LocalUserID, p.ChatID); chat.Title != "" {
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
	if chat, _ := st.GetChat(ctx, sova.LocalUserID, p.ChatID); chat.Title != "Why is the sky blue?" {
		t.Errorf("title = %q", chat.Title)
	}
}

// pausing asks a question first, then answers with what it was told, and
// writes a workspace file each time.
func pausing() scripted {
	return scripted{run: func(ctx context.Context, in mode.Input, sink event.Sink) (*mode.Result, error) {
		if in.Resume == nil {
			_ = in.Workspace.Write(ctx, "main.md", "# Plan\n")
			return &mode.Result{Text: "Which decade?", Pause: &mode.Pause{Questions: []string{"Which decade?"}, State: []byte(`{"step":1}`)}}, nil
		}
		_ = in.Workspace.Append(ctx, "main.md", "answer: "+in.Resume.Answer+" state: "+string(in.Resume.State))
		return &mode.Result{Text: "Report for " + in.Question, Report: "# Report", FinishReason: "stop"}, nil
	}}
}

func TestPauseAndResume(t *testing.T) {
	svc, st := newService(t, pausing(), nil, 0)
	ctx := context.Background()
	ask := func(q string) (*Prepared, *Outcome) {
		p, err := svc.Prepare(ctx, Request{ChatID: "c1", Mode: "scripted", Messages: []llm.Message{{Role: "user", Content: q}}, Persist: true})
		if err != nil {
			t.Fatal(err)
		}
		var rec event.Recorder
		return p, svc.Execute(ctx, p, &rec)
	}
	p1, o1 := ask("Economy of the USA")
	if o1.State != sova.RunWaiting {
		t.Fatalf("first part: state %s", o1.State)
	}
	p2, o2 := ask("The 1930s")
	if !p2.Resumed || p2.RunID != p1.RunID || o2.State != sova.RunCompleted {
		t.Fatalf("answer did not resume the run: %+v %+v", p2, o2)
	}
	r, _ := st.GetRun(ctx, sova.LocalUserID, p1.RunID)
	if r.Report != "# Report" || r.Pause != nil || r.Question != "Economy of the USA" {
		t.Errorf("run after resume: %+v", r)
	}
	main, err := st.RunFile(ctx, p1.RunID, "main.md")
	if err != nil || main != "# Plan\nanswer: The 1930s state: {\"step\":1}" {
		t.Errorf("workspace kept across the pause: %q %v", main, err)
	}
	// Event numbers continue across the two parts, and the log replays both.
	var seqs []int64
	_ = svc.Follow(ctx, sova.LocalUserID, p1.RunID, 0, func(e event.Event) error { seqs = append(seqs, e.Seq); return nil })
	for i, s := range seqs {
		if s != int64(i+1) {
			t.Fatalf("event numbers %v", seqs)
		}
	}
	msgs, _ := st.ListMessages(ctx, sova.LocalUserID, "c1")
	if len(msgs) != 4 || msgs[1].Content != "Which decade?" || !strings.Contains(string(msgs[1].Parts), "data-clarification") {
		t.Errorf("chat: %+v", msgs)
	}
}

func TestDetachedRunAndRecovery(t *testing.T) {
	release := make(chan struct{})
	blocking := scripted{run: func(ctx context.Context, in mode.Input, sink event.Sink) (*mode.Result, error) {
		_ = in.Workspace.Write(ctx, "agents/agent_1.md", "todo")
		sink.Emit(event.Event{Type: event.TypeTextDelta, Text: "part"})
		select {
		case <-release:
			return &mode.Result{Text: "part", FinishReason: "stop"}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}}
	svc, st := newService(t, blocking, nil, 0)
	ctx := context.Background()
	p, err := svc.Prepare(ctx, Request{Mode: "scripted", Messages: []llm.Message{{Role: "user", Content: "q"}}, Persist: true})
	if err != nil {
		t.Fatal(err)
	}
	svc.Start(p)
	// A follower joining late gets everything from the start, then live events.
	got := make(chan []event.Type, 1)
	go func() {
		var types []event.Type
		_ = svc.Follow(ctx, sova.LocalUserID, p.RunID, 0, func(e event.Event) error { types = append(types, e.Type); return nil })
		got <- types
	}()
	// Someone else's run is not found.
	if err := svc.Follow(ctx, "mallory", p.RunID, 0, func(event.Event) error { return nil }); !errors.Is(err, sova.ErrNotFound) {
		t.Errorf("other user followed the run: %v", err)
	}
	// Shutting down interrupts the run: it is stored as interrupted, its
	// workspace removed, the follower sees error and finish.
	if err := svc.Close(ctx); err != nil {
		t.Fatal(err)
	}
	types := <-got
	if types[0] != event.TypeStart || types[len(types)-1] != event.TypeFinish {
		t.Errorf("follower saw %v", types)
	}
	r, _ := st.GetRun(ctx, sova.LocalUserID, p.RunID)
	if r.State != sova.RunInterrupted || !strings.Contains(r.Error, "restart") {
		t.Errorf("run after shutdown: %+v", r)
	}
	if files, _ := st.RunFiles(ctx, p.RunID); len(files) != 0 {
		t.Errorf("workspace of an interrupted run kept: %+v", files)
	}

	// A run left "running" by a crash is marked interrupted at start-up.
	crashed := &sova.Run{UserID: sova.LocalUserID, ChatID: p.ChatID, Mode: "scripted", State: sova.RunRunning, Question: "q",
		Input: []byte(`{"persist":true}`), LastSeq: 0}
	if err := st.CreateRun(ctx, crashed); err != nil {
		t.Fatal(err)
	}
	svc2 := NewService(Options{Store: st, Modes: svc.opt.Modes})
	n, err := svc2.Recover(ctx)
	if err != nil || n != 1 {
		t.Fatalf("recover: %d %v", n, err)
	}
	r, _ = st.GetRun(ctx, sova.LocalUserID, crashed.ID)
	evs, _ := st.RunEvents(ctx, crashed.ID, 0)
	if r.State != sova.RunInterrupted || len(evs) != 2 {
		t.Errorf("recovered run: %+v, %d events", r, len(evs))
	}
	// And it can be started again.
	close(release)
	np, err := svc2.Restart(ctx, sova.LocalUserID, crashed.ID)
	if err != nil {
		t.Fatal(err)
	}
	_ = svc2.Follow(ctx, sova.LocalUserID, np.RunID, 0, func(event.Event) error { return nil })
	_ = svc2.Close(ctx)
	r, _ = st.GetRun(ctx, sova.LocalUserID, np.RunID)
	if r.State != sova.RunCompleted {
		t.Errorf("restarted run: %+v", r)
	}
}
