package run

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sova-ai/sova/internal/limits"
	"github.com/sova-ai/sova/internal/llm"
)

// Usage is counted once per run, whatever happens to its node.
//
// A run counts under "runs" when it first starts (not when a node
// continues it, and also when it never reaches its end). Tokens and
// searches are counted by the executor that used them, as the difference
// from what it already recorded: at the end, on a hand-back, and with
// every lease renewal (so a node killed outright loses at most a third of
// a lease of them), never twice.

// tally is what one execution of a run used and how much of it is
// recorded in the person's counters.
type tally struct {
	svc      *Service
	userID   string
	day      time.Time // the counters of the day the execution started
	meter    *llm.Meter
	searches atomic.Int64

	mu           sync.Mutex // one recording at a time: a delta is counted once
	tokens       int        // meter total recorded so far
	searchesDone int64
}

// newTally starts counting an execution whose meter already holds
// recorded tokens (an earlier part of the run, recorded by its node).
func (s *Service) newTally(userID string, day time.Time, meter *llm.Meter) *tally {
	return &tally{svc: s, userID: userID, day: day, meter: meter, tokens: meter.Total().TotalTokens}
}

// flush records what was used since the last flush. A counter whose
// store fails keeps its delta for the next flush.
func (t *tally) flush(ctx context.Context) {
	if t == nil || t.svc.opt.Usage == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	total, searches := t.meter.Total().TotalTokens, t.searches.Load()
	if d := total - t.tokens; d > 0 && t.svc.addUsage(ctx, t.userID, t.day, "tokens", int64(d)) {
		t.tokens = total
	}
	if d := searches - t.searchesDone; d > 0 && t.svc.addUsage(ctx, t.userID, t.day, "searches", d) {
		t.searchesDone = searches
	}
}

// countRun counts a run that starts for the first time.
func (s *Service) countRun(ctx context.Context, userID string, day time.Time) {
	if s.opt.Usage == nil {
		return
	}
	s.addUsage(ctx, userID, day, "runs", 1)
}

// addUsage adds n to one of the user's counters of day, retried a few
// times: a database that drops connections mid-run (a failover) must not
// lose what the run used. ctx bounds it: a run's end passes one that
// outlives the run's cancellation. A store that keeps failing is logged; the run
// is not failed. It reports whether n was added.
func (s *Service) addUsage(ctx context.Context, userID string, day time.Time, counter string, n int64) bool {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	period := day.UTC().Format(time.DateOnly)
	_, _, err := limits.AddWithRetry(ctx, n, -1, func(ctx context.Context, n, limit int64) (int64, bool, error) {
		return s.opt.Usage.AddUsage(ctx, userID, counter, period, n, limit)
	})
	if err != nil {
		s.opt.Logger.Error("recording usage failed", "user", userID, "counter", counter, "err", err)
		return false
	}
	return true
}

// flushUsage records what this node's runs used since their last flush,
// within d altogether (the lease keeper calls it between renewals).
func (s *Service) flushUsage(d time.Duration) {
	s.mu.Lock()
	tallies := make([]*tally, 0, len(s.live))
	for _, lr := range s.live {
		if lr.tally != nil {
			tallies = append(tallies, lr.tally)
		}
	}
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(s.bgCtx, d)
	defer cancel()
	for _, t := range tallies {
		if ctx.Err() != nil {
			return
		}
		t.flush(ctx)
	}
}
