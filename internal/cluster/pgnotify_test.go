package cluster_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/cluster"
	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/run"
	"github.com/sova-ai/sova/internal/store"
	"github.com/sova-ai/sova/internal/store/storetest"
)

// streaming is a mode that streams n text deltas gap apart.
type streaming struct {
	n   int
	gap time.Duration
}

func (streaming) ID() string          { return "stream" }
func (streaming) Description() string { return "streams deltas" }
func (m streaming) Run(ctx context.Context, _ mode.Input, sink event.Sink) (*mode.Result, error) {
	for i := range m.n {
		sink.Emit(event.Event{Type: event.TypeTextDelta, Text: fmt.Sprintf("w%d ", i)})
		select {
		case <-time.After(m.gap):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return &mode.Result{Text: "done", FinishReason: "stop"}, nil
}

// node is one Sova node's run service on the shared database.
type node struct {
	svc *run.Service
	st  *store.DB
}

func newNode(t testing.TB, dsn string, m mode.Mode) *node {
	t.Helper()
	ctx := context.Background()
	st, err := store.OpenPostgres(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	n, err := cluster.NewPGNotifier(ctx, dsn, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	reg, err := mode.NewRegistry(m)
	if err != nil {
		t.Fatal(err)
	}
	svc := run.NewService(run.Options{Store: st, Modes: reg, Notifier: n})
	t.Cleanup(func() {
		_ = svc.Close(ctx)
		n.Close()
		_ = st.Close()
	})
	return &node{svc: svc, st: st}
}

var ann = sova.User{ID: "ann"}

// A run executing on node A is followed live from node B, from the start
// and by a client resuming with Last-Event-ID: every event once, in order,
// none missing, the same as node A's own stream.
func TestFollowRunOfAnotherNode(t *testing.T) {
	dsn := storetest.PostgresDSN(t)
	m := streaming{n: 120, gap: 5 * time.Millisecond}
	a, b := newNode(t, dsn, m), newNode(t, dsn, m)
	ctx := sova.WithUser(context.Background(), ann)

	p, err := a.svc.Prepare(ctx, run.Request{Mode: "stream", Messages: []llm.Message{{Role: "user", Content: "q"}}, Persist: true})
	if err != nil {
		t.Fatal(err)
	}
	var live []event.Event
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.svc.Execute(ctx, p, event.SinkFunc(func(e event.Event) { live = append(live, e) }))
	}()

	follow := func(after int64) ([]int64, error) {
		var seqs []int64
		err := b.svc.Follow(ctx, p.RunID, after, func(e event.Event) error { seqs = append(seqs, e.Seq); return nil })
		return seqs, err
	}
	var wg sync.WaitGroup
	var whole, resumed []int64
	var errWhole, errResumed error
	wg.Go(func() { whole, errWhole = follow(0) })
	// A client that saw events up to 40 on some node comes back to node B.
	time.Sleep(300 * time.Millisecond)
	wg.Go(func() { resumed, errResumed = follow(40) })
	wg.Wait()
	<-done
	if errWhole != nil || errResumed != nil {
		t.Fatal(errWhole, errResumed)
	}
	want := int64(len(live))
	if want != int64(m.n+3) {
		t.Fatalf("node A emitted %d events", want)
	}
	check := func(name string, seqs []int64, from int64) {
		t.Helper()
		if int64(len(seqs)) != want-from {
			t.Fatalf("%s: %d events, want %d", name, len(seqs), want-from)
		}
		for i, s := range seqs {
			if s != from+int64(i)+1 {
				t.Fatalf("%s: event %d has id %d (gap or repeat)", name, i, s)
			}
		}
	}
	check("follower from the start", whole, 0)
	check("follower resuming after 40", resumed, 40)
	// The run is not executing on node B, so B cannot cancel it, but B
	// sees it ended.
	r, _ := b.st.GetRun(ctx, "ann", p.RunID)
	if r.State != sova.RunCompleted {
		t.Errorf("run on B: %s", r.State)
	}
}

// BenchmarkCrossNodeLatency measures the time from an event's emission on
// node A to its delivery to a follower on node B (loopback PostgreSQL).
//
//	SOVA_TEST_DATABASE_URL=postgres://… go test ./internal/cluster -run '^$' -bench CrossNodeLatency -benchtime 1x
func BenchmarkCrossNodeLatency(b *testing.B) {
	dsn := storetest.PostgresDSN(b)
	m := streaming{n: 400, gap: 10 * time.Millisecond}
	na, nb := newNode(b, dsn, m), newNode(b, dsn, m)
	ctx := sova.WithUser(context.Background(), ann)
	for b.Loop() {
		p, err := na.svc.Prepare(ctx, run.Request{Mode: "stream", Messages: []llm.Message{{Role: "user", Content: "q"}}, Persist: true})
		if err != nil {
			b.Fatal(err)
		}
		na.svc.Start(p)
		var lat []time.Duration
		err = nb.svc.Follow(ctx, p.RunID, 0, func(e event.Event) error {
			if e.Type == event.TypeTextDelta {
				lat = append(lat, time.Since(e.Time))
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
		b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
	}
}
