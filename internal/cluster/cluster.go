// Package cluster connects the Sova nodes that share one database. It
// carries two kinds of notice between them: "this run has new events
// stored", so a client on any node streams any run live, and "stop this
// run", so a cancel asked of any node reaches the node executing the run.
// The notices travel over Redis pub/sub (RedisNotifier, with
// SOVA_REDIS_URL) or PostgreSQL's LISTEN/NOTIFY (PGNotifier).
//
// A notice is only a hint: followers read events from the run's stored
// log, and a cancel is repeated until the run ends (run.Service), so a
// notice lost while a connection is re-established costs latency, never
// an event or a cancel.
package cluster

import (
	"strings"
	"sync"
	"time"
)

// quietTime is how long a node's subscribed connection may stay silent
// before it is pinged; a ping unanswered for as long again ends the
// connection, so one that died without a word (a half-open TCP
// connection) is replaced within twice this.
const quietTime = 5 * time.Second

// hub is the node's side of the notices: the followers subscribed to each
// run, and the function that stops a run executing here.
type hub struct {
	mu       sync.Mutex
	subs     map[string]map[chan struct{}]struct{}
	onCancel func(runID string)
}

func newHub() *hub { return &hub{subs: map[string]map[chan struct{}]struct{}{}} }

// Subscribe returns a channel that receives a token (coalesced) whenever
// the run has new events, and a function that ends the subscription.
func (h *hub) Subscribe(runID string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	h.mu.Lock()
	if h.subs[runID] == nil {
		h.subs[runID] = map[chan struct{}]struct{}{}
	}
	h.subs[runID][ch] = struct{}{}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		delete(h.subs[runID], ch)
		if len(h.subs[runID]) == 0 {
			delete(h.subs, runID)
		}
		h.mu.Unlock()
	}
}

// OnCancel sets the function called with the id of each run a node asked
// to stop; it must not block.
func (h *hub) OnCancel(fn func(runID string)) {
	h.mu.Lock()
	h.onCancel = fn
	h.mu.Unlock()
}

func (h *hub) cancelled(runID string) {
	h.mu.Lock()
	fn := h.onCancel
	h.mu.Unlock()
	if fn != nil && runID != "" {
		fn(runID)
	}
}

func (h *hub) wake(runID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs[runID] {
		poke(ch)
	}
}

// wakeIDs wakes the followers of each run named in a payload of run ids
// separated by spaces.
func (h *hub) wakeIDs(payload string) {
	for id := range strings.FieldsSeq(payload) {
		h.wake(id)
	}
}

// wakeAll wakes every follower: after a reconnection, notices may have
// been missed.
func (h *hub) wakeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, chans := range h.subs {
		for ch := range chans {
			poke(ch)
		}
	}
}

func poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
