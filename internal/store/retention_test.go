package store_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova"
)

func TestRunEventRetention(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			testRunEventRetention(t, b.newDatabase(t))
		})
	}
}

func testRunEventRetention(t *testing.T, db database) {
	s := db.open(t)
	ctx := t.Context()
	var log []sova.RunEvent
	add := func(v map[string]any) {
		seq := int64(len(log) + 1)
		v["seq"], v["time"] = seq, "2026-11-24T12:00:00Z"
		b, _ := json.Marshal(v)
		log = append(log, sova.RunEvent{Seq: seq, Event: b})
	}
	add(map[string]any{"type": "start"})
	add(map[string]any{"type": "status"})
	// A query started then completed, a page being read then read, a
	// query still started: the first two "started"/"reading" go.
	add(map[string]any{"type": "query", "query": map[string]any{"query": "q", "index": 0, "total": 2, "status": "started", "iteration": 1}})
	add(map[string]any{"type": "query", "query": map[string]any{"query": "r", "index": 1, "total": 2, "status": "started", "iteration": 1}})
	add(map[string]any{"type": "query", "query": map[string]any{"query": "q", "index": 0, "total": 2, "status": "completed", "iteration": 1}})
	add(map[string]any{"type": "page", "page": map[string]any{"url": "https://a.example/", "state": "reading"}})
	add(map[string]any{"type": "page", "page": map[string]any{"url": "https://a.example/", "state": "read", "chars": 900}})
	// five deltas, a source, three deltas, finish.
	for i := range 5 {
		add(map[string]any{"type": "text-delta", "text": fmt.Sprintf("a%d ", i)})
	}
	add(map[string]any{"type": "source"})
	for i := range 3 {
		add(map[string]any{"type": "text-delta", "text": fmt.Sprintf("b%d ", i)})
	}
	add(map[string]any{"type": "finish"})
	newRun := func(state string) *sova.Run {
		r := &sova.Run{UserID: "ann", Mode: "search", State: state}
		if err := s.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
		if err := s.AppendRunEvents(ctx, r.ID, log); err != nil {
			t.Fatal(err)
		}
		return r
	}
	done, waiting, running := newRun(sova.RunCompleted), newRun(sova.RunWaiting), newRun(sova.RunRunning)

	// Runs updated after the cut-off are left alone.
	if n, removed, err := s.CompactRunEvents(ctx, time.Now().Add(-time.Hour), 10); err != nil || n != 0 || removed != 0 {
		t.Fatalf("compacting runs newer than the cut-off: %d runs, %d rows, %v", n, removed, err)
	}
	n, removed, err := s.CompactRunEvents(ctx, time.Now().Add(time.Minute), 10)
	if err != nil || n != 1 || removed != 8 {
		t.Fatalf("compacted %d runs, removed %d rows, %v; want the finished run, 8 rows", n, removed, err)
	}
	evs, err := s.RunEvents(ctx, done.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	var seqs []int64
	var text strings.Builder
	for _, e := range evs {
		seqs = append(seqs, e.Seq)
		var head struct {
			Type, Text string
			Seq        int64
		}
		_ = json.Unmarshal(e.Event, &head)
		text.WriteString(head.Text)
		if head.Type == "text-delta" && head.Seq != e.Seq {
			t.Errorf("merged event %d keeps another number: %s", e.Seq, e.Event)
		}
	}
	if fmt.Sprint(seqs) != "[1 2 4 5 7 12 13 16 17]" || text.String() != "a0 a1 a2 a3 a4 b0 b1 b2 " {
		t.Errorf("after compaction: events %v, text %q", seqs, text.String())
	}
	// A compacted run is not read again; unfinished runs keep every row.
	if n, _, _ := s.CompactRunEvents(ctx, time.Now().Add(time.Minute), 10); n != 0 {
		t.Errorf("compacted %d runs again", n)
	}
	for _, r := range []*sova.Run{waiting, running} {
		if evs, _ := s.RunEvents(ctx, r.ID, 0); len(evs) != len(log) {
			t.Errorf("%s run: %d events, want %d", r.State, len(evs), len(log))
		}
	}

	// Retention deletes finished runs' logs only.
	if n, err := s.PurgeRunEvents(ctx, time.Now().Add(-time.Hour)); err != nil || n != 0 {
		t.Errorf("purge before the runs: %d, %v", n, err)
	}
	if n, err := s.PurgeRunEvents(ctx, time.Now().Add(time.Minute)); err != nil || n != 9 {
		t.Errorf("purged %d rows, %v; want the finished run's 9", n, err)
	}
	if evs, _ := s.RunEvents(ctx, done.ID, 0); len(evs) != 0 {
		t.Errorf("finished run keeps %d events", len(evs))
	}
	if evs, _ := s.RunEvents(ctx, waiting.ID, 0); len(evs) != len(log) {
		t.Errorf("waiting run lost events: %d", len(evs))
	}
	if _, err := s.GetRun(ctx, "ann", done.ID); err != nil {
		t.Errorf("the run itself must stay: %v", err)
	}
}
