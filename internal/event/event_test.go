package event_test

import (
	"reflect"
	"testing"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/event/eventtest"
)

func TestTee(t *testing.T) {
	run := []event.Event{
		{Type: event.TypeStart, Start: &event.Start{RunID: "r"}},
		{Type: event.TypeTextDelta, Text: "Hello"},
		{Type: event.TypeFinish, Finish: &event.Finish{Reason: event.FinishStop}},
	}
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
			recs := make([]*eventtest.Recorder, tt.sinks)
			var sinks []event.Sink
			for i := 0; i < tt.nils; i++ {
				sinks = append(sinks, nil)
			}
			for i := range recs {
				recs[i] = &eventtest.Recorder{}
				sinks = append(sinks, recs[i])
			}
			s := event.Tee(sinks...)
			for _, e := range run {
				s.Emit(e)
			}
			for i, r := range recs {
				if !reflect.DeepEqual(r.Events(), run) {
					t.Errorf("sink %d got %d events", i, len(r.Events()))
				}
			}
		})
	}
}
