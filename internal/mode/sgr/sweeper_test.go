package sgr

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/store"
)

func TestSweeper(t *testing.T) {
	st, err := store.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "sova.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	ctx := context.Background()
	ids := map[string]string{}
	for _, state := range []string{sova.AgentResearching, sova.AgentWaiting, sova.AgentCompleted, sova.AgentFailed} {
		a := &sova.Agent{UserID: "ann", Mode: ID, Task: "t", State: state}
		if err := st.CreateAgent(ctx, a); err != nil {
			t.Fatal(err)
		}
		ids[state] = a.ID
	}
	now := time.Now()
	s := &Sweeper{Store: st, TTL: time.Hour, StaleAfter: 10 * time.Minute, Now: func() time.Time { return now }}

	// Fresh agents are left alone.
	if ev, fl, err := s.Sweep(ctx); err != nil || ev != 0 || fl != 0 {
		t.Fatalf("fresh sweep: %d evicted, %d failed, %v", ev, fl, err)
	}
	// Past the stale limit the researching agent is marked failed; finished
	// ones stay until the TTL.
	now = now.Add(20 * time.Minute)
	if ev, fl, err := s.Sweep(ctx); err != nil || ev != 0 || fl != 1 {
		t.Fatalf("stale sweep: %d evicted, %d failed, %v", ev, fl, err)
	}
	a, _ := st.GetAgent(ctx, "ann", ids[sova.AgentResearching])
	if a.State != sova.AgentFailed || a.Error == "" {
		t.Errorf("stale agent: %s %q", a.State, a.Error)
	}
	// Past the TTL the three finished agents go (the one marked failed
	// too); the waiting one stays.
	now = time.Now().Add(2 * time.Hour)
	if ev, _, err := s.Sweep(ctx); err != nil || ev != 3 {
		t.Fatalf("eviction: %d evicted, %v", ev, err)
	}
	left, _ := st.ListAgents(ctx, "ann", 0, 0)
	if len(left) != 1 || left[0].ID != ids[sova.AgentWaiting] {
		t.Errorf("left %+v", left)
	}
}

// countingStore counts sweeps and can fail them.
type countingStore struct {
	sweeps atomic.Int64
	fail   atomic.Bool
}

func (c *countingStore) DeleteFinishedAgents(ctx context.Context, before time.Time) (int, error) {
	c.sweeps.Add(1)
	if c.fail.Load() {
		return 0, errors.New("database is gone")
	}
	return 0, ctx.Err()
}

func (c *countingStore) FailStaleAgents(context.Context, time.Time, string) (int, error) {
	return 0, nil
}

func (c *countingStore) FailOrphanedAgents(context.Context, string) (int, error) {
	return 0, nil
}

func TestSweeperStartStop(t *testing.T) {
	cs := &countingStore{}
	cs.fail.Store(true) // a failing sweep is logged; the sweeper goes on
	s := &Sweeper{Store: cs, TTL: time.Hour, Interval: 5 * time.Millisecond}
	s.Start()
	s.Start() // a second Start does not start a second loop
	deadline := time.Now().Add(5 * time.Second)
	for cs.sweeps.Load() < 3 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	s.Stop()
	n := cs.sweeps.Load()
	if n < 3 {
		t.Fatalf("%d sweeps", n)
	}
	time.Sleep(20 * time.Millisecond)
	if cs.sweeps.Load() != n {
		t.Error("sweeps went on after Stop")
	}
	s.Stop() // idempotent
}

// An agent whose run was interrupted (a crash: the run is marked at the
// next start) is not left "researching"; while a run of it runs, under its
// id or as a restart of it, it is left alone.
func TestSweeperFailsAgentsOfInterruptedRuns(t *testing.T) {
	st, err := store.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "sova.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	ctx := context.Background()
	r := &sova.Run{UserID: "ann", Mode: ID, State: sova.RunRunning, Question: "t"}
	if err := st.CreateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	a := &sova.Agent{ID: r.ID, UserID: "ann", Mode: ID, Task: "t", State: sova.AgentResearching}
	if err := st.CreateAgent(ctx, a); err != nil {
		t.Fatal(err)
	}
	s := &Sweeper{Store: st, TTL: time.Hour}
	state := func() *sova.Agent {
		t.Helper()
		got, err := st.GetAgent(ctx, "ann", a.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if _, fl, err := s.Sweep(ctx); err != nil || fl != 0 || state().State != sova.AgentResearching {
		t.Fatalf("agent of a running run: %d failed, %v, %s", fl, err, state().State)
	}
	r.State = sova.RunInterrupted
	if err := st.UpdateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	if _, fl, err := s.Sweep(ctx); err != nil || fl != 1 {
		t.Fatalf("agent of an interrupted run: %d failed, %v", fl, err)
	}
	if got := state(); got.State != sova.AgentFailed || got.Error != orphanReason {
		t.Errorf("agent of an interrupted run: %s %q", got.State, got.Error)
	}
	// The restart claims the agent again under the first run's id.
	nr := &sova.Run{UserID: "ann", Mode: ID, State: sova.RunRunning, Question: "t", RetryOf: r.ID, OriginID: r.ID}
	if err := st.CreateRun(ctx, nr); err != nil {
		t.Fatal(err)
	}
	a.State = sova.AgentResearching
	if err := st.UpdateAgent(ctx, a, sova.AgentFailed); err != nil {
		t.Fatal(err)
	}
	if _, fl, err := s.Sweep(ctx); err != nil || fl != 0 || state().State != sova.AgentResearching {
		t.Errorf("agent of a running restart: %d failed, %v, %s", fl, err, state().State)
	}
}
