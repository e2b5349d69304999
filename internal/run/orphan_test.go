package run

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/store"
)

// fullDisk is a store whose writes of runs, messages and workspace files
// fail while full is set, as SQLite's do on a full disk. Event appends go
// through, so a run's log closes at once and the test does not wait out
// the writer's drain.
type fullDisk struct {
	store.Store
	full atomic.Bool
}

var errDiskFull = errors.New("database or disk is full (13)")

func (f *fullDisk) fail() error {
	if f.full.Load() {
		return errDiskFull
	}
	return nil
}

func (f *fullDisk) UpdateRun(ctx context.Context, r *sova.Run) error {
	if err := f.fail(); err != nil {
		return err
	}
	return f.Store.UpdateRun(ctx, r)
}

func (f *fullDisk) AddMessage(ctx context.Context, userID string, m *sova.Message) error {
	if err := f.fail(); err != nil {
		return err
	}
	return f.Store.AddMessage(ctx, userID, m)
}

func (f *fullDisk) PutRunFile(ctx context.Context, runID, path, content string) error {
	if err := f.fail(); err != nil {
		return err
	}
	return f.Store.PutRunFile(ctx, runID, path, content)
}

func (f *fullDisk) DeleteRunFiles(ctx context.Context, runID string) error {
	if err := f.fail(); err != nil {
		return err
	}
	return f.Store.DeleteRunFiles(ctx, runID)
}

func (f *fullDisk) ReleaseRun(ctx context.Context, runID, nodeID string) error {
	if err := f.fail(); err != nil {
		return err
	}
	return f.Store.ReleaseRun(ctx, runID, nodeID)
}

// executorGone waits until nothing on the node executes the run.
func executorGone(t *testing.T, s *Service, runID string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.mu.Lock()
		_, live := s.live[runID]
		s.mu.Unlock()
		if !live {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s still executes", runID)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// stuckRun starts a run whose end cannot be stored (the disk fills while
// it runs) and returns it once its executor is gone and the disk is free
// again: the run is left running with no executor.
func stuckRun(t *testing.T, lease time.Duration) (*Service, *fullDisk, *Prepared) {
	t.Helper()
	st := &fullDisk{Store: sharedStore(t)}
	working, release := make(chan struct{}), make(chan struct{})
	m := scripted{run: func(ctx context.Context, in mode.Input, sink event.Sink) (*mode.Result, error) {
		if in.Question != "q" {
			return &mode.Result{Text: "next", FinishReason: "stop"}, nil
		}
		sink.Emit(event.Event{Type: event.TypeTextDelta, Text: "working"})
		close(working)
		<-release
		return &mode.Result{Text: "done", FinishReason: "stop"}, nil
	}}
	svc := node(t, st, m, "node-a", lease, true)
	p, err := svc.Prepare(userCtx(t), Request{Mode: "scripted", Messages: []llm.Message{{Role: "user", Content: "q"}}, Persist: true})
	if err != nil {
		t.Fatal(err)
	}
	svc.Start(p)
	<-working
	st.full.Store(true)
	close(release)
	executorGone(t, svc, p.RunID)
	st.full.Store(false)
	if r, _ := st.GetRun(userCtx(t), testUser, p.RunID); r.State != sova.RunRunning {
		t.Fatalf("the run's end was stored on a full disk: %s", r.State)
	}
	return svc, st, p
}

// askAgain asks a new question in the run's chat: it is accepted once the
// run has ended.
func askAgain(t *testing.T, svc *Service, p *Prepared) {
	t.Helper()
	next, err := svc.Prepare(userCtx(t), Request{ChatID: p.ChatID, Mode: "scripted", Messages: []llm.Message{{Role: "user", Content: "again"}}, Persist: true})
	if err != nil {
		t.Fatalf("a new question in the chat: %v", err)
	}
	svc.Start(next)
}

// A run whose executor ended without storing its end (the disk was full)
// is not renewed: its lease passes and the node closes it, and the chat
// takes questions again.
func TestRunWithoutExecutorIsClosed(t *testing.T) {
	svc, st, p := stuckRun(t, 300*time.Millisecond)
	r := waitRunState(t, st, p.RunID, sova.RunInterrupted)
	if !strings.Contains(r.Error, "restart") {
		t.Errorf("closed run's error %q does not say how to go on", r.Error)
	}
	askAgain(t, svc, p)
}

// Cancelling such a run before its lease passes closes it at once, rather
// than saying it is not running because it is running.
func TestCancelRunWithoutExecutor(t *testing.T) {
	svc, st, p := stuckRun(t, time.Minute)
	if err := svc.Cancel(userCtx(t), p.RunID); err != nil {
		t.Fatalf("cancel of a run with no executor: %v", err)
	}
	waitRunState(t, st, p.RunID, sova.RunCancelled)
	askAgain(t, svc, p)
}

// A durable run whose checkpoint cannot be written (the disk is full) is
// handed back, not failed, and continued from its last checkpoint once
// the store writes again; no error reaches its log.
func TestStoreFaultHandsDurableRunBack(t *testing.T) {
	st := &fullDisk{Store: sharedStore(t)}
	var runs atomic.Int32
	faulted := make(chan struct{})
	m := durable{scripted{run: func(ctx context.Context, in mode.Input, sink event.Sink) (*mode.Result, error) {
		if in.Question != "q" {
			return &mode.Result{Text: "next", FinishReason: "stop"}, nil
		}
		runs.Add(1)
		if in.Continued {
			cp, err := in.Workspace.Read(ctx, "checkpoint")
			if err != nil || cp != "1" {
				return nil, fmt.Errorf("checkpoint %q: %v", cp, err)
			}
			sink.Emit(event.Event{Type: event.TypeTextDelta, Text: "rest"})
			return &mode.Result{Text: "rest", FinishReason: "stop"}, nil
		}
		if err := in.Workspace.Write(ctx, "checkpoint", "1"); err != nil {
			return nil, err
		}
		st.full.Store(true)
		defer close(faulted)
		if err := in.Workspace.Write(ctx, "checkpoint", "2"); err != nil {
			return nil, fmt.Errorf("saving the checkpoint: %w", err)
		}
		return &mode.Result{Text: "the disk was not full", FinishReason: "stop"}, nil
	}}}
	svc := node(t, st, m, "node-a", 300*time.Millisecond, true)
	p, err := svc.Prepare(userCtx(t), Request{Mode: "scripted", Messages: []llm.Message{{Role: "user", Content: "q"}}, Persist: true})
	if err != nil {
		t.Fatal(err)
	}
	svc.Start(p)
	<-faulted
	executorGone(t, svc, p.RunID)
	st.full.Store(false)
	r := waitRunState(t, st, p.RunID, sova.RunCompleted)
	if r.Error != "" || runs.Load() != 2 {
		t.Errorf("run %s error %q after %d executions, want completed after 2", r.State, r.Error, runs.Load())
	}
	stored, err := st.RunEvents(userCtx(t), p.RunID, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, re := range stored {
		evs, _ := decodeStored(re)
		for _, e := range evs {
			if e.Type == event.TypeError {
				t.Errorf("the run's log carries an error: %+v", e.Error)
			}
		}
	}
	askAgain(t, svc, p)
}
