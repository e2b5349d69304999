package assistant

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/event/eventtest"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
	"github.com/sova-ai/sova/internal/mode"
)

// memWorkspace is a run's workspace in memory.
type memWorkspace struct {
	mu    sync.Mutex
	files map[string]string
}

func (w *memWorkspace) Write(_ context.Context, p, c string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.files == nil {
		w.files = map[string]string{}
	}
	w.files[p] = c
	return nil
}

func (w *memWorkspace) Append(ctx context.Context, p, c string) error {
	old, _ := w.Read(ctx, p)
	return w.Write(ctx, p, old+c)
}

func (w *memWorkspace) Read(_ context.Context, p string) (string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if c, ok := w.files[p]; ok {
		return c, nil
	}
	return "", mode.ErrNoFile
}

func (w *memWorkspace) List(context.Context) ([]string, error) { return nil, nil }

// memRuns holds the logs of earlier runs, as the run service stores them.
type memRuns struct {
	restarts map[string]string // run id → the run that restarts it
	logs     map[string][]sova.RunEvent
}

func (r *memRuns) RestartOf(_ context.Context, _, id string) (*sova.Run, error) {
	if next, ok := r.restarts[id]; ok {
		return &sova.Run{ID: next}, nil
	}
	return nil, sova.ErrNotFound
}

func (r *memRuns) RunEvents(_ context.Context, id string, _ int64) ([]sova.RunEvent, error) {
	return r.logs[id], nil
}

func storedLog(t *testing.T, rec *eventtest.Recorder) []sova.RunEvent {
	t.Helper()
	var out []sova.RunEvent
	for i, e := range rec.Events() {
		e.Seq = int64(i + 1)
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, sova.RunEvent{Seq: e.Seq, Event: b})
	}
	return out
}

// A complex task interrupted after its first subtask goes on, when its run
// is restarted, from the second: the task is not decomposed again and the
// finished subtask's work (its model calls and MCP actions) is not redone.
func TestTaskModeResumesAfterRestart(t *testing.T) {
	e := newEnv(t)
	runs := &memRuns{restarts: map[string]string{"r1": "r2"}, logs: map[string][]sova.RunEvent{}}
	e.mode.d.Runs = runs
	tm := e.mode.TaskMode()
	task := "Пригласи участников проекта Восток на встречу во вторник"
	msgs := TaskMessages(TaskRequest{Task: task, Context: "Участников ищи в почте", Actions: []Act{{Tool: "office__create_event"}}})

	// Run 1: decomposed, subtask 1 creates an event, then the server stops
	// while subtask 2 asks the model.
	ctx1, stop := context.WithCancel(asUser(t.Context()))
	defer stop()
	e.model.Enqueue(
		llmtest.Text(`{"subtasks":[{"title":"Создать встречу","instructions":"create_event Восток"},{"title":"Найти участников","instructions":"list_emails"},{"title":"Итог","instructions":"подведи итог"}]}`),
		llmtest.Calls(tc("t1", "office__create_event", `{"title":"Восток","start":"2026-11-25T10:00:00+03:00"}`)), llmtest.Text("Встреча создана."),
	)
	e.model.Handle(func(r *llmtest.Request) llmtest.Reply {
		stop() // the restart: the run's context ends while subtask 2 waits
		return llmtest.Fail(503, "stopping")
	})
	ws1 := &memWorkspace{}
	var rec1 eventtest.Recorder
	in1 := mode.Input{RunID: "r1", UserID: user, Question: msgs[len(msgs)-1].Content, History: msgs[:len(msgs)-1], Workspace: ws1, Now: time.Now()}
	if _, err := tm.Run(ctx1, in1, &rec1); err == nil {
		t.Fatal("the interrupted run ended without an error")
	}
	if n := len(e.office.Events()); n != 1 {
		t.Fatalf("office events after run 1: %d", n)
	}
	var cp taskCheckpoint
	if raw, err := ws1.Read(t.Context(), checkpointFile); err != nil || json.Unmarshal([]byte(raw), &cp) != nil || cp.Subtasks[0].Status != "done" {
		t.Fatalf("checkpoint in the workspace: %q %v", raw, err)
	}
	runs.logs["r1"] = storedLog(t, &rec1)

	// Run 2 restarts run 1 (a fresh workspace: the interrupted run's was not kept).
	before := e.model.Count()
	e.model.Handle(nil)
	e.model.Enqueue(
		llmtest.Calls(tc("t2", "office__list_emails", `{"from":"anna"}`)), llmtest.Text("Участник: anna@example.com."),
		llmtest.Text("Итог: встреча создана, участник найден."),
		llmtest.Text("# Отчёт\nВстреча создана, участник найден."),
	)
	ws2 := &memWorkspace{}
	var rec2 eventtest.Recorder
	in2 := in1
	in2.RunID, in2.OriginRunID, in2.Workspace = "r2", "r1", ws2
	res, err := tm.Run(asUser(t.Context()), in2, &rec2)
	if err != nil {
		t.Fatal(err)
	}
	if e.model.Pending() != 0 {
		t.Fatalf("%d scripted replies unused", e.model.Pending())
	}
	for _, r := range e.model.Requests()[before:] {
		if r.Format() != "" || strings.Contains(r.LastUser(), "Your subtask 1:") {
			t.Errorf("run 2 redid work of run 1: %q", clip(r.LastUser(), 200))
		}
	}
	if n := len(e.office.Events()); n != 1 {
		t.Errorf("the event was created %d times", n)
	}
	var out TaskResult
	if err := json.Unmarshal(res.Steps, &out); err != nil || !out.Success || len(out.Subtasks) != 3 || !strings.Contains(res.Report, "Отчёт") {
		t.Fatalf("result %s, report %q", res.Steps, res.Report)
	}
	if out.Subtasks[0].Result != "Встреча создана." {
		t.Errorf("subtask 1 kept %q", out.Subtasks[0].Result)
	}
	if raw, err := ws2.Read(t.Context(), "task/result.json"); err != nil || !strings.Contains(raw, `"success":true`) {
		t.Errorf("task/result.json = %q, %v", raw, err)
	}
	// The context reaches the subtasks.
	if !strings.Contains(e.model.Requests()[before].LastUser(), "Участников ищи в почте") {
		t.Errorf("context missing from the subtask prompt")
	}
}

func TestTaskMessages(t *testing.T) {
	got := TaskMessages(TaskRequest{Task: "t", Context: " c "})
	if len(got) != 2 || got[0].Role != llm.RoleSystem || got[0].Content != "c" || got[1].Role != llm.RoleUser || got[1].Content != "t" {
		t.Fatalf("%+v", got)
	}
	if got := TaskMessages(TaskRequest{Task: "t"}); len(got) != 1 {
		t.Fatalf("%+v", got)
	}
}

// A complex task whose node stopped in the middle of a subtask is
// continued (mode.Input.Continued, the same run and workspace) where the
// subtask's agent stopped: the task is not decomposed again, no finished
// subtask is redone, the subtask under way does not repeat the MCP action
// it took nor the model calls before it, and its progress shows as one
// part. Continued once more after the report, it answers with that
// report and asks the model nothing.
func TestTaskModeContinuesAfterItsNodeStopped(t *testing.T) {
	e := newEnv(t)
	tm := e.mode.TaskMode()
	if !tm.Durable() {
		t.Fatal("assistant_task is not durable")
	}
	task := "Назначь две встречи по проекту Восток"
	msgs := TaskMessages(TaskRequest{Task: task, Actions: []Act{{Tool: "office__create_event"}}})
	ctx1, stop := context.WithCancel(t.Context())
	defer stop()
	e.model.Enqueue(
		llmtest.Text(`{"subtasks":[{"title":"Первая встреча","instructions":"create_event Восток-1"},{"title":"Вторая встреча","instructions":"create_event Восток-2"},{"title":"Итог","instructions":"подведи итог"}]}`),
		llmtest.Calls(tc("t1", "office__create_event", `{"title":"Восток-1","start":"2026-11-25T10:00:00+03:00"}`)), llmtest.Text("Первая создана."),
		llmtest.Calls(tc("t2", "office__create_event", `{"title":"Восток-2","start":"2026-11-26T10:00:00+03:00"}`)),
	)
	e.model.Handle(func(r *llmtest.Request) llmtest.Reply {
		stop() // the node stops while subtask 2 asks for its next step
		return llmtest.Fail(503, "stopping")
	})
	ws := &memWorkspace{}
	in := mode.Input{RunID: "r1", UserID: user, Question: msgs[len(msgs)-1].Content, History: msgs[:len(msgs)-1], Workspace: ws, Now: time.Now()}
	var rec1 eventtest.Recorder
	if _, err := tm.Run(asUser(ctx1), in, &rec1); err == nil {
		t.Fatal("the stopped run ended without an error")
	}
	if n := len(e.office.Events()); n != 2 {
		t.Fatalf("office events after the first part: %d", n)
	}

	before := e.model.Count()
	e.model.Handle(nil)
	e.model.Enqueue(
		llmtest.Text("Вторая создана."),
		llmtest.Text("Итог: обе встречи созданы."),
		llmtest.Text("# Отчёт\nОбе встречи созданы."),
	)
	in.Continued = true
	var rec2 eventtest.Recorder
	res, err := tm.Run(asUser(t.Context()), in, &rec2)
	if err != nil {
		t.Fatal(err)
	}
	if e.model.Pending() != 0 {
		t.Fatalf("%d scripted replies unused", e.model.Pending())
	}
	reqs := e.model.Requests()[before:]
	for _, r := range reqs {
		if r.Format() != "" || strings.Contains(r.LastUser(), "Your subtask 1:") {
			t.Errorf("the continued run redid work: %q", clip(r.LastUser(), 200))
		}
	}
	if first := reqs[0]; !strings.Contains(first.LastUser(), "Your subtask 2:") || first.Messages[len(first.Messages)-1].Role != llm.RoleTool {
		t.Errorf("subtask 2 did not go on after its action: %+v", first.Messages)
	}
	if n := len(e.office.Events()); n != 2 {
		t.Errorf("%d office events, want 2: an action was repeated", n)
	}
	var out TaskResult
	if err := json.Unmarshal(res.Steps, &out); err != nil || !out.Success || len(out.Subtasks) != 3 || out.Subtasks[1].Result != "Вторая создана." {
		t.Fatalf("result %s", res.Steps)
	}
	ids := map[string]bool{}
	for _, ev := range append(rec1.Events(), rec2.Events()...) {
		if ev.Type == event.TypeData && ev.Data.Name == "assistant_task" {
			ids[ev.Data.ID] = true
		}
	}
	if len(ids) != 1 {
		t.Errorf("the task's progress showed as %d parts: %v", len(ids), ids)
	}

	// Continued after the report: the report, and no model call.
	before = e.model.Count()
	var rec3 eventtest.Recorder
	again, err := tm.Run(asUser(t.Context()), in, &rec3)
	if err != nil {
		t.Fatal(err)
	}
	if e.model.Count() != before || again.Text != res.Text {
		t.Errorf("continued after the report: %d model calls, report %q", e.model.Count()-before, again.Text)
	}
}
