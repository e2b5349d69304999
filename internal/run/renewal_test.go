package run

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/sova-ai/sova"
	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/event/eventtest"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/store"
)

// slowRenewal holds RenewLeases until released, as a store under load.
type slowRenewal struct {
	store.Store
	entered, release chan struct{}
}

func (s *slowRenewal) RenewLeases(ctx context.Context, node string, ids []string, until time.Time) ([]string, error) {
	close(s.entered)
	<-s.release
	return s.Store.RenewLeases(ctx, node, ids, until)
}

// A run that starts while a slow lease renewal is under way was not part
// of it, and is not taken for one another node took over.
func TestARunStartedDuringARenewalIsNotStopped(t *testing.T) {
	st, err := store.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "sova.db"))
	if err != nil {
		t.Fatal(err)
	}
	slow := &slowRenewal{Store: st, entered: make(chan struct{}), release: make(chan struct{})}
	gate := make(chan struct{})
	m := scripted{run: func(ctx context.Context, in mode.Input, sink event.Sink) (*mode.Result, error) {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return &mode.Result{Text: "done", FinishReason: "stop"}, nil
	}}
	reg, err := mode.NewRegistry(m)
	if err != nil {
		t.Fatal(err)
	}
	svc := NewService(Options{Store: slow, Modes: reg, Lease: time.Hour}) // renewed below, not by the ticker
	t.Cleanup(func() {
		_ = svc.Close(context.Background())
		_ = st.Close()
	})
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		svc.renew(context.Background())
	}()
	<-slow.entered
	ctx := userCtx(t)
	p, err := svc.Prepare(ctx, Request{Mode: "scripted", Messages: []llm.Message{{Role: "user", Content: "question"}}, Persist: true})
	if err != nil {
		t.Fatal(err)
	}
	var rec eventtest.Recorder
	done := make(chan *Outcome, 1)
	go func() { done <- svc.Execute(ctx, p, &rec) }()
	waitFor(t, "the run to start", func() bool { return len(rec.Filter(event.TypeStart)) == 1 })
	close(slow.release)
	<-renewed
	close(gate)
	if o := <-done; o.State != sova.RunCompleted {
		t.Errorf("the run ended %s (%v), want completed", o.State, o.Err)
	}
}
