package run

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/mode"
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
