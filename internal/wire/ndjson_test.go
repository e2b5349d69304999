package wire

import (
	"bufio"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/sova-ai/sova/internal/event"
)

func TestNDJSON(t *testing.T) {
	tests := []struct {
		name   string
		events []event.Event
	}{
		{"search run", sampleRun()},
		{"error run", errorRun()},
		{"mode data", []event.Event{{Type: event.TypeData, Time: t0(), Data: &event.Data{Name: "plan", ID: "p", Value: json.RawMessage(`{"a":[1,2]}`), Transient: true}}}},
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
			var got []event.Event
			for sc.Scan() {
				var e event.Event
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
