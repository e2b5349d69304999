package sgr

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// SweepStore is what the sweeper changes.
type SweepStore interface {
	DeleteFinishedAgents(ctx context.Context, before time.Time) (int, error)
	FailStaleAgents(ctx context.Context, before time.Time, reason string) (int, error)
	FailOrphanedAgents(ctx context.Context, reason string) (int, error)
}

// orphanReason is the error an agent gets when its run was interrupted; a
// restart of the run continues the agent from its last step.
const orphanReason = "interrupted: the agent's run stopped with the server; restart the run to continue from the last step"

// Sweeper keeps the agents table tidy: it evicts completed and failed
// agents that were last updated more than TTL ago (SOVA_SGR_AGENT_TTL),
// marks as failed the agents still "researching" whose run is no longer
// running (it was interrupted by a crash: /agents then agrees with
// /api/runs), and those still researching long after any run could have
// ended. Agents waiting for clarification stay until they are answered.
type Sweeper struct {
	Store SweepStore
	// TTL is how long a finished agent is kept.
	TTL time.Duration
	// StaleAfter is how long an agent may go without an update while
	// researching; zero disables the check. The app sets it to the run
	// time limit: a run cannot outlive it, and an agent is saved after
	// every step.
	StaleAfter time.Duration
	// Interval is the time between sweeps (default: a tenth of the TTL,
	// between 10 seconds and 10 minutes).
	Interval time.Duration
	Logger   *slog.Logger
	Now      func() time.Time

	mu     sync.Mutex
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Sweep runs one pass and reports what it changed.
func (s *Sweeper) Sweep(ctx context.Context) (evicted, failed int, err error) {
	now := time.Now()
	if s.Now != nil {
		now = s.Now()
	}
	failed, err = s.Store.FailOrphanedAgents(ctx, orphanReason)
	if err != nil {
		return 0, 0, fmt.Errorf("sgr sweeper: %w", err)
	}
	if s.StaleAfter > 0 {
		var stale int
		stale, err = s.Store.FailStaleAgents(ctx, now.Add(-s.StaleAfter),
			fmt.Sprintf("interrupted: the agent's run ended without finishing it (no progress for %s)", s.StaleAfter))
		if err != nil {
			return 0, failed, fmt.Errorf("sgr sweeper: %w", err)
		}
		failed += stale
	}
	if s.TTL > 0 {
		evicted, err = s.Store.DeleteFinishedAgents(ctx, now.Add(-s.TTL))
		if err != nil {
			return 0, failed, fmt.Errorf("sgr sweeper: %w", err)
		}
	}
	return evicted, failed, nil
}

// Start sweeps now and then every Interval in the background, until Stop.
func (s *Sweeper) Start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	interval := s.Interval
	if interval <= 0 {
		interval = min(max(s.TTL/10, 10*time.Second), 10*time.Minute)
	}
	log := s.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			evicted, failed, err := s.Sweep(ctx)
			switch {
			case err != nil && ctx.Err() == nil:
				log.Error("sweeping agents failed", "err", err)
			case evicted > 0 || failed > 0:
				log.Info("swept agents", "evicted", evicted, "marked_failed", failed)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
}

// Stop ends the background sweeps and waits for the one in progress.
func (s *Sweeper) Stop() {
	s.mu.Lock()
	cancel := s.cancel
	s.cancel = nil
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	s.wg.Wait()
}
