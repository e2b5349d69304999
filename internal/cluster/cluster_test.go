package cluster_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
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

// redisURLEnv names the Redis server the Redis notifier is tested on.
const redisURLEnv = "SOVA_TEST_REDIS_URL"

// notifier is what a node closes when it stops.
type notifier interface {
	run.Notifier
	Close()
}

// backend opens one kind of notifier for a node on the database at dsn.
type backend struct {
	name string
	open func(t testing.TB, dsn string) notifier
}

var backends = []backend{
	{"postgres", func(t testing.TB, dsn string) notifier {
		n, err := cluster.NewPGNotifier(context.Background(), dsn, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}},
	{"redis", func(t testing.TB, _ string) notifier {
		url := os.Getenv(redisURLEnv)
		if url == "" {
			t.Skipf("Redis tests skipped: set %s (e.g. redis://127.0.0.1:6379/0)", redisURLEnv)
		}
		n, err := cluster.NewRedisNotifier(context.Background(), url, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}},
}

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

// durableStreaming is continued by another node when its node stops.
type durableStreaming struct{ streaming }

func (durableStreaming) Durable() bool { return true }

// node is one Sova node's run service on the shared database.
type node struct {
	svc *run.Service
	st  *store.DB
}

// nodeOptions change how a test node is made.
type nodeOptions struct {
	lease    time.Duration
	store    func(*store.DB) run.Store       // wraps the node's store
	notifier func(run.Notifier) run.Notifier // wraps the node's notifier
}

func newNode(t testing.TB, dsn string, be backend, m mode.Mode, o nodeOptions) *node {
	t.Helper()
	ctx := context.Background()
	st, err := store.OpenPostgres(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	n := be.open(t, dsn)
	reg, err := mode.NewRegistry(m)
	if err != nil {
		t.Fatal(err)
	}
	var rs run.Store = st
	if o.store != nil {
		rs = o.store(st)
	}
	var rn run.Notifier = n
	if o.notifier != nil {
		rn = o.notifier(n)
	}
	svc := run.NewService(run.Options{Store: rs, Modes: reg, Notifier: rn, Lease: o.lease})
	t.Cleanup(func() {
		_ = svc.Close(ctx)
		n.Close()
		_ = st.Close()
	})
	return &node{svc: svc, st: st}
}

var ann = sova.User{ID: "ann"}

func ask(t testing.TB, n *node, ctx context.Context) *run.Prepared {
	t.Helper()
	p, err := n.svc.Prepare(ctx, run.Request{Mode: "stream", Messages: []llm.Message{{Role: "user", Content: "q"}}, Persist: true})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A run executing on node A is followed live from node B, from the start
// and by a client resuming with Last-Event-ID: every event once, in order,
// none missing, the same as node A's own stream.
func TestFollowRunOfAnotherNode(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			dsn := storetest.PostgresDSN(t)
			m := streaming{n: 120, gap: 5 * time.Millisecond}
			a, b := newNode(t, dsn, be, m, nodeOptions{}), newNode(t, dsn, be, m, nodeOptions{})
			ctx, cancelFollow := context.WithTimeout(sova.WithUser(context.Background(), ann), time.Minute) // a Follow that fails ends, not hangs
			defer cancelFollow()
			p := ask(t, a, ctx)
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
			// A client that saw events up to 40 on some node comes back to
			// node B.
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
			r, _ := b.st.GetRun(ctx, "ann", p.RunID)
			if r.State != sova.RunCompleted {
				t.Errorf("run on B: %s", r.State)
			}
		})
	}
}

// lastEvent is the last event of the run's stored log.
func lastEvent(t *testing.T, st *store.DB, runID string) event.Event {
	t.Helper()
	evs, err := st.RunEvents(context.Background(), runID, 0)
	if err != nil || len(evs) == 0 {
		t.Fatalf("log of %s: %d rows, %v", runID, len(evs), err)
	}
	var e event.Event
	_ = json.Unmarshal(evs[len(evs)-1].Event, &e)
	return e
}

func waitState(t *testing.T, st *store.DB, runID, state string, within time.Duration) *sova.Run {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		r, err := st.GetRun(context.Background(), ann.ID, runID)
		if err == nil && r.State == state {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s is not %s after %s: %+v %v", runID, state, within, r, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A cancel asked of node B stops the run executing on node A, at once
// (the first notice; the lease is long, so no repetition is needed), and
// node B answers as for its own runs: accepted while the run runs,
// ErrNotRunning once it has ended, not found for another person's run.
func TestCancelOnAnotherNode(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			dsn := storetest.PostgresDSN(t)
			m := streaming{n: 2000, gap: 5 * time.Millisecond}
			o := nodeOptions{lease: time.Minute}
			a, b := newNode(t, dsn, be, m, o), newNode(t, dsn, be, m, o)
			ctx, cancelFollow := context.WithTimeout(sova.WithUser(context.Background(), ann), time.Minute) // a Follow that fails ends, not hangs
			defer cancelFollow()
			p := ask(t, a, ctx)
			out := make(chan *run.Outcome, 1)
			go func() { out <- a.svc.Execute(ctx, p, event.Discard) }()
			// B follows it, as a client on B would while asking to stop.
			followed := make(chan error, 1)
			var last atomic.Value
			go func() {
				followed <- b.svc.Follow(ctx, p.RunID, 0, func(e event.Event) error { last.Store(e); return nil })
			}()
			waitSeq(t, b.st, p.RunID, 20)

			bob := sova.WithUser(context.Background(), sova.User{ID: "bob"})
			if err := b.svc.Cancel(bob, p.RunID); !errors.Is(err, sova.ErrNotFound) {
				t.Fatalf("another person's cancel: %v", err)
			}
			asked := time.Now()
			if err := b.svc.Cancel(ctx, p.RunID); err != nil {
				t.Fatalf("cancel on B: %v", err)
			}
			select {
			case o := <-out:
				if o.State != sova.RunCancelled {
					t.Fatalf("run on A ended %s (%v)", o.State, o.Err)
				}
				t.Logf("stopped on A %s after the cancel on B", time.Since(asked).Round(time.Millisecond))
			case <-time.After(5 * time.Second):
				t.Fatal("the run on A goes on 5s after a cancel on B")
			}
			if err := <-followed; err != nil {
				t.Fatal(err)
			}
			if e, _ := last.Load().(event.Event); e.Type != event.TypeFinish || e.Finish.Reason != event.FinishCancelled {
				t.Errorf("B's follower ended with %+v", e)
			}
			waitState(t, b.st, p.RunID, sova.RunCancelled, 5*time.Second)
			if err := b.svc.Cancel(ctx, p.RunID); !errors.Is(err, run.ErrNotRunning) {
				t.Errorf("cancel of an ended run on B: %v", err)
			}
		})
	}
}

// waitSeq waits until the run's log holds event n.
func waitSeq(t *testing.T, st *store.DB, runID string, n int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		evs, err := st.RunEvents(context.Background(), runID, n-1)
		if err == nil && len(evs) > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s has no event %d: %v", runID, n, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// deafOnce loses the first cancel notice its node receives, as a
// connection that is being re-established would.
type deafOnce struct {
	run.Notifier
	lost atomic.Bool
}

func (d *deafOnce) OnCancel(fn func(string)) {
	if fn == nil {
		d.Notifier.OnCancel(nil)
		return
	}
	d.Notifier.OnCancel(func(id string) {
		if d.lost.CompareAndSwap(false, true) {
			return
		}
		fn(id)
	})
}

// A cancel notice lost on its way is repeated until the run stops.
func TestCancelRepeatedUntilTheRunStops(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			dsn := storetest.PostgresDSN(t)
			m := streaming{n: 2000, gap: 5 * time.Millisecond}
			deaf := &deafOnce{}
			a := newNode(t, dsn, be, m, nodeOptions{lease: 3 * time.Second,
				notifier: func(n run.Notifier) run.Notifier { deaf.Notifier = n; return deaf }})
			b := newNode(t, dsn, be, m, nodeOptions{lease: 3 * time.Second})
			ctx, cancelFollow := context.WithTimeout(sova.WithUser(context.Background(), ann), time.Minute) // a Follow that fails ends, not hangs
			defer cancelFollow()
			p := ask(t, a, ctx)
			out := make(chan *run.Outcome, 1)
			go func() { out <- a.svc.Execute(ctx, p, event.Discard) }()
			waitSeq(t, b.st, p.RunID, 5)
			if err := b.svc.Cancel(ctx, p.RunID); err != nil {
				t.Fatal(err)
			}
			select {
			case o := <-out:
				if o.State != sova.RunCancelled || !deaf.lost.Load() {
					t.Fatalf("run on A ended %s; a notice lost: %v", o.State, deaf.lost.Load())
				}
			case <-time.After(8 * time.Second):
				t.Fatal("the run on A goes on 8s after a cancel on B whose first notice was lost")
			}
		})
	}
}

// A run whose node stopped is cancelled by the node asked: at once when
// its lease has passed (the nodes' own sweeps are far off), and when the
// node died just now (its lease still runs, no node hears the notice)
// once the lease passes, whether the node asked closes it or another node
// continued it first and is asked again. It ends cancelled, and nothing
// continues it afterwards.
func TestCancelRunOfStoppedNode(t *testing.T) {
	for _, be := range backends {
		for _, tc := range []struct {
			name             string
			leaseLeft, lease time.Duration
		}{{"lease passed", -time.Second, time.Minute}, {"lease still held", 2 * time.Second, 3 * time.Second}} {
			t.Run(be.name+"/"+tc.name, func(t *testing.T) {
				dsn := storetest.PostgresDSN(t)
				m := durableStreaming{streaming{n: 2000, gap: 5 * time.Millisecond}}
				o := nodeOptions{lease: tc.lease}
				b, c := newNode(t, dsn, be, m, o), newNode(t, dsn, be, m, o)
				ctx, cancelFollow := context.WithTimeout(sova.WithUser(context.Background(), ann), time.Minute) // a Follow that fails ends, not hangs
				defer cancelFollow()
				// The run of a node that died: running, its events stored, its
				// lease its own.
				r := &sova.Run{UserID: ann.ID, Mode: "stream", State: sova.RunRunning, Question: "q",
					Input: []byte(`{"persist":false}`), NodeID: "gone", LeaseUntil: time.Now().Add(tc.leaseLeft)}
				if err := b.st.CreateRun(ctx, r); err != nil {
					t.Fatal(err)
				}
				if err := b.st.AppendRunEvents(ctx, r.ID, []sova.RunEvent{{Seq: 1, Event: []byte(`{"type":"start"}`)}}); err != nil {
					t.Fatal(err)
				}
				if err := b.svc.Cancel(ctx, r.ID); err != nil {
					t.Fatal(err)
				}
				if tc.leaseLeft < 0 { // closed by the cancel itself
					if now, _ := c.st.GetRun(ctx, ann.ID, r.ID); now.State != sova.RunCancelled {
						t.Fatalf("right after the cancel: %s", now.State)
					}
				}
				got := waitState(t, c.st, r.ID, sova.RunCancelled, 10*time.Second)
				if e := lastEvent(t, c.st, r.ID); e.Type != event.TypeFinish || e.Finish.Reason != event.FinishCancelled {
					t.Errorf("the log ends with %+v", e)
				}
				// Nothing continues it afterwards.
				time.Sleep(1500 * time.Millisecond)
				after, _ := c.st.GetRun(ctx, ann.ID, r.ID)
				if after.State != sova.RunCancelled || after.LastSeq != got.LastSeq {
					t.Errorf("after the cancel: %s, last event %d (was %d)", after.State, after.LastSeq, got.LastSeq)
				}
			})
		}
	}
}

// Deleting a chat on node B stops its run on node A first: A's run has
// ended when the delete returns, so nothing it writes meets a deleted chat.
func TestDeleteChatStopsRunOnAnotherNode(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			dsn := storetest.PostgresDSN(t)
			m := streaming{n: 2000, gap: 5 * time.Millisecond}
			o := nodeOptions{lease: time.Minute}
			a, b := newNode(t, dsn, be, m, o), newNode(t, dsn, be, m, o)
			ctx, cancelFollow := context.WithTimeout(sova.WithUser(context.Background(), ann), time.Minute) // a Follow that fails ends, not hangs
			defer cancelFollow()
			p := ask(t, a, ctx)
			out := make(chan *run.Outcome, 1)
			go func() { out <- a.svc.Execute(ctx, p, event.Discard) }()
			waitSeq(t, b.st, p.RunID, 5)
			if err := b.svc.DeleteChat(ctx, p.ChatID); err != nil {
				t.Fatal(err)
			}
			// Its state was stored before the delete; Execute returns
			// right after.
			select {
			case o := <-out:
				if o.State != sova.RunCancelled {
					t.Errorf("run on A ended %s", o.State)
				}
			case <-time.After(time.Second):
				t.Fatal("the chat was deleted on B while its run went on on A")
			}
			if _, err := b.st.GetChat(ctx, ann.ID, p.ChatID); !errors.Is(err, sova.ErrNotFound) {
				t.Errorf("chat after delete: %v", err)
			}
		})
	}
}
