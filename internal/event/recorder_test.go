package event

import (
	"bufio"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
)

func TestNDJSON(t *testing.T) {
	tests := []struct {
		name   string
		events []Event
	}{
		{"search run", sampleRun()},
		{"error run", errorRun()},
		{"mode data", []Event{{Type: TypeData, Time: t0(), Data: &Data{Name: "plan", ID: "p", Value: json.RawMessage(`{"a":[1,2]}`), Transient: true}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			flushes := 0
			n := NewNDJSON(&b, func() { flushes++ })
			for _, e := range tt.events {
				if err := n.Emit(e); err != nil {
					t.Fatal(err)
				}
			}
			if err := n.Close(); err != nil {
				t.Fatal(err)
			}
			if flushes != len(tt.events) {
				t.Errorf("%d flushes for %d events", flushes, len(tt.events))
			}
			sc := bufio.NewScanner(strings.NewReader(b.String()))
			var got []Event
			for sc.Scan() {
				var e Event
				if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
					t.Fatalf("line %q: %v", sc.Text(), err)
				}
				got = append(got, e)
			}
			if !reflect.DeepEqual(got, tt.events) {
				t.Errorf("round trip differs:\n got %+v\nwant %+v", got, tt.events)
			}
		})
	}

	t.Run("text stays readable", func(t *testing.T) {
		var b strings.Builder
		if err := NewNDJSON(&b, nil).Emit(evText("<T any> & Ясно")); err != nil {
			t.Fatal(err)
		}
		want := `{"type":"text-delta","time":"2025-03-01T12:00:00Z","text":"<T any> & Ясно"}` + "\n"
		if b.String() != want {
			t.Errorf("got %q, want %q", b.String(), want)
		}
	})
	t.Run("closed", func(t *testing.T) {
		n := NewNDJSON(&strings.Builder{}, nil)
		_ = n.Close()
		if err := n.Emit(evText("x")); !errors.Is(err, ErrClosed) {
			t.Errorf("Emit after Close = %v", err)
		}
	})
}

func TestRecorderConcurrent(t *testing.T) {
	var r Recorder
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				r.Emit(evText("x"))
				r.Emit(evPage("u", PageRead, i, ""))
				_ = r.Events()
			}
		}()
	}
	wg.Wait()
	if got := len(r.Events()); got != 1600 {
		t.Errorf("%d events, want 1600", got)
	}
	if got := r.Text(); got != strings.Repeat("x", 800) {
		t.Errorf("text %d bytes", len(got))
	}
	if got := len(r.Filter(TypePage)); got != 800 {
		t.Errorf("%d page events", got)
	}
}

func TestRecorderEventsIsACopy(t *testing.T) {
	var r Recorder
	r.Emit(evText("a"))
	ev := r.Events()
	ev[0].Text = "changed"
	if r.Text() != "a" {
		t.Error("Events exposed the recorder's slice")
	}
}

func TestTee(t *testing.T) {
	tests := []struct {
		name  string
		sinks int
		nils  int
	}{
		{"none", 0, 0},
		{"only nils", 0, 2},
		{"one", 1, 1},
		{"three", 3, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs := make([]*Recorder, tt.sinks)
			var sinks []Sink
			for i := 0; i < tt.nils; i++ {
				sinks = append(sinks, nil)
			}
			for i := range recs {
				recs[i] = &Recorder{}
				sinks = append(sinks, recs[i])
			}
			s := Tee(sinks...)
			for _, e := range sampleRun() {
				s.Emit(e)
			}
			for i, r := range recs {
				if !reflect.DeepEqual(r.Events(), sampleRun()) {
					t.Errorf("sink %d got %d events", i, len(r.Events()))
				}
			}
		})
	}
}

// brokenEncoder fails writes after `after` events.
type brokenEncoder struct {
	mu    sync.Mutex
	after int
	emits int
}

func (b *brokenEncoder) Emit(e Event) error {
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
		events     []Event
		wantEmits  int
		wantErrors int
	}{
		{"healthy", 100, []Event{evText("a"), evText("b")}, 2, 0},
		{"invalid events are skipped", 100, []Event{{Type: "bogus"}, evText("a"), {Type: "bogus"}}, 3, 2},
		{"write error stops the sink, reported once", 1, []Event{evText("a"), evText("b"), evText("c"), evText("d")}, 2, 1},
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
