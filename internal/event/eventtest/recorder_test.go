package eventtest

import (
	"strings"
	"sync"
	"testing"

	"github.com/sova-ai/sova/internal/event"
)

func evText(s string) event.Event { return event.Event{Type: event.TypeTextDelta, Text: s} }

func evPage(url, state string, chars int) event.Event {
	return event.Event{Type: event.TypePage, Page: &event.Page{URL: url, State: state, Chars: chars}}
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
				r.Emit(evPage("u", event.PageRead, i))
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
	if got := len(r.Filter(event.TypePage)); got != 800 {
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
