package run

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/sova-ai/sova"
	"github.com/sova-ai/sova/internal/event"
)

// A crash can leave a run's log ahead of its row (the writer stores events
// before the row's LastSeq is updated at the end). Recovery must still end
// the log with the error and the finish, so that a replay tells the client
// what happened instead of just stopping.
func TestRecoverClosesALogAheadOfItsRow(t *testing.T) {
	svc, st := newService(t, scripted{}, nil, 0)
	ctx := userCtx(t)
	crashed := &sova.Run{UserID: testUser, Mode: "scripted", State: sova.RunRunning, Question: "q", LastSeq: 0}
	if err := st.CreateRun(ctx, crashed); err != nil {
		t.Fatal(err)
	}
	var kept []sova.RunEvent
	for i := int64(1); i <= 3; i++ {
		e := event.Event{Type: event.TypeTextDelta, Seq: i, Text: fmt.Sprintf("w%d ", i)}
		if i == 1 {
			e = event.Event{Type: event.TypeStart, Seq: 1, Start: &event.Start{RunID: crashed.ID, Mode: "scripted"}}
		}
		b, _ := json.Marshal(e)
		kept = append(kept, sova.RunEvent{Seq: i, Event: b})
	}
	if err := st.AppendRunEvents(ctx, crashed.ID, kept); err != nil {
		t.Fatal(err)
	}

	if n, err := svc.Recover(ctx); err != nil || n != 1 {
		t.Fatalf("recover: %d %v", n, err)
	}
	var seen []event.Event
	if err := svc.Follow(ctx, crashed.ID, 0, func(e event.Event) error { seen = append(seen, e); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 5 {
		t.Fatalf("replayed %d events, want the 3 kept and an error and a finish: %+v", len(seen), seen)
	}
	errEv, fin := seen[3], seen[4]
	if errEv.Type != event.TypeError || errEv.Error == nil || errEv.Error.Code != "interrupted" || errEv.Seq != 4 {
		t.Errorf("event 4 = %+v, want the interruption error", errEv)
	}
	if fin.Type != event.TypeFinish || fin.Seq != 5 {
		t.Errorf("event 5 = %+v, want the finish", fin)
	}
	r, _ := st.GetRun(ctx, testUser, crashed.ID)
	if r.State != sova.RunInterrupted || r.LastSeq != 5 {
		t.Errorf("run = %+v, want interrupted at event 5", r)
	}
}
