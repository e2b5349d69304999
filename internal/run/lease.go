package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/sova-ai/sova"
	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/mode"
)

// Runs as jobs shared by the nodes of one store.
//
// The runs table is the queue: a running run names the node executing it
// and a lease that node renews every third of Options.Lease. Every node
// looks for runs whose lease has passed (their node died or was cut off)
// as often as it renews, and claims each with one conditional UPDATE
// (ClaimRun), so one node gets it. A run of a Durable mode is continued
// where its last checkpoint left it, its events numbered after the last
// one stored; a run of another mode is closed as interrupted, as before.
// A node that stops hands its durable runs back (ReleaseRun) for another
// node, or itself after a restart, to take at once.

// errLeaseLost ends a run this node no longer holds: its lease passed
// (the node could not renew it) and another node took the run over.
var errLeaseLost = errors.New("another node took the run over")

// errStoreFault is why a durable run whose store failed is handed back.
var errStoreFault = errors.New("the store failed under the run")

// leaseState is what readiness reports of the lease keeper.
type leaseState struct {
	mu       sync.Mutex
	renewed  time.Time // last successful renewal
	err      error     // last renewal's error
	stopping bool
}

func (s *Service) leaseEnd() time.Time { return s.opt.Now().Add(s.opt.Lease) }

// startLeases starts the goroutine that renews this node's leases and
// takes over the runs of nodes that stopped; Close ends it.
func (s *Service) startLeases() {
	s.leases.mu.Lock()
	s.leases.renewed = s.opt.Now()
	s.leases.mu.Unlock()
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		t := time.NewTicker(s.opt.Lease / 3)
		defer t.Stop()
		for {
			select {
			case <-s.bgCtx.Done():
				s.leases.mu.Lock()
				s.leases.stopping = true
				s.leases.mu.Unlock()
				return
			case <-t.C:
			}
			s.renew(s.bgCtx) // a draining node still holds the runs it finishes
			s.flushUsage(s.opt.Lease / 3)
			if s.draining() {
				continue // it takes over no more runs
			}
			if _, err := s.sweep(s.bgCtx, false); err != nil && s.bgCtx.Err() == nil {
				s.opt.Logger.Warn("looking for runs of stopped nodes failed", "node", s.opt.NodeID, "err", err)
			}
		}
	}()
}

// renew extends the leases of the runs this node executes and stops the
// runs it no longer holds. A run of this node that nothing here executes
// (its executor ended without storing its end: a full disk, a lost
// database) is not renewed: its lease passes and the sweep closes or
// continues it.
func (s *Service) renew(ctx context.Context) {
	s.mu.Lock()
	ids := make([]string, 0, len(s.live))
	for id := range s.live {
		ids = append(ids, id)
	}
	s.mu.Unlock()
	held, err := s.opt.Store.RenewLeases(ctx, s.opt.NodeID, ids, s.leaseEnd())
	s.leases.mu.Lock()
	s.leases.err = err
	if err == nil {
		s.leases.renewed = s.opt.Now()
	}
	s.leases.mu.Unlock()
	if err != nil {
		if ctx.Err() == nil {
			s.opt.Logger.Warn("renewing run leases failed", "node", s.opt.NodeID, "err", err)
		}
		return
	}
	holds := make(map[string]bool, len(held))
	for _, id := range held {
		holds[id] = true
	}
	s.mu.Lock()
	var lost []*liveRun
	// Only the runs asked about: one started while the renewal was under
	// way (slow under load) was not in ids, and is this node's.
	for _, id := range ids {
		lr := s.live[id]
		if lr != nil && !holds[id] && !lr.isDone() {
			lost = append(lost, lr)
			s.opt.Logger.Warn("a run of this node was taken over by another; stopping it here", "run", id, "node", s.opt.NodeID)
		}
	}
	s.mu.Unlock()
	for _, lr := range lost {
		lr.cancel(errLeaseLost)
	}
}

// Ready reports whether this node takes part in running runs: it renewed
// its leases within the last lease period and is not stopping.
func (s *Service) Ready() error {
	s.leases.mu.Lock()
	defer s.leases.mu.Unlock()
	switch {
	case s.leases.stopping:
		return errors.New("the node is stopping")
	case s.opt.Now().Sub(s.leases.renewed) > s.opt.Lease:
		return fmt.Errorf("run leases not renewed for %s: %v", s.opt.Now().Sub(s.leases.renewed).Round(time.Second), s.leases.err)
	}
	return nil
}

// Recover takes the runs that lost their node before this one started:
// on a store of its own (Options.Exclusive) every run left running, else
// the runs whose lease has passed and those this node held before a
// restart under the same NodeID. Runs of Durable modes continue from their
// last checkpoint; the others are marked interrupted, their logs closed
// and their chats told. Call it once at start-up, before serving. It
// returns how many runs it took.
func (s *Service) Recover(ctx context.Context) (int, error) {
	return s.sweep(ctx, true)
}

// sweep takes over the runs that lost their node; see Recover.
func (s *Service) sweep(ctx context.Context, startup bool) (int, error) {
	now := s.opt.Now()
	node := ""
	if startup {
		node = s.opt.NodeID
		if s.opt.Exclusive {
			now = time.UnixMilli(math.MaxInt64 / 4) // every lease has passed
		}
	}
	runs, err := s.opt.Store.OrphanedRuns(ctx, node, now)
	if err != nil {
		return 0, err
	}
	n := 0
	for i := range runs {
		r := &runs[i]
		s.mu.Lock()
		_, mine := s.live[r.ID]
		s.mu.Unlock()
		if mine {
			continue
		}
		r.LeaseUntil = s.leaseEnd()
		if err := s.opt.Store.ClaimRun(ctx, r.ID, s.opt.NodeID, now, r.LeaseUntil); err != nil {
			if errors.Is(err, sova.ErrConflict) || errors.Is(err, sova.ErrNotFound) {
				continue // another node was quicker, or the run ended
			}
			return n, err
		}
		r.NodeID = s.opt.NodeID
		n++
		if err := s.takeOver(ctx, r); err != nil {
			return n, err
		}
	}
	return n, nil
}

// takeOver continues a claimed run, or closes it as interrupted when its
// mode cannot continue.
func (s *Service) takeOver(ctx context.Context, r *sova.Run) error {
	m, ok := s.opt.Modes.Get(r.Mode)
	d, durable := m.(mode.Durable)
	if !ok || !durable || !d.Durable() {
		return s.interrupt(ctx, r)
	}
	// The row's LastSeq is written at the run's end: the log says where
	// the run is.
	stored, err := s.opt.Store.RunEvents(ctx, r.ID, r.LastSeq)
	if err != nil {
		return fmt.Errorf("reading the log of run %s: %w", r.ID, err)
	}
	if len(stored) > 0 {
		last := stored[len(stored)-1]
		r.LastSeq = last.Seq
		if evs, err := decodeStored(last); err == nil && len(evs) > 0 && evs[len(evs)-1].Type == event.TypeFinish {
			// The node died after the run's end and before its state:
			// the log is closed, only the row is left to close.
			r.State, r.Error = sova.RunInterrupted, "the server stopped while this run ended"
			return s.opt.Store.UpdateRun(ctx, r)
		}
	}
	var in runInput
	_ = json.Unmarshal(r.Input, &in)
	if in.MessageID == "" {
		in.MessageID = uuid.NewString()
	}
	p := &Prepared{
		mode: m, userID: r.UserID, question: r.Question, history: in.History, input: in, run: r, resume: in.Resume,
		RunID: r.ID, ChatID: r.ChatID, MessageID: in.MessageID, continued: true, shown: shownText(stored),
	}
	s.opt.Logger.Warn("continuing a run whose node stopped", "run", r.ID, "mode", r.Mode, "node", s.opt.NodeID, "after_event", r.LastSeq)
	s.Start(p)
	return nil
}

// interrupt closes a run that lost its node and cannot continue.
func (s *Service) interrupt(ctx context.Context, r *sova.Run) error {
	msg := "the server stopped while this ran; restart it with POST /api/runs/" + r.ID + "/restart"
	err := s.closeLost(ctx, r, sova.RunInterrupted, msg, []event.Event{
		{Type: event.TypeError, Error: &event.Error{Message: msg, Code: "interrupted"}},
		{Type: event.TypeFinish, Finish: &event.Finish{Reason: event.FinishCancelled}},
	})
	if err == nil {
		s.opt.Logger.Warn("run interrupted by a restart", "run", r.ID, "mode", r.Mode, "chat", r.ChatID)
	}
	return err
}

// closeLost ends a run that this node claimed from a node that stopped:
// evs close its log, and the run is stored in state with msg (its chat
// gets an answer saying so).
func (s *Service) closeLost(ctx context.Context, r *sova.Run, state, msg string, evs []event.Event) error {
	// The run's row may lag behind its log (events are stored by the
	// run's writer, the row's LastSeq at the end), so on a collision the
	// closing events are numbered again after what the log holds: a
	// replay must end with the closing events, not just stop.
	if err := s.appendClosing(ctx, r, evs); err != nil {
		if stored, err2 := s.opt.Store.RunEvents(ctx, r.ID, r.LastSeq); err2 == nil && len(stored) > 0 {
			r.LastSeq = stored[len(stored)-1].Seq
			if err := s.appendClosing(ctx, r, evs); err != nil {
				s.opt.Logger.Warn("closing the log of a run whose node stopped failed", "run", r.ID, "error", err)
			}
		}
	}
	_ = s.opt.Store.DeleteRunFiles(ctx, r.ID)
	r.State, r.Error = state, msg
	var in runInput
	_ = json.Unmarshal(r.Input, &in)
	if in.Persist && r.ChatID != "" {
		m := &sova.Message{ChatID: r.ChatID, Role: llm.RoleAssistant, Mode: r.Mode, FinishReason: event.FinishCancelled, Error: msg, ReplyTo: in.QuestionID}
		if err := s.opt.Store.AddMessage(ctx, r.UserID, m); err == nil {
			r.MessageID = m.ID
		}
	}
	if err := s.opt.Store.UpdateRun(ctx, r); err != nil {
		return fmt.Errorf("marking run %s %s: %w", r.ID, state, err)
	}
	s.writer.publish([]string{r.ID}) // followers on other nodes read the closing events now
	return nil
}

// handBack ends a run that this node stops executing without ending the
// run itself, and reports whether it did: a durable run stopped by the
// node's shutdown, or failed by its store (runErr: a full disk, a lost
// database), is handed back (its events stored, its lease released, so
// another node, or this one, continues it from its last checkpoint), and
// a run another node took over is left to that node.
//
// What this node's execution used is recorded (it is the person's usage,
// and the next executor counts only its own), and the run's row is given
// its usage so far, from which the next executor goes on counting.
func (s *Service) handBack(ctx context.Context, p *Prepared, log *eventLog, used *tally, runErr error) bool {
	cause := context.Cause(ctx)
	if ctx.Err() == nil && isDurable(p.mode) && isStoreFault(runErr) {
		cause = errStoreFault
	}
	switch {
	case errors.Is(cause, errLeaseLost):
		// What this node emitted after losing the run must not be stored
		// under numbers the new executor uses.
		log.close(0)
		used.flush(context.WithoutCancel(ctx))
		return true
	case errors.Is(cause, errShutdown), errors.Is(cause, errStoreFault):
		if !isDurable(p.mode) {
			return false
		}
		log.close(drainTimeout)
		keep, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
		defer cancel()
		used.flush(keep)
		if u := used.meter.Total(); u.TotalTokens > 0 {
			run := *p.run
			run.Usage = &sova.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
			run.NodeID, run.LeaseUntil = s.opt.NodeID, s.leaseEnd()
			if err := s.opt.Store.UpdateRun(keep, &run); err != nil {
				s.opt.Logger.Warn("saving the usage of a run handed back failed; its total will lack this node's part", "run", p.RunID, "err", err)
			}
		}
		if err := s.opt.Store.ReleaseRun(keep, p.RunID, s.opt.NodeID); err != nil {
			s.opt.Logger.Error("handing a run back failed; another node takes it when its lease passes", "run", p.RunID, "err", err)
		} else {
			s.opt.Logger.Info("run handed back for another node to continue", "run", p.RunID, "mode", p.mode.ID(), "why", cause, "err", runErr)
		}
		return true
	}
	return false
}

// isDurable says whether m's runs continue from checkpoints on another
// node (or after a restart).
func isDurable(m mode.Mode) bool {
	d, ok := m.(mode.Durable)
	return ok && d.Durable()
}

func (s *Service) draining() bool {
	s.leases.mu.Lock()
	defer s.leases.mu.Unlock()
	return s.leases.stopping
}

// Drain is the first step of stopping a node: it reports not ready, takes
// over no more runs, and hands its running durable runs back (their
// events stored, their leases released) so that another node continues
// them at once, and returns once they are handed back or ctx ends. Runs
// of other modes go on; the server waits for their answers, and Close
// interrupts what is left.
func (s *Service) Drain(ctx context.Context) error {
	s.leases.mu.Lock()
	s.leases.stopping = true
	s.leases.mu.Unlock()
	s.mu.Lock()
	var runs []*liveRun
	for _, lr := range s.live {
		if lr.durable {
			runs = append(runs, lr)
		}
	}
	s.mu.Unlock()
	for _, lr := range runs {
		lr.cancel(errShutdown)
	}
	for _, lr := range runs {
		if err := lr.wait(ctx); err != nil {
			return fmt.Errorf("handing durable runs back: %w", err)
		}
	}
	return nil
}
