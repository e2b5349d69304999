package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/sova-ai/sova"
	"github.com/sova-ai/sova/internal/llm/llmtest"
)

// hover moves the mouse to the middle of the first element sel matches.
func (tb *tab) hover(sel string) {
	tb.t.Helper()
	// Scroll first and let the scroll event pass: scrolling closes a
	// preview. Then move in from elsewhere, so the element sees the mouse
	// enter.
	tb.eval(`new Promise(r => { document.querySelector(`+jsString(sel)+`).scrollIntoView({block: 'center'}); setTimeout(() => requestAnimationFrame(() => r(true)), 150); })`, nil)
	var r struct{ X, Y float64 }
	tb.eval(`(() => { const b = document.querySelector(`+jsString(sel)+`).getBoundingClientRect(); return {x: b.left + b.width / 2, y: b.top + b.height / 2}; })()`, &r)
	tb.do(chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, 2, 2), chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, r.X, r.Y))
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// What people expect around an answer: follow-up chips that ask, a
// preview of a cited source on hover, regenerate, edit-and-resend, a retry
// button on a failed run, renaming and searching chats, and the chat as a
// Markdown download.
func TestBrowserConveniences(t *testing.T) {
	browser := newBrowser(t)
	e := newEnv(t, map[string]string{"SOVA_DISABLE_FOLLOWUPS": "false"})
	e.model.Answer = richAnswer
	tb := newTab(t, browser)
	tb.do(chromedp.EmulateViewport(1280, 860), chromedp.Navigate(e.srv.URL+"/"))
	tb.media("light")
	tb.wait(`document.body.classList.contains('ready')`, "the page")

	const q1 = "How did presidents describe the economy in the 1930s?"
	tb.ask("search", q1)
	tb.wait(`document.querySelectorAll('.turn .followup-chip').length === 3 && document.querySelector('.turn-foot:not([hidden])')`, "follow-up chips")
	var chips []string
	tb.eval(`[...document.querySelectorAll('.followup-chip')].map(c => c.textContent)`, &chips)
	if strings.Join(chips, "|") != "What did Hoover say in 1931?|How did the New Deal change banking?|Why did recovery stall in 1937?" {
		t.Errorf("chips %q", chips)
	}

	// A cited source previews on hover: its number, host and title.
	tb.hover(".answer a.cite")
	tb.wait(`document.querySelector('.cite-preview .preview-title')?.textContent.length > 0`, "the citation preview")
	var prev struct{ Num, Host, Title, Open string }
	tb.eval(`(() => { const p = document.querySelector('.cite-preview'); return {num: p.querySelector('.preview-num').textContent, host: p.querySelector('.preview-host').textContent, title: p.querySelector('.preview-title').textContent, open: p.querySelector('a.preview-open')?.href || ''}; })()`, &prev)
	if prev.Host != "127.0.0.1" || prev.Num == "" || !strings.HasPrefix(prev.Open, e.site.URL+"/a/") {
		t.Errorf("preview %+v", prev)
	}
	tb.screenshot("ui-followups-and-preview")
	tb.do(chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, 5, 5))
	tb.wait(`!document.querySelector('.cite-preview')`, "the preview to close")

	// A chip asks its question; the earlier turn loses its chips and actions.
	tb.do(chromedp.Click(css(".followup-chip")))
	tb.wait(`document.querySelectorAll('.turn').length === 2 && document.querySelectorAll('.turn')[1].querySelector('.turn-foot:not([hidden])')`, "the follow-up answered")
	var after struct {
		Q2          string
		OldChips    int
		OldRegen    int
		NewRegen    int
		ChipsOnLast int
	}
	tb.eval(`(() => { const ts = document.querySelectorAll('.turn'); return {q2: ts[1].querySelector('.turn-question').textContent,
		oldChips: ts[0].querySelectorAll('.followup-chip').length, oldRegen: ts[0].querySelectorAll('.regenerate-btn').length,
		newRegen: ts[1].querySelectorAll('.regenerate-btn').length, chipsOnLast: ts[1].querySelectorAll('.followup-chip').length}; })()`, &after)
	if after.Q2 != "What did Hoover say in 1931?" || after.OldChips != 0 || after.OldRegen != 0 || after.NewRegen != 1 || after.ChipsOnLast != 3 {
		t.Errorf("after a chip: %+v", after)
	}

	// Regenerate answers the last question again in place; Edit rewrites
	// it in place (TestBrowserRegenerate covers what is stored).
	tb.do(chromedp.Click(css(".turn:last-child .regenerate-btn")))
	tb.wait(`document.querySelectorAll('.turn').length === 2 && document.querySelector('.turn:last-child .turn-versions-n')?.textContent === '2 / 2' && document.querySelector('.turn:last-child .turn-foot:not([hidden])')`, "the regenerated answer")
	var q3 string
	tb.eval(`document.querySelectorAll('.turn')[1].querySelector('.turn-question').textContent`, &q3)
	if q3 != "What did Hoover say in 1931?" {
		t.Errorf("regenerated question %q", q3)
	}
	tb.do(chromedp.Click(css(".turn:last-child .edit-btn")))
	tb.wait(`document.activeElement === document.querySelector('.turn:last-child .question-edit-input') && document.activeElement.value === 'What did Hoover say in 1931?'`, "the question as a form")
	tb.do(chromedp.SendKeys(css(".turn:last-child .question-edit-input"), " And in 1932?"))
	tb.enter(false)
	tb.wait(`document.querySelectorAll('.turn').length === 2 && document.querySelector('.turn:last-child .turn-versions-n')?.textContent === '3 / 3' && document.querySelector('.turn:last-child .turn-foot:not([hidden])')`, "the edited question answered")
	var q4 string
	tb.eval(`document.querySelectorAll('.turn')[1].querySelector('.turn-question').textContent`, &q4)
	if q4 != "What did Hoover say in 1931? And in 1932?" {
		t.Errorf("edited question %q", q4)
	}

	// A failed run offers to try again, which asks the question anew.
	e.model.Handle(func(r *llmtest.Request) llmtest.Reply {
		if strings.Contains(r.System(), "answers from web sources") {
			return llmtest.Fail(http.StatusBadRequest, "the model refuses")
		}
		return e.model.Respond(r)
	})
	tb.ask("search", "Why did the banks fail?")
	tb.wait(`document.querySelectorAll('.turn').length === 3 && document.querySelector('.turn:last-child .retry-btn')`, "the retry button")
	tb.screenshot("ui-retry")
	e.model.Handle(e.model.Respond)
	tb.do(chromedp.Click(css(".turn:last-child .retry-btn")))
	tb.wait(`document.querySelectorAll('.turn').length === 4 && document.querySelectorAll('.turn')[3].querySelector('.turn-foot:not([hidden])')`, "the retried answer")
	var retried struct {
		Q        string
		OldRetry int
		Answer   string
	}
	tb.eval(`(() => { const ts = document.querySelectorAll('.turn'); return {q: ts[3].querySelector('.turn-question').textContent, oldRetry: ts[2].querySelectorAll('.retry-btn').length, answer: ts[3].querySelector('.answer').textContent}; })()`, &retried)
	if retried.Q != "Why did the banks fail?" || retried.OldRetry != 0 || !strings.Contains(retried.Answer, "passing storm") {
		t.Errorf("retry: %+v", retried)
	}

	// Rename the chat in the sidebar.
	var chatID string
	tb.eval(`location.pathname.slice(3)`, &chatID)
	tb.wait(`document.querySelector('.chat-item.active .chat-rename')`, "the rename button")
	tb.do(chromedp.Click(css(".chat-item.active .chat-rename")))
	tb.wait(`document.activeElement?.classList.contains('chat-rename-input')`, "the rename field")
	tb.eval(`document.querySelector('.chat-rename-input').value = '', true`, nil)
	tb.do(chromedp.SendKeys(css(".chat-rename-input"), "Depression speeches"))
	tb.enter(false)
	tb.wait(`document.querySelector('.chat-item.active .chat-title')?.textContent === 'Depression speeches' && document.querySelector('#topbar-title').textContent === 'Depression speeches'`, "the new title")
	if chat, err := e.app.Store.GetChat(context.Background(), e.user, chatID); err != nil || chat.Title != "Depression speeches" {
		t.Errorf("stored title: %+v %v", chat, err)
	}

	// Search the chats: a second chat, then filter.
	other := &sova.Chat{UserID: e.user, Title: "Weather in Oslo", Mode: "chat"}
	if err := e.app.Store.CreateChat(context.Background(), other); err != nil {
		t.Fatal(err)
	}
	tb.do(chromedp.Navigate(e.srv.URL + "/c/" + chatID))
	tb.wait(`document.querySelectorAll('.chat-item').length === 2`, "two chats")
	tb.do(chromedp.SendKeys(css(".chat-search"), "oslo"))
	tb.wait(`document.querySelectorAll('.chat-item').length === 1 && document.querySelector('.chat-item .chat-title').textContent === 'Weather in Oslo'`, "the filtered list")
	tb.screenshot("ui-chat-search")
	tb.do(chromedp.SendKeys(css(".chat-search"), "zzz"))
	tb.wait(`document.querySelectorAll('.chat-item').length === 0 && document.querySelector('.chat-empty')`, "no match")

	// Export: the topbar's link downloads the chat as Markdown.
	var exp struct {
		Href, Download string
		Body           string
	}
	tb.eval(`(async () => { const a = document.querySelector('#export-chat'); const r = await fetch(a.href); return {href: a.getAttribute('href'), download: a.getAttribute('download'), body: await r.text()}; })()`, &exp)
	if exp.Href != "/api/chats/"+chatID+"/export.md" || exp.Download != "" || !strings.HasPrefix(exp.Body, "# Depression speeches\n") || !strings.Contains(exp.Body, "## What did Hoover say in 1931? And in 1932?") {
		t.Errorf("export: %+v", exp)
	}
}

// A document citation opens the cited passage in a side panel; a
// clarification's questions show once, in their card.
func TestBrowserPassagePanelAndClarification(t *testing.T) {
	browser := newBrowser(t)
	e := newSpacesEnv(t, nil)
	sp := addDocs(t, e)
	var hits struct {
		Hits []struct{ URL, Document string } `json:"hits"`
	}
	if st := do(t, "GET", e.srv.URL+"/api/spaces/"+sp.ID+"/search?q=budget", nil, "", &hits); st != 200 || len(hits.Hits) == 0 {
		t.Fatalf("search: %d", st)
	}
	ctx := context.Background()
	chat := &sova.Chat{UserID: e.user, Title: "Vostok budget", Mode: "docs"}
	if err := e.app.Store.CreateChat(ctx, chat); err != nil {
		t.Fatal(err)
	}
	add := func(m *sova.Message) {
		m.ChatID = chat.ID
		if err := e.app.Store.AddMessage(ctx, e.user, m); err != nil {
			t.Fatal(err)
		}
	}
	add(&sova.Message{Role: "user", Content: "What is the Vostok budget?", Mode: "docs"})
	add(&sova.Message{Role: "assistant", Mode: "docs", FinishReason: "stop", Content: "The budget is five million roubles [1].",
		Sources: []sova.Source{{Number: 1, URL: hits.Hits[0].URL, Title: "vostok.md", Kind: "document"}}})
	questions := "Before I start the research, a few questions:\n\n1. Which year?\n2. Which currency?\n\nAnswer in your next message."
	parts, _ := json.Marshal([]map[string]any{{"type": "text", "text": questions}, {"type": "data-clarification", "data": map[string]any{"runId": "r", "questions": []string{"Which year?", "Which currency?"}}}})
	add(&sova.Message{Role: "user", Content: "Compare it with last year", Mode: "sgr_agent"})
	add(&sova.Message{Role: "assistant", Mode: "sgr_agent", FinishReason: "stop", Content: questions, Parts: parts})

	tb := newTab(t, browser)
	tb.do(chromedp.EmulateViewport(1280, 860), chromedp.Navigate(e.srv.URL+"/c/"+chat.ID))
	tb.media("light")
	tb.wait(`document.querySelectorAll('.turn').length === 2 && document.querySelector('.answer .cite')`, "the chat")

	// The questions show once: in the card, not again as the answer.
	var clar struct {
		Count  int
		Card   int
		Answer string
		Foot   bool
	}
	tb.eval(`(() => { const t = document.querySelectorAll('.turn')[1]; return {count: t.innerText.split('Which year?').length - 1, card: t.querySelectorAll('.clarify-questions li').length, answer: t.querySelector('.answer').textContent, foot: !t.querySelector('.turn-foot').hidden}; })()`, &clar)
	if clar.Count != 1 || clar.Card != 2 || clar.Answer != "" || clar.Foot {
		t.Errorf("clarification: %+v", clar)
	}

	// The citation marker opens the passage in the side panel.
	tb.do(chromedp.Click(css(".turn:first-child .answer .cite")))
	tb.wait(`document.querySelector('.passage-panel .passage-chunk.cited')`, "the passage panel")
	var panel struct{ Doc, Cited, All string }
	tb.eval(`({doc: document.querySelector('.passage-doc strong').textContent, cited: document.querySelector('.passage-chunk.cited').textContent, all: document.querySelector('.passage-body').textContent})`, &panel)
	if panel.Doc != "Vostok" || !strings.Contains(panel.Cited, "five million roubles") || strings.Contains(panel.All, "null") || strings.Contains(panel.All, "undefined") {
		t.Errorf("panel %+v", panel)
	}
	tb.screenshot("ui-passage-panel")
	tb.do(chromedp.KeyEvent("\x1b"))
	tb.wait(`!document.querySelector('.passage-panel')`, "the panel to close")
	// The source card opens it too.
	tb.do(chromedp.Click(css(".turn:first-child .source-card.passage-link")))
	tb.wait(`document.querySelector('.passage-panel .passage-chunk.cited')`, "the panel from the card")
}
