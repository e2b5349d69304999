package wire

import (
	"errors"
	"sync"

	"github.com/sova-ai/sova/internal/event"
)

// SinkOf adapts an encoder to a Sink, for modes that emit without caring
// about the wire. Errors go to onError (which may be nil): an invalid event
// (errors.Is ErrInvalidEvent) is skipped and the stream goes on; the first
// other error (a write failed: the client went away, so a server cancels the
// run there) is reported once and every later event is dropped.
func SinkOf(enc Encoder, onError func(error)) event.Sink {
	var (
		mu   sync.Mutex
		dead bool
	)
	return event.SinkFunc(func(e event.Event) {
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
