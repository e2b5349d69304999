package run

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/mode"
)

// handoffMode writes "part" and waits to be stopped; continued on another
// node, it answers "rest".
func handoffMode(started chan<- struct{}) durable {
	return durable{scripted{run: func(ctx context.Context, in mode.Input, sink event.Sink) (*mode.Result, error) {
		if in.Continued { // a continued mode streams its answer from its start
			sink.Emit(event.Event{Type: event.TypeTextDelta, Text: "part"})
			sink.Emit(event.Event{Type: event.TypeTextDelta, Text: " rest"})
			return &mode.Result{Text: "part rest", FinishReason: "stop"}, nil
		}
		sink.Emit(event.Event{Type: event.TypeTextDelta, Text: "part"})
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	}}}
}

// A follower of a durable run on a node that drains goes on reading it
// from the store while another node continues it, to its finish.
func TestFollowerOfHandedBackRunGoesOn(t *testing.T) {
	st := sharedStore(t)
	ctx, cancel := context.WithTimeout(userCtx(t), 30*time.Second)
	defer cancel()
	started := make(chan struct{})
	m := handoffMode(started)
	a := node(t, st, m, "node-a", 300*time.Millisecond, false)
	node(t, st, m, "node-b", 300*time.Millisecond, false)
	p, err := a.Prepare(ctx, Request{Mode: "scripted", Messages: []llm.Message{{Role: "user", Content: "q"}}, Persist: true})
	if err != nil {
		t.Fatal(err)
	}
	a.Start(p)
	var text strings.Builder
	var finished bool
	followed := make(chan error, 1)
	go func() {
		followed <- a.Follow(ctx, p.RunID, 0, func(e event.Event) error {
			switch e.Type {
			case event.TypeTextDelta:
				text.WriteString(e.Text)
			case event.TypeFinish:
				finished = true
			}
			return nil
		})
	}()
	<-started
	if err := a.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-followed; err != nil {
		t.Fatalf("follow: %v", err)
	}
	if !finished || text.String() != "part rest" {
		t.Errorf("the follower got %q, finished %v; want the whole answer from the node that continued it", text.String(), finished)
	}
}

// A client waiting for the whole answer of a run its node hands back gets
// the answer another node finishes; with no node to continue it, it is
// told where the run went.
func TestAwaitAnswerOfHandedBackRun(t *testing.T) {
	for _, withOther := range []bool{true, false} {
		name := "continued elsewhere"
		if !withOther {
			name = "nobody continues it"
		}
		t.Run(name, func(t *testing.T) {
			st := sharedStore(t)
			ctx, cancel := context.WithTimeout(userCtx(t), 30*time.Second)
			defer cancel()
			started := make(chan struct{})
			m := handoffMode(started)
			a := node(t, st, m, "node-a", 300*time.Millisecond, false)
			if withOther {
				node(t, st, m, "node-b", 300*time.Millisecond, false)
			}
			p, err := a.Prepare(ctx, Request{Mode: "scripted", Messages: []llm.Message{{Role: "user", Content: "q"}}})
			if err != nil {
				t.Fatal(err)
			}
			outc := make(chan *Outcome, 1)
			go func() { outc <- a.Execute(ctx, p, event.Discard) }()
			<-started
			if err := a.Drain(ctx); err != nil {
				t.Fatal(err)
			}
			o := <-outc
			if o.State != sova.RunRunning {
				t.Fatalf("outcome %s %v, want handed back", o.State, o.Err)
			}
			if !withOther {
				// The wait is bounded by HandOffFollow; a shorter context
				// stands in for it here.
				actx, cancel := context.WithTimeout(ctx, time.Second)
				defer cancel()
				_, err := a.AwaitAnswer(actx, p.RunID, p.StartSeq())
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("await with nobody to continue: %v", err)
				}
				return
			}
			ans, err := a.AwaitAnswer(ctx, p.RunID, p.StartSeq())
			if err != nil {
				t.Fatal(err)
			}
			if ans.Text != "part rest" || ans.FinishReason != "stop" || ans.Err != nil {
				t.Errorf("answer %+v", ans)
			}
		})
	}
}
