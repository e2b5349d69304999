package run

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/store"
)

// errorLog records the records at error level a service logs.
type errorLog struct {
	mu   sync.Mutex
	msgs []string
}

func (l *errorLog) Enabled(_ context.Context, lv slog.Level) bool { return lv >= slog.LevelError }
func (l *errorLog) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	msg := r.Message
	r.Attrs(func(a slog.Attr) bool { msg += " " + a.String(); return true })
	l.msgs = append(l.msgs, msg)
	return nil
}
func (l *errorLog) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *errorLog) WithGroup(string) slog.Handler      { return l }
func (l *errorLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.msgs...)
}

func newLoggedService(t *testing.T, m scripted) (*Service, store.Store, *errorLog) {
	t.Helper()
	st, err := store.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "sova.db"))
	if err != nil {
		t.Fatal(err)
	}
	reg, err := mode.NewRegistry(m)
	if err != nil {
		t.Fatal(err)
	}
	el := &errorLog{}
	svc := NewService(Options{Store: st, Modes: reg, Logger: slog.New(el)})
	t.Cleanup(func() {
		_ = svc.Close(context.Background())
		_ = st.Close()
	})
	return svc, st, el
}

func ask(q string) []llm.Message { return []llm.Message{{Role: llm.RoleUser, Content: q}} }

// waitEnded waits until the run is no longer running.
func waitEnded(t *testing.T, st store.Store, runID string) *sova.Run {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		r, err := st.GetRun(userCtx(t), testUser, runID)
		if err == nil && r.State != sova.RunRunning {
			return r
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("run %s still running", runID)
	return nil
}

// Restarting an interrupted run twice at once starts one run, which stores
// one answer, linked to the question.
func TestRestartIsIdempotent(t *testing.T) {
	var calls atomic.Int64
	release := make(chan struct{})
	m := scripted{run: func(ctx context.Context, in mode.Input, sink event.Sink) (*mode.Result, error) {
		if calls.Add(1) == 1 {
			return nil, errors.New("model endpoint down")
		}
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		sink.Emit(event.Event{Type: event.TypeTextDelta, Text: "answer"})
		return &mode.Result{Text: "answer", FinishReason: "stop"}, nil
	}}
	svc, st, _ := newLoggedService(t, m)
	ctx := userCtx(t)
	p, err := svc.Prepare(ctx, Request{Mode: "scripted", Messages: ask("q"), Persist: true})
	if err != nil {
		t.Fatal(err)
	}
	if o := svc.Execute(ctx, p, event.Discard); o.State != sova.RunFailed {
		t.Fatalf("first run: %s", o.State)
	}

	const n = 5
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			np, err := svc.Restart(ctx, p.RunID)
			if err != nil {
				t.Errorf("restart %d: %v", i, err)
				return
			}
			ids[i] = np.RunID
		})
	}
	wg.Wait()
	for _, id := range ids[1:] {
		if id != ids[0] {
			t.Fatalf("restarts started different runs: %v", ids)
		}
	}
	close(release)
	r := waitEnded(t, st, ids[0])
	if r.State != sova.RunCompleted || r.RetryOf != p.RunID || r.OriginID != p.RunID {
		t.Errorf("restarted run = %+v", r)
	}
	// Restarting the original again still finds the one restart.
	again, err := svc.Restart(ctx, p.RunID)
	if err != nil || again.RunID != ids[0] {
		t.Errorf("a later restart: %v %v", again, err)
	}
	if got := calls.Load(); got != 2 {
		t.Errorf("the mode ran %d times, want 2 (the failed run and one restart)", got)
	}
	msgs, _ := st.ListMessages(ctx, testUser, p.ChatID)
	var answers int
	for _, m := range msgs {
		if m.Role == llm.RoleAssistant {
			answers++
			if m.ReplyTo != msgs[0].ID {
				t.Errorf("answer %q replies to %q, want the question %q", m.Content, m.ReplyTo, msgs[0].ID)
			}
		}
	}
	if len(msgs) != 3 || answers != 2 {
		t.Errorf("chat holds %d messages (%d answers), want the question, the failure and one answer", len(msgs), answers)
	}
}

// A restart keeps the first run of the chain as its origin, where modes
// find the state they keep under a run's id.
func TestRestartChainKeepsItsOrigin(t *testing.T) {
	var origins []string
	var mu sync.Mutex
	m := scripted{run: func(ctx context.Context, in mode.Input, sink event.Sink) (*mode.Result, error) {
		mu.Lock()
		origins = append(origins, in.OriginRunID)
		mu.Unlock()
		return nil, errors.New("fails")
	}}
	svc, st, _ := newLoggedService(t, m)
	ctx := userCtx(t)
	p, err := svc.Prepare(ctx, Request{Mode: "scripted", Messages: ask("q"), Persist: true})
	if err != nil {
		t.Fatal(err)
	}
	svc.Execute(ctx, p, event.Discard)
	r1, err := svc.Restart(ctx, p.RunID)
	if err != nil {
		t.Fatal(err)
	}
	waitEnded(t, st, r1.RunID)
	r2, err := svc.Restart(ctx, r1.RunID)
	if err != nil {
		t.Fatal(err)
	}
	waitEnded(t, st, r2.RunID)
	mu.Lock()
	defer mu.Unlock()
	if len(origins) != 3 || origins[0] != "" || origins[1] != p.RunID || origins[2] != p.RunID {
		t.Errorf("origins = %q, want none, then %s twice", origins, p.RunID)
	}
}

// Questions posted to one chat at once: one runs, the others are refused
// with ErrRunInProgress and leave nothing stored; the answer names its
// question; once the run has ended the chat takes questions again.
func TestOneRunPerChat(t *testing.T) {
	release := make(chan struct{})
	m := scripted{run: func(ctx context.Context, in mode.Input, sink event.Sink) (*mode.Result, error) {
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		sink.Emit(event.Event{Type: event.TypeTextDelta, Text: "re: " + in.Question})
		return &mode.Result{Text: "re: " + in.Question, FinishReason: "stop"}, nil
	}}
	svc, st, el := newLoggedService(t, m)
	ctx := userCtx(t)
	const chatID = "aB3dE5gH7jK9mN1p"
	const n = 5
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		started []*Prepared
		refused int
	)
	for i := range n {
		wg.Go(func() {
			p, err := svc.Prepare(ctx, Request{ChatID: chatID, Mode: "scripted", Messages: ask("question " + string(rune('A'+i))), Persist: true})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case errors.Is(err, ErrRunInProgress):
				refused++
			case err != nil:
				t.Errorf("question %d: %v", i, err)
			default:
				svc.Start(p)
				started = append(started, p)
			}
		})
	}
	wg.Wait()
	if len(started) != 1 || refused != n-1 {
		t.Fatalf("%d questions ran and %d were refused, want 1 and %d", len(started), refused, n-1)
	}
	close(release)
	waitEnded(t, st, started[0].RunID)

	p2, err := svc.Prepare(ctx, Request{ChatID: chatID, Mode: "scripted", Messages: ask("follow-up"), Persist: true})
	if err != nil {
		t.Fatalf("a question after the run ended: %v", err)
	}
	svc.Execute(ctx, p2, event.Discard)

	msgs, _ := st.ListMessages(ctx, testUser, chatID)
	if len(msgs) != 4 {
		t.Fatalf("chat holds %d messages, want 2 questions and 2 answers", len(msgs))
	}
	for i := 0; i < 4; i += 2 {
		q, a := msgs[i], msgs[i+1]
		if q.Role != llm.RoleUser || a.Role != llm.RoleAssistant || a.ReplyTo != q.ID || a.Content != "re: "+q.Content {
			t.Errorf("pair %d: question %+v, answer %+v", i/2, q, a)
		}
	}
	if errs := el.all(); len(errs) > 0 {
		t.Errorf("errors logged: %q", errs)
	}
}

// Deleting a chat cancels its running run: the mode stops (it stops
// calling the model) and nothing fails on the deleted chat afterwards.
func TestDeleteChatCancelsItsRuns(t *testing.T) {
	var calls atomic.Int64
	stopped := make(chan error, 1)
	m := scripted{run: func(ctx context.Context, in mode.Input, sink event.Sink) (*mode.Result, error) {
		_ = in.Workspace.Write(ctx, "notes.md", "x")
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				stopped <- context.Cause(ctx)
				return nil, ctx.Err()
			case <-t.C:
				calls.Add(1) // a model call
				sink.Emit(event.Event{Type: event.TypeTextDelta, Text: "."})
			}
		}
	}}
	svc, st, el := newLoggedService(t, m)
	ctx := userCtx(t)
	p, err := svc.Prepare(ctx, Request{Mode: "scripted", Messages: ask("q"), Persist: true})
	if err != nil {
		t.Fatal(err)
	}
	svc.Start(p)
	for calls.Load() < 5 {
		time.Sleep(time.Millisecond)
	}
	if err := svc.DeleteChat(sova.WithUser(context.Background(), sova.User{ID: "mallory"}), p.ChatID); !errors.Is(err, sova.ErrNotFound) {
		t.Fatalf("another user deleted the chat: %v", err)
	}
	if err := svc.DeleteChat(ctx, p.ChatID); err != nil {
		t.Fatal(err)
	}
	select {
	case cause := <-stopped:
		if !errors.Is(cause, errDeleted) {
			t.Errorf("the run stopped because %v", cause)
		}
	default:
		t.Fatal("the run was still going when DeleteChat returned")
	}
	after := calls.Load()
	time.Sleep(30 * time.Millisecond)
	if calls.Load() != after {
		t.Error("the run went on calling the model after its chat was deleted")
	}
	if _, err := st.GetChat(ctx, testUser, p.ChatID); !errors.Is(err, sova.ErrNotFound) {
		t.Errorf("chat after delete: %v", err)
	}
	if _, err := st.GetRun(ctx, testUser, p.RunID); !errors.Is(err, sova.ErrNotFound) {
		t.Errorf("run after delete: %v", err)
	}
	if err := svc.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if errs := el.all(); len(errs) > 0 {
		t.Errorf("errors logged: %q", errs)
	}
}
