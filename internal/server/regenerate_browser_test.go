package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

type storedMsg struct {
	ID, Role, ReplyTo, Content string
}

func storedMessages(t *testing.T, e *env, chatID string) []storedMsg {
	t.Helper()
	_, body := e.as(t, "", "GET", "/api/chats/"+chatID, "")
	var got struct{ Messages []storedMsg }
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("chat %s: %v (%s)", chatID, err, body)
	}
	return got.Messages
}

// Regenerate answers the last question again in place: one turn on the
// page with arrows between the two versions, the question stored once and
// both answers replying to it; the same after a reload; a follow-up then
// goes on in the same chat.
func TestBrowserRegenerate(t *testing.T) {
	browser := newBrowser(t)
	e := newEnv(t, nil)
	tb := newTab(t, browser)
	tb.do(chromedp.EmulateViewport(1366, 900), chromedp.Navigate(e.srv.URL+"/"))
	tb.media("light")
	tb.wait(`document.body.classList.contains('ready')`, "the page")
	tb.ask("chat", "What is a tidal barrage?")
	tb.wait(`document.querySelector('.turn .turn-foot:not([hidden]) .regenerate-btn') && location.pathname.startsWith('/c/')`, "the answer")
	var path string
	tb.eval(`location.pathname`, &path)
	chatID := path[len("/c/"):]

	tb.do(chromedp.Click(css(".turn .regenerate-btn")))
	tb.wait(`document.querySelectorAll('.turn').length === 1 && document.querySelector('.turn .turn-versions-n')?.textContent === '2 / 2' && document.querySelector('.turn .turn-foot:not([hidden])')`, "the second version in place")
	msgs := storedMessages(t, e, chatID)
	if len(msgs) != 3 || msgs[0].Role != "user" || msgs[1].ReplyTo != msgs[0].ID || msgs[2].ReplyTo != msgs[0].ID || msgs[2].Role != "assistant" {
		t.Fatalf("stored after Regenerate: %+v", msgs)
	}
	tb.screenshot("regenerate-desktop")
	tb.do(chromedp.Click(css(".turn .version-prev")))
	tb.wait(`document.querySelectorAll('.turn').length === 1 && document.querySelector('.turn .turn-versions-n')?.textContent === '1 / 2'`, "the first version")

	tb.do(chromedp.Reload())
	tb.wait(`document.querySelectorAll('.turn').length === 1 && document.querySelector('.turn .turn-versions-n')?.textContent === '2 / 2' && document.querySelector('.turn .turn-foot:not([hidden])')`, "the versions after a reload")

	tb.do(chromedp.SendKeys(css("#input"), "And a tidal stream turbine?"))
	tb.enter(false)
	tb.wait(`document.querySelectorAll('.turn').length === 2 && document.querySelectorAll('.turn-foot:not([hidden])').length === 2`, "the follow-up")
	if msgs := storedMessages(t, e, chatID); len(msgs) != 5 {
		t.Errorf("stored after the follow-up: %+v", msgs)
	}

	// Edit rewrites the last question in place and answers it anew.
	tb.do(chromedp.Click(css(".turn:last-child .edit-btn")))
	tb.wait(`document.querySelector('.turn:last-child .question-edit-input') === document.activeElement`, "the question as a form in place")
	tb.eval(`(() => {
		const i = document.querySelector('.turn:last-child .question-edit-input');
		i.value = 'And a tidal lagoon?';
		i.form.requestSubmit();
		return true;
	})()`, nil)
	editDone := `document.querySelectorAll('.turn').length === 2 && document.querySelector('.turn:last-child .turn-question')?.textContent === 'And a tidal lagoon?' && document.querySelector('.turn:last-child .turn-versions-n')?.textContent === '2 / 2' && document.querySelectorAll('.turn-foot:not([hidden])').length === 2`
	tb.wait(editDone, "the edited question answered in place")
	msgs = storedMessages(t, e, chatID)
	if len(msgs) != 7 || msgs[5].Role != "user" || msgs[5].Content != "And a tidal lagoon?" || msgs[5].ReplyTo != msgs[3].ID || msgs[6].ReplyTo != msgs[5].ID {
		t.Fatalf("stored after Edit: %+v", msgs)
	}
	// The export holds the versions the person sees.
	if _, md := e.as(t, "", "GET", "/api/chats/"+chatID+"/export.md", ""); !strings.Contains(md, "## And a tidal lagoon?") || strings.Contains(md, "tidal stream turbine") || strings.Count(md, "Canberra is the capital") != 2 {
		t.Errorf("export:\n%s", md)
	}
	tb.do(chromedp.Reload())
	tb.wait(editDone, "the edit after a reload")
	tb.do(chromedp.Click(css(".turn:last-child .version-prev")))
	tb.wait(`document.querySelector('.turn:last-child .turn-question')?.textContent === 'And a tidal stream turbine?' && document.querySelector('.turn:last-child .turn-versions-n')?.textContent === '1 / 2'`, "the question before the edit")
	tb.do(chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile))
	tb.media("dark")
	tb.eval(`document.querySelector('#scroller').scrollTop = 0, true`, nil)
	tb.screenshot("regenerate-phone-dark")
}
