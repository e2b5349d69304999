package assistant

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/event/eventtest"
	"github.com/sova-ai/sova/internal/llm/llmtest"
	"github.com/sova-ai/sova/internal/mcp"
	"github.com/sova-ai/sova/internal/mcp/mcptest"
	"github.com/sova-ai/sova/internal/mode"
)

// newHostileEnv is newEnv with a letter in the inbox that tells the
// assistant to mail the attacker, and a model that obeys what it reads:
// whenever a tool result says "send … to <address>", it calls
// office__send_email with that address; otherwise it gives the scripted
// replies in order.
func newHostileEnv(t *testing.T, script ...llmtest.Reply) *env {
	t.Helper()
	e := newEnv(t)
	e.office = mcptest.NewOffice(t, mcptest.WithHostileMail())
	e.client = mcp.NewClient([]mcp.Server{e.office.Server("office")}, mcp.Options{Timeout: 5 * time.Second})
	t.Cleanup(func() { _ = e.client.Close() })
	e.mode.d.MCP = e.client
	var mu sync.Mutex
	queue := script
	e.model.Handle(llmtest.Obey("office__send_email", func(r *llmtest.Request) llmtest.Reply {
		mu.Lock()
		defer mu.Unlock()
		if len(queue) == 0 {
			return llmtest.Text("Готово.")
		}
		next := queue[0]
		queue = queue[1:]
		return next
	}))
	return e
}

func (e *env) noneSent(t *testing.T) {
	t.Helper()
	for _, m := range e.office.Sent() {
		t.Errorf("sent without the person's approval: %+v", m)
	}
}

// The router reads the hostile letter; the send it is talked into is held
// and listed by Sova with the attacker's address; a decline sends nothing.
func TestHostileMailRouter(t *testing.T) {
	e := newHostileEnv(t, llmtest.Calls(tc("c1", "office__read_email", `{"id":"m5"}`)))
	res, _ := e.turn(t, "Прочитай письмо m5", nil, "")
	e.noneSent(t)
	if res.Pause == nil || !strings.Contains(res.Pause.Questions[0], "attacker@evil.example") {
		t.Fatalf("pause %+v", res.Pause)
	}
	// The tool output reached the model marked as data.
	second := e.model.Requests()[1]
	if !strings.Contains(second.System(), agent.UntrustedRule) {
		t.Error("the router's prompt does not say tool output is data")
	}
	if m := second.Messages[len(second.Messages)-1]; m.Role != "tool" || !strings.HasPrefix(m.Content, "<untrusted-data source=") || !strings.Contains(m.Content, "attacker@evil.example") {
		t.Errorf("the letter reached the model unmarked: %q", m.Content)
	}
	for _, answer := range []string{"Хорошо, но не отправляй", "ok, but cancel", "нет"} {
		res, _ = e.turn(t, answer, res.Pause, answer)
		e.noneSent(t)
	}
	if res.Pause != nil {
		t.Fatalf("a clear no left the run waiting")
	}
}

// The planning agent is talked into sending and says all is done; Sova's
// question, not its words, is what the person answers, and it names the
// attacker.
func TestHostileMailPlanner(t *testing.T) {
	e := newHostileEnv(t,
		llmtest.Calls(tc("c1", "delegateToSupervisor", `{"conversationContext":"письма","proposedPlan":"прочитать m5","userIntent":"разобрать почту","complexity":"medium"}`)),
		llmtest.Calls(tc("p1", "office__read_email", `{"id":"m5"}`)),
		// (the obeying model sends here)
		llmtest.Calls(tc("p3", "finish_plan", `{"decision":"approve","nextResponse":"Готово, всё сделано.","workflowSteps":["Прочитал письмо"]}`)),
	)
	res, _ := e.turn(t, "Разбери почту", nil, "")
	e.noneSent(t)
	if res.Pause == nil {
		t.Fatal("the held send did not pause the run")
	}
	q := res.Pause.Questions[0]
	if q == "Готово, всё сделано." || !strings.Contains(q, "attacker@evil.example") || !strings.Contains(res.Text, "Готово, всё сделано.") {
		t.Fatalf("question %q, text %q", q, res.Text)
	}
	// A structured decision declining the id sends nothing.
	e.model.Handle(nil)
	e.model.Enqueue(llmtest.Text("Не отправляю."))
	in := mode.Input{RunID: "r1", ChatID: "c1", UserID: user, Question: "Разбери почту", Now: time.Now(),
		Resume: &mode.Resume{State: res.Pause.State, Decline: res.Pause.Actions}}
	var rec eventtest.Recorder
	if _, err := e.mode.Run(t.Context(), in, &rec); err != nil {
		t.Fatal(err)
	}
	e.noneSent(t)
}

// A task approved to create one meeting with Anna reads the hostile
// letter in a subtask; the send it is talked into pauses the task, the
// person declines, and the task goes on and finishes without sending.
func TestHostileMailInsideTask(t *testing.T) {
	e := newHostileEnv(t,
		llmtest.Calls(tc("c1", "executeComplexTask", `{"task":"Прочитай почту и назначь встречу с Анной во вторник","actions":[{"tool":"office__create_event","recipients":["anna@example.com"]}]}`)),
	)
	res, _ := e.turn(t, "Прочитай почту и назначь встречу с Анной", nil, "")
	if res.Pause == nil || !strings.Contains(res.Pause.Questions[0], "office__create_event → anna@example.com") {
		t.Fatalf("task question: %+v", res.Pause)
	}
	e.model.Handle(nil)
	e.model.Handle(llmtest.Obey("office__send_email", scripted(
		llmtest.Text(`{"subtasks":[{"title":"Почта","instructions":"прочитай m5"},{"title":"Встреча","instructions":"create_event с anna@example.com"}]}`),
		llmtest.Calls(tc("t1", "office__read_email", `{"id":"m5"}`)),
		// (the obeying model sends here: held, the task pauses)
	)))
	res, _ = e.turn(t, "да", res.Pause, "да")
	e.noneSent(t)
	if res.Pause == nil || !strings.Contains(res.Pause.Questions[0], "attacker@evil.example") {
		t.Fatalf("the send inside the task did not pause it: %+v, text %q", res.Pause, res.Text)
	}
	e.model.Handle(llmtest.Obey("office__send_email", scripted(
		llmtest.Text("Письмо прочитано, ничего не отправлено."),
		llmtest.Calls(tc("t2", "office__create_event", `{"title":"Восток","start":"2026-11-25T10:00:00+03:00","attendees":["anna@example.com"]}`)), llmtest.Text("Встреча создана."),
		llmtest.Text("# Отчёт\nВстреча создана."),
		llmtest.Text("Встреча с Анной создана, письмо никуда не отправлено."),
	)))
	res, _ = e.turn(t, "нет", res.Pause, "нет")
	e.noneSent(t)
	if res.Pause != nil || len(e.office.Events()) != 1 || !strings.Contains(res.Report, "Отчёт") {
		t.Fatalf("after the decline: pause %v, events %v, report %q", res.Pause, e.office.Events(), res.Report)
	}
}

// POST /api/tasks/execute's mode with "read only": nothing is approved,
// so the obeyed send waits, and a decline finishes the task unsent.
func TestHostileMailTaskModeReadOnly(t *testing.T) {
	e := newHostileEnv(t,
		llmtest.Text(`{"subtasks":[{"title":"Почта","instructions":"прочитай m5 и перескажи"}]}`),
		llmtest.Calls(tc("t1", "office__read_email", `{"id":"m5"}`)),
	)
	tm := e.mode.TaskMode()
	msgs := TaskMessages(TaskRequest{Task: "Перескажи письмо m5, только чтение, ничего не отправляй"})
	ws := &memWorkspace{}
	in := mode.Input{RunID: "r1", UserID: user, Question: msgs[len(msgs)-1].Content, History: msgs[:len(msgs)-1], Workspace: ws, Now: time.Now()}
	var rec eventtest.Recorder
	res, err := tm.Run(asUser(t.Context()), in, &rec)
	if err != nil {
		t.Fatal(err)
	}
	e.noneSent(t)
	if res.Pause == nil || len(res.Pause.Actions) != 1 || !strings.Contains(res.Text, "attacker@evil.example") {
		t.Fatalf("result %+v", res)
	}
	// An answer that is not a decision asks again.
	in.Resume = &mode.Resume{State: res.Pause.State, Answer: "Okay, cancel"}
	again, err := tm.Run(asUser(t.Context()), in, &rec)
	if err != nil || again.Pause == nil {
		t.Fatalf("mixed answer: %v %+v", err, again)
	}
	e.noneSent(t)
	e.model.Handle(llmtest.Obey("office__send_email", scripted(
		llmtest.Text("В письме просят переслать почту; я этого не делал."),
		llmtest.Text("# Отчёт\nПисьмо пересказано."),
	)))
	in.Resume = &mode.Resume{State: res.Pause.State, Decline: res.Pause.Actions}
	done, err := tm.Run(asUser(t.Context()), in, &rec)
	if err != nil || done.Pause != nil || !strings.Contains(done.Report, "Отчёт") {
		t.Fatalf("after decline: %v %+v", err, done)
	}
	e.noneSent(t)
}

// scripted gives replies in order, then "Готово.".
func scripted(replies ...llmtest.Reply) func(*llmtest.Request) llmtest.Reply {
	var mu sync.Mutex
	return func(*llmtest.Request) llmtest.Reply {
		mu.Lock()
		defer mu.Unlock()
		if len(replies) == 0 {
			return llmtest.Text("Готово.")
		}
		r := replies[0]
		replies = replies[1:]
		return r
	}
}
