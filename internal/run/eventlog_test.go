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

// flakyStore is a store whose AppendEvents is slow while its gate is
// closed (and by delay always), fails a number of times, and can commit a
// batch and still report a timeout, as a loaded database does.
type flakyStore struct {
	store.Store

	gate  chan struct{} // AppendEvents waits until it is closed
	delay time.Duration // every AppendEvents takes this long

	mu             sync.Mutex
	failures       int // calls that fail before storing anything
	lateCommits    int // calls that store and then fail
	calls, stored  int
	multiRun       int // calls that stored events of more than one run
	storedOutOfSeq bool
	lastSeq        map[string]int64
}

func (f *flakyStore) AppendEvents(ctx context.Context, evs []sova.RunEvent) error {
	if f.gate != nil {
		select {
		case <-f.gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if f.delay > 0 {
		select {
		case <-time.After(f.delay):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.failures > 0 {
		f.failures--
		return errors.New("database is locked")
	}
	if err := f.Store.AppendEvents(ctx, evs); err != nil {
		return err
	}
	if f.lastSeq == nil {
		f.lastSeq = map[string]int64{}
	}
	runs := map[string]bool{}
	for _, re := range evs {
		es, err := decodeStored(re)
		if err != nil {
			return err
		}
		if es[0].Seq != f.lastSeq[re.RunID]+1 {
			f.storedOutOfSeq = true
		}
		f.lastSeq[re.RunID] = es[len(es)-1].Seq
		f.stored += len(es)
		runs[re.RunID] = true
	}
	if len(runs) > 1 {
		f.multiRun++
	}
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
	useStore(svc, flaky)
	ctx := userCtx(t)
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

// useStore makes the service use st, its event writer too.
func useStore(svc *Service, st Store) {
	_ = svc.writer.close(context.Background())
	svc.opt.Store = st
	svc.writer = newEventWriter(st, nil, svc.opt.Logger)
}

// TestEventLogGivesUpWithinBound checks that a run's end does not wait
// forever for a store that never recovers, and that the writer stops.
func TestEventLogGivesUpWithinBound(t *testing.T) {
	f := &flakyStore{gate: make(chan struct{})} // never opens
	w := newEventWriter(f, nil, slog.New(slog.DiscardHandler))
	l := newEventLog(w, "run", 0, newLiveRun("u", "", 0, func(error) {}), slog.New(slog.DiscardHandler))
	for range 10 {
		l.add(event.Event{Type: event.TypeTextDelta, Text: "x"})
	}
	start := time.Now()
	l.close(100 * time.Millisecond)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("close took %s", d)
	}
	if l.last() != 10 {
		t.Errorf("last = %d, want 10", l.last())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_ = w.close(ctx)
	select {
	case <-w.done:
	default:
		t.Error("the writer outlived close")
	}
}
