package run

import (
	"context"
	"fmt"
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

// BenchmarkConcurrentRuns starts many runs at once on a SQLite store, each
// streaming events as a model streams tokens, and reports the longest time
// one Emit took and how many events a replay from the store lacks.
//
//	go test ./internal/run -run '^$' -bench ConcurrentRuns -benchtime 1x
func BenchmarkConcurrentRuns(b *testing.B) {
	const (
		runs   = 500
		deltas = 200
		gap    = 5 * time.Millisecond // between two deltas of a run
	)
	var slowest atomic.Int64 // nanoseconds
	m := scripted{run: func(ctx context.Context, _ mode.Input, sink event.Sink) (*mode.Result, error) {
		for i := range deltas {
			start := time.Now()
			sink.Emit(event.Event{Type: event.TypeTextDelta, Text: fmt.Sprintf("w%d ", i)})
			d := int64(time.Since(start))
			for {
				cur := slowest.Load()
				if d <= cur || slowest.CompareAndSwap(cur, d) {
					break
				}
			}
			time.Sleep(gap)
		}
		return &mode.Result{Text: "done", FinishReason: "stop"}, nil
	}}
	reg, err := mode.NewRegistry(m)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		ctx := userCtx()
		st, err := store.OpenSQLite(ctx, filepath.Join(b.TempDir(), "sova.db"))
		if err != nil {
			b.Fatal(err)
		}
		var failures atomic.Int64
		svc := NewService(Options{Store: st, Modes: reg, Logger: slog.New(countErrors{&failures})})
		ps := make([]*Prepared, runs)
		for i := range ps {
			p, err := svc.Prepare(ctx, Request{Mode: "scripted", Messages: []llm.Message{{Role: "user", Content: "q"}}, Persist: true})
			if err != nil {
				b.Fatal(err)
			}
			ps[i] = p
		}
		slowest.Store(0)
		start := time.Now()
		for _, p := range ps {
			svc.Start(p)
		}
		var wg sync.WaitGroup
		for _, p := range ps {
			wg.Go(func() {
				_ = svc.Follow(sova.WithUser(ctx, sova.User{ID: testUser}), p.RunID, 0, func(event.Event) error { return nil })
			})
		}
		wg.Wait()
		wall := time.Since(start)
		lost := 0
		for _, p := range ps {
			evs, err := st.RunEvents(ctx, p.RunID, 0)
			if err != nil {
				b.Fatal(err)
			}
			lost += deltas + 3 - len(evs) // start, deltas, usage, finish
		}
		_ = svc.Close(ctx)
		_ = st.Close()
		b.ReportMetric(float64(slowest.Load())/1e6, "max-emit-ms")
		b.ReportMetric(float64(lost), "lost-events")
		b.ReportMetric(float64(failures.Load()), "logged-errors")
		b.ReportMetric(wall.Seconds(), "wall-s")
	}
}

// countErrors is a slog handler that counts records at error level.
type countErrors struct{ n *atomic.Int64 }

func (c countErrors) Enabled(context.Context, slog.Level) bool { return true }
func (c countErrors) Handle(_ context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError {
		c.n.Add(1)
	}
	return nil
}
func (c countErrors) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c countErrors) WithGroup(string) slog.Handler      { return c }
