package run

import (
	"context"
	"errors"
	"maps"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/sova-ai/sova"
	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/store"
)

// droppingUsage fails the first addition of each counter, as a database
// that drops its connections mid-run does.
type droppingUsage struct {
	mu     sync.Mutex
	failed map[string]bool
	counts map[string]int64
}

func (d *droppingUsage) AddUsage(_ context.Context, _, counter, _ string, n, _ int64) (int64, bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.failed[counter] {
		d.failed[counter] = true
		return 0, false, errors.New("FATAL: terminating connection due to administrator command (SQLSTATE 57P01)")
	}
	d.counts[counter] += n
	return d.counts[counter], true, nil
}

// What a run used is counted once although the store dropped the first
// attempt of each counter.
func TestUsageRecordedThroughDroppedConnections(t *testing.T) {
	usage := &droppingUsage{failed: map[string]bool{}, counts: map[string]int64{}}
	m := scripted{run: func(ctx context.Context, in mode.Input, sink event.Sink) (*mode.Result, error) {
		llm.MeterFrom(ctx).Add(llm.Usage{PromptTokens: 30, CompletionTokens: 12, TotalTokens: 42})
		sink.Emit(event.Event{Type: event.TypeQuery, Query: &event.Query{Status: event.QueryStarted, Query: "q"}})
		return &mode.Result{Text: "a", FinishReason: "stop"}, nil
	}}
	svc, _ := newService(t, m, nil, time.Minute)
	svc.opt.Usage = usage
	p, err := svc.Prepare(userCtx(t), Request{Mode: "scripted", Messages: []llm.Message{{Role: "user", Content: "q"}}})
	if err != nil {
		t.Fatal(err)
	}
	if o := svc.Execute(userCtx(t), p, event.Discard); o.Err != nil {
		t.Fatal(o.Err)
	}
	usage.mu.Lock()
	defer usage.mu.Unlock()
	if usage.counts["runs"] != 1 || usage.counts["tokens"] != 42 || usage.counts["searches"] != 1 {
		t.Errorf("usage recorded %v, want 1 run, 42 tokens, 1 search", usage.counts)
	}
}

// durableScripted is a scripted mode whose runs continue on another node.
type durableScripted struct{ scripted }

func (durableScripted) Durable() bool { return true }

// A durable run handed back as its node stops and continued by another
// node is counted once under "runs", and the tokens of both parts once
// each: the first node records its part as it hands the run back, the
// second only what it used itself.
func TestUsageOfAContinuedRunCountedOnce(t *testing.T) {
	st, err := store.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "sova.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	started := make(chan struct{})
	m := durableScripted{scripted{run: func(ctx context.Context, in mode.Input, sink event.Sink) (*mode.Result, error) {
		if in.Continued {
			llm.MeterFrom(ctx).Add(llm.Usage{PromptTokens: 2, TotalTokens: 2})
			return &mode.Result{Text: "a", FinishReason: "stop"}, nil
		}
		llm.MeterFrom(ctx).Add(llm.Usage{PromptTokens: 30, CompletionTokens: 10, TotalTokens: 40})
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	}}}
	usage := &droppingUsage{failed: map[string]bool{"runs": true, "tokens": true, "searches": true}, counts: map[string]int64{}}
	node := func(id string) *Service {
		reg, err := mode.NewRegistry(m)
		if err != nil {
			t.Fatal(err)
		}
		svc := NewService(Options{Store: st, Modes: reg, NodeID: id, Usage: usage, Lease: time.Minute})
		t.Cleanup(func() { _ = svc.Close(context.Background()) })
		return svc
	}
	n1 := node("node-1")
	ctx := userCtx(t)
	p, err := n1.Prepare(ctx, Request{Mode: "scripted", Messages: []llm.Message{{Role: "user", Content: "q"}}})
	if err != nil {
		t.Fatal(err)
	}
	n1.Start(p)
	select {
	case <-started:
	case <-ctx.Done():
		t.Fatal("the run did not start")
	}
	if err := n1.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	usage.mu.Lock()
	got := maps.Clone(usage.counts)
	usage.mu.Unlock()
	if got["runs"] != 1 || got["tokens"] != 40 {
		t.Fatalf("after the hand-back usage is %v, want 1 run and the 40 tokens used so far", got)
	}

	n2 := node("node-2")
	if n, err := n2.Recover(ctx); err != nil || n != 1 {
		t.Fatalf("node 2 took over %d runs: %v", n, err)
	}
	if err := n2.Follow(ctx, p.RunID, 0, func(event.Event) error { return nil }); err != nil {
		t.Fatal(err)
	}
	r, err := st.GetRun(ctx, testUser, p.RunID)
	if err != nil || r.State != sova.RunCompleted || r.Usage == nil || r.Usage.TotalTokens != 42 {
		t.Fatalf("run after the takeover: %+v %v; want completed with 42 tokens", r, err)
	}
	usage.mu.Lock()
	defer usage.mu.Unlock()
	if usage.counts["runs"] != 1 || usage.counts["tokens"] != 42 {
		t.Errorf("usage after the continued run ended: %v, want 1 run and 42 tokens", usage.counts)
	}
}
