package app

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// EventStore is what the event sweeper needs of the store
// (store.DB's retention.go).
type EventStore interface {
	CompactRunEvents(ctx context.Context, before time.Time, limit int) (runs int, removed int64, err error)
	PurgeRunEvents(ctx context.Context, before time.Time) (int64, error)
}

// EventSweeper bounds the stored run event logs: a finished run's text
// deltas (one row each as the answer streamed) are merged once it has
// been finished for CompactAfter, and its whole log is deleted after
// Retention; the answer, its sources and steps stay with the chat's
// message. Zero turns either off. The app owns one and stops it in Close.
type EventSweeper struct {
	Store        EventStore
	CompactAfter time.Duration // SOVA_RUN_EVENTS_COMPACT_AFTER
	Retention    time.Duration // SOVA_RUN_EVENTS_RETENTION
	// Interval is the time between sweeps (default one minute).
	Interval time.Duration
	Logger   *slog.Logger
	Now      func() time.Time

	mu     sync.Mutex
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// compactBatch is how many runs one sweep compacts at most, so that a
// sweep after a long pause does not hold the database for long.
const compactBatch = 200

// Sweep runs one pass: compaction, then retention.
func (s *EventSweeper) Sweep(ctx context.Context) (compacted int, removed int64, err error) {
	now := time.Now()
	if s.Now != nil {
		now = s.Now()
	}
	if s.CompactAfter > 0 {
		if compacted, removed, err = s.Store.CompactRunEvents(ctx, now.Add(-s.CompactAfter), compactBatch); err != nil {
			return compacted, removed, err
		}
	}
	if s.Retention > 0 {
		n, err := s.Store.PurgeRunEvents(ctx, now.Add(-s.Retention))
		removed += n
		if err != nil {
			return compacted, removed, err
		}
	}
	return compacted, removed, nil
}

// Start sweeps now and then every Interval in the background, until Stop.
// It does nothing when both compaction and retention are off.
func (s *EventSweeper) Start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel != nil || s.CompactAfter <= 0 && s.Retention <= 0 {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	interval := s.Interval
	if interval <= 0 {
		interval = time.Minute
	}
	log := s.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s.wg.Go(func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			if compacted, removed, err := s.Sweep(ctx); err != nil && ctx.Err() == nil {
				log.Warn("sweeping run events failed", "err", err)
			} else if removed > 0 {
				log.Debug("run events swept", "compacted_runs", compacted, "rows_removed", removed)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	})
}

// Stop ends the background sweeps and waits for the one running.
func (s *EventSweeper) Stop() {
	s.mu.Lock()
	cancel := s.cancel
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	s.wg.Wait()
}
