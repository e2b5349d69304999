package store_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/sova-ai/sova"
)

// TestConstraintErrors checks that both engines report a violated
// constraint as the same sova error.
func TestConstraintErrors(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			s := b.newDatabase(t).open(t)
			ctx := t.Context()
			err := s.CreateRun(ctx, &sova.Run{UserID: "u", ChatID: "no-such-chat", Mode: "search", State: sova.RunRunning})
			if !errors.Is(err, sova.ErrNotFound) {
				t.Errorf("run of a missing chat: %v, want ErrNotFound", err)
			}
			err = s.AppendRunEvents(ctx, "no-such-run", []sova.RunEvent{{Seq: 1, Event: json.RawMessage(`{}`)}})
			if !errors.Is(err, sova.ErrNotFound) {
				t.Errorf("events of a missing run: %v, want ErrNotFound", err)
			}
			r := &sova.Run{UserID: "u", Mode: "search", State: sova.RunRunning}
			if err := s.CreateRun(ctx, r); err != nil {
				t.Fatal(err)
			}
			if err := s.CreateRun(ctx, &sova.Run{ID: r.ID, UserID: "u", Mode: "search", State: sova.RunRunning}); !errors.Is(err, sova.ErrConflict) {
				t.Errorf("taken run id: %v, want ErrConflict", err)
			}
			// A batch longer than one INSERT is stored whole or not at all.
			var evs []sova.RunEvent
			for i := int64(1); i <= 700; i++ {
				evs = append(evs, sova.RunEvent{Seq: i, Event: json.RawMessage(`{"type":"text-delta"}`)})
			}
			evs[650].Seq = 3 // a repeat, in the third INSERT
			if err := s.AppendRunEvents(ctx, r.ID, evs); !errors.Is(err, sova.ErrConflict) {
				t.Errorf("repeated sequence number: %v, want ErrConflict", err)
			}
			if got, err := s.RunEvents(ctx, r.ID, 0); err != nil || len(got) != 0 {
				t.Errorf("after a failed batch: %d events stored, %v", len(got), err)
			}
			evs[650].Seq = 651
			if err := s.AppendRunEvents(ctx, r.ID, evs); err != nil {
				t.Fatal(err)
			}
			if got, err := s.RunEvents(ctx, r.ID, 0); err != nil || len(got) != 700 || got[699].Seq != 700 {
				t.Errorf("after the batch: %d events, %v", len(got), err)
			}
		})
	}
}
