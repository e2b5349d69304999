package server_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// The memories panel and a space's connected source in the browser: add
// memories, ask the memory mode, search and forget; connect a folder to
// a space and see its files synced.
func TestBrowserMemories(t *testing.T) {
	browser := newBrowser(t)
	e := newSpacesEnv(t, nil)
	tb := newTab(t, browser)
	tb.do(chromedp.EmulateViewport(1280, 860), chromedp.Navigate(e.srv.URL+"/"))
	tb.wait(`!document.querySelector('#memories').hidden`, "the memories panel")

	// Add two memories through the panel.
	for _, m := range []string{"I live in Kazan and work as a teacher", "Я люблю чай с чабрецом"} {
		tb.do(chromedp.Click(css(`#memories .spaces-head .icon-btn`)))
		tb.wait(`document.querySelector('#memories .memory-add textarea')`, "the memory form")
		tb.do(chromedp.SendKeys(css("#memories .memory-add textarea"), m), chromedp.Click(css("#memories .memory-add button")))
		tb.wait(`[...document.querySelectorAll('#memories .memory-text')].some(x => x.textContent === `+jsString(m)+`)`, "the memory "+m)
	}
	var texts []string
	tb.eval(`[...document.querySelectorAll('#memories .memory-text')].map(x => x.textContent)`, &texts)
	if len(texts) != 2 || texts[0] != "Я люблю чай с чабрецом" {
		t.Fatalf("memories listed %v", texts)
	}

	// The memory mode finds what was saved.
	tb.ask("memory", "Which city do I live in?")
	tb.wait(`document.querySelector('.turn-foot:not([hidden])') || document.querySelector('.turn-error:not([hidden])')`, "the answer")
	if v := tb.lastTurn(); !strings.Contains(v.Answer, "From your memories: I live in Kazan and work as a teacher") {
		t.Errorf("answer %q", v.Answer)
	}

	// Search narrows the list (Russian stems: чаю finds чай).
	tb.do(chromedp.SendKeys(css("#memories .memory-search"), "чаю"))
	tb.wait(`document.querySelectorAll('#memories .memory-text').length === 1 && document.querySelector('#memories .memory-text').textContent.includes('чабрецом')`, "the search")
	tb.eval(`document.querySelector('#scroller').scrollTop = 0, true`, nil)
	tb.screenshot("memories")

	// Forget it (the second click confirms).
	tb.do(chromedp.Click(css(`#memories .memory .icon-btn`)))
	tb.wait(`document.querySelector('#memories .memory .icon-btn.armed')`, "the armed delete")
	tb.do(chromedp.Click(css(`#memories .memory .icon-btn`)))
	tb.wait(`!document.querySelector('#memories .memory')`, "the memory gone")
	if list, _ := e.app.Memory.List(t.Context(), e.user, 0); len(list) != 1 || !strings.Contains(list[0].Content, "Kazan") {
		t.Errorf("memories after delete: %+v", list)
	}

	// Connect a folder to a new space from the spaces panel.
	dir := t.TempDir()
	writeFile(t, dir, "plans/orion.md", "# Orion\n\nThe Orion launch is in May.\n")
	if _, err := e.app.Spaces.CreateSpace(t.Context(), e.user, "Cloud", ""); err != nil {
		t.Fatal(err)
	}
	tb.do(chromedp.Navigate(e.srv.URL + "/"))
	tb.wait(`[...document.querySelectorAll('#spaces .space-name')].some(b => b.textContent.includes('Cloud'))`, "the space")
	tb.do(chromedp.Click(css("#spaces .space-name")))
	tb.wait(`document.querySelector('#spaces .connector-form')`, "the connector form")
	tb.do(chromedp.SetValue(css("#spaces .connector-form select"), "folder"))
	tb.eval(`document.querySelector('#spaces .connector-form select').dispatchEvent(new Event('change')), true`, nil)
	tb.do(chromedp.SendKeys(css("#spaces .connector-form input[type=text]"), dir), chromedp.Click(css("#spaces .connector-form button")))
	tb.wait(`document.querySelector('#spaces .doc-name')?.textContent === 'plans/orion.md' && document.querySelector('#spaces .connector-source')`, "the synced document")
	var status string
	tb.eval(`document.querySelector('#spaces .connector p').textContent`, &status)
	if !strings.Contains(status, "1 added") || strings.Contains(status+tb.text("#spaces .connector"), "null") {
		t.Errorf("connector status %q", status)
	}
	tb.screenshot("connectors")
}

// text is the text of the first element matching sel.
func (tb *tab) text(sel string) string {
	var s string
	tb.eval(`document.querySelector(`+jsString(sel)+`)?.textContent || ''`, &s)
	return s
}
