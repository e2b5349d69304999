package assistant

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sova-ai/sova"

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
	msgs := TaskMessages(TaskRequest{Task: task, Context: "Участников ищи в почте"})

	// Run 1: decomposed, subtask 1 creates an event, then the server stops
	// while subtask 2 asks the model.
	ctx1, stop := context.WithCancel(t.Context())
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
	res, err := tm.Run(t.Context(), in2, &rec2)
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
