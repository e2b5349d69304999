package run

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/store"
)

// flakyStore is a store whose AppendRunEvents is slow while its gate is
// closed, fails a number of times, and can commit a batch and still
// report a timeout, as a loaded database does.
type flakyStore struct {
	store.Store

	gate chan struct{} // AppendRunEvents waits until it is closed

	mu             sync.Mutex
	failures       int // calls that fail before storing anything
	lateCommits    int // calls that store and then fail
	calls, stored  int
	storedOutOfSeq bool
	lastSeq        int64
}

func (f *flakyStore) AppendRunEvents(ctx context.Context, runID string, evs []sova.RunEvent) error {
	select {
	case <-f.gate:
	case <-ctx.Done():
		return ctx.Err()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.failures > 0 {
		f.failures--
		return errors.New("database is locked")
	}
	if err := f.Store.AppendRunEvents(ctx, runID, evs); err != nil {
		return err
	}
	if evs[0].Seq != f.lastSeq+1 {
		f.storedOutOfSeq = true
	}
	f.lastSeq = evs[len(evs)-1].Seq
	f.stored += len(evs)
	if f.lateCommits > 0 {
		f.lateCommits--
		return context.DeadlineExceeded
	}
	return nil
}

// TestEventsNeverWaitForTheStore emits a run's events while the store
// neither answers nor, later, succeeds: emitting goes on, followers get
// every event at once, and once the store recovers every event is stored,
// in order, before the run's final state, so a replay is complete.
func TestEventsNeverWaitForTheStore(t *testing.T) {
	const deltas = 1000
	emitted := make(chan struct{})
	m := scripted{run: func(_ context.Context, _ mode.Input, sink event.Sink) (*mode.Result, error) {
		for i := range deltas {
			sink.Emit(event.Event{Type: event.TypeTextDelta, Text: fmt.Sprintf("w%d ", i)})
		}
		close(emitted)
		return &mode.Result{Text: "done", FinishReason: "stop"}, nil
	}}
	svc, st := newService(t, m, nil, 0)
	flaky := &flakyStore{Store: st, gate: make(chan struct{}), failures: 3, lateCommits: 1}
	svc.opt.Store = flaky
	ctx := userCtx()
	p, err := svc.Prepare(ctx, Request{Mode: "scripted", Messages: []llm.Message{{Role: "user", Content: "q"}}, Persist: true})
	if err != nil {
		t.Fatal(err)
	}
	finished := make(chan *Outcome)
	go func() { finished <- svc.Execute(ctx, p, event.Discard) }()

	// The store does not answer: emitting must go on regardless.
	select {
	case <-emitted:
	case <-time.After(10 * time.Second):
		close(flaky.gate)
		<-finished
		t.Fatal("emitting a run's events waited for the store")
	}
	var seen int
	if err := svc.Follow(sova.WithUser(ctx, sova.User{ID: testUser}), p.RunID, 0, func(event.Event) error { seen++; return nil }, Snapshot()); err != nil {
		t.Fatal(err)
	}
	if seen < 1+deltas { // start and the deltas, perhaps usage and finish
		t.Errorf("a follower saw %d events while the store hung, want at least %d", seen, 1+deltas)
	}

	// The store answers, failing at first; the run ends once all is stored.
	close(flaky.gate)
	var o *Outcome
	select {
	case o = <-finished:
	case <-time.After(time.Minute):
		t.Fatal("the run did not end")
	}
	if o.Err != nil {
		t.Fatal(o.Err)
	}
	r, err := st.GetRun(ctx, testUser, p.RunID)
	if err != nil {
		t.Fatal(err)
	}
	want := int64(1 + deltas + 2) // start, deltas, usage, finish
	if r.State != sova.RunCompleted || r.LastSeq != want {
		t.Errorf("run state %s, last event %d; want completed, %d", r.State, r.LastSeq, want)
	}
	// A replay after a restart: a new service reads the log from the store.
	replay := NewService(Options{Store: st, Modes: svc.opt.Modes})
	defer func() { _ = replay.Close(ctx) }()
	var seqs []int64
	var last event.Event
	if err := replay.Follow(sova.WithUser(ctx, sova.User{ID: testUser}), p.RunID, 0, func(e event.Event) error {
		seqs = append(seqs, e.Seq)
		last = e
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if int64(len(seqs)) != want || last.Type != event.TypeFinish {
		t.Fatalf("replay has %d events ending with %s, want %d ending with finish", len(seqs), last.Type, want)
	}
	for i, s := range seqs {
		if s != int64(i+1) {
			t.Fatalf("replayed event %d has number %d", i, s)
		}
	}
	flaky.mu.Lock()
	defer flaky.mu.Unlock()
	if flaky.storedOutOfSeq || flaky.stored != int(want) || flaky.calls > 40 {
		t.Errorf("store: %d calls stored %d events (out of order: %v); want %d events in few batches, in order",
			flaky.calls, flaky.stored, flaky.storedOutOfSeq, want)
	}
}

// TestEventLogGivesUpWithinBound checks that a run's end does not wait
// forever for a store that never recovers, and that its writer stops.
func TestEventLogGivesUpWithinBound(t *testing.T) {
	f := &flakyStore{gate: make(chan struct{})} // never opens
	l := newEventLog(f, "run", 0, newLiveRun("u", 0, func(error) {}), slog.New(slog.DiscardHandler))
	for range 10 {
		l.add(event.Event{Type: event.TypeTextDelta, Text: "x"})
	}
	start := time.Now()
	l.close(100 * time.Millisecond)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("close took %s", d)
	}
	select {
	case <-l.done:
	default:
		t.Error("the writer outlived close")
	}
	if l.last() != 10 {
		t.Errorf("last = %d, want 10", l.last())
	}
}
