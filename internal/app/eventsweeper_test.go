package app

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/sova-ai/sova"
	"github.com/sova-ai/sova/internal/store"
)

// The sweeper merges a finished run's text deltas once it has been
// finished for the compaction delay, and deletes its log after the
// retention; a running run is left alone.
func TestEventSweeperCompactsThenExpires(t *testing.T) {
	st, err := store.OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "sova.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	ctx := t.Context()
	runWith := func(state string) string {
		r := &sova.Run{UserID: "ann", Mode: "search", State: state}
		if err := st.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
		var evs []sova.RunEvent
		for i := range 50 {
			b, _ := json.Marshal(map[string]any{"type": "text-delta", "seq": i + 1, "text": fmt.Sprintf("w%d ", i)})
			evs = append(evs, sova.RunEvent{Seq: int64(i + 1), Event: b})
		}
		if err := st.AppendRunEvents(ctx, r.ID, evs); err != nil {
			t.Fatal(err)
		}
		return r.ID
	}
	done, running := runWith(sova.RunCompleted), runWith(sova.RunRunning)
	count := func(id string) int {
		evs, err := st.RunEvents(ctx, id, 0)
		if err != nil {
			t.Fatal(err)
		}
		return len(evs)
	}

	now := time.Now()
	sw := &EventSweeper{Store: st, CompactAfter: 10 * time.Minute, Retention: 24 * time.Hour, Now: func() time.Time { return now }}
	if _, removed, err := sw.Sweep(ctx); err != nil || removed != 0 || count(done) != 50 {
		t.Fatalf("a run finished just now was swept: %d removed, %v", removed, err)
	}
	now = now.Add(11 * time.Minute)
	if n, removed, err := sw.Sweep(ctx); err != nil || n != 1 || removed != 49 || count(done) != 1 {
		t.Fatalf("after the compaction delay: %d runs, %d rows removed, %d left, %v", n, removed, count(done), err)
	}
	now = now.Add(24 * time.Hour)
	if _, removed, err := sw.Sweep(ctx); err != nil || removed != 1 || count(done) != 0 {
		t.Fatalf("after the retention: %d removed, %d left, %v", removed, count(done), err)
	}
	if count(running) != 50 {
		t.Errorf("the running run's log changed: %d events", count(running))
	}

	// In the background, stopped by Stop.
	sw2 := &EventSweeper{Store: st, CompactAfter: time.Nanosecond, Interval: time.Millisecond}
	sw2.Start()
	time.Sleep(20 * time.Millisecond)
	sw2.Stop()
}
