package run

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/mode"
)

// emitted is what each run of a test emitted, by run id.
type emitted struct {
	mu   sync.Mutex
	runs map[string][]event.Event
}

func (e *emitted) add(runID string, ev event.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.runs[runID] = append(e.runs[runID], ev)
}

// Many runs at once on a store that takes 40 ms per write, fails some
// writes and reports a timeout for one it committed: no emit waits for it,
// the writer commits many runs' events per transaction, and a replay from
// the store (by a new service, as after a restart) yields every event of
// every run, in order, exactly once, the same as the live stream.
func TestSlowStoreEveryEventInOrderExactlyOnce(t *testing.T) {
	const (
		runs   = 40
		events = 150
	)
	var slowest time.Duration
	var smu sync.Mutex
	m := scripted{run: func(ctx context.Context, in mode.Input, sink event.Sink) (*mode.Result, error) {
		for i := range events {
			var e event.Event
			switch i % 10 {
			case 3:
				e = event.Event{Type: event.TypeStatus, Status: &event.Status{Stage: "read", Message: fmt.Sprint("step ", i)}}
			case 7:
				e = event.Event{Type: event.TypeData, Data: &event.Data{Name: "n", ID: fmt.Sprint(i), Value: json.RawMessage(`{"i":1}`)}}
			default:
				e = event.Event{Type: event.TypeTextDelta, Text: fmt.Sprintf("слово%d ", i)}
			}
			start := time.Now()
			sink.Emit(e)
			d := time.Since(start)
			smu.Lock()
			slowest = max(slowest, d)
			smu.Unlock()
			if i%25 == 0 {
				time.Sleep(time.Millisecond)
			}
		}
		return &mode.Result{Text: "done", FinishReason: "stop"}, nil
	}}
	svc, st := newService(t, m, nil, 0)
	flaky := &flakyStore{Store: st, delay: 40 * time.Millisecond, failures: 3, lateCommits: 2}
	useStore(svc, flaky)
	ctx := userCtx(t)

	live := &emitted{runs: map[string][]event.Event{}}
	var wg sync.WaitGroup
	ids := make([]string, runs)
	for i := range runs {
		p, err := svc.Prepare(ctx, Request{Mode: "scripted", Messages: []llm.Message{{Role: "user", Content: "q"}}, Persist: true})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = p.RunID
		wg.Go(func() {
			o := svc.Execute(ctx, p, event.SinkFunc(func(e event.Event) { live.add(p.RunID, e) }))
			if o.Err != nil {
				t.Error(o.Err)
			}
		})
	}
	wg.Wait()
	if slowest > 200*time.Millisecond {
		t.Errorf("an emit took %s: emitting waited for the store", slowest)
	}

	replay := NewService(Options{Store: st, Modes: svc.opt.Modes})
	defer func() { _ = replay.Close(ctx) }()
	for _, id := range ids {
		want := live.runs[id]
		if len(want) != events+3 {
			t.Fatalf("run %s emitted %d events", id, len(want))
		}
		var got []event.Event
		if err := replay.Follow(ctx, id, 0, func(e event.Event) error { got = append(got, e); return nil }); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("run %s: replay has %d events, the live stream had %d", id, len(got), len(want))
		}
		for i := range want {
			wb, _ := json.Marshal(want[i])
			gb, _ := json.Marshal(got[i])
			if string(wb) != string(gb) || got[i].Seq != int64(i+1) {
				t.Fatalf("run %s event %d:\nreplay %s\nlive   %s", id, i+1, gb, wb)
			}
		}
		r, _ := st.GetRun(ctx, testUser, id)
		if r.LastSeq != int64(events+3) || r.State != sova.RunCompleted {
			t.Errorf("run %s: %s at event %d", id, r.State, r.LastSeq)
		}
	}
	flaky.mu.Lock()
	defer flaky.mu.Unlock()
	if flaky.storedOutOfSeq || flaky.stored != runs*(events+3) {
		t.Errorf("the store took %d events (out of order: %v), want %d", flaky.stored, flaky.storedOutOfSeq, runs*(events+3))
	}
	// Group commit: far fewer writes than runs times batches, several runs
	// in most.
	if flaky.calls > runs*3 || flaky.multiRun == 0 {
		t.Errorf("%d writes, %d of them of several runs: no group commit", flaky.calls, flaky.multiRun)
	}
	t.Logf("%d runs × %d events in %d writes (%d of several runs); longest emit %s", runs, events+3, flaky.calls, flaky.multiRun, slowest)
}

// Text deltas merged into one row come back as the events emitted, also
// when a replay resumes inside the merged stretch.
func TestMergedDeltasReplayIdentical(t *testing.T) {
	base := time.Date(2026, 11, 24, 12, 0, 0, 123456789, time.FixedZone("MSK", 3*3600))
	var evs []pendingEvent
	texts := []string{"При", "вет", ", ", "", "мир 🌍", "!"}
	seq := int64(10)
	add := func(e event.Event) {
		seq++
		e.Seq, e.Time = seq, base.Add(time.Duration(seq)*time.Millisecond+7)
		b, _ := json.Marshal(e)
		evs = append(evs, pendingEvent{e: e, raw: b})
	}
	add(event.Event{Type: event.TypeStart, Start: &event.Start{RunID: "r"}})
	for _, tx := range texts {
		add(event.Event{Type: event.TypeTextDelta, Text: tx})
	}
	add(event.Event{Type: event.TypeStatus, Status: &event.Status{Stage: "x"}})
	add(event.Event{Type: event.TypeTextDelta, Text: "alone"})
	rows := encodeRows("r", evs)
	if len(rows) != 4 {
		t.Fatalf("%d rows, want start, the merged deltas, status, the lone delta", len(rows))
	}
	var got []event.Event
	for _, r := range rows {
		es, err := decodeStored(r)
		if err != nil {
			t.Fatal(err)
		}
		if es[len(es)-1].Seq != r.Seq {
			t.Errorf("row %d holds events up to %d", r.Seq, es[len(es)-1].Seq)
		}
		got = append(got, es...)
	}
	if len(got) != len(evs) {
		t.Fatalf("%d events back, want %d", len(got), len(evs))
	}
	for i := range evs {
		gb, _ := json.Marshal(got[i])
		if string(gb) != string(evs[i].raw) {
			t.Errorf("event %d:\n got %s\nwant %s", i, gb, evs[i].raw)
		}
	}
	// A corrupt merged row is an error, not a panic.
	bad := sova.RunEvent{Seq: 5, Event: json.RawMessage(`{"type":"text-delta","seq":4,"text":"ab","pieces":[5,1],"dt":[0,0]}`)}
	if _, err := decodeStored(bad); err == nil {
		t.Error("a merged row whose pieces overrun its text was accepted")
	}
}

// Following from the store resumes inside a merged row without repeating
// or skipping an event.
func TestFollowResumesInsideMergedRow(t *testing.T) {
	m := scripted{run: func(_ context.Context, _ mode.Input, sink event.Sink) (*mode.Result, error) {
		for i := range 20 {
			sink.Emit(event.Event{Type: event.TypeTextDelta, Text: fmt.Sprint(i, " ")})
		}
		return &mode.Result{Text: "done", FinishReason: "stop"}, nil
	}}
	svc, st := newService(t, m, nil, 0)
	ctx := userCtx(t)
	p, err := svc.Prepare(ctx, Request{Mode: "scripted", Messages: []llm.Message{{Role: "user", Content: "q"}}, Persist: true})
	if err != nil {
		t.Fatal(err)
	}
	svc.Execute(ctx, p, event.Discard)
	rows, _ := st.RunEvents(ctx, p.RunID, 0)
	if len(rows) >= 23 {
		t.Errorf("%d rows for 23 events: deltas were not merged", len(rows))
	}
	for after := int64(0); after <= 23; after++ {
		var seqs []int64
		if err := svc.Follow(ctx, p.RunID, after, func(e event.Event) error { seqs = append(seqs, e.Seq); return nil }); err != nil {
			t.Fatal(err)
		}
		if int64(len(seqs)) != 23-after || (len(seqs) > 0 && seqs[0] != after+1) {
			t.Fatalf("after %d: %v", after, seqs)
		}
	}
}

// A finished run's log compacted by the store (retention.go) still
// replays the whole answer, though its rows were already merged by the
// writer: compaction must not leave a merged row whose pieces no longer
// add up to its text.
func TestCompactedMergedRowsReplayTheWholeAnswer(t *testing.T) {
	m := scripted{run: func(_ context.Context, _ mode.Input, sink event.Sink) (*mode.Result, error) {
		for i := range 20 {
			sink.Emit(event.Event{Type: event.TypeTextDelta, Text: fmt.Sprint(i, " ")})
			if i == 9 {
				time.Sleep(300 * time.Millisecond) // the writer stores the first ten in a row of their own
			}
		}
		return &mode.Result{Text: "done", FinishReason: "stop"}, nil
	}}
	svc, st := newService(t, m, nil, 0)
	ctx := userCtx(t)
	p, err := svc.Prepare(ctx, Request{Mode: "scripted", Messages: []llm.Message{{Role: "user", Content: "q"}}, Persist: true})
	if err != nil {
		t.Fatal(err)
	}
	svc.Execute(ctx, p, event.Discard)
	var want strings.Builder
	for i := range 20 {
		fmt.Fprint(&want, i, " ")
	}
	replay := func() string {
		var b strings.Builder
		if err := svc.Follow(ctx, p.RunID, 0, func(e event.Event) error {
			if e.Type == event.TypeTextDelta {
				b.WriteString(e.Text)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	if got := replay(); got != want.String() {
		t.Fatalf("before compaction: %q", got)
	}
	type compactor interface {
		CompactRunEvents(ctx context.Context, before time.Time, limit int) (int, int64, error)
	}
	if _, _, err := st.(compactor).CompactRunEvents(ctx, time.Now().Add(time.Hour), 10); err != nil {
		t.Fatal(err)
	}
	rows, _ := st.RunEvents(ctx, p.RunID, 0)
	var deltaRows int
	for _, r := range rows {
		if strings.Contains(string(r.Event), `"text-delta"`) {
			deltaRows++
		}
	}
	if deltaRows != 1 {
		t.Errorf("%d rows of text deltas after compaction, want 1", deltaRows)
	}
	if got := replay(); got != want.String() {
		t.Errorf("after compaction the replay says %q, want %q", got, want.String())
	}
}
