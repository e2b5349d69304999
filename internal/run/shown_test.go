package run

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/event/eventtest"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/mode"
)

// clientText is the answer a client holds after the events, as Sova's
// web UI folds them: text deltas appended, a TextRestartData part
// dropping the text so far.
func clientText(evs []event.Event) string {
	var b strings.Builder
	for _, e := range evs {
		switch {
		case e.Type == event.TypeTextDelta:
			b.WriteString(e.Text)
		case e.Type == event.TypeData && e.Data.Name == TextRestartData:
			b.Reset()
		}
	}
	return b.String()
}

// A continued run's text is filtered against the text the client was
// shown: the client ends with the continued run's answer exactly, and is
// sent again only what it did not have, or, when the answer is another,
// told to drop its text first.
func TestTextFilter(t *testing.T) {
	tests := []struct {
		name    string
		shown   string
		deltas  []string
		restart bool
		sent    string // the text sent, in all
	}{
		{"the same answer, cut differently", "Hello wor", []string{"Hel", "lo world", "!"}, false, "ld!"},
		{"the same answer in one piece", "Hello wor", []string{"Hello world!"}, false, "ld!"},
		{"the whole answer was shown", "Hello world", []string{"Hello", " world"}, false, ""},
		{"another answer", "Hello", []string{"Hel", "p me", " now"}, true, "Help me now"},
		{"another answer at once", "Hello", []string{"Bye"}, true, "Bye"},
		{"a shorter answer", "Hello world", []string{"Hello"}, true, "Hello"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rec eventtest.Recorder
			f := &textFilter{next: &rec, shown: tt.shown, runID: "r1"}
			f.Emit(event.Event{Type: event.TypeStatus, Status: &event.Status{Stage: "answer"}})
			for _, d := range tt.deltas {
				f.Emit(event.Event{Type: event.TypeTextDelta, Text: d})
			}
			f.end()
			evs := rec.Events()
			if evs[0].Type != event.TypeStatus {
				t.Errorf("the status was not passed on first: %+v", evs[0])
			}
			restarts, sent := 0, ""
			for _, e := range evs {
				if e.Type == event.TypeData && e.Data.Name == TextRestartData {
					restarts++
				}
				sent += e.Text
			}
			if (restarts == 1) != tt.restart || restarts > 1 || sent != tt.sent {
				t.Errorf("%d restarts, sent %q; want restart %v, %q", restarts, sent, tt.restart, tt.sent)
			}
			client := append([]event.Event{{Type: event.TypeTextDelta, Text: tt.shown}}, evs...)
			if got, want := clientText(client), strings.Join(tt.deltas, ""); got != want {
				t.Errorf("the client holds %q, want %q", got, want)
			}
		})
	}
}

func TestShownText(t *testing.T) {
	var stored []sova.RunEvent
	for i, e := range []event.Event{
		{Type: event.TypeStart, Start: &event.Start{RunID: "r"}},
		{Type: event.TypeTextDelta, Text: "questions?"},
		{Type: event.TypeFinish, Finish: &event.Finish{}},
		{Type: event.TypeStart, Start: &event.Start{RunID: "r"}}, // the person answered
		{Type: event.TypeTextDelta, Text: "first "},
		{Type: event.TypeData, Data: dataOf(TextRestartData, "x", map[string]any{})},
		{Type: event.TypeTextDelta, Text: "second "},
		{Type: event.TypeStatus, Status: &event.Status{Stage: "continue"}},
		{Type: event.TypeTextDelta, Text: "answer"},
	} {
		e.Seq = int64(i + 1)
		b, _ := json.Marshal(e)
		stored = append(stored, sova.RunEvent{Seq: e.Seq, Event: b})
	}
	if got := shownText(stored); got != "second answer" {
		t.Errorf("shown %q", got)
	}
}

// A run taken over while its answer streamed: the client that follows
// its log from the start ends with the answer once, whether the
// continued run streams the same answer again or writes another, and the
// stored message is that answer.
func TestTakeOverShowsTheAnswerOnce(t *testing.T) {
	for _, tt := range []struct{ name, answer, streamed string }{
		{"the same answer", "The answer, whole.", "The answer, whole."},
		{"another answer", "Another answer.", "The ansAnother answer."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := sharedStore(t)
			ctx := userCtx(t)
			m := durable{scripted{run: func(ctx context.Context, in mode.Input, sink event.Sink) (*mode.Result, error) {
				if !in.Continued {
					sink.Emit(event.Event{Type: event.TypeTextDelta, Text: "The ans"})
					<-ctx.Done()
					return nil, ctx.Err()
				}
				for _, w := range strings.SplitAfter(tt.answer, " ") {
					sink.Emit(event.Event{Type: event.TypeTextDelta, Text: w})
				}
				return &mode.Result{Text: tt.answer, FinishReason: "stop"}, nil
			}}}
			a := node(t, st, m, "node-a", time.Hour, true)
			p, err := a.Prepare(ctx, Request{Mode: "scripted", Messages: []llm.Message{{Role: "user", Content: "q"}}, Persist: true})
			if err != nil {
				t.Fatal(err)
			}
			a.Start(p)
			if err := a.Follow(ctx, p.RunID, 0, func(e event.Event) error {
				if e.Type == event.TypeTextDelta {
					return errStop
				}
				return nil
			}); err != errStop {
				t.Fatal(err)
			}
			if err := a.Close(ctx); err != nil {
				t.Fatal(err)
			}
			b := node(t, st, m, "node-a", time.Hour, true) // the one node, restarted
			if n, err := b.Recover(ctx); err != nil || n != 1 {
				t.Fatalf("recover: %d %v", n, err)
			}
			waitRunState(t, st, p.RunID, sova.RunCompleted)
			var evs []event.Event
			if err := b.Follow(ctx, p.RunID, 0, func(e event.Event) error { evs = append(evs, e); return nil }); err != nil {
				t.Fatal(err)
			}
			if got := clientText(evs); got != tt.answer {
				t.Errorf("the client holds %q, want %q", got, tt.answer)
			}
			text := ""
			for _, e := range evs {
				text += e.Text
			}
			if text != tt.streamed {
				t.Errorf("the text streamed: %q, want %q", text, tt.streamed)
			}
			msgs, err := st.ListMessages(ctx, testUser, p.ChatID)
			if err != nil || len(msgs) != 2 || msgs[1].Content != tt.answer {
				t.Fatalf("stored messages %+v %v", msgs, err)
			}
		})
	}
}
