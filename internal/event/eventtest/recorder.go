// Package eventtest records the events a run emits, for tests.
package eventtest

import (
	"strings"
	"sync"

	"github.com/sova-ai/sova/internal/event"
)

// Recorder is an event.Sink that keeps every event in memory. Safe for
// concurrent use.
type Recorder struct {
	mu     sync.Mutex
	events []event.Event
}

var _ event.Sink = (*Recorder)(nil)

// Emit records e.
func (r *Recorder) Emit(e event.Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

// Events returns a copy of the events recorded so far, in order.
func (r *Recorder) Events() []event.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]event.Event(nil), r.events...)
}

// Filter returns the recorded events of type t, in order.
func (r *Recorder) Filter(t event.Type) []event.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []event.Event
	for _, e := range r.events {
		if e.Type == t {
			out = append(out, e)
		}
	}
	return out
}

// Text returns the answer text: all text deltas concatenated.
func (r *Recorder) Text() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for _, e := range r.events {
		if e.Type == event.TypeTextDelta {
			b.WriteString(e.Text)
		}
	}
	return b.String()
}
