package event

import (
	"errors"
	"strings"
	"sync"
)

// Recorder is a Sink that keeps every event in memory, for tests and for
// assembling a non-streamed answer. Safe for concurrent use.
type Recorder struct {
	mu     sync.Mutex
	events []Event
}

// Emit records e.
func (r *Recorder) Emit(e Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

// Events returns a copy of the events recorded so far, in order.
func (r *Recorder) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.events...)
}

// Filter returns the recorded events of type t, in order.
func (r *Recorder) Filter(t Type) []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Event
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
		if e.Type == TypeTextDelta {
			b.WriteString(e.Text)
		}
	}
	return b.String()
}

// Tee returns a Sink that passes every event to each sink in order. Nil
// sinks are skipped, so callers can pass optional ones directly.
func Tee(sinks ...Sink) Sink {
	var live []Sink
	for _, s := range sinks {
		if s != nil {
			live = append(live, s)
		}
	}
	switch len(live) {
	case 0:
		return Discard
	case 1:
		return live[0]
	}
	return SinkFunc(func(e Event) {
		for _, s := range live {
			s.Emit(e)
		}
	})
}

// SinkOf adapts an encoder to a Sink, for modes that emit without caring
// about the wire. Errors go to onError (which may be nil): an invalid event
// (errors.Is ErrInvalidEvent) is skipped and the stream goes on; the first
// other error (a write failed: the client went away, so a server cancels the
// run there) is reported once and every later event is dropped.
func SinkOf(enc Encoder, onError func(error)) Sink {
	var (
		mu   sync.Mutex
		dead bool
	)
	return SinkFunc(func(e Event) {
		mu.Lock()
		stop := dead
		mu.Unlock()
		if stop {
			return
		}
		err := enc.Emit(e)
		if err == nil {
			return
		}
		if !errors.Is(err, ErrInvalidEvent) {
			mu.Lock()
			first := !dead
			dead = true
			mu.Unlock()
			if !first {
				return
			}
		}
		if onError != nil {
			onError(err)
		}
	})
}
