package run

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
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

// Beyond MaxRunning, runs wait in a queue after their start event, their
// stream says how many runs are ahead, a run cancelled while it waits
// leaves the queue, and the others run once slots free up, never more
// than MaxRunning at once.
func TestRunsBeyondTheLimitWaitInAQueueTheStreamReports(t *testing.T) {
	var running, most atomic.Int64
	gate := make(chan struct{})
	m := scripted{run: func(ctx context.Context, in mode.Input, sink event.Sink) (*mode.Result, error) {
		n := running.Add(1)
		defer running.Add(-1)
		for {
			cur := most.Load()
			if n <= cur || most.CompareAndSwap(cur, n) {
				break
			}
		}
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		sink.Emit(event.Event{Type: event.TypeTextDelta, Text: "done"})
		return &mode.Result{Text: "done", FinishReason: "stop"}, nil
	}}
	st, err := store.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "sova.db"))
	if err != nil {
		t.Fatal(err)
	}
	reg, err := mode.NewRegistry(m)
	if err != nil {
		t.Fatal(err)
	}
	svc := NewService(Options{Store: st, Modes: reg, MaxRunning: 2})
	t.Cleanup(func() {
		_ = svc.Close(context.Background())
		_ = st.Close()
	})

	const runs = 5
	recs := make([]*eventtest.Recorder, runs)
	outcomes := make([]*Outcome, runs)
	cancels := make([]context.CancelFunc, runs)
	var wg sync.WaitGroup
	for i := range runs {
		ctx, cancel := context.WithCancel(userCtx(t))
		cancels[i] = cancel
		defer cancel()
		p, err := svc.Prepare(ctx, Request{Mode: "scripted", Messages: []llm.Message{{Role: "user", Content: fmt.Sprintf("question %d", i)}}, Persist: true})
		if err != nil {
			t.Fatal(err)
		}
		recs[i] = &eventtest.Recorder{}
		wg.Go(func() { outcomes[i] = svc.Execute(ctx, p, recs[i]) })
		// One at a time, so that the queue's order is known.
		waitFor(t, fmt.Sprintf("run %d to start", i), func() bool { return len(recs[i].Filter(event.TypeStart)) == 1 })
		if i >= 2 {
			want := fmt.Sprintf("Waiting for a free slot: %d runs ahead", i-2)
			waitFor(t, fmt.Sprintf("run %d to say %q", i, want), func() bool { return queueStatus(recs[i]) == want })
		}
	}
	if n := running.Load(); n != 2 {
		t.Fatalf("%d runs execute at once, want 2 (MaxRunning)", n)
	}
	// The first in the queue gives up; the next takes its place.
	cancels[2]()
	waitFor(t, "the cancelled run to end", func() bool { return len(recs[2].Filter(event.TypeFinish)) == 1 })
	close(gate)
	wg.Wait()
	for i, o := range outcomes {
		want := sova.RunCompleted
		if i == 2 {
			want = sova.RunCancelled
		}
		if o.State != want {
			t.Errorf("run %d ended %s (%v), want %s", i, o.State, o.Err, want)
		}
	}
	if n := most.Load(); n != 2 {
		t.Errorf("at most %d runs executed at once, want 2", n)
	}
	if recs[0].Text() != "done" || queueStatus(recs[0]) != "" {
		t.Errorf("a run under the limit: text %q, queue status %q", recs[0].Text(), queueStatus(recs[0]))
	}
	if running, waiting := svc.slots.counts(); running != 0 || waiting != 0 {
		t.Errorf("after the runs: %d running, %d waiting", running, waiting)
	}
}

func TestAdmissionReleasesASlotAdmittedAsItsRunWasCancelled(t *testing.T) {
	a := &admission{limit: 1}
	release, err := a.acquire(context.Background(), func(int) {})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := a.acquire(ctx, func(int) {})
		done <- err
	}()
	waitFor(t, "the second run to wait", func() bool { _, w := a.counts(); return w == 1 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	release()
	release() // once only
	if running, waiting := a.counts(); running != 0 || waiting != 0 {
		t.Errorf("%d running, %d waiting; want none", running, waiting)
	}
}

func queueStatus(r *eventtest.Recorder) string {
	last := ""
	for _, e := range r.Filter(event.TypeStatus) {
		if e.Status.Stage == "queue" && strings.HasPrefix(e.Status.Message, "Waiting for a free slot") {
			last = e.Status.Message
		}
	}
	return last
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
