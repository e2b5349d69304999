package run

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sova-ai/sova"
	"github.com/sova-ai/sova/internal/event"
)

// Cancelling a run that executes on another node.
//
// The node asked sends a cancel notice (Notifier.RequestCancel); the node
// executing the run stops it as it stops its own (cancelRequested), and
// the run ends cancelled there. A notice can be lost (the executing node
// is reconnecting, or died and its lease has not passed yet), so the node
// asked repeats it every third of a lease until the run is no longer
// running; once the run's lease has passed, no node executes it, and the
// node asked claims the run and closes it as cancelled itself, before
// another node would continue it.

// cancelPersist bounds how long a node repeats a cancel for a run that
// goes on running elsewhere (a mode that ignores its context).
const cancelPersist = 10 * time.Minute

// cancelRequested stops the run if it executes here; another node asked.
func (s *Service) cancelRequested(runID string) {
	s.mu.Lock()
	lr := s.live[runID]
	s.mu.Unlock()
	if lr != nil {
		lr.cancel(errCancel)
	}
}

// cancelElsewhere stops a running run that this node does not execute
// (r as stored): it asks the node executing it, or closes it when its
// node stopped, and keeps asking until the run ends.
func (s *Service) cancelElsewhere(ctx context.Context, r *sova.Run) error {
	done, err := s.cancelOnce(ctx, r)
	if err != nil || done {
		return err
	}
	s.repeatCancel(r.UserID, r.ID)
	return nil
}

// cancelOrphan closes as cancelled a running run that no node executes.
func (s *Service) cancelOrphan(ctx context.Context, r *sova.Run) error {
	done, err := s.closeCancelled(ctx, r)
	if err != nil || done {
		return err
	}
	// Another node claimed it just now: ask that one.
	if s.opt.Notifier == nil {
		return fmt.Errorf("%w here: node %s took it over", ErrNotRunning, r.NodeID)
	}
	return s.cancelElsewhere(ctx, r)
}

// closeCancelled claims a run nobody executes and closes it as cancelled;
// done is false when another node holds it.
func (s *Service) closeCancelled(ctx context.Context, r *sova.Run) (done bool, err error) {
	now := s.opt.Now()
	switch err := s.opt.Store.ClaimRun(ctx, r.ID, s.opt.NodeID, now, s.leaseEnd()); {
	case err == nil:
		r.NodeID = s.opt.NodeID
		if err := s.closeLost(ctx, r, sova.RunCancelled, "the run was cancelled", []event.Event{
			{Type: event.TypeFinish, Finish: &event.Finish{Reason: event.FinishCancelled}},
		}); err != nil {
			return false, err
		}
		s.opt.Logger.Info("run with no executor cancelled", "run", r.ID, "mode", r.Mode, "node", s.opt.NodeID)
		return true, nil
	case errors.Is(err, sova.ErrNotFound):
		return true, nil // it ended meanwhile
	case !errors.Is(err, sova.ErrConflict):
		return false, err
	}
	return false, nil
}

// cancelOnce asks once; done reports that the run was closed here (or
// had ended).
func (s *Service) cancelOnce(ctx context.Context, r *sova.Run) (done bool, err error) {
	if s.opt.Now().After(r.LeaseUntil) {
		// Its node stopped renewing the lease: nobody executes it.
		if done, err := s.closeCancelled(ctx, r); err != nil || done {
			return done, err
		}
		// Another node took it over just now: ask that one.
	}
	return false, s.opt.Notifier.RequestCancel(ctx, r.ID)
}

// repeatCancel asks again, every third of a lease, until the run is no
// longer running, the service closes or cancelPersist passes. One
// repetition per run.
func (s *Service) repeatCancel(userID, runID string) {
	s.mu.Lock()
	if s.cancelling[runID] || s.bgCtx.Err() != nil {
		s.mu.Unlock()
		return
	}
	s.cancelling[runID] = true
	s.mu.Unlock()
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		defer func() {
			s.mu.Lock()
			delete(s.cancelling, runID)
			s.mu.Unlock()
		}()
		ctx, cancel := context.WithTimeout(s.bgCtx, cancelPersist)
		defer cancel()
		t := time.NewTicker(s.opt.Lease / 3)
		defer t.Stop()
		for {
			select {
			case <-t.C:
			case <-ctx.Done():
				if s.bgCtx.Err() == nil {
					s.opt.Logger.Warn("a run cancelled on this node goes on running on another", "run", runID, "for", cancelPersist)
				}
				return
			}
			r, err := s.opt.Store.GetRun(ctx, userID, runID)
			switch {
			case errors.Is(err, sova.ErrNotFound):
				return
			case err != nil:
				s.opt.Logger.Warn("reading a run being cancelled failed", "run", runID, "err", err)
				continue
			case r.State != sova.RunRunning:
				return
			}
			s.mu.Lock()
			_, here := s.live[runID] // continued here meanwhile
			s.mu.Unlock()
			if here {
				s.cancelRequested(runID)
				continue
			}
			if done, err := s.cancelOnce(ctx, r); err != nil {
				s.opt.Logger.Warn("asking another node to cancel a run failed", "run", runID, "err", err)
			} else if done {
				return
			}
		}
	}()
}

// stopElsewhere cancels the chat's running run when another node executes
// it and waits for its end (DeleteChat).
func (s *Service) stopElsewhere(ctx context.Context, userID, chatID string) error {
	if s.opt.Notifier == nil {
		return nil
	}
	r, err := s.opt.Store.LatestRun(ctx, userID, chatID) // at most one runs: the latest
	if errors.Is(err, sova.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	s.mu.Lock()
	_, here := s.live[r.ID]
	s.mu.Unlock()
	if r.State != sova.RunRunning || here {
		return nil
	}
	if err := s.cancelElsewhere(ctx, r); err != nil {
		return err
	}
	return s.awaitEnd(ctx, userID, r.ID)
}

// awaitEnd returns once the run is no longer running, or ctx ends. The
// run's notices wake it (its last events are stored before its state).
func (s *Service) awaitEnd(ctx context.Context, userID, runID string) error {
	notes, stop := s.opt.Notifier.Subscribe(runID)
	defer stop()
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		r, err := s.opt.Store.GetRun(ctx, userID, runID)
		if errors.Is(err, sova.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if r.State != sova.RunRunning {
			return nil
		}
		select {
		case <-notes:
		case <-t.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
