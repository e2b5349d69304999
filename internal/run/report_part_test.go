package run

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/event/eventtest"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/mode"
)

// A run that ends with a report sends the report part live, just before
// its finish, with the links the stored message keeps.
func TestReportPartIsStreamed(t *testing.T) {
	svc, _ := newService(t, pausing(), nil, 0)
	ctx := userCtx(t)
	var last eventtest.Recorder
	for _, q := range []string{"Economy of the USA", "The 1930s"} {
		p, err := svc.Prepare(ctx, Request{ChatID: "c1", Mode: "scripted", Messages: []llm.Message{{Role: "user", Content: q}}, Persist: true})
		if err != nil {
			t.Fatal(err)
		}
		last = eventtest.Recorder{}
		svc.Execute(ctx, p, &last)
	}
	evs := last.Events()
	if len(evs) < 2 || evs[len(evs)-1].Type != event.TypeFinish {
		t.Fatalf("events: %+v", evs)
	}
	rep := evs[len(evs)-2]
	if rep.Type != event.TypeData || rep.Data == nil || rep.Data.Name != "report" {
		t.Fatalf("the event before finish is %+v, want the report part", rep)
	}
	var v struct{ RunID, PdfURL, MarkdownURL string }
	if err := json.Unmarshal(rep.Data.Value, &v); err != nil || v.RunID == "" ||
		v.PdfURL != "/api/runs/"+v.RunID+"/report.pdf" || v.MarkdownURL != "/api/runs/"+v.RunID+"/report.md" {
		t.Errorf("report part %s (%v)", rep.Data.Value, err)
	}
	// The first part paused without a report: no report part there.
	for _, e := range evs[:len(evs)-2] {
		if e.Type == event.TypeData && e.Data != nil && e.Data.Name == "report" {
			t.Error("report part sent twice")
		}
	}
}

// A chat whose first run pauses for answers gets its title then.
func TestPausedRunTitlesTheChat(t *testing.T) {
	svc, st := newService(t, pausing(), titler{title: "Economy of the USA"}, 0)
	ctx := userCtx(t)
	p, err := svc.Prepare(ctx, Request{Mode: "scripted", Messages: []llm.Message{{Role: "user", Content: "Economy of the USA"}}, Persist: true})
	if err != nil {
		t.Fatal(err)
	}
	svc.Execute(ctx, p, event.Discard)
	_ = svc.Close(ctx) // waits for the title
	if chat, _ := st.GetChat(ctx, testUser, p.ChatID); chat.Title != "Economy of the USA" {
		t.Errorf("title after a paused run = %q", chat.Title)
	}
}

type followUpper struct {
	qs  []string
	err error
}

func (f followUpper) FollowUps(context.Context, string, string) ([]string, error) { return f.qs, f.err }

// Suggestions under an answer stream before the finish and are kept in the
// stored message; a failure leaves none and the run completes.
func TestFollowUps(t *testing.T) {
	for _, tt := range []struct {
		name string
		f    followUpper
		want bool
	}{
		{"suggested", followUpper{qs: []string{"What next?", "And then?"}}, true},
		{"failed", followUpper{err: errors.New("model down")}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			svc, st := newService(t, answer("The answer."), nil, 0)
			svc.opt.FollowUps = tt.f
			ctx := userCtx(t)
			p, err := svc.Prepare(ctx, Request{Mode: "scripted", Messages: []llm.Message{{Role: "user", Content: "Q"}}, Persist: true})
			if err != nil {
				t.Fatal(err)
			}
			var rec eventtest.Recorder
			if o := svc.Execute(ctx, p, &rec); o.Err != nil {
				t.Fatal(o.Err)
			}
			evs := rec.Events()
			got := len(evs) >= 2 && evs[len(evs)-2].Type == event.TypeData && evs[len(evs)-2].Data.Name == "followups"
			if got != tt.want {
				t.Fatalf("follow-ups part before finish: %v, want %v (%+v)", got, tt.want, evs)
			}
			msgs, _ := st.ListMessages(ctx, testUser, p.ChatID)
			stored := strings.Contains(string(msgs[1].Parts), `{"data":{"questions":["What next?","And then?"]},"type":"data-followups"}`)
			if stored != tt.want {
				t.Errorf("stored parts %s", msgs[1].Parts)
			}
		})
	}
}

func TestParseFollowUps(t *testing.T) {
	got := parseFollowUps("1. What did Hoover say?\n\n- «How did banks reopen?»\n2) what did hoover say?\n* Why 1937?\nA fourth one?")
	want := []string{"What did Hoover say?", "How did banks reopen?", "Why 1937?"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("parseFollowUps = %q, want %q", got, want)
	}
}

// slowFollowUpper takes its time, like a model call, and notes what of
// the answer it was given.
type slowFollowUpper struct {
	delay time.Duration
	got   chan string
}

func (f slowFollowUpper) FollowUps(ctx context.Context, _, answer string) ([]string, error) {
	f.got <- answer
	select {
	case <-time.After(f.delay):
		return []string{"What next?"}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// The suggestions are asked for while a long answer still streams, so the
// finish follows the answer's last token without a model call between.
func TestFollowUpsDoNotHoldTheFinish(t *testing.T) {
	const pieces, gap, delay = 10, 60 * time.Millisecond, 500 * time.Millisecond
	piece := strings.Repeat("The economy recovered slowly. ", 4) // 120 bytes
	var lastToken time.Time
	m := scripted{run: func(ctx context.Context, in mode.Input, sink event.Sink) (*mode.Result, error) {
		var b strings.Builder
		for range pieces {
			time.Sleep(gap)
			sink.Emit(event.Event{Type: event.TypeTextDelta, Text: piece})
			b.WriteString(piece)
		}
		lastToken = time.Now()
		return &mode.Result{Text: b.String(), FinishReason: "stop", Model: "m"}, nil
	}}
	svc, _ := newService(t, m, nil, 0)
	f := slowFollowUpper{delay: delay, got: make(chan string, 2)}
	svc.opt.FollowUps = f
	ctx := userCtx(t)
	p, err := svc.Prepare(ctx, Request{Mode: "scripted", Messages: []llm.Message{{Role: "user", Content: "Q"}}, Persist: true})
	if err != nil {
		t.Fatal(err)
	}
	var finished time.Time
	var rec eventtest.Recorder
	sink := event.SinkFunc(func(e event.Event) {
		if e.Type == event.TypeFinish {
			finished = time.Now()
		}
		rec.Emit(e)
	})
	if o := svc.Execute(ctx, p, sink); o.Err != nil {
		t.Fatal(o.Err)
	}
	if wait := finished.Sub(lastToken); wait > delay/2 {
		t.Errorf("the finish came %s after the answer's last token: the suggestions were asked for after it", wait)
	}
	if got := <-f.got; len(got) < followUpStart || len(got) >= pieces*len(piece) {
		t.Errorf("suggestions asked for with %d bytes of the answer, want the first %d or more, before its end", len(got), followUpStart)
	}
	var had bool
	for _, e := range rec.Events() {
		had = had || (e.Type == event.TypeData && e.Data.Name == "followups")
	}
	if !had {
		t.Error("no follow-ups part in the stream")
	}
}
