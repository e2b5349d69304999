package run

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/store"
)

// durable is a scripted mode whose runs outlive their node.
type durable struct{ scripted }

func (durable) Durable() bool { return true }

// node is one Service on a store shared with other nodes.
func node(t *testing.T, st store.Store, m mode.Mode, id string, lease time.Duration, exclusive bool) *Service {
	t.Helper()
	reg, err := mode.NewRegistry(m)
	if err != nil {
		t.Fatal(err)
	}
	svc := NewService(Options{Store: st, Modes: reg, NodeID: id, Lease: lease, Exclusive: exclusive})
	t.Cleanup(func() { _ = svc.Close(context.Background()) })
	return svc
}

func sharedStore(t *testing.T) store.Store {
	t.Helper()
	st, err := store.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "sova.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

func waitRunState(t *testing.T, st store.Store, runID, state string) *sova.Run {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, err := st.GetRun(userCtx(t), testUser, runID)
		if err == nil && r.State == state {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s did not become %s: %+v %v", runID, state, r, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A node starting up takes only the runs whose node stopped: a run another
// live node executes keeps running there, untouched.
func TestRecoverLeavesRunsOfLiveNodes(t *testing.T) {
	st := sharedStore(t)
	release := make(chan struct{})
	blocking := scripted{run: func(ctx context.Context, in mode.Input, sink event.Sink) (*mode.Result, error) {
		sink.Emit(event.Event{Type: event.TypeTextDelta, Text: "working"})
		select {
		case <-release:
			return &mode.Result{Text: "done", FinishReason: "stop"}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}}
	a := node(t, st, blocking, "node-a", 300*time.Millisecond, false)
	ctx := userCtx(t)
	p, err := a.Prepare(ctx, Request{Mode: "scripted", Messages: []llm.Message{{Role: "user", Content: "q"}}, Persist: true})
	if err != nil {
		t.Fatal(err)
	}
	a.Start(p)
	// Node b starts while a's run goes on, for longer than a lease: a
	// renews, so b neither interrupts nor takes it.
	b := node(t, st, blocking, "node-b", 300*time.Millisecond, false)
	if n, err := b.Recover(ctx); err != nil || n != 0 {
		t.Fatalf("recover on node b: %d runs, %v; want none", n, err)
	}
	time.Sleep(time.Second)
	r, _ := st.GetRun(ctx, testUser, p.RunID)
	if r.State != sova.RunRunning || r.NodeID != "node-a" || !r.LeaseUntil.After(time.Now()) {
		t.Fatalf("run of a live node: %+v", r)
	}
	close(release)
	r = waitRunState(t, st, p.RunID, sova.RunCompleted)
	if r.Error != "" {
		t.Errorf("completed run has error %q", r.Error)
	}
}

// A durable run whose node died is continued by another node once its
// lease has passed: the mode is told it continues, and the run's events
// go on after the last one stored, with no start event again.
func TestTakeOverContinuesDurableRun(t *testing.T) {
	st := sharedStore(t)
	ctx := userCtx(t)
	var runs, continued atomic.Int32
	m := durable{scripted{run: func(ctx context.Context, in mode.Input, sink event.Sink) (*mode.Result, error) {
		runs.Add(1)
		if in.Continued {
			continued.Add(1)
		}
		sink.Emit(event.Event{Type: event.TypeTextDelta, Text: "rest"})
		return &mode.Result{Text: "rest", FinishReason: "stop"}, nil
	}}}
	// The dead node left a run with three stored events and a lease that
	// has passed.
	in, _ := json.Marshal(runInput{Persist: false, MessageID: "msg-1"})
	dead := &sova.Run{UserID: testUser, Mode: "scripted", State: sova.RunRunning, Question: "q", Input: in,
		NodeID: "dead", LeaseUntil: time.Now().Add(-time.Second)}
	if err := st.CreateRun(ctx, dead); err != nil {
		t.Fatal(err)
	}
	var kept []sova.RunEvent
	for i := int64(1); i <= 3; i++ {
		e := event.Event{Type: event.TypeTextDelta, Seq: i, Text: fmt.Sprintf("w%d ", i)}
		if i == 1 {
			e = event.Event{Type: event.TypeStart, Seq: 1, Start: &event.Start{RunID: dead.ID, MessageID: "msg-1", Mode: "scripted"}}
		}
		b, _ := json.Marshal(e)
		kept = append(kept, sova.RunEvent{Seq: i, Event: b})
	}
	if err := st.AppendRunEvents(ctx, dead.ID, kept); err != nil {
		t.Fatal(err)
	}
	// A second run, whose node is alive, stays where it is.
	alive := &sova.Run{UserID: testUser, Mode: "scripted", State: sova.RunRunning, Question: "q", Input: in,
		NodeID: "alive", LeaseUntil: time.Now().Add(time.Hour)}
	if err := st.CreateRun(ctx, alive); err != nil {
		t.Fatal(err)
	}

	// Two nodes look for orphans at once: one takes the run.
	b := node(t, st, m, "node-b", 150*time.Millisecond, false)
	c := node(t, st, m, "node-c", 150*time.Millisecond, false)
	r := waitRunState(t, st, dead.ID, sova.RunCompleted)
	if runs.Load() != 1 || continued.Load() != 1 {
		t.Errorf("mode ran %d times (%d continued), want once, continued", runs.Load(), continued.Load())
	}
	if r.NodeID != "node-b" && r.NodeID != "node-c" {
		t.Errorf("completed by node %q", r.NodeID)
	}
	var seqs []int64
	var types []event.Type
	if err := b.Follow(ctx, dead.ID, 0, func(e event.Event) error {
		seqs, types = append(seqs, e.Seq), append(types, e.Type)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for i, s := range seqs {
		if s != int64(i+1) {
			t.Fatalf("event numbers %v, want 1, 2, 3, …", seqs)
		}
	}
	starts := 0
	for _, ty := range types {
		if ty == event.TypeStart {
			starts++
		}
	}
	if starts != 1 || types[len(types)-1] != event.TypeFinish {
		t.Errorf("events %v: want one start and a finish at the end", types)
	}
	if got, _ := c.opt.Store.GetRun(ctx, testUser, alive.ID); got.State != sova.RunRunning || got.NodeID != "alive" {
		t.Errorf("run of a live node was taken: %+v", got)
	}
}

// A node that stops hands its durable runs back: the run stays running,
// its lease released, and the next node (here: the one node restarted)
// continues it at once; a run of another mode is interrupted as before.
func TestShutdownHandsBackDurableRuns(t *testing.T) {
	st := sharedStore(t)
	ctx := userCtx(t)
	var continued atomic.Int32
	m := durable{scripted{run: func(ctx context.Context, in mode.Input, sink event.Sink) (*mode.Result, error) {
		if in.Continued {
			continued.Add(1)
			return &mode.Result{Text: "finished", FinishReason: "stop"}, nil
		}
		sink.Emit(event.Event{Type: event.TypeTextDelta, Text: "part"})
		<-ctx.Done()
		return nil, ctx.Err()
	}}}
	a := node(t, st, m, "node-a", time.Hour, true)
	p, err := a.Prepare(ctx, Request{Mode: "scripted", Messages: []llm.Message{{Role: "user", Content: "q"}}, Persist: true})
	if err != nil {
		t.Fatal(err)
	}
	a.Start(p)
	if err := a.Follow(ctx, p.RunID, 0, func(e event.Event) error {
		if e.Type == event.TypeTextDelta {
			return errStop
		}
		return nil
	}); err != errStop {
		t.Fatal(err)
	}
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	r, _ := st.GetRun(ctx, testUser, p.RunID)
	if r.State != sova.RunRunning || r.NodeID != "" {
		t.Fatalf("run handed back: %+v, want running with no node", r)
	}
	stored, _ := st.RunEvents(ctx, p.RunID, 0)
	if len(stored) != 2 {
		t.Fatalf("%d events stored, want start and the text", len(stored))
	}

	// The restarted node takes it back at once (lease of an hour).
	b := node(t, st, m, "node-a2", time.Hour, true)
	if n, err := b.Recover(ctx); err != nil || n != 1 {
		t.Fatalf("recover: %d %v", n, err)
	}
	r = waitRunState(t, st, p.RunID, sova.RunCompleted)
	if continued.Load() != 1 || r.LastSeq <= 2 {
		t.Errorf("continued %d times, last event %d", continued.Load(), r.LastSeq)
	}
}

var errStop = fmt.Errorf("stop following")

// other is a scripted mode of another id, without checkpoints.
type other struct{ scripted }

func (other) ID() string { return "other" }

// Drain hands a stopping node's durable runs back at once, while its other
// runs go on to their answers, and another (live) node continues the
// handed-back run without waiting for a lease.
func TestDrainHandsBackBeforeOtherRunsEnd(t *testing.T) {
	st := sharedStore(t)
	ctx := userCtx(t)
	var continued atomic.Int32
	m := durable{scripted{run: func(ctx context.Context, in mode.Input, sink event.Sink) (*mode.Result, error) {
		if in.Continued {
			continued.Add(1)
			return &mode.Result{Text: "finished", FinishReason: "stop"}, nil
		}
		sink.Emit(event.Event{Type: event.TypeTextDelta, Text: "part"})
		<-ctx.Done()
		return nil, ctx.Err()
	}}}
	release := make(chan struct{})
	var otherCancelled atomic.Bool
	o := other{scripted{run: func(ctx context.Context, in mode.Input, sink event.Sink) (*mode.Result, error) {
		sink.Emit(event.Event{Type: event.TypeTextDelta, Text: "answer"})
		select {
		case <-release:
			return &mode.Result{Text: "answer", FinishReason: "stop"}, nil
		case <-ctx.Done():
			otherCancelled.Store(true)
			return nil, ctx.Err()
		}
	}}}
	reg, err := mode.NewRegistry(m, o)
	if err != nil {
		t.Fatal(err)
	}
	a := NewService(Options{Store: st, Modes: reg, NodeID: "node-a", Lease: time.Hour})
	t.Cleanup(func() { _ = a.Close(context.Background()) })
	start := func(modeID, chatID string) *Prepared {
		p, err := a.Prepare(ctx, Request{Mode: modeID, ChatID: chatID, Messages: []llm.Message{{Role: "user", Content: "q"}}, Persist: true})
		if err != nil {
			t.Fatal(err)
		}
		a.Start(p)
		if err := a.Follow(ctx, p.RunID, 0, func(e event.Event) error {
			if e.Type == event.TypeTextDelta {
				return errStop
			}
			return nil
		}); err != errStop {
			t.Fatal(err)
		}
		return p
	}
	pd, po := start("scripted", "chat-durable"), start("other", "chat-other")

	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := a.Drain(dctx); err != nil {
		t.Fatalf("drain: %v", err)
	}
	if a.Ready() == nil {
		t.Error("a draining node must not be ready")
	}
	r, _ := st.GetRun(ctx, testUser, pd.RunID)
	if r.State != sova.RunRunning || r.NodeID != "" {
		t.Fatalf("durable run after drain: %+v, want running with no node", r)
	}
	r, _ = st.GetRun(ctx, testUser, po.RunID)
	if r.State != sova.RunRunning || r.NodeID != "node-a" || otherCancelled.Load() {
		t.Fatalf("other run after drain: %+v (cancelled %v), want still running on node-a", r, otherCancelled.Load())
	}

	// A live node continues the handed-back run at once (a lease of an
	// hour has not passed) and leaves node-a's other run alone.
	b := node(t, st, m, "node-b", time.Hour, false)
	if n, err := b.Recover(ctx); err != nil || n != 1 {
		t.Fatalf("recover on node-b: %d %v, want the one handed-back run", n, err)
	}
	waitRunState(t, st, pd.RunID, sova.RunCompleted)
	if continued.Load() != 1 {
		t.Errorf("continued %d times, want 1", continued.Load())
	}

	close(release)
	waitRunState(t, st, po.RunID, sova.RunCompleted)
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// A node can stop before any event of its run was stored (the writer
// stores them in batches). The node continuing such a run begins its log
// with the start, so a client replaying it sees one start, as always.
func TestContinuedRunWithNothingStoredStarts(t *testing.T) {
	st := sharedStore(t)
	ctx := userCtx(t)
	m := durable{scripted{run: func(ctx context.Context, in mode.Input, sink event.Sink) (*mode.Result, error) {
		return &mode.Result{Text: "finished", FinishReason: "stop"}, nil
	}}}
	a := node(t, st, m, "node-a", time.Hour, true)
	p, err := a.Prepare(ctx, Request{Mode: "scripted", Messages: []llm.Message{{Role: "user", Content: "q"}}, Persist: true})
	if err != nil {
		t.Fatal(err)
	}
	// node-a stops here, its run prepared and running, nothing stored.
	if stored, _ := st.RunEvents(ctx, p.RunID, 0); len(stored) != 0 {
		t.Fatalf("%d events stored before the run started", len(stored))
	}
	b := node(t, st, m, "node-a2", time.Hour, true)
	if n, err := b.Recover(ctx); err != nil || n != 1 {
		t.Fatalf("recover: %d %v", n, err)
	}
	waitRunState(t, st, p.RunID, sova.RunCompleted)
	var types []event.Type
	if err := b.Follow(ctx, p.RunID, 0, func(e event.Event) error {
		if e.Seq != int64(len(types)+1) {
			t.Errorf("event %d numbered %d", len(types)+1, e.Seq)
		}
		types = append(types, e.Type)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	starts := 0
	for _, ty := range types {
		if ty == event.TypeStart {
			starts++
		}
	}
	if len(types) < 3 || types[0] != event.TypeStart || starts != 1 || types[len(types)-1] != event.TypeFinish {
		t.Errorf("events %v: want the start first, once, and a finish at the end", types)
	}
}
