package run

import (
	"context"
	"errors"
	"fmt"

	"time"

	"github.com/sova-ai/sova/internal/event"
)

// Following a run that this node hands back as it stops.
//
// A durable run handed back (Drain, or its store failing) goes on on
// another node. Its followers here do not just end: they go on reading
// its events from the store for up to HandOffFollow (within the time the
// server waits for open requests as it stops), and if the run has not
// ended by then they get a MovedError naming the run and how to follow it.

// HandOffFollow is how long a follower of a handed-back run on this node
// goes on through the store: under the 30 s that `sova serve` waits for
// open requests after handing its runs back.
const HandOffFollow = 20 * time.Second

// MovedError ends a stream of a run that this node handed to another,
// before the run ended: the client follows it elsewhere.
type MovedError struct{ RunID string }

func (e *MovedError) Error() string {
	return fmt.Sprintf("this server is stopping; run %s goes on on another server: follow it with GET /api/runs/%s/stream (or GET /api/runs/%s for its answer)", e.RunID, e.RunID, e.RunID)
}

// followHandedOff goes on following a run this node handed back, from the
// store, for up to HandOffFollow.
func (s *Service) followHandedOff(ctx context.Context, userID, runID string, after int64, fn func(event.Event) error) error {
	fctx, cancel := context.WithTimeout(ctx, HandOffFollow)
	defer cancel()
	err := s.followStored(fctx, userID, runID, after, fn)
	if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		return &MovedError{RunID: runID}
	}
	return err
}

// Answer is what a run answered, read from its events.
type Answer struct {
	Text         string
	FinishReason string
	Usage        event.Finish
	Err          error // the run's error event, if it ended with one
}

// AwaitAnswer waits for the end of a run that this node handed back (an
// Outcome in state running) and returns its answer from the events after
// the given number, for a client that waits for the whole answer. It
// gives up after HandOffFollow with a MovedError.
func (s *Service) AwaitAnswer(ctx context.Context, runID string, after int64) (*Answer, error) {
	userID, err := contextUser(ctx)
	if err != nil {
		return nil, err
	}
	rec := &collector{}
	a := &Answer{}
	finished := false
	err = s.followHandedOff(ctx, userID, runID, after, func(e event.Event) error {
		rec.Emit(e)
		switch {
		case e.Type == event.TypeError && e.Error != nil:
			a.Err = errors.New(e.Error.Message)
		case e.Type == event.TypeFinish && e.Finish != nil:
			a.FinishReason, a.Usage, finished = e.Finish.Reason, *e.Finish, true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !finished {
		return nil, &MovedError{RunID: runID}
	}
	a.Text = rec.text()
	return a, nil
}
