package run

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/event"
)

// eventLog numbers a run's events, hands each to the run's followers at
// once, and stores them in order, in batches, from a writer goroutine of
// its own.
//
// Emitting never waits for the database: add only numbers the event,
// appends it to the live log (followers in this process see it at once)
// and to the events waiting to be stored, and wakes the writer. The writer
// stores what waits once flushEvents have gathered or the oldest has
// waited flushInterval, at most maxBatch in one AppendRunEvents (one
// INSERT), with the next batch taking up where the last one ended. A write
// that fails or times out is retried with growing, jittered pauses
// (retryMin to retryMax) rather than dropped, and events emitted meanwhile
// wait behind it, in order. A retry of a write that had in fact been
// committed finds its events stored (ErrConflict) and goes on after them.
//
// The writer belongs to the run: close, called when the run ends and
// before its final state is written, waits for everything emitted to be
// stored and for the writer to stop. The wait is bounded: when the
// database stays unreachable past it, the writer is cancelled, stops, and
// the events it could not store are logged; a replay after a restart then
// lacks them. close runs on every path out of the run (execute defers it),
// so no writer outlives its run.
type eventLog struct {
	store  sova.RunStore
	runID  string
	live   *liveRun
	logger *slog.Logger

	mu      sync.Mutex
	seq     int64
	pending []sova.RunEvent // numbered and not yet stored, in order
	closed  bool

	wake      chan struct{} // holds a token while events wait to be stored
	closing   chan struct{} // closed by close: store what waits, then stop
	ctx       context.Context
	cancel    context.CancelFunc // ends the writer's attempts when close gives up
	done      chan struct{}      // closed when the writer has stopped
	closeOnce sync.Once
}

const (
	flushEvents   = 64                     // a batch is written when this many events wait,
	flushInterval = 250 * time.Millisecond // or when the oldest has waited this long
	maxBatch      = 512                    // events in one write at most
	writeTimeout  = 10 * time.Second       // one attempt to write a batch
	retryMin      = 100 * time.Millisecond // the pause after a failed write, doubling
	retryMax      = 5 * time.Second        // up to this
	// drainTimeout bounds how long the end of a run waits for its events
	// to be stored.
	drainTimeout = 15 * time.Second
)

// newEventLog returns the log of a run whose last stored event is lastSeq,
// with its writer running; the caller must close it.
func newEventLog(st sova.RunStore, runID string, lastSeq int64, live *liveRun, logger *slog.Logger) *eventLog {
	// The writer's context is not the run's: a cancelled run's events are
	// stored all the same.
	ctx, cancel := context.WithCancel(context.Background())
	l := &eventLog{
		store: st, runID: runID, seq: lastSeq, live: live, logger: logger,
		wake: make(chan struct{}, 1), closing: make(chan struct{}), ctx: ctx, cancel: cancel, done: make(chan struct{}),
	}
	go l.write()
	return l
}

// add numbers e, hands it to followers and leaves it for the writer. It
// never blocks on the store.
func (l *eventLog) add(e event.Event) event.Event {
	l.mu.Lock()
	l.seq++
	e.Seq = l.seq
	b, err := json.Marshal(e)
	switch {
	case err != nil:
		l.logger.Error("encoding a run event failed", "run", l.runID, "seq", e.Seq, "err", err)
	case l.closed:
		l.logger.Error("run event after the run's end is not stored", "run", l.runID, "seq", e.Seq, "type", e.Type)
	default:
		l.pending = append(l.pending, sova.RunEvent{Seq: e.Seq, Event: b})
	}
	l.live.append(e)
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default: // the writer has been woken already
	}
	return e
}

// last is the number of the last event.
func (l *eventLog) last() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seq
}

// close waits, at most for timeout, until every event added is stored and
// the writer has stopped; past the timeout it cancels the writer and waits
// for it to stop. Calls after the first return at once.
func (l *eventLog) close(timeout time.Duration) {
	l.closeOnce.Do(func() {
		l.mu.Lock()
		l.closed = true
		l.mu.Unlock()
		close(l.closing)
		t := time.NewTimer(timeout)
		defer t.Stop()
		select {
		case <-l.done:
		case <-t.C:
			l.cancel()
			<-l.done
		}
		l.cancel()
	})
}

// write is the writer goroutine.
func (l *eventLog) write() {
	defer close(l.done)
	defer func() {
		l.mu.Lock()
		lost := len(l.pending)
		l.mu.Unlock()
		if lost > 0 {
			l.logger.Error("run events not stored: the store did not take them before the run's end", "run", l.runID, "events", lost)
		}
	}()
	for {
		select {
		case <-l.wake:
		case <-l.closing:
			l.persist()
			return
		}
		l.gather()
		l.persist()
	}
}

// gather waits until a batch is worth writing: flushEvents wait, or
// flushInterval has passed, or the run is ending.
func (l *eventLog) gather() {
	t := time.NewTimer(flushInterval)
	defer t.Stop()
	for l.waiting() < flushEvents {
		select {
		case <-l.wake:
		case <-t.C:
			return
		case <-l.closing:
			return
		}
	}
}

func (l *eventLog) waiting() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.pending)
}

// persist stores the waiting events in order, retrying failed writes,
// until none wait or the writer is cancelled.
func (l *eventLog) persist() {
	pause := retryMin
	for {
		l.mu.Lock()
		batch := l.pending[:min(len(l.pending), maxBatch):min(len(l.pending), maxBatch)]
		l.mu.Unlock()
		if len(batch) == 0 {
			return
		}
		err := l.append(batch)
		if err == nil {
			l.mu.Lock()
			l.pending = l.pending[len(batch):]
			l.mu.Unlock()
			pause = retryMin
			continue
		}
		if l.ctx.Err() != nil {
			return // close gave up
		}
		if errors.Is(err, sova.ErrConflict) && l.dropStored(batch) {
			continue
		}
		l.logger.Warn("storing run events failed; retrying", "run", l.runID, "events", len(batch), "err", err)
		select {
		case <-time.After(pause/2 + rand.N(pause/2+1)):
		case <-l.ctx.Done():
			return
		}
		pause = min(2*pause, retryMax)
	}
}

func (l *eventLog) append(batch []sova.RunEvent) error {
	ctx, cancel := context.WithTimeout(l.ctx, writeTimeout)
	defer cancel()
	return l.store.AppendRunEvents(ctx, l.runID, batch)
}

// dropStored removes from the waiting events those of batch (their head)
// that the store already holds, as when an attempt that timed out was
// committed after all, and reports whether there were any.
func (l *eventLog) dropStored(batch []sova.RunEvent) bool {
	ctx, cancel := context.WithTimeout(l.ctx, writeTimeout)
	defer cancel()
	stored, err := l.store.RunEvents(ctx, l.runID, batch[0].Seq-1)
	if err != nil {
		return false
	}
	have := make(map[int64]bool, len(stored))
	for _, e := range stored {
		have[e.Seq] = true
	}
	kept := make([]sova.RunEvent, 0, len(batch))
	for _, e := range batch {
		if !have[e.Seq] {
			kept = append(kept, e)
		}
	}
	if len(kept) == len(batch) {
		return false
	}
	l.mu.Lock()
	l.pending = append(kept, l.pending[len(batch):]...)
	l.mu.Unlock()
	return true
}
