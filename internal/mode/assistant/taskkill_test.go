package assistant

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/event/eventtest"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
	"github.com/sova-ai/sova/internal/mode"
)

// A task whose subtask waited for the person's approval, approved, whose
// node then stopped before the subtask's agent took its next step, goes
// on from that step when its run is executed again (with the same
// decision): the approved action is not made again, and the person is
// not asked about it again.
func TestApprovedTaskStoppedGoesOnFromTheAction(t *testing.T) {
	e := newEnv(t)
	tm := e.mode.TaskMode()
	task := "Назначь встречу по проекту Восток"
	msgs := TaskMessages(TaskRequest{Task: task}) // names no acts: the event is held
	ws := &memWorkspace{}
	in := mode.Input{RunID: "r1", UserID: user, Question: msgs[len(msgs)-1].Content, History: msgs[:len(msgs)-1], Workspace: ws, Now: time.Now()}
	e.model.Enqueue(
		llmtest.Text(`{"subtasks":[{"title":"Встреча","instructions":"create_event Восток"},{"title":"Итог","instructions":"подведи итог"}]}`),
		llmtest.Calls(tc("t1", "office__create_event", `{"title":"Восток","start":"2026-11-25T10:00:00+03:00"}`)),
	)
	var rec eventtest.Recorder
	res, err := tm.Run(asUser(t.Context()), in, &rec)
	if err != nil || res.Pause == nil || len(res.Pause.Actions) != 1 {
		t.Fatalf("the held task: %+v, %v", res, err)
	}
	if n := len(e.office.Events()); n != 0 {
		t.Fatalf("%d office events before the approval", n)
	}

	// Approved: the event is made, and the node stops as the subtask's
	// agent asks for its next step.
	in.Resume = &mode.Resume{State: res.Pause.State, Approve: res.Pause.Actions}
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	e.model.Handle(func(r *llmtest.Request) llmtest.Reply {
		stop()
		return llmtest.Fail(503, "stopping")
	})
	if _, err := tm.Run(asUser(ctx), in, &rec); err == nil {
		t.Fatal("the stopped run ended without an error")
	}
	if n := len(e.office.Events()); n != 1 {
		t.Fatalf("%d office events after the approval, want 1", n)
	}

	// Executed again, with the same decision.
	e.model.Handle(nil)
	before := e.model.Count()
	e.model.Enqueue(llmtest.Text("Встреча создана."), llmtest.Text("Итог: встреча создана."), llmtest.Text("# Отчёт\nВстреча создана."))
	in.Continued = true
	res, err = tm.Run(asUser(t.Context()), in, &rec)
	if err != nil {
		t.Fatal(err)
	}
	if res.Pause != nil {
		t.Fatalf("the continued task asked again: %q", res.Text)
	}
	if n := len(e.office.Events()); n != 1 {
		t.Errorf("%d office events, want 1: the approved action was made again", n)
	}
	reqs := e.model.Requests()[before:]
	if len(reqs) == 0 {
		t.Fatal("no model call")
	}
	first := reqs[0].Messages
	if last := first[len(first)-1]; last.Role != llm.RoleTool || !strings.Contains(last.Content, "approved") {
		t.Errorf("the subtask did not go on after its approved action: %+v", last)
	}
}
