package run

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/event/eventtest"
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

// testUser is the user the tests' runs act for; it is not the local user,
// so nothing may assume that one.
const testUser = "ann"

// userCtx is a context acting for testUser, as the server's middleware
// and the CLI make them.
// Its deadline bounds every Follow and wait of a test: one that fails
// ends with a clear error in seconds, not a five-minute hang.
func userCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), followDeadline)
	t.Cleanup(cancel)
	return sova.WithUser(ctx, sova.User{ID: testUser})
}

// followDeadline bounds how long a test follows a run.
const followDeadline = 60 * time.Second

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
		if _, err := svc.Prepare(userCtx(t), tt.req); !errors.Is(err, tt.want) {
			t.Errorf("%s: err = %v, want %v", tt.name, err, tt.want)
		}
	}
	if chats, _ := st.ListChats(userCtx(t), testUser, 10, 0); len(chats) != 0 {
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
	ctx := userCtx(t)
	p, err := svc.Prepare(ctx, Request{Mode: "scripted", Messages: []llm.Message{{Role: "user", Content: "Capital of Australia?"}}, Persist: true})
	if err != nil {
		t.Fatal(err)
	}
	var rec eventtest.Recorder
	o := svc.Execute(ctx, p, &rec)
	if o.Err != nil {
		t.Fatal(o.Err)
	}
	evs := rec.Events()
	if evs[0].Type != event.TypeStart || evs[len(evs)-1].Type != event.TypeFinish || evs[len(evs)-1].Finish.Reason != "stop" {
		t.Errorf("events: first %s last %s", evs[0].Type, evs[len(evs)-1].Type)
	}
	_ = svc.Close(ctx) // waits for the title
	chat, _ := st.GetChat(ctx, testUser, p.ChatID)
	msgs, _ := st.ListMessages(ctx, testUser, p.ChatID)
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
			ctx := userCtx(t)
			p, err := svc.Prepare(ctx, Request{Mode: "scripted", Messages: []llm.Message{{Role: "user", Content: "q"}}, Persist: true})
			if err != nil {
				t.Fatal(err)
			}
			var rec eventtest.Recorder
			o := svc.Execute(ctx, p, &rec)
			if o.Err == nil || !strings.Contains(o.Err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", o.Err, tt.wantErr)
			}
			if errs := rec.Filter(event.TypeError); len(errs) != 1 {
				t.Errorf("error events = %d", len(errs))
			}
			msgs, _ := st.ListMessages(ctx, testUser, p.ChatID)
			if len(msgs) != 2 || msgs[1].FinishReason != tt.wantReason || msgs[1].Error == "" {
				t.Errorf("messages after failure: %+v", msgs)
			}
			_ = svc.Close(ctx)
			if chat, _ := st.GetChat(ctx, testUser, p.ChatID); chat.Title != "" {
				t.Errorf("a failed run titled the chat %q", chat.Title)
			}
		})
	}
}

func TestTitleFallsBackToQuestion(t *testing.T) {
	svc, st := newService(t, answer("ok"), titler{err: errors.New("model down")}, 0)
	ctx := userCtx(t)
	p, _ := svc.Prepare(ctx, Request{Mode: "scripted", Messages: []llm.Message{{Role: "user", Content: "Why is   the sky blue?"}}, Persist: true})
	svc.Execute(ctx, p, event.Discard)
	_ = svc.Close(ctx)
	if chat, _ := st.GetChat(ctx, testUser, p.ChatID); chat.Title != "Why is the sky blue?" {
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
	ctx := userCtx(t)
	ask := func(q string) (*Prepared, *Outcome) {
		p, err := svc.Prepare(ctx, Request{ChatID: "c1", Mode: "scripted", Messages: []llm.Message{{Role: "user", Content: q}}, Persist: true})
		if err != nil {
			t.Fatal(err)
		}
		var rec eventtest.Recorder
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
	r, _ := st.GetRun(ctx, testUser, p1.RunID)
	if r.Report != "# Report" || r.Pause != nil || r.Question != "Economy of the USA" {
		t.Errorf("run after resume: %+v", r)
	}
	main, err := st.RunFile(ctx, p1.RunID, "main.md")
	if err != nil || main != "# Plan\nanswer: The 1930s state: {\"step\":1}" {
		t.Errorf("workspace kept across the pause: %q %v", main, err)
	}
	// Event numbers continue across the two parts, and the log replays both.
	var seqs []int64
	_ = svc.Follow(sova.WithUser(ctx, sova.User{ID: testUser}), p1.RunID, 0, func(e event.Event) error { seqs = append(seqs, e.Seq); return nil })
	for i, s := range seqs {
		if s != int64(i+1) {
			t.Fatalf("event numbers %v", seqs)
		}
	}
	msgs, _ := st.ListMessages(ctx, testUser, "c1")
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
	ctx := userCtx(t)
	p, err := svc.Prepare(ctx, Request{Mode: "scripted", Messages: []llm.Message{{Role: "user", Content: "q"}}, Persist: true})
	if err != nil {
		t.Fatal(err)
	}
	svc.Start(p)
	// A follower joining late gets everything from the start, then live events.
	got := make(chan []event.Type, 1)
	go func() {
		var types []event.Type
		_ = svc.Follow(sova.WithUser(ctx, sova.User{ID: testUser}), p.RunID, 0, func(e event.Event) error { types = append(types, e.Type); return nil })
		got <- types
	}()
	// Someone else's run is not found.
	if err := svc.Follow(sova.WithUser(ctx, sova.User{ID: "mallory"}), p.RunID, 0, func(event.Event) error { return nil }); !errors.Is(err, sova.ErrNotFound) {
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
	r, _ := st.GetRun(ctx, testUser, p.RunID)
	if r.State != sova.RunInterrupted || !strings.Contains(r.Error, "restart") {
		t.Errorf("run after shutdown: %+v", r)
	}
	if files, _ := st.RunFiles(ctx, p.RunID); len(files) != 0 {
		t.Errorf("workspace of an interrupted run kept: %+v", files)
	}

	// A run left "running" by a crash is marked interrupted at start-up.
	crashed := &sova.Run{UserID: testUser, ChatID: p.ChatID, Mode: "scripted", State: sova.RunRunning, Question: "q",
		Input: []byte(`{"persist":true}`), LastSeq: 0}
	if err := st.CreateRun(ctx, crashed); err != nil {
		t.Fatal(err)
	}
	svc2 := NewService(Options{Store: st, Modes: svc.opt.Modes})
	n, err := svc2.Recover(ctx)
	if err != nil || n != 1 {
		t.Fatalf("recover: %d %v", n, err)
	}
	r, _ = st.GetRun(ctx, testUser, crashed.ID)
	evs, _ := st.RunEvents(ctx, crashed.ID, 0)
	if r.State != sova.RunInterrupted || len(evs) != 2 {
		t.Errorf("recovered run: %+v, %d events", r, len(evs))
	}
	// And it can be started again.
	close(release)
	np, err := svc2.Restart(sova.WithUser(ctx, sova.User{ID: testUser}), crashed.ID)
	if err != nil {
		t.Fatal(err)
	}
	_ = svc2.Follow(sova.WithUser(ctx, sova.User{ID: testUser}), np.RunID, 0, func(event.Event) error { return nil })
	_ = svc2.Close(ctx)
	r, _ = st.GetRun(ctx, testUser, np.RunID)
	if r.State != sova.RunCompleted {
		t.Errorf("restarted run: %+v", r)
	}
}

// A run acts for the user of the context it is prepared in; without one it
// is refused and nothing is stored: no user is ever assumed.
func TestPrepareNeedsAUser(t *testing.T) {
	svc, st := newService(t, answer("ok"), nil, 0)
	for _, ctx := range []context.Context{context.Background(), sova.WithUser(context.Background(), sova.User{})} {
		_, err := svc.Prepare(ctx, Request{ChatID: "c", Mode: "scripted", Messages: []llm.Message{{Role: "user", Content: "q"}}, Persist: true})
		if !errors.Is(err, ErrNoUser) {
			t.Errorf("err = %v, want ErrNoUser", err)
		}
	}
	for _, u := range []string{testUser, sova.LocalUserID, ""} {
		if chats, _ := st.ListChats(context.Background(), u, 10, 0); len(chats) != 0 {
			t.Errorf("a refused request stored chats for %q: %+v", u, chats)
		}
	}
	if runs, _ := st.RunsInState(context.Background(), sova.RunRunning); len(runs) != 0 {
		t.Errorf("a refused request stored runs: %+v", runs)
	}
}

// A mode reads whom it acts for from its context: the run's user, whether
// the run executes in the caller's context, detached from the request that
// started it, or started again later.
func TestRunContextCarriesItsUser(t *testing.T) {
	type seen struct{ ctxUser, inputUser string }
	got := make(chan seen, 1)
	var fail atomic.Bool
	fail.Store(true)
	m := scripted{run: func(ctx context.Context, in mode.Input, sink event.Sink) (*mode.Result, error) {
		u, _ := sova.UserFrom(ctx)
		got <- seen{u.ID, in.UserID}
		if fail.Load() {
			return nil, errors.New("model down")
		}
		return &mode.Result{Text: "ok", FinishReason: "stop"}, nil
	}}
	svc, st := newService(t, m, nil, 0)
	check := func(how string) {
		t.Helper()
		if s := <-got; s.ctxUser != testUser || s.inputUser != testUser {
			t.Errorf("%s: the mode's context acts for %q, its input for %q; want %q", how, s.ctxUser, s.inputUser, testUser)
		}
	}
	q := Request{Mode: "scripted", Messages: []llm.Message{{Role: "user", Content: "q"}}, Persist: true}

	p, err := svc.Prepare(userCtx(t), q)
	if err != nil {
		t.Fatal(err)
	}
	svc.Execute(userCtx(t), p, event.Discard)
	check("executed")

	// The request's context is gone before the detached run starts.
	reqCtx, cancel := context.WithCancel(userCtx(t))
	p, err = svc.Prepare(reqCtx, q)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	svc.Start(p)
	check("detached")
	_ = svc.Follow(sova.WithUser(userCtx(t), sova.User{ID: testUser}), p.RunID, 0, func(event.Event) error { return nil })
	if r, _ := st.GetRun(userCtx(t), testUser, p.RunID); r.State != sova.RunFailed || r.UserID != testUser {
		t.Fatalf("detached run: %+v", r)
	}

	fail.Store(false)
	np, err := svc.Restart(sova.WithUser(userCtx(t), sova.User{ID: testUser}), p.RunID)
	if err != nil {
		t.Fatal(err)
	}
	check("restarted")
	_ = svc.Follow(sova.WithUser(userCtx(t), sova.User{ID: testUser}), np.RunID, 0, func(event.Event) error { return nil })
}

// Cancelling a run that waits for the person's answer closes it: it ends
// cancelled with its workspace removed, only its user may cancel it, it
// cannot be cancelled twice, and the person's next message in the chat
// starts a new run instead of answering the closed one.
func TestCancelWaitingRun(t *testing.T) {
	svc, st := newService(t, pausing(), nil, 0)
	ctx := userCtx(t)
	ask := func(q string) (*Prepared, *Outcome) {
		t.Helper()
		p, err := svc.Prepare(ctx, Request{ChatID: "c1", Mode: "scripted", Messages: []llm.Message{{Role: "user", Content: q}}, Persist: true})
		if err != nil {
			t.Fatal(err)
		}
		return p, svc.Execute(ctx, p, event.Discard)
	}
	p1, o1 := ask("Economy of the USA")
	if o1.State != sova.RunWaiting {
		t.Fatalf("first part: state %s", o1.State)
	}
	if err := svc.Cancel(sova.WithUser(ctx, sova.User{ID: "mallory"}), p1.RunID); !errors.Is(err, sova.ErrNotFound) {
		t.Errorf("another user cancelled the run: %v", err)
	}
	if r, _ := st.GetRun(ctx, testUser, p1.RunID); r.State != sova.RunWaiting {
		t.Errorf("after another user's cancel: %s", r.State)
	}
	if err := svc.Cancel(sova.WithUser(ctx, sova.User{ID: testUser}), p1.RunID); err != nil {
		t.Fatal(err)
	}
	r, _ := st.GetRun(ctx, testUser, p1.RunID)
	if r.State != sova.RunCancelled || r.Pause != nil {
		t.Errorf("run after cancel: state %s, pause %s", r.State, r.Pause)
	}
	if files, _ := st.RunFiles(ctx, p1.RunID); len(files) != 0 {
		t.Errorf("workspace of a cancelled run kept: %+v", files)
	}
	if err := svc.Cancel(sova.WithUser(ctx, sova.User{ID: testUser}), p1.RunID); !errors.Is(err, ErrNotRunning) {
		t.Errorf("second cancel: %v", err)
	}
	// Its log still replays what it said, and ends.
	var last event.Event
	if err := svc.Follow(sova.WithUser(ctx, sova.User{ID: testUser}), p1.RunID, 0, func(e event.Event) error { last = e; return nil }); err != nil || last.Type != event.TypeFinish {
		t.Errorf("log of the cancelled run: %v, last %s", err, last.Type)
	}
	// The answer that would have continued it starts a new run.
	p2, o2 := ask("The 1930s")
	if p2.Resumed || p2.RunID == p1.RunID || o2.State != sova.RunWaiting {
		t.Errorf("the next message: resumed %v, run %s (cancelled %s), state %s", p2.Resumed, p2.RunID, p1.RunID, o2.State)
	}
	if r, _ := st.GetRun(ctx, testUser, p1.RunID); r.State != sova.RunCancelled {
		t.Errorf("the cancelled run changed to %s", r.State)
	}
	msgs, _ := st.ListMessages(ctx, testUser, "c1")
	if len(msgs) != 4 || msgs[2].Content != "The 1930s" || msgs[3].Content != "Which decade?" {
		t.Errorf("chat: %+v", msgs)
	}
}
