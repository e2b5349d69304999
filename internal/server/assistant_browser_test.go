package server_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
)

// TestBrowserAssistant shows a hand-off and return, a confirmation
// answered with its button, and a delegated plan.
func TestBrowserAssistant(t *testing.T) {
	browser := newBrowser(t)
	e := newAsstEnv(t)
	// An earlier chat for the knowledge agent to find.
	old := &sova.Chat{UserID: e.user, Mode: "chat"}
	if err := e.app.Store.CreateChat(t.Context(), old); err != nil {
		t.Fatal(err)
	}
	if err := e.app.Store.AddMessage(t.Context(), e.user, &sova.Message{ChatID: old.ID, Role: "user", Content: "Анна писала о проекте Восток: сроки сдвигаются на март."}); err != nil {
		t.Fatal(err)
	}
	tb := newTab(t, browser)
	tb.do(chromedp.EmulateViewport(1280, 1000), chromedp.Navigate(e.srv.URL+"/"))
	tb.media("light")
	tb.wait(`document.body.classList.contains('ready')`, "the page")
	openSteps := `document.querySelectorAll('.turn details').forEach(d => d.open = true), true`

	// 1. A hand-off to the knowledge agent and its return.
	e.script(
		llmtest.Calls(call("c1", "transfer_to_knowledge", `{"reason":"вопрос о прошлой переписке"}`)),
		llmtest.Reply{Content: "Ищу в документах. ", ToolCalls: []llm.ToolCall{call("k1", "search_chats", `{"query":"проект Восток"}`)}},
		llmtest.Text("Нашла обсуждение: сроки проекта Восток сдвигаются на март [1]. Подробности?"),
	)
	tb.ask("assistant", "Что писали о проекте Восток?")
	tb.wait(`document.querySelectorAll('.asst-handoff').length >= 2 && !document.querySelector('#composer').classList.contains('busy')`, "the hand-off and return")
	tb.eval(openSteps, nil)
	tb.screenshot("assistant-handoff")

	// 2. Sending mail waits for the person's yes.
	e.script(llmtest.Calls(call("c2", "office__send_email", `{"to":"anna@example.com","subject":"Восток","body":"Согласен на вторник."}`)))
	tb.do(chromedp.SendKeys(css("#input"), "Ответь Анне, что я согласен на вторник"))
	tb.enter(false)
	tb.wait(`!!document.querySelector('.asst-confirm .asst-yes') && !document.querySelector('#composer').classList.contains('busy')`, "the confirmation")
	// The card shows with the Steps panel closed, outside it, listing the
	// held send readably; the held call is not shown as done.
	var card struct {
		InSteps, Visible, RawJSON, Held bool
		Text                            string
	}
	tb.eval(`(() => { const turn = [...document.querySelectorAll('.turn')].pop();
		turn.querySelectorAll('details.steps').forEach(d => d.open = false);
		const c = turn.querySelector('.asst-confirm');
		return {InSteps: !!c.closest('.steps'), Visible: c.getClientRects().length > 0, Text: c.innerText,
			RawJSON: c.innerText.includes('{"to"'), Held: !!turn.querySelector('.step.tool.held')}; })()`, &card)
	if card.InSteps || !card.Visible || card.RawJSON || !card.Held {
		t.Errorf("confirmation card: in steps %v, visible %v, raw JSON %v, held row %v", card.InSteps, card.Visible, card.RawJSON, card.Held)
	}
	for _, want := range []string{"anna@example.com", "Восток", "Согласен на вторник."} {
		if !strings.Contains(card.Text, want) {
			t.Errorf("the card lacks %q: %q", want, card.Text)
		}
	}
	tb.eval(openSteps, nil)
	tb.eval(`document.querySelector('.asst-confirm').scrollIntoView({block: 'center'}), true`, nil)
	tb.screenshot("assistant-confirmation")
	// The question is asked once: the Yes/No buttons, no clarification form.
	var asked struct {
		Forms, Yes, Confirms int
	}
	tb.eval(`(() => { const turn = [...document.querySelectorAll('.turn')].pop();
		return {Forms: turn.querySelectorAll('.clarify-form').length, Yes: turn.querySelectorAll('.asst-yes').length,
			Confirms: turn.querySelectorAll('.asst-confirm').length}; })()`, &asked)
	if asked.Forms != 0 || asked.Yes != 1 || asked.Confirms != 1 {
		t.Errorf("the confirmation shows %d clarification forms, %d Yes buttons, %d cards; want 0, 1, 1", asked.Forms, asked.Yes, asked.Confirms)
	}
	if len(e.office.Sent()) != 0 {
		t.Fatal("sent before the confirmation")
	}
	// The button sends the decision with the action's id, not words.
	tb.eval(`(() => { window.__bodies = []; const f = window.fetch;
		window.fetch = (u, o) => { if (String(u).includes('/api/search')) window.__bodies.push(String(o && o.body)); return f(u, o); }; return true; })()`, nil)
	e.script(llmtest.Text("Отправил письмо Анне."))
	tb.do(chromedp.Click(css(".asst-confirm .asst-yes")))
	var sentBody string
	tb.eval(`window.__bodies.join('\n')`, &sentBody)
	if !strings.Contains(sentBody, `"approve":["act_`) {
		t.Errorf("the Yes button sent %s, not the action's id", sentBody)
	}
	deadline := time.Now().Add(20 * time.Second)
	for len(e.office.Sent()) == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if len(e.office.Sent()) != 1 {
		t.Fatalf("sent %d after yes", len(e.office.Sent()))
	}
	tb.wait(`!document.querySelector('#composer').classList.contains('busy') && [...document.querySelectorAll('.answer')].some(a => a.textContent.includes('Отправил'))`, "the answer after yes")

	// 3. A delegated plan.
	ask := "Когда удобно: понедельник, среду или пятницу?"
	e.script(
		llmtest.Reply{Content: "Секундочку.", ToolCalls: []llm.ToolCall{call("c3", "delegateToSupervisor", `{"conversationContext":"встреча с Анной","proposedPlan":"проверить календарь","userIntent":"встреча с Анной на следующей неделе","complexity":"medium"}`)}},
		llmtest.Calls(call("p1", "office__list_events", `{}`)),
		llmtest.Calls(call("p2", "finish_plan", fmt.Sprintf(`{"decision":"clarify","nextResponse":%q,"workflowSteps":["Проверил календарь","Нашёл свободные дни"]}`, ask))),
	)
	tb.do(chromedp.SendKeys(css("#input"), "Назначь встречу с ней на следующую неделю"))
	tb.enter(false)
	tb.wait(`!!document.querySelector('.asst-plan') && !document.querySelector('#composer').classList.contains('busy')`, "the plan")
	tb.eval(openSteps, nil)
	tb.eval(`document.querySelector('.asst-plan').scrollIntoView({block: 'center'}), true`, nil)
	tb.screenshot("assistant-plan")
	var planText string
	tb.eval(`document.querySelector('.asst-plan').innerText`, &planText)
	if len(planText) == 0 {
		t.Error("empty plan view")
	}
}
