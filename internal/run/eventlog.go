package run

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/event"
)

// eventLog numbers a run's events, hands each to the run's followers at
// once, and leaves it for the service's event writer to store.
//
// Emitting never waits for the database: add only numbers the event,
// encodes it, appends it to the live log (followers in this process see it
// at once) and to the events waiting to be stored, and queues the log with
// the writer. close, called when the run ends and before its final state
// is written, waits until everything emitted is stored; the wait is
// bounded, and when the database stays unreachable past it the events not
// stored are dropped from memory and their count logged.
type eventLog struct {
	w      *eventWriter
	runID  string
	live   *liveRun
	logger *slog.Logger

	mu        sync.Mutex
	seq       int64
	pending   []pendingEvent // numbered and not yet stored, in order
	queued    bool           // in the writer's queue
	closed    bool           // the run has ended: no more events
	abandoned bool           // close gave up waiting; pending was dropped
	drained   chan struct{}  // closed once closed and nothing is pending
	isDrained bool
	closeOnce sync.Once
}

// pendingEvent is an event waiting to be stored, with its encoding.
type pendingEvent struct {
	e   event.Event
	raw json.RawMessage
}

const (
	flushEvents   = 256                   // the writer writes at once when this many events wait,
	flushInterval = 20 * time.Millisecond // or when the first has waited this long
	maxBatch      = 2000                  // events (of all runs) in one transaction at most
	writeTimeout  = 10 * time.Second      // one attempt to write a batch
	retryMin      = 100 * time.Millisecond
	retryMax      = 5 * time.Second
	// drainTimeout bounds how long the end of a run waits for its events
	// to be stored.
	drainTimeout = 15 * time.Second
)

// newEventLog returns the log of a run whose last stored event is lastSeq;
// its events are stored by w.
func newEventLog(w *eventWriter, runID string, lastSeq int64, live *liveRun, logger *slog.Logger) *eventLog {
	return &eventLog{w: w, runID: runID, seq: lastSeq, live: live, logger: logger, drained: make(chan struct{})}
}

// add numbers e, hands it to followers and leaves it for the writer. It
// never blocks on the store.
func (l *eventLog) add(e event.Event) event.Event {
	l.mu.Lock()
	l.seq++
	e.Seq = l.seq
	b, err := json.Marshal(e)
	enqueue, kept := false, false
	switch {
	case err != nil:
		l.logger.Error("encoding a run event failed", "run", l.runID, "seq", e.Seq, "err", err)
	case l.closed:
		l.logger.Error("run event after the run's end is not stored", "run", l.runID, "seq", e.Seq, "type", e.Type)
	default:
		l.pending = append(l.pending, pendingEvent{e: e, raw: b})
		kept, enqueue = true, !l.queued
		l.queued = true
	}
	l.live.append(e)
	l.mu.Unlock()
	if kept && l.w.waiting.Add(1) == flushEvents {
		l.w.signal() // a batch is worth writing now
	}
	if enqueue {
		l.w.enqueue(l, false)
	}
	return e
}

// last is the number of the last event.
func (l *eventLog) last() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seq
}

// close waits, at most for timeout, until every event added is stored;
// past the timeout the events still waiting are dropped and logged. Calls
// after the first return at once.
func (l *eventLog) close(timeout time.Duration) {
	l.closeOnce.Do(func() {
		l.mu.Lock()
		l.closed = true
		l.markDrainedLocked()
		l.mu.Unlock()
		select {
		case <-l.drained:
			return
		default:
		}
		l.w.enqueue(l, true) // the run waits: no lingering
		t := time.NewTimer(timeout)
		defer t.Stop()
		select {
		case <-l.drained:
		case <-t.C:
			l.mu.Lock()
			lost := len(l.pending)
			l.pending, l.abandoned = nil, true
			l.markDrainedLocked()
			l.mu.Unlock()
			l.w.waiting.Add(-int64(lost))
			if lost > 0 {
				l.logger.Error("run events not stored: the store did not take them before the run's end", "run", l.runID, "events", lost)
			}
		}
	})
}

func (l *eventLog) markDrainedLocked() {
	if l.closed && len(l.pending) == 0 && !l.isDrained {
		l.isDrained = true
		close(l.drained)
	}
}

// eventWriter is the one writer of run events in a process: it stores the
// events of all runs in order, many runs' events in one transaction (group
// commit), with consecutive text deltas of a run merged into one row.
//
// The writer wakes when a log has events; it writes at once when
// flushEvents wait or a run is ending, else after flushInterval, so that
// events emitted meanwhile share the transaction. While a write is in
// flight, events go on gathering and the next write takes them all: the
// number of transactions follows the database's speed, not the number of
// runs. A write that fails is retried with growing, jittered pauses
// (retryMin to retryMax), the events of every run waiting behind it in
// order. When a write of several runs' events is refused for one run (a
// run deleted with its chat, or events a timed-out attempt committed after
// all), the runs are written one by one to find it.
type eventWriter struct {
	store    sova.RunStore
	notifier Notifier // nil: no other node follows
	logger   *slog.Logger

	mu     sync.Mutex
	queue  []*eventLog // logs with events waiting, oldest first
	urgent bool        // a run's end waits for its events
	wake   chan struct{}

	waiting atomic.Int64 // events added and not yet stored (or dropped)
	// writes counts the transactions made, for benchmarks.
	writes atomic.Int64

	ctx      context.Context // ends the writer's attempts when close gives up
	cancel   context.CancelFunc
	stopping chan struct{}
	done     chan struct{}
	stopOnce sync.Once
}

func newEventWriter(st sova.RunStore, n Notifier, logger *slog.Logger) *eventWriter {
	ctx, cancel := context.WithCancel(context.Background())
	w := &eventWriter{
		store: st, notifier: n, logger: logger, wake: make(chan struct{}, 1),
		ctx: ctx, cancel: cancel, stopping: make(chan struct{}), done: make(chan struct{}),
	}
	go w.run()
	return w
}

// enqueue puts l in the write queue unless it is there, and wakes the
// writer; urgent says a run's end waits for it.
func (w *eventWriter) enqueue(l *eventLog, urgent bool) {
	w.mu.Lock()
	if !w.inQueueLocked(l) {
		w.queue = append(w.queue, l)
	}
	w.urgent = w.urgent || urgent
	w.mu.Unlock()
	w.signal()
}

func (w *eventWriter) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *eventWriter) inQueueLocked(l *eventLog) bool {
	for _, q := range w.queue {
		if q == l {
			return true
		}
	}
	return false
}

// close stores what waits and stops the writer; when ctx ends first, the
// writer's attempts are cancelled. The runs must have ended.
func (w *eventWriter) close(ctx context.Context) error {
	w.stopOnce.Do(func() { close(w.stopping) })
	select {
	case <-w.done:
		return nil
	case <-ctx.Done():
		w.cancel()
		<-w.done
		return ctx.Err()
	}
}

func (w *eventWriter) run() {
	defer close(w.done)
	defer w.cancel()
	pause := retryMin
	for {
		select {
		case <-w.wake:
		case <-w.stopping:
			for w.queued() > 0 && w.ctx.Err() == nil {
				if !w.flush() {
					w.sleep(&pause)
				}
			}
			return
		}
		w.linger()
		for w.queued() > 0 && w.ctx.Err() == nil {
			if w.flush() {
				pause = retryMin
				continue
			}
			if !w.sleep(&pause) {
				break
			}
		}
	}
}

// sleep pauses after a failed write, and reports false when the writer is
// stopping (the loop then flushes what it can and ends).
func (w *eventWriter) sleep(pause *time.Duration) bool {
	d := *pause/2 + rand.N(*pause/2+1)
	*pause = min(2**pause, retryMax)
	select {
	case <-time.After(d):
		return true
	case <-w.ctx.Done():
		return false
	}
}

func (w *eventWriter) queued() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.queue)
}

// linger waits until a batch is worth writing: flushEvents wait, or a run
// is ending, or flushInterval has passed.
func (w *eventWriter) linger() {
	t := time.NewTimer(flushInterval)
	defer t.Stop()
	for {
		w.mu.Lock()
		urgent := w.urgent
		w.mu.Unlock()
		if urgent || w.waiting.Load() >= flushEvents {
			return
		}
		select {
		case <-w.wake:
		case <-t.C:
			return
		case <-w.stopping:
			return
		}
	}
}

// take is the head of one log's pending events in a batch.
type take struct {
	l    *eventLog
	n    int
	rows []sova.RunEvent
}

// flush writes one batch: the waiting events of the queued logs, up to
// maxBatch, and reports whether the store took it.
func (w *eventWriter) flush() bool {
	w.mu.Lock()
	logs := w.queue
	w.queue = nil
	w.urgent = false
	w.mu.Unlock()

	var (
		takes []take
		rows  []sova.RunEvent
		rest  []*eventLog
		count int
	)
	for i, l := range logs {
		if count >= maxBatch {
			rest = logs[i:]
			break
		}
		l.mu.Lock()
		n := min(len(l.pending), maxBatch-count)
		batch := l.pending[:n:n]
		l.mu.Unlock()
		if n == 0 {
			w.settle(l, 0)
			continue
		}
		r := encodeRows(l.runID, batch)
		takes = append(takes, take{l: l, n: n, rows: r})
		rows = append(rows, r...)
		count += n
	}
	if len(rest) > 0 {
		w.requeue(rest)
	}
	if len(takes) == 0 {
		return true
	}
	err := w.append(rows)
	if err == nil {
		for _, t := range takes {
			w.settle(t.l, t.n)
		}
		w.publish(idsOf(takes))
		return true
	}
	if w.ctx.Err() != nil {
		w.requeue(logsOf(takes))
		return false
	}
	if !errors.Is(err, sova.ErrConflict) && !errors.Is(err, sova.ErrNotFound) {
		w.logger.Warn("storing run events failed; retrying", "runs", len(takes), "events", count, "err", err)
		w.requeue(logsOf(takes))
		return false
	}
	// One run's events were refused: write each run on its own.
	ok := true
	for _, t := range takes {
		err := w.append(t.rows)
		switch {
		case err == nil:
			w.settle(t.l, t.n)
			w.publish([]string{t.l.runID})
		case errors.Is(err, sova.ErrNotFound):
			// The run is gone (its chat was deleted): nothing will read
			// its events.
			t.l.mu.Lock()
			dropped := len(t.l.pending)
			t.l.pending = nil
			t.l.mu.Unlock()
			w.waiting.Add(-int64(dropped))
			w.settle(t.l, 0)
		case errors.Is(err, sova.ErrConflict) && w.dropStored(t):
			w.requeue([]*eventLog{t.l})
		default:
			w.logger.Warn("storing run events failed; retrying", "run", t.l.runID, "events", t.n, "err", err)
			w.requeue([]*eventLog{t.l})
			ok = false
		}
	}
	return ok
}

// publish tells followers on other nodes that the runs have new events
// stored. A notice that fails costs them latency, not events: they read
// the log, and poll it as well.
func (w *eventWriter) publish(ids []string) {
	if w.notifier == nil {
		return
	}
	ctx, cancel := context.WithTimeout(w.ctx, writeTimeout)
	defer cancel()
	if err := w.notifier.Publish(ctx, ids); err != nil {
		w.logger.Warn("telling other nodes of new run events failed", "runs", len(ids), "err", err)
	}
}

func idsOf(takes []take) []string {
	ids := make([]string, len(takes))
	for i, t := range takes {
		ids[i] = t.l.runID
	}
	return ids
}

func logsOf(takes []take) []*eventLog {
	out := make([]*eventLog, len(takes))
	for i, t := range takes {
		out[i] = t.l
	}
	return out
}

// requeue puts logs back at the head of the queue, in order, ahead of
// those queued meanwhile (which are then behind them, as their events are).
func (w *eventWriter) requeue(logs []*eventLog) {
	w.mu.Lock()
	kept := make([]*eventLog, 0, len(logs)+len(w.queue))
	kept = append(kept, logs...)
	for _, q := range w.queue {
		if !containsLog(logs, q) {
			kept = append(kept, q)
		}
	}
	w.queue = kept
	w.mu.Unlock()
}

func containsLog(logs []*eventLog, l *eventLog) bool {
	for _, x := range logs {
		if x == l {
			return true
		}
	}
	return false
}

// settle removes the n events stored from the head of l's pending ones and
// queues l again if more wait.
func (w *eventWriter) settle(l *eventLog, n int) {
	l.mu.Lock()
	if !l.abandoned {
		l.pending = l.pending[min(n, len(l.pending)):]
		w.waiting.Add(-int64(n))
	}
	more := len(l.pending) > 0
	l.queued = more
	l.markDrainedLocked()
	l.mu.Unlock()
	if more {
		w.mu.Lock()
		if !w.inQueueLocked(l) {
			w.queue = append(w.queue, l)
		}
		w.mu.Unlock()
	}
}

func (w *eventWriter) append(rows []sova.RunEvent) error {
	ctx, cancel := context.WithTimeout(w.ctx, writeTimeout)
	defer cancel()
	w.writes.Add(1)
	return w.store.AppendEvents(ctx, rows)
}

// dropStored removes from l's waiting events those of t that the store
// already holds, as when an attempt that timed out was committed after
// all, and reports whether there were any.
func (w *eventWriter) dropStored(t take) bool {
	ctx, cancel := context.WithTimeout(w.ctx, writeTimeout)
	defer cancel()
	t.l.mu.Lock()
	if len(t.l.pending) == 0 {
		t.l.mu.Unlock()
		return false
	}
	first := t.l.pending[0].e.Seq
	t.l.mu.Unlock()
	stored, err := w.store.RunEvents(ctx, t.l.runID, first-1)
	if err != nil {
		return false
	}
	have := map[int64]bool{}
	for _, re := range stored {
		evs, err := decodeStored(re)
		if err != nil {
			return false
		}
		for _, e := range evs {
			have[e.Seq] = true
		}
	}
	t.l.mu.Lock()
	defer t.l.mu.Unlock()
	kept := make([]pendingEvent, 0, len(t.l.pending))
	for _, p := range t.l.pending {
		if !have[p.e.Seq] {
			kept = append(kept, p)
		}
	}
	dropped := len(t.l.pending) - len(kept)
	t.l.pending = kept
	w.waiting.Add(-int64(dropped))
	t.l.markDrainedLocked()
	return dropped > 0
}

// mergedDeltas is how consecutive text deltas of a run are stored in one
// row: the row's key is the last event's number, Seq the first's, and
// Pieces and DT give each event's text (by byte length) and time (in
// nanoseconds after Time), so a replay yields the very events emitted.
type mergedDeltas struct {
	Type   event.Type `json:"type"`
	Time   time.Time  `json:"time"`
	Seq    int64      `json:"seq"`
	Text   string     `json:"text"`
	Pieces []int      `json:"pieces"`
	DT     []int64    `json:"dt"`
}

// encodeRows makes the rows of a run's events, merging each stretch of
// consecutive text deltas into one.
func encodeRows(runID string, evs []pendingEvent) []sova.RunEvent {
	rows := make([]sova.RunEvent, 0, len(evs))
	for i := 0; i < len(evs); {
		j := i + 1
		if evs[i].e.Type == event.TypeTextDelta {
			for j < len(evs) && evs[j].e.Type == event.TypeTextDelta {
				j++
			}
		}
		if j-i == 1 {
			rows = append(rows, sova.RunEvent{RunID: runID, Seq: evs[i].e.Seq, Event: evs[i].raw})
			i = j
			continue
		}
		m := mergedDeltas{Type: event.TypeTextDelta, Time: evs[i].e.Time, Seq: evs[i].e.Seq,
			Pieces: make([]int, 0, j-i), DT: make([]int64, 0, j-i)}
		n := 0
		for _, p := range evs[i:j] {
			n += len(p.e.Text)
		}
		text := make([]byte, 0, n)
		for _, p := range evs[i:j] {
			text = append(text, p.e.Text...)
			m.Pieces = append(m.Pieces, len(p.e.Text))
			// Wall clock only: what the JSON of each event says.
			m.DT = append(m.DT, int64(p.e.Time.Round(0).Sub(m.Time.Round(0))))
		}
		m.Text = string(text)
		b, err := json.Marshal(m)
		if err != nil { // cannot happen for these types; store them one by one
			for _, p := range evs[i:j] {
				rows = append(rows, sova.RunEvent{RunID: runID, Seq: p.e.Seq, Event: p.raw})
			}
		} else {
			rows = append(rows, sova.RunEvent{RunID: runID, Seq: evs[j-1].e.Seq, Event: b})
		}
		i = j
	}
	return rows
}

// decodeStored returns the events one stored row holds: one, or the text
// deltas merged into it.
func decodeStored(re sova.RunEvent) ([]event.Event, error) {
	var m struct {
		Pieces []int   `json:"pieces"`
		DT     []int64 `json:"dt"`
	}
	if err := json.Unmarshal(re.Event, &m); err != nil {
		return nil, err
	}
	var e event.Event
	if err := json.Unmarshal(re.Event, &e); err != nil {
		return nil, err
	}
	if len(m.Pieces) == 0 {
		return []event.Event{e}, nil
	}
	if len(m.DT) != len(m.Pieces) || e.Seq+int64(len(m.Pieces))-1 != re.Seq {
		return nil, errors.New("a merged row of text deltas does not add up")
	}
	out := make([]event.Event, len(m.Pieces))
	text, base := e.Text, e.Time
	for i, n := range m.Pieces {
		if n < 0 || n > len(text) {
			return nil, errors.New("a merged row of text deltas does not add up")
		}
		out[i] = event.Event{Type: event.TypeTextDelta, Seq: e.Seq + int64(i), Time: base.Add(time.Duration(m.DT[i])), Text: text[:n]}
		text = text[n:]
	}
	return out, nil
}
