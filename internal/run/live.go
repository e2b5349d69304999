package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sova-ai/sova"

	"github.com/google/uuid"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/mode"
)

// liveRun holds the events of a run that is executing in this process, so
// that followers get them as they happen.
type liveRun struct {
	userID   string
	chatID   string
	firstSeq int64 // events before this one are only in the store (earlier parts of a resumed run)
	cancel   context.CancelCauseFunc
	durable  bool // its mode continues from checkpoints: Drain hands it back
	// tally is what its execution used (set under Service.mu as it
	// starts), flushed to the usage counters with each lease renewal.
	tally *tally

	// handedBack: the run ended here without ending (handBack): it goes
	// on on another node, and its followers here read it from the store.
	handedBack atomic.Bool

	mu      sync.Mutex
	events  []event.Event
	changed chan struct{} // closed and replaced when events arrive or the run ends
	done    bool
}

func newLiveRun(userID, chatID string, lastSeq int64, cancel context.CancelCauseFunc) *liveRun {
	return &liveRun{userID: userID, chatID: chatID, firstSeq: lastSeq + 1, cancel: cancel, changed: make(chan struct{})}
}

// wait returns when the run has ended (its final state is stored) or ctx
// ends.
func (l *liveRun) wait(ctx context.Context) error {
	for {
		l.mu.Lock()
		done, changed := l.done, l.changed
		l.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (l *liveRun) append(e event.Event) {
	l.mu.Lock()
	l.events = append(l.events, e)
	close(l.changed)
	l.changed = make(chan struct{})
	l.mu.Unlock()
}

func (l *liveRun) isDone() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.done
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
		r, err := s.opt.Store.GetRun(ctx, userID, runID)
		if err != nil {
			return err
		}
		if lr == nil && r.State == sova.RunRunning && !o.snapshot {
			return s.followStored(ctx, userID, runID, after, fn)
		}
		limit := int64(-1)
		if lr != nil {
			limit = lr.firstSeq // the live part follows from memory
		}
		if after, _, err = s.replay(ctx, runID, after, limit, fn); err != nil {
			return err
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
		if done && !o.snapshot && lr.handedBack.Load() {
			return s.followHandedOff(ctx, userID, runID, after, fn) // handoff.go
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

// replay calls fn with the stored events after the given number, up to
// (not including) limit when limit > 0, and returns the number of the last
// and whether it was a finish.
func (s *Service) replay(ctx context.Context, runID string, after, limit int64, fn func(event.Event) error) (int64, bool, error) {
	evs, err := s.opt.Store.RunEvents(ctx, runID, after)
	if err != nil {
		return after, false, err
	}
	finished := false
	for _, re := range evs {
		es, err := decodeStored(re)
		if err != nil {
			return after, false, fmt.Errorf("run %s event %d: %w", runID, re.Seq, err)
		}
		for _, e := range es {
			if e.Seq <= after {
				continue // a merged row begins before the resume point
			}
			if limit > 0 && e.Seq >= limit {
				return after, false, nil
			}
			if err := fn(e); err != nil {
				return after, false, err
			}
			after, finished = e.Seq, e.Type == event.TypeFinish
		}
	}
	return after, finished, nil
}

// Intervals at which a follower of a run executing on another node reads
// the run's log when no notice arrives: notices (Options.Notifier) make
// reads prompt, the poll covers a lost notice or a single node.
const (
	pollNotified = time.Second
	pollAlone    = 100 * time.Millisecond
)

// followStored follows a run that another node (or a process that has
// not registered it yet) executes: from its stored log, woken by the
// notifier, until its finish event, or until it is no longer running.
func (s *Service) followStored(ctx context.Context, userID, runID string, after int64, fn func(event.Event) error) error {
	var notes <-chan struct{}
	interval := pollAlone
	if s.opt.Notifier != nil {
		ch, stop := s.opt.Notifier.Subscribe(runID) // before reading: nothing falls between
		defer stop()
		notes, interval = ch, pollNotified
	}
	poll := time.NewTicker(interval)
	defer poll.Stop()
	for {
		last, finished, err := s.replay(ctx, runID, after, -1, fn)
		if err != nil || finished {
			return err
		}
		if last == after {
			// Nothing new: has the run ended (its events are all stored
			// before its state changes)?
			r, err := s.opt.Store.GetRun(ctx, userID, runID)
			if err != nil {
				return err
			}
			if r.State != sova.RunRunning {
				_, _, err := s.replay(ctx, runID, after, -1, fn)
				return err
			}
		}
		after = last
		select {
		case <-notes:
		case <-poll.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Cancel stops one of the user's runs. A run waiting for the person is
// closed as cancelled; a run executing on another node is stopped there
// (cancel.go).
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
	if r.State == sova.RunRunning && (r.NodeID == s.opt.NodeID || s.opt.Now().After(r.LeaseUntil)) {
		// Nothing executes it: not this node (it is not live here), nor
		// another (the lease is this node's, or has passed). Its executor
		// ended without storing its end (a full disk, a lost database).
		return s.cancelOrphan(ctx, r) // cancel.go
	}
	if r.State == sova.RunRunning && s.opt.Notifier != nil {
		return s.cancelElsewhere(ctx, r) // cancel.go
	}
	if r.State == sova.RunRunning {
		return fmt.Errorf("%w here: node %s executes it", ErrNotRunning, r.NodeID)
	}
	if r.State != sova.RunWaiting {
		return fmt.Errorf("%w: it is %s", ErrNotRunning, r.State)
	}
	r.State, r.Pause = sova.RunCancelled, nil
	_ = s.opt.Store.DeleteRunFiles(ctx, runID)
	return s.opt.Store.UpdateRun(ctx, r)
}

// Restart starts an interrupted, failed or cancelled run again, as a new
// run in the same chat, detached. The question stays the chat's last
// question; the answer is appended and replies to it. A run is restarted
// once: restarting it again (a second click, a retried request, another
// node) returns the run the first restart started, and nothing new runs.
// Modes that keep state under the run's id (sgr_agent) go on from it.
func (s *Service) Restart(ctx context.Context, runID string) (*Prepared, error) {
	userID, err := contextUser(ctx)
	if err != nil {
		return nil, err
	}
	r, err := s.opt.Store.GetRun(ctx, userID, runID)
	if err != nil {
		return nil, err
	}
	if again, err := s.opt.Store.RestartOf(ctx, userID, r.ID); err == nil {
		return s.restarted(r, again), nil
	} else if !errors.Is(err, sova.ErrNotFound) {
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
	in.Resume = nil // a restart begins again (sgr_agent goes on from its agent)
	in.MessageID = uuid.NewString()
	user, _ := sova.UserFrom(ctx)
	in.actFor(user)
	release, err := s.admit(ctx, user, m.ID())
	if err != nil {
		return nil, err
	}
	raw, _ := json.Marshal(in)
	origin := r.OriginID
	if origin == "" {
		origin = r.ID
	}
	nr := &sova.Run{UserID: userID, ChatID: r.ChatID, Mode: r.Mode, State: sova.RunRunning, Question: r.Question, Input: raw,
		RetryOf: r.ID, OriginID: origin, NodeID: s.opt.NodeID, LeaseUntil: s.leaseEnd()}
	if err := s.opt.Store.CreateRun(ctx, nr); err != nil {
		release()
		if errors.Is(err, sova.ErrConflict) {
			// Either a concurrent restart of this run won, or another run
			// of the chat is running.
			if again, err := s.opt.Store.RestartOf(ctx, userID, r.ID); err == nil {
				return s.restarted(r, again), nil
			}
			return nil, ErrRunInProgress
		}
		return nil, fmt.Errorf("storing the run: %w", err)
	}
	p := &Prepared{
		mode: m, userID: userID, question: r.Question, history: in.History, input: in, run: nr,
		RunID: nr.ID, ChatID: r.ChatID, MessageID: in.MessageID, release: release,
	}
	s.Start(p)
	return p, nil
}

// restarted describes the run that an earlier restart of r started; it is
// not started again.
func (s *Service) restarted(r, again *sova.Run) *Prepared {
	m, _ := s.opt.Modes.Get(again.Mode)
	return &Prepared{mode: m, userID: again.UserID, question: again.Question, run: again,
		RunID: again.ID, ChatID: r.ChatID, MessageID: again.MessageID}
}

// deleteWait bounds how long deleting a chat waits for its runs to stop.
const deleteWait = 15 * time.Second

// DeleteChat deletes one of the user's chats after stopping its runs: a
// running run is cancelled (it stops calling the model), here or on the
// node executing it, and its end is awaited, so that nothing it writes at
// its end meets a deleted chat.
func (s *Service) DeleteChat(ctx context.Context, chatID string) error {
	userID, err := contextUser(ctx)
	if err != nil {
		return err
	}
	if _, err := s.opt.Store.GetChat(ctx, userID, chatID); err != nil {
		return err
	}
	var stopping []*liveRun
	s.mu.Lock()
	for _, lr := range s.live {
		if lr.userID == userID && lr.chatID == chatID {
			stopping = append(stopping, lr)
		}
	}
	s.mu.Unlock()
	for _, lr := range stopping {
		lr.cancel(errDeleted)
	}
	waitCtx, cancel := context.WithTimeout(ctx, deleteWait)
	defer cancel()
	for _, lr := range stopping {
		if err := lr.wait(waitCtx); err != nil {
			s.opt.Logger.Warn("a run of a deleted chat did not stop in time; deleting the chat anyway", "chat", chatID, "err", err)
			break
		}
	}
	if err := s.stopElsewhere(waitCtx, userID, chatID); err != nil { // cancel.go
		s.opt.Logger.Warn("a run of a deleted chat on another node did not stop in time; deleting the chat anyway", "chat", chatID, "err", err)
	}
	return s.opt.Store.DeleteChat(ctx, userID, chatID)
}

// workspace is a run's files in the store, for modes that keep a session
// folder (deep_research).
type workspace struct {
	store sova.RunStore
	runID string
	mu    sync.Mutex // makes Append's read-modify-write atomic within the run
}

var _ mode.FileWorkspace = (*workspace)(nil)

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
	c, err := w.check(ctx, p, len(content))
	if err != nil {
		return err
	}
	return faulted(w.store.PutRunFile(ctx, w.runID, c, content))
}

// check cleans a path and applies the workspace's limits to a file of
// size bytes written there.
func (w *workspace) check(ctx context.Context, p string, size int) (string, error) {
	c, err := cleanPath(p)
	if err != nil {
		return "", err
	}
	if size > maxWorkspaceFile {
		return "", fmt.Errorf("workspace: %s would be %d bytes; the limit is %d", c, size, maxWorkspaceFile)
	}
	if files, err := w.store.RunFiles(ctx, w.runID); err == nil && len(files) >= maxWorkspacePaths {
		exists := false
		for _, f := range files {
			exists = exists || f.Path == c
		}
		if !exists {
			return "", fmt.Errorf("workspace: more than %d files", maxWorkspacePaths)
		}
	}
	return c, nil
}

// WriteBytes implements mode.FileWorkspace: a file of bytes (a chart, a
// PDF) under the same limits as text files.
func (w *workspace) WriteBytes(ctx context.Context, p, contentType string, data []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	c, err := w.check(ctx, p, len(data))
	if err != nil {
		return err
	}
	return faulted(w.store.PutRunFileBytes(ctx, w.runID, c, contentType, data))
}

// ReadBytes implements mode.FileWorkspace.
func (w *workspace) ReadBytes(ctx context.Context, p string) ([]byte, string, error) {
	c, err := cleanPath(p)
	if err != nil {
		return nil, "", err
	}
	data, ct, err := w.store.RunFileBytes(ctx, w.runID, c)
	if errors.Is(err, sova.ErrNotFound) {
		return nil, "", mode.ErrNoFile
	}
	return data, ct, faulted(err)
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
	return s, faulted(err)
}

func (w *workspace) List(ctx context.Context) ([]string, error) {
	files, err := w.store.RunFiles(ctx, w.runID)
	if err != nil {
		return nil, faulted(err)
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
