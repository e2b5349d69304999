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
	"github.com/sova-ai/sova/internal/store/storetest"
)

// countingStore counts the writes of run events a store gets.
type countingStore struct {
	store.Store
	writes atomic.Int64
}

func (c *countingStore) AppendRunEvents(ctx context.Context, runID string, evs []sova.RunEvent) error {
	c.writes.Add(1)
	return c.Store.AppendRunEvents(ctx, runID, evs)
}

func (c *countingStore) AppendEvents(ctx context.Context, evs []sova.RunEvent) error {
	c.writes.Add(1)
	return c.Store.AppendEvents(ctx, evs)
}

// BenchmarkConcurrentRuns starts many runs at once, each streaming events
// as a model streams tokens with a follower attached, and reports the
// longest time one Emit took, how many events a replay from the store (by
// a new service, as after a restart) lacks, the errors logged, the wall
// time and the writes of run events the store got. On PostgreSQL it runs
// when SOVA_TEST_DATABASE_URL is set.
//
//	go test ./internal/run -run '^$' -bench ConcurrentRuns -benchtime 1x
func BenchmarkConcurrentRuns(b *testing.B) {
	open := map[string]func(b *testing.B) store.Store{
		"sqlite": func(b *testing.B) store.Store {
			st, err := store.OpenSQLite(context.Background(), filepath.Join(b.TempDir(), "sova.db"))
			if err != nil {
				b.Fatal(err)
			}
			return st
		},
		"postgres": func(b *testing.B) store.Store {
			st, err := store.OpenPostgres(context.Background(), storetest.PostgresDSN(b))
			if err != nil {
				b.Fatal(err)
			}
			return st
		},
	}
	for _, engine := range []string{"sqlite", "postgres"} {
		b.Run(engine, func(b *testing.B) { benchConcurrentRuns(b, open[engine]) })
	}
}

func benchConcurrentRuns(b *testing.B, open func(b *testing.B) store.Store) {
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
		ctx := userCtx(b)
		st := &countingStore{Store: open(b)}
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
		st.writes.Store(0)
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
		_ = svc.Close(ctx)
		writes := st.writes.Load()
		replay := NewService(Options{Store: st, Modes: reg})
		lost := 0
		for _, p := range ps {
			n := 0
			if err := replay.Follow(ctx, p.RunID, 0, func(event.Event) error { n++; return nil }); err != nil {
				b.Fatal(err)
			}
			lost += deltas + 3 - n // start, deltas, usage, finish
		}
		_ = replay.Close(ctx)
		_ = st.Close()
		b.ReportMetric(float64(slowest.Load())/1e6, "max-emit-ms")
		b.ReportMetric(float64(lost), "lost-events")
		b.ReportMetric(float64(failures.Load()), "logged-errors")
		b.ReportMetric(wall.Seconds(), "wall-s")
		b.ReportMetric(float64(writes), "event-writes")
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
