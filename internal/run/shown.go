package run

import (
	"strings"
	"sync"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/event"
)

// A run continued after its node stopped executes its mode again, and the
// mode streams its answer from its start: what it kept (deep_research's
// report, extreme's answer, sgr_agent's result) as it was, or, when the
// node stopped while the model wrote it, the model's new answer. The
// client has the text the log holds already. shownText filters the
// continued run's text against it.

// TextRestartData names the data part (event.Data) a continued run sends
// when the answer it streams is not the one the client has text of: the
// client drops the text it has of this message, and the text that
// follows is the answer from its start.
const TextRestartData = "text_restart"

// shownText is the text the stored events show of the run's current
// message: the text deltas after its last start (a run that paused for
// the person starts again when they answer), or after the last
// TextRestartData.
func shownText(stored []sova.RunEvent) string {
	var b strings.Builder
	for _, re := range stored {
		evs, err := decodeStored(re)
		if err != nil {
			continue
		}
		for _, e := range evs {
			switch {
			case e.Type == event.TypeStart, e.Type == event.TypeData && e.Data != nil && e.Data.Name == TextRestartData:
				b.Reset()
			case e.Type == event.TypeTextDelta:
				b.WriteString(e.Text)
			}
		}
	}
	return b.String()
}

// textFilter is the sink of a continued run's mode. While the text the
// mode streams repeats what the client was shown, it is left out; what
// goes beyond it is passed on. Text that departs from it is sent whole
// after a TextRestartData part. Other events pass as they come.
type textFilter struct {
	next  event.Sink
	shown string
	runID string

	mu      sync.Mutex
	text    strings.Builder // this execution's text
	through bool            // past the text shown, or departed from it
}

func (f *textFilter) Emit(e event.Event) {
	if e.Type != event.TypeTextDelta {
		f.next.Emit(e)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.through {
		f.next.Emit(e)
		return
	}
	f.text.WriteString(e.Text)
	text := f.text.String()
	switch {
	case strings.HasPrefix(f.shown, text):
		// Shown already.
	case strings.HasPrefix(text, f.shown):
		f.through = true
		e.Text = text[len(f.shown):]
		f.next.Emit(e)
	default:
		f.restart(e.Time, text)
	}
}

// end is called when the mode has answered: text that stopped short of
// what was shown is not the text shown either.
func (f *textFilter) end() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if text := f.text.String(); !f.through && text != "" && text != f.shown {
		f.restart(time.Time{}, text)
	}
}

// restart tells the client to drop the text it has and sends text in its
// place; f.mu held.
func (f *textFilter) restart(t time.Time, text string) {
	f.through = true
	f.next.Emit(event.Event{Type: event.TypeData, Time: t, Data: dataOf(TextRestartData, "text-restart-"+f.runID,
		map[string]any{"reason": "the run was continued on another node and its answer was written again"})})
	f.next.Emit(event.Event{Type: event.TypeTextDelta, Time: t, Text: text})
}
