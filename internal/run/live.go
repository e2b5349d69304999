package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"

	"github.com/sova-ai/sova"

	"github.com/google/uuid"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/mode"
)

// liveRun holds the events of a run that is executing in this process, so
// that followers get them as they happen.
type liveRun struct {
	userID   string
	firstSeq int64 // events before this one are only in the store (earlier parts of a resumed run)
	cancel   context.CancelCauseFunc

	mu      sync.Mutex
	events  []event.Event
	changed chan struct{} // closed and replaced when events arrive or the run ends
	done    bool
}

func newLiveRun(userID string, lastSeq int64, cancel context.CancelCauseFunc) *liveRun {
	return &liveRun{userID: userID, firstSeq: lastSeq + 1, cancel: cancel, changed: make(chan struct{})}
}

func (l *liveRun) append(e event.Event) {
	l.mu.Lock()
	l.events = append(l.events, e)
	close(l.changed)
	l.changed = make(chan struct{})
	l.mu.Unlock()
}

func (l *liveRun) finish() {
	l.mu.Lock()
	l.done = true
	close(l.changed)
	l.changed = make(chan struct{})
	l.mu.Unlock()
}

// since returns the events after seq, whether the run has ended, and a
// channel that is closed on the next change.
func (l *liveRun) since(seq int64) ([]event.Event, bool, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := int(seq - l.firstSeq + 1)
	if i < 0 {
		i = 0
	}
	var out []event.Event
	if i < len(l.events) {
		out = append(out, l.events[i:]...)
	}
	return out, l.done, l.changed
}

// FollowOption changes how Follow reads a run.
type FollowOption func(*followOptions)

type followOptions struct{ snapshot bool }

// Snapshot makes Follow return after the events that exist now, instead of
// waiting for a running run's next ones.
func Snapshot() FollowOption { return func(o *followOptions) { o.snapshot = true } }

// Follow calls fn with the user's run's events after the given sequence
// number, in order: those already logged, then each new one as it happens,
// until the run ends, fn fails or ctx ends. A finished run replays from its
// log.
func (s *Service) Follow(ctx context.Context, runID string, after int64, fn func(event.Event) error, opts ...FollowOption) error {
	userID, err := contextUser(ctx)
	if err != nil {
		return err
	}
	var o followOptions
	for _, opt := range opts {
		opt(&o)
	}
	s.mu.Lock()
	lr := s.live[runID]
	s.mu.Unlock()
	if lr != nil && lr.userID != userID {
		lr = nil // someone else's run: answered like any unknown one below
	}
	if lr == nil || after+1 < lr.firstSeq {
		if _, err := s.opt.Store.GetRun(ctx, userID, runID); err != nil {
			return err
		}
		evs, err := s.opt.Store.RunEvents(ctx, runID, after)
		if err != nil {
			return err
		}
		for _, re := range evs {
			if lr != nil && re.Seq >= lr.firstSeq {
				break // the live part follows from memory
			}
			var e event.Event
			if err := json.Unmarshal(re.Event, &e); err != nil {
				return fmt.Errorf("run %s event %d: %w", runID, re.Seq, err)
			}
			if err := fn(e); err != nil {
				return err
			}
			after = e.Seq
		}
		if lr == nil {
			return nil
		}
	}
	for {
		evs, done, changed := lr.since(after)
		for _, e := range evs {
			if err := fn(e); err != nil {
				return err
			}
			after = e.Seq
		}
		if done || o.snapshot {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Cancel stops one of the user's runs. A run waiting for the person is
// closed as cancelled.
func (s *Service) Cancel(ctx context.Context, runID string) error {
	userID, err := contextUser(ctx)
	if err != nil {
		return err
	}
	s.mu.Lock()
	lr := s.live[runID]
	s.mu.Unlock()
	if lr != nil && lr.userID == userID {
		lr.cancel(errCancel)
		return nil
	}
	r, err := s.opt.Store.GetRun(ctx, userID, runID)
	if err != nil {
		return err
	}
	if r.State != sova.RunWaiting {
		return fmt.Errorf("%w: it is %s", ErrNotRunning, r.State)
	}
	r.State, r.Pause = sova.RunCancelled, nil
	_ = s.opt.Store.DeleteRunFiles(ctx, runID)
	return s.opt.Store.UpdateRun(ctx, r)
}

// Restart starts an interrupted, failed or cancelled run again from the
// beginning, as a new run in the same chat, detached. The question stays
// the chat's last question; the answer is appended.
func (s *Service) Restart(ctx context.Context, runID string) (*Prepared, error) {
	userID, err := contextUser(ctx)
	if err != nil {
		return nil, err
	}
	r, err := s.opt.Store.GetRun(ctx, userID, runID)
	if err != nil {
		return nil, err
	}
	switch r.State {
	case sova.RunInterrupted, sova.RunFailed, sova.RunCancelled:
	default:
		return nil, fmt.Errorf("%w: it is %s", ErrNotRestartable, r.State)
	}
	m, ok := s.opt.Modes.Get(r.Mode)
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownMode, r.Mode)
	}
	var in runInput
	_ = json.Unmarshal(r.Input, &in)
	if r.ChatID == "" {
		in.Persist = false
	}
	raw, _ := json.Marshal(in)
	nr := &sova.Run{UserID: userID, ChatID: r.ChatID, Mode: r.Mode, State: sova.RunRunning, Question: r.Question, Input: raw}
	if err := s.opt.Store.CreateRun(ctx, nr); err != nil {
		return nil, fmt.Errorf("storing the run: %w", err)
	}
	p := &Prepared{
		mode: m, userID: userID, question: r.Question, history: in.History, input: in, run: nr,
		RunID: nr.ID, ChatID: r.ChatID, MessageID: uuid.NewString(),
	}
	s.Start(p)
	return p, nil
}

// Recover marks the runs that were running when the process last stopped
// as interrupted, closing their event logs and telling their chats, so
// nothing is silently lost. Call it once at start-up, before serving.
//
// With several servers on one PostgreSQL database, a run executing on
// another server would be marked too; Sova runs as one server per database.
func (s *Service) Recover(ctx context.Context) (int, error) {
	runs, err := s.opt.Store.RunsInState(ctx, sova.RunRunning)
	if err != nil {
		return 0, err
	}
	for i := range runs {
		r := &runs[i]
		msg := "the server stopped while this ran; restart it with POST /api/runs/" + r.ID + "/restart"
		evs := []event.Event{
			{Type: event.TypeError, Error: &event.Error{Message: msg, Code: "interrupted"}},
			{Type: event.TypeFinish, Finish: &event.Finish{Reason: event.FinishCancelled}},
		}
		// The run's row may lag behind its log (events are stored by the
		// run's writer, the row's LastSeq at the end), so on a collision the
		// closing events are numbered again after what the log holds: a
		// replay must end with the error and the finish, not just stop.
		if err := s.appendClosing(ctx, r, evs); err != nil {
			if stored, err2 := s.opt.Store.RunEvents(ctx, r.ID, r.LastSeq); err2 == nil && len(stored) > 0 {
				r.LastSeq = stored[len(stored)-1].Seq
				if err := s.appendClosing(ctx, r, evs); err != nil {
					s.opt.Logger.Warn("closing the log of an interrupted run failed", "run", r.ID, "error", err)
				}
			}
		}
		_ = s.opt.Store.DeleteRunFiles(ctx, r.ID)
		r.State, r.Error = sova.RunInterrupted, msg
		var in runInput
		_ = json.Unmarshal(r.Input, &in)
		if in.Persist && r.ChatID != "" {
			m := &sova.Message{ChatID: r.ChatID, Role: llm.RoleAssistant, Mode: r.Mode, FinishReason: event.FinishCancelled, Error: msg}
			if err := s.opt.Store.AddMessage(ctx, r.UserID, m); err == nil {
				r.MessageID = m.ID
			}
		}
		if err := s.opt.Store.UpdateRun(ctx, r); err != nil {
			return i, fmt.Errorf("marking run %s interrupted: %w", r.ID, err)
		}
		s.opt.Logger.Warn("run interrupted by a restart", "run", r.ID, "mode", r.Mode, "chat", r.ChatID)
	}
	return len(runs), nil
}

// workspace is a run's files in the store, for modes that keep a session
// folder (deep_research).
type workspace struct {
	store sova.RunStore
	runID string
	mu    sync.Mutex // makes Append's read-modify-write atomic within the run
}

// Limits that keep a runaway agent from filling the store.
const (
	maxWorkspaceFile  = 2 << 20
	maxWorkspacePaths = 2000
)

func cleanPath(p string) (string, error) {
	c := path.Clean(strings.TrimPrefix(p, "/"))
	if c == "." || c == ".." || strings.HasPrefix(c, "../") || strings.ContainsRune(c, '\\') {
		return "", fmt.Errorf("workspace: invalid path %q", p)
	}
	return c, nil
}

func (w *workspace) Write(ctx context.Context, p, content string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.put(ctx, p, content)
}

func (w *workspace) put(ctx context.Context, p, content string) error {
	c, err := cleanPath(p)
	if err != nil {
		return err
	}
	if len(content) > maxWorkspaceFile {
		return fmt.Errorf("workspace: %s would be %d bytes; the limit is %d", c, len(content), maxWorkspaceFile)
	}
	if files, err := w.store.RunFiles(ctx, w.runID); err == nil && len(files) >= maxWorkspacePaths {
		exists := false
		for _, f := range files {
			exists = exists || f.Path == c
		}
		if !exists {
			return fmt.Errorf("workspace: more than %d files", maxWorkspacePaths)
		}
	}
	return w.store.PutRunFile(ctx, w.runID, c, content)
}

func (w *workspace) Append(ctx context.Context, p, content string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	old, err := w.read(ctx, p)
	if err != nil && !errors.Is(err, mode.ErrNoFile) {
		return err
	}
	return w.put(ctx, p, old+content)
}

func (w *workspace) Read(ctx context.Context, p string) (string, error) {
	return w.read(ctx, p)
}

func (w *workspace) read(ctx context.Context, p string) (string, error) {
	c, err := cleanPath(p)
	if err != nil {
		return "", err
	}
	s, err := w.store.RunFile(ctx, w.runID, c)
	if errors.Is(err, sova.ErrNotFound) {
		return "", mode.ErrNoFile
	}
	return s, err
}

func (w *workspace) List(ctx context.Context) ([]string, error) {
	files, err := w.store.RunFiles(ctx, w.runID)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.Path
	}
	return out, nil
}

// contextUser is the id of the user ctx acts for, or ErrNoUser.
func contextUser(ctx context.Context) (string, error) {
	u, ok := sova.UserFrom(ctx)
	if !ok {
		return "", ErrNoUser
	}
	return u.ID, nil
}

// appendClosing logs evs after the run's LastSeq and moves LastSeq past
// them when they are stored.
func (s *Service) appendClosing(ctx context.Context, r *sova.Run, evs []event.Event) error {
	logged := make([]sova.RunEvent, 0, len(evs))
	seq := r.LastSeq
	for _, e := range evs {
		seq++
		e.Seq, e.Time = seq, s.opt.Now()
		b, err := json.Marshal(e)
		if err != nil {
			return err
		}
		logged = append(logged, sova.RunEvent{Seq: e.Seq, Event: b})
	}
	if err := s.opt.Store.AppendRunEvents(ctx, r.ID, logged); err != nil {
		return err
	}
	r.LastSeq = seq
	return nil
}
