package assistant

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/event/eventtest"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
	"github.com/sova-ai/sova/internal/mcp"
	"github.com/sova-ai/sova/internal/mcp/mcptest"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/rank"
)

const user = "u1"

// asUser is a context acting for the test's user, an administrator: the
// run service gives every run's context its user, and the admin's MCP
// servers are offered by role.
func asUser(ctx context.Context) context.Context {
	return sova.WithUser(ctx, sova.User{ID: user, Name: "anna", Role: sova.RoleAdmin})
}

// memSettings is a sova.SettingsStore in memory.
type memSettings struct {
	mu sync.Mutex
	m  map[string]sova.UserSettings
}

func (s *memSettings) UserSettings(_ context.Context, id string) (sova.UserSettings, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.m[id]
	p := map[string]string{}
	for k, x := range v.Preferences {
		p[k] = x
	}
	v.Preferences = p
	return v, nil
}

func (s *memSettings) PutUserSettings(_ context.Context, id string, v sova.UserSettings) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]sova.UserSettings{}
	}
	s.m[id] = v
	return nil
}

// memChats keeps the messages of the chats of the test.
type memChats struct {
	mu   sync.Mutex
	msgs []sova.Message
}

func (c *memChats) ListMessages(_ context.Context, userID, chatID string) ([]sova.Message, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []sova.Message
	for _, m := range c.msgs {
		if m.ChatID == chatID {
			out = append(out, m)
		}
	}
	return out, nil
}

func (c *memChats) RecentMessages(_ context.Context, userID string, limit int) ([]sova.Message, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []sova.Message
	for i := len(c.msgs) - 1; i >= 0 && len(out) < limit; i-- {
		out = append(out, c.msgs[i])
	}
	return out, nil
}

// SearchMessages ranks the messages in memory as the store's index
// would: any term, best first.
func (c *memChats) SearchMessages(_ context.Context, userID string, terms []string, exceptChat string, limit int) ([]sova.Message, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var docs []rank.Doc
	var msgs []sova.Message
	for _, m := range c.msgs {
		if m.ChatID != exceptChat && (m.Role == "user" || m.Role == "assistant") {
			docs = append(docs, rank.Doc{ID: m.ID, Text: m.Content})
			msgs = append(msgs, m)
		}
	}
	var out []sova.Message
	for _, s := range rank.Rerank(strings.Join(terms, " "), docs, limit) {
		if s.Score > 0 {
			out = append(out, msgs[s.Index])
		}
	}
	return out, nil
}

func (c *memChats) add(m sova.Message) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m.ID = fmt.Sprintf("m%d", len(c.msgs)+1)
	if m.CreatedAt.IsZero() {
		m.CreatedAt = time.Date(2026, 10, 1, 10, len(c.msgs), 0, 0, time.UTC)
	}
	c.msgs = append(c.msgs, m)
}

type env struct {
	model    *llmtest.Server
	office   *mcptest.Office
	settings *memSettings
	chats    *memChats
	mode     *Mode
	client   *mcp.Client
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{model: llmtest.New(t), office: mcptest.NewOffice(t), settings: &memSettings{}, chats: &memChats{}}
	c, err := llm.New(llm.Config{BaseURL: e.model.URL(), APIKey: "k", Model: "main", FastModel: "fast", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	e.client = mcp.NewClient([]mcp.Server{e.office.Server("office")}, mcp.Options{Timeout: 5 * time.Second})
	t.Cleanup(func() { _ = e.client.Close() })
	// An earlier chat about project Vostok, for the knowledge agent.
	e.chats.add(sova.Message{ChatID: "old", Role: "user", Content: "Анна писала о проекте Восток: сроки сдвигаются на март."})
	e.chats.add(sova.Message{ChatID: "old", Role: "assistant", Content: "Записал: по проекту Восток сроки сдвигаются на март, бюджет 2 млн."})
	e.chats.add(sova.Message{ChatID: "old", Role: "user", Content: "Какая погода завтра?"})
	e.mode = New(Config{HistoryLimit: 10}, Deps{Model: c, Fast: c.Fast(), MCP: e.client, Settings: e.settings, Messages: e.chats, Chats: e.chats})
	return e
}

func tc(id, name, args string) llm.ToolCall { return llm.ToolCall{ID: id, Name: name, Arguments: args} }

// turn runs one message of chat "c1" and keeps the question and the
// answer as the run service would.
func (e *env) turn(t *testing.T, q string, resume *mode.Pause, answer string) (*mode.Result, *eventtest.Recorder) {
	t.Helper()
	in := mode.Input{RunID: "r1", ChatID: "c1", UserID: user, Question: q, Now: time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC), Timezone: "Europe/Moscow"}
	e.chats.add(sova.Message{ChatID: "c1", Role: "user", Content: q})
	for _, m := range e.chats.msgs {
		if m.ChatID == "c1" && m.Content != q {
			in.History = append(in.History, llm.Message{Role: m.Role, Content: m.Content})
		}
	}
	if resume != nil {
		in.Resume = &mode.Resume{State: resume.State, Answer: answer}
	}
	var rec eventtest.Recorder
	res, err := e.mode.Run(asUser(t.Context()), in, &rec)
	if err != nil {
		t.Fatalf("%q: %v", q, err)
	}
	e.chats.add(sova.Message{ChatID: "c1", Role: "assistant", Content: res.Text, Mode: "assistant", ToolCalls: res.Steps})
	if e.model.Pending() != 0 {
		t.Fatalf("%q: %d scripted replies were not used", q, e.model.Pending())
	}
	return res, &rec
}

// parts returns the values of the data parts named name.
func parts(rec *eventtest.Recorder, name string) []map[string]any {
	var out []map[string]any
	for _, e := range rec.Filter(event.TypeData) {
		if e.Data.Name == name {
			var v map[string]any
			_ = json.Unmarshal(e.Data.Value, &v)
			out = append(out, v)
		}
	}
	return out
}

func toolNames(rec *eventtest.Recorder) []string {
	var out []string
	for _, e := range rec.Filter(event.TypeToolResult) {
		s := e.ToolResult.Name
		if e.ToolResult.Error != "" {
			s += "!"
		}
		out = append(out, s)
	}
	return out
}

func holder(t *testing.T, res *mode.Result) string {
	t.Helper()
	var r record
	if err := json.Unmarshal(res.Steps, &r); err != nil {
		t.Fatal(err)
	}
	return r.Agent
}

// Flow 1: a simple task, the router calls MCP itself.
func TestFlow1DirectMCP(t *testing.T) {
	e := newEnv(t)
	e.model.Enqueue(
		llmtest.Calls(tc("c1", "office__list_emails", `{}`)),
		llmtest.Calls(tc("c2", "office__read_email", `{"id":"m4"}`)),
		llmtest.Text("Последнее письмо от Ивана с темой «Meeting»: он предлагает понедельник в 15:00."),
	)
	res, rec := e.turn(t, "Прочитай письмо", nil, "")
	if got := strings.Join(toolNames(rec), ","); got != "office__list_emails,office__read_email" {
		t.Errorf("tools = %s", got)
	}
	if len(parts(rec, "assistant_handoff")) != 0 || holder(t, res) != Router {
		t.Errorf("hand-offs %v, holder %s", parts(rec, "assistant_handoff"), holder(t, res))
	}
	if !strings.Contains(res.Text, "понедельник в 15:00") || res.Pause != nil {
		t.Errorf("text %q, pause %v", res.Text, res.Pause)
	}
	// The MCP result reached the model.
	if last := e.model.Last(); !strings.Contains(fmt.Sprint(last.Messages), "Can we meet on Monday") {
		t.Error("the letter's text did not reach the model")
	}
}

// Flow 2: a hand-off to the knowledge agent, which answers with a
// citation of a past chat and returns control.
func TestFlow2KnowledgeHandoff(t *testing.T) {
	e := newEnv(t)
	e.model.Enqueue(
		llmtest.Calls(tc("c1", "transfer_to_knowledge", `{"reason":"вопрос о прошлых обсуждениях"}`)),
		llmtest.Reply{Content: "Ищу в документах. ", ToolCalls: []llm.ToolCall{tc("k1", "search_chats", `{"query":"проект Восток"}`)}},
		llmtest.Text("Нашла обсуждение: сроки проекта Восток сдвигаются на март [1]. Подробности?"),
	)
	res, rec := e.turn(t, "Что писали о проекте Восток?", nil, "")
	h := parts(rec, "assistant_handoff")
	if len(h) != 2 || h[0]["to"] != Knowledge || h[1]["kind"] != "return" || h[1]["to"] != Router {
		t.Fatalf("hand-offs = %v", h)
	}
	agents := parts(rec, "assistant_agent")
	if len(agents) != 2 || agents[0]["agent"] != Router || agents[1]["agent"] != Knowledge {
		t.Errorf("speakers = %v", agents)
	}
	if len(res.Sources) != 1 || res.Sources[0].URL != "/c/old" || !strings.Contains(res.Text, "[1]") {
		t.Errorf("sources %+v, text %q", res.Sources, res.Text)
	}
	if holder(t, res) != Router {
		t.Errorf("holder = %s", holder(t, res))
	}
	// The knowledge agent's prompt has its exit criteria.
	reqs := e.model.Requests()
	if sys := reqs[1].System(); !strings.Contains(sys, "return_to_router") || !strings.Contains(sys, "not my area") {
		t.Errorf("knowledge prompt: %.200s", sys)
	}
}

// The knowledge agent is asked for an action: "not my area", back to the
// router, which acts in the same turn.
func TestKnowledgeReturnsForAction(t *testing.T) {
	e := newEnv(t)
	e.model.Enqueue(
		llmtest.Calls(tc("c1", "transfer_to_knowledge", `{"reason":"поиск"}`)),
		llmtest.Reply{Content: "Это не моя область, передаю основному помощнику.", ToolCalls: []llm.ToolCall{tc("k1", "return_to_router", `{"reason":"просят показать календарь"}`)}},
		llmtest.Calls(tc("c2", "office__list_events", `{}`)),
		llmtest.Text("В календаре пока нет встреч."),
	)
	res, rec := e.turn(t, "Покажи календарь", nil, "")
	h := parts(rec, "assistant_handoff")
	if len(h) != 2 || h[1]["from"] != Knowledge || h[1]["to"] != Router || h[1]["kind"] != "return" {
		t.Fatalf("hand-offs = %v", h)
	}
	if !strings.Contains(res.Text, "не моя область") || !strings.Contains(res.Text, "нет встреч") {
		t.Errorf("text %q", res.Text)
	}
}

// Flow 3: a new person is interviewed, one question at a time, across
// turns; the answers become preferences; control returns to the router.
func TestFlow3Interview(t *testing.T) {
	e := newEnv(t)
	e.model.Enqueue(
		llmtest.Calls(tc("c1", "checkInterviewStatus", `{}`)),
		llmtest.Calls(tc("c2", "transfer_to_interview", `{"reason":"новый пользователь"}`)),
		llmtest.Text("Могу провести короткий опрос?"),
	)
	res, rec := e.turn(t, "Привет", nil, "")
	if holder(t, res) != Interview || !strings.Contains(res.Text, "опрос") {
		t.Fatalf("turn 1: holder %s, text %q", holder(t, res), res.Text)
	}
	if st := parts(rec, "assistant_handoff"); len(st) != 1 || st[0]["to"] != Interview {
		t.Fatalf("turn 1 hand-offs %v", st)
	}
	// Turn 2: the interview agent holds the chat and asks question 1.
	e.model.Enqueue(llmtest.Text("Какая у вас роль и как к вам обращаться?"))
	res, rec = e.turn(t, "Да", nil, "")
	if a := parts(rec, "assistant_agent"); len(a) != 1 || a[0]["agent"] != Interview || holder(t, res) != Interview {
		t.Fatalf("turn 2: speakers %v", a)
	}
	// Turn 3: the answers so far, saved one by one.
	e.model.Enqueue(
		llmtest.Calls(
			tc("i1", "save_preference", `{"question":"role","answer":"руководитель проекта, Анна"}`),
			tc("i2", "save_preference", `{"question":"style","answer":"кратко, по-русски"}`),
			tc("i3", "save_preference", `{"question":"schedule","answer":"9-18, встречи утром"}`),
			tc("i4", "save_preference", `{"question":"priorities","answer":"проект Восток"}`),
		),
		llmtest.Text("Спасибо! Хотите ответить ещё на три вопроса?"),
	)
	e.turn(t, "Руководитель проекта, Анна; кратко; 9-18, встречи утром; проект Восток", nil, "")
	// Turn 4: no more; the interview ends and the router takes over.
	e.model.Enqueue(
		llmtest.Reply{Content: "Спасибо! Я сохранил ваши предпочтения.", ToolCalls: []llm.ToolCall{tc("i5", "finish_interview", `{"reason":"опрос завершён"}`)}},
		llmtest.Text("Чем могу помочь?"),
	)
	res, rec = e.turn(t, "Нет, хватит", nil, "")
	if h := parts(rec, "assistant_handoff"); len(h) != 1 || h[0]["from"] != Interview || h[0]["to"] != Router {
		t.Fatalf("turn 4 hand-offs %v", h)
	}
	if holder(t, res) != Router || !strings.HasSuffix(res.Text, "Чем могу помочь?") {
		t.Errorf("turn 4: holder %s, text %q", holder(t, res), res.Text)
	}
	s, _ := e.settings.UserSettings(t.Context(), user)
	if s.Preferences["interview.role"] != "руководитель проекта, Анна" || s.Preferences["interview.priorities"] != "проект Восток" || s.Preferences["interview.completed"] != "true" {
		t.Errorf("preferences = %v", s.Preferences)
	}
	done, _, _ := interviewStatus(s)
	if !done {
		t.Error("interview not completed")
	}
	// Every agent's prompt now carries the preferences.
	if sys := e.model.Last().System(); !strings.Contains(sys, "проект Восток") {
		t.Errorf("router prompt lacks the preferences: %.300s", sys)
	}
}

// Flow 4: two dependent steps go to the planning agent; creating the
// meeting waits for the person's yes; nextResponse is said verbatim.
func TestFlow4PlannerWithConfirmation(t *testing.T) {
	for _, answer := range []string{"да", "нет"} {
		t.Run(answer, func(t *testing.T) {
			e := newEnv(t)
			next := "Я прочитал письмо Анны: она предлагает вторник в 10:00. Создать встречу?"
			e.model.Enqueue(
				llmtest.Reply{Content: "Секундочку, уточню детали.", ToolCalls: []llm.ToolCall{tc("c1", "delegateToSupervisor",
					`{"conversationContext":"просит прочитать письмо Анны и создать встречу","proposedPlan":"1. прочитать письмо 2. создать встречу","userIntent":"встреча по письму Анны","complexity":"medium"}`)}},
				// The planning agent.
				llmtest.Calls(tc("p1", "office__read_email", `{"id":"m1"}`)),
				llmtest.Calls(tc("p2", "office__create_event", `{"title":"Проект Восток: сроки","start":"2026-11-25T10:00:00+03:00","attendees":["anna@example.com"]}`)),
				llmtest.Calls(tc("p3", "finish_plan", fmt.Sprintf(`{"decision":"confirm","nextResponse":%q,"workflowSteps":["Прочитал письмо","Извлёк время","Подготовил встречу"]}`, next))),
			)
			res, rec := e.turn(t, "Прочитай письмо Анны и создай встречу", nil, "")
			if res.Pause == nil || len(e.office.Events()) != 0 {
				t.Fatalf("pause %v, events %v", res.Pause, e.office.Events())
			}
			// The planner's words come first; the question is Sova's, built
			// from the held action.
			q := res.Pause.Questions[0]
			if !strings.Contains(res.Text, "Секундочку") || !strings.Contains(res.Text, next) || !strings.HasSuffix(res.Text, q) ||
				q == next || !strings.Contains(q, "anna@example.com") || !strings.Contains(q, "Проект Восток: сроки") || len(res.Pause.Actions) != 1 {
				t.Errorf("text %q, question %v", res.Text, res.Pause.Questions)
			}
			plan := parts(rec, "assistant_plan")
			if len(plan) != 1 || plan[0]["decision"] != "confirm" || len(plan[0]["workflowSteps"].([]any)) != 3 {
				t.Fatalf("plan = %v", plan)
			}
			if c := parts(rec, "assistant_confirmation"); len(c) != 1 || c[0]["status"] != "waiting" {
				t.Errorf("confirmation = %v", c)
			}
			// The person answers.
			reply := "Встреча создана на вторник, 10:00."
			if answer == "нет" {
				reply = "Хорошо, не создаю."
			}
			e.model.Enqueue(llmtest.Text(reply))
			res, rec = e.turn(t, answer, res.Pause, answer)
			wantEvents := map[string]int{"да": 1, "нет": 0}[answer]
			if got := len(e.office.Events()); got != wantEvents {
				t.Fatalf("events created = %d, want %d", got, wantEvents)
			}
			if res.Pause != nil || res.Text != reply {
				t.Errorf("after %s: pause %v, text %q", answer, res.Pause, res.Text)
			}
			if c := parts(rec, "assistant_confirmation"); len(c) != 1 || c[0]["status"] != map[string]string{"да": "confirmed", "нет": "declined"}[answer] {
				t.Errorf("confirmation = %v", c)
			}
			if !strings.Contains(fmt.Sprint(e.model.Last().Messages), map[string]string{"да": "create_event done", "нет": "NOT done"}[answer]) {
				t.Error("the router was not told the outcome")
			}
		})
	}
}

// A direct send: nothing leaves without a yes; "no" sends nothing, another
// message declines and is passed on.
func TestSendNeedsConfirmation(t *testing.T) {
	tests := []struct {
		answer string
		sent   int
	}{{"Да, отправляй", 1}, {"нет", 0}, {"а сколько у меня писем?", -1}, {"Хорошо, но не отправляй", -1}, {"Okay, cancel", -1}}
	for _, tt := range tests {
		t.Run(tt.answer, func(t *testing.T) {
			e := newEnv(t)
			e.model.Enqueue(llmtest.Calls(tc("c1", "office__send_email", `{"to":"anna@example.com","subject":"Восток","body":"Согласен на вторник."}`)))
			res, rec := e.turn(t, "Ответь Анне, что я согласен на вторник", nil, "")
			if res.Pause == nil || len(e.office.Sent()) != 0 {
				t.Fatalf("pause %v, sent %v", res.Pause, e.office.Sent())
			}
			if r := rec.Filter(event.TypeToolResult); len(r) != 1 || !strings.Contains(string(r[0].ToolResult.Output), "awaiting_confirmation") {
				t.Errorf("tool result = %+v", r)
			}
			if tt.sent < 0 {
				// Neither yes nor no: nothing is sent, no model is asked,
				// Sova asks again about the same action.
				again, _ := e.turn(t, tt.answer, res.Pause, tt.answer)
				if again.Pause == nil || len(e.office.Sent()) != 0 || again.Pause.Actions[0] != res.Pause.Actions[0] {
					t.Fatalf("after %q: pause %v, sent %v", tt.answer, again.Pause, e.office.Sent())
				}
				return
			}
			e.model.Enqueue(llmtest.Text("Готово."))
			e.turn(t, tt.answer, res.Pause, tt.answer)
			if got := len(e.office.Sent()); got != tt.sent {
				t.Fatalf("sent = %d, want %d", got, tt.sent)
			}
		})
	}
}

// Flow 5: a very large task is confirmed first, then decomposed and run.
func TestFlow5ComplexTask(t *testing.T) {
	e := newEnv(t)
	e.model.Enqueue(llmtest.Calls(tc("c1", "executeComplexTask", `{"task":"Найди участников проекта Восток, проверь календари и отправь приглашения на встречу во вторник в 10:00","actions":[{"tool":"office__create_event","recipients":["anna@example.com"]}]}`)))
	res, _ := e.turn(t, "Найди участников, проверь календари, отправь приглашения", nil, "")
	if res.Pause == nil || !strings.Contains(res.Pause.Questions[0], "несколько минут") {
		t.Fatalf("pause = %+v", res.Pause)
	}
	e.model.Enqueue(
		llmtest.Text(`{"subtasks":[{"title":"Найти участников","instructions":"Прочитай письма об проекте Восток"},{"title":"Проверить календарь","instructions":"list_events"},{"title":"Отправить приглашения","instructions":"create_event с участниками"}]}`),
		llmtest.Calls(tc("t1", "office__list_emails", `{"from":"anna"}`)), llmtest.Text("Участники: anna@example.com."),
		llmtest.Calls(tc("t2", "office__list_events", `{}`)), llmtest.Text("Вторник свободен."),
		llmtest.Calls(tc("t3", "office__create_event", `{"title":"Восток","start":"2026-11-25T10:00:00+03:00","attendees":["anna@example.com"]}`)), llmtest.Text("Встреча создана."),
		llmtest.Text("# Отчёт\nНайден 1 участник, встреча создана на вторник 10:00."),
		llmtest.Text("Готово! Нашёл участника и создал встречу на вторник."),
	)
	res, rec := e.turn(t, "да", res.Pause, "да")
	if len(e.office.Events()) != 1 || !strings.Contains(res.Report, "Отчёт") || !strings.HasPrefix(res.Text, "Готово!") {
		t.Fatalf("events %v, report %q, text %q", e.office.Events(), res.Report, res.Text)
	}
	prog := parts(rec, "assistant_task")
	if len(prog) < 4 || prog[len(prog)-1]["state"] != "done" {
		t.Fatalf("progress = %v", prog)
	}
	for _, s := range prog[len(prog)-1]["subtasks"].([]any) {
		if s.(map[string]any)["status"] != "done" {
			t.Errorf("subtask %v", s)
		}
	}
}

// Flow 6: MCP, then the knowledge agent, then the planning agent in one
// conversation; control is back with the router after each.
func TestFlow6SeveralHandoffs(t *testing.T) {
	e := newEnv(t)
	e.model.Enqueue(
		llmtest.Calls(tc("c1", "office__list_emails", `{"from":"anna"}`)),
		llmtest.Text("Нашла три письма от Анны."),
	)
	res, rec := e.turn(t, "Покажи письма от Анны", nil, "")
	if holder(t, res) != Router || len(parts(rec, "assistant_handoff")) != 0 || strings.Join(toolNames(rec), ",") != "office__list_emails" {
		t.Fatalf("turn 1: %s, %v", holder(t, res), toolNames(rec))
	}
	e.model.Enqueue(
		llmtest.Calls(tc("c2", "transfer_to_knowledge", `{"reason":"что писала Анна о проекте"}`)),
		llmtest.Reply{Content: "Ищу в документах. ", ToolCalls: []llm.ToolCall{tc("k1", "search_chats", `{"query":"Анна проект Восток"}`)}},
		llmtest.Text("В переписке с Анной о проекте Восток нашла обсуждение: сроки сдвигаются на март [1]."),
	)
	res, rec = e.turn(t, "Что она писала о проекте Восток?", nil, "")
	h := parts(rec, "assistant_handoff")
	if holder(t, res) != Router || len(h) != 2 || h[1]["to"] != Router {
		t.Fatalf("turn 2: %s, %v", holder(t, res), h)
	}
	ask := "Когда удобно: понедельник, среду или пятницу?"
	e.model.Enqueue(
		llmtest.Reply{Content: "Секундочку.", ToolCalls: []llm.ToolCall{tc("c3", "delegateToSupervisor", `{"conversationContext":"встреча с Анной","proposedPlan":"проверить календарь, предложить время","userIntent":"встреча с Анной на следующей неделе","complexity":"medium"}`)}},
		llmtest.Calls(tc("p1", "office__list_events", `{}`)),
		llmtest.Calls(tc("p2", "finish_plan", fmt.Sprintf(`{"decision":"clarify","nextResponse":%q,"workflowSteps":["Проверил календарь","Нашёл свободные дни"]}`, ask))),
	)
	res, rec = e.turn(t, "Назначь встречу с ней на следующую неделю", nil, "")
	h = parts(rec, "assistant_handoff")
	if len(h) != 2 || h[0]["kind"] != "delegate" || h[0]["to"] != Planner || h[1]["to"] != Router {
		t.Fatalf("turn 3 hand-offs = %v", h)
	}
	if holder(t, res) != Router || !strings.HasSuffix(res.Text, ask) || res.Pause != nil {
		t.Errorf("turn 3: holder %s, text %q", holder(t, res), res.Text)
	}
	if len(e.office.Events()) != 0 {
		t.Error("an event was created")
	}
}

// A server that fails ends that call with an error part; the run answers.
func TestServerFailureEndsOnlyTheCall(t *testing.T) {
	e := newEnv(t)
	e.model.Enqueue(llmtest.Text("warm-up"))
	e.turn(t, "привет", nil, "") // connects the server
	e.office.Close()
	e.model.Enqueue(
		llmtest.Calls(tc("c1", "office__list_emails", `{}`)),
		llmtest.Text("Почтовый сервер сейчас недоступен."),
	)
	res, rec := e.turn(t, "Покажи почту", nil, "")
	if got := toolNames(rec); len(got) != 1 || got[0] != "office__list_emails!" {
		t.Fatalf("tool results = %v", got)
	}
	if !strings.Contains(res.Text, "недоступен") {
		t.Errorf("text %q", res.Text)
	}
}

// The planner's decision and the hand-over's complexity are closed sets,
// offered as enums: "Clarify " is taken as clarify, and "уточнить" is
// sent to be repaired against the schema, never turned into approve.
func TestPlannerDecisionIsAClosedSet(t *testing.T) {
	for _, tcase := range []struct{ name, decision string }{{"loose", "Clarify "}, {"outside the set", "уточнить"}} {
		t.Run(tcase.name, func(t *testing.T) {
			e := newEnv(t)
			ask := "Когда удобно: понедельник или среду?"
			replies := []llmtest.Reply{
				llmtest.Calls(tc("c1", "delegateToSupervisor", `{"conversationContext":"встреча с Анной","proposedPlan":"проверить календарь","userIntent":"встреча с Анной","complexity":"Medium"}`)),
				llmtest.Calls(tc("p1", "finish_plan", fmt.Sprintf(`{"decision":%q,"nextResponse":%q,"workflowSteps":["Проверил календарь"]}`, tcase.decision, ask))),
			}
			if tcase.decision == "уточнить" { // the repair model's answer
				replies = append(replies, llmtest.Text(fmt.Sprintf(`{"decision":"clarify","nextResponse":%q,"workflowSteps":["Проверил календарь"]}`, ask)))
			}
			e.model.Enqueue(replies...)
			res, rec := e.turn(t, "Назначь встречу с Анной", nil, "")
			plans := parts(rec, "assistant_plan")
			if len(plans) != 1 || plans[0]["decision"] != DecisionClarify {
				t.Fatalf("plan parts %v", plans)
			}
			if !strings.HasSuffix(res.Text, ask) {
				t.Errorf("text %q", res.Text)
			}
			var sawEnum bool
			for _, r := range e.model.Requests() {
				for _, tool := range r.Tools {
					if tool.Name != "finish_plan" {
						continue
					}
					props, _ := tool.Parameters["properties"].(map[string]any)
					enum, _ := props["decision"].(map[string]any)["enum"].([]any)
					sawEnum = len(enum) == 4
				}
			}
			if !sawEnum {
				t.Error("finish_plan's decision was not offered as an enum")
			}
			if tcase.decision == "уточнить" {
				last := e.model.Last()
				if last.Format() != llm.FormatJSONSchema || !strings.Contains(last.LastUser(), "уточнить") {
					t.Errorf("the value was not sent to be repaired against the schema: %+v", last.Messages)
				}
			}
		})
	}
}
