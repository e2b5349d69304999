package wire

import (
	"errors"
	"sync"
	"testing"

	"github.com/sova-ai/sova/internal/event"
)

// brokenEncoder fails writes after `after` events.
type brokenEncoder struct {
	mu    sync.Mutex
	after int
	emits int
}

func (b *brokenEncoder) Emit(e event.Event) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.emits++
	if e.Type == "bogus" {
		return invalid(errors.New("bogus"))
	}
	if b.emits > b.after {
		return errors.New("write: broken pipe")
	}
	return nil
}

func (b *brokenEncoder) Close() error { return nil }

func TestSinkOf(t *testing.T) {
	tests := []struct {
		name       string
		after      int
		events     []event.Event
		wantEmits  int
		wantErrors int
	}{
		{"healthy", 100, []event.Event{evText("a"), evText("b")}, 2, 0},
		{"invalid events are skipped", 100, []event.Event{{Type: "bogus"}, evText("a"), {Type: "bogus"}}, 3, 2},
		{"write error stops the sink, reported once", 1, []event.Event{evText("a"), evText("b"), evText("c"), evText("d")}, 2, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			enc := &brokenEncoder{after: tt.after}
			var errs []error
			s := SinkOf(enc, func(err error) { errs = append(errs, err) })
			for _, e := range tt.events {
				s.Emit(e)
			}
			if enc.emits != tt.wantEmits || len(errs) != tt.wantErrors {
				t.Errorf("encoder saw %d events, %d errors reported (%v); want %d, %d", enc.emits, len(errs), errs, tt.wantEmits, tt.wantErrors)
			}
		})
	}
	t.Run("nil onError", func(t *testing.T) {
		s := SinkOf(&brokenEncoder{}, nil)
		s.Emit(evText("a"))
		s.Emit(evText("b"))
	})
}
