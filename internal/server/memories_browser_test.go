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
		// Filled and sent in one step in the page: the panel may render
		// again between two protocol calls (its list arriving), which
		// would leave a second call holding a node that is gone.
		tb.eval(`(() => { const f = document.querySelector('#memories .memory-add'); f.querySelector('textarea').value = `+jsString(m)+`; f.querySelector('button').click(); return true; })()`, nil)
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
	tb.eval(`(() => { const i = document.querySelector('#memories .memory-search'); i.value = 'чаю'; i.dispatchEvent(new Event('input', {bubbles: true})); return true; })()`, nil)
	tb.wait(`document.querySelectorAll('#memories .memory-text').length === 1 && document.querySelector('#memories .memory-text').textContent.includes('чабрецом')`, "the search")
	tb.eval(`document.querySelector('#scroller').scrollTop = 0, true`, nil)
	tb.screenshot("memories")

	// Forget it (the second click confirms).
	tb.eval(`document.querySelector('#memories .memory .icon-btn').click(), true`, nil)
	tb.wait(`document.querySelector('#memories .memory .icon-btn.armed')`, "the armed delete")
	tb.eval(`document.querySelector('#memories .memory .icon-btn.armed').click(), true`, nil)
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
	tb.eval(`document.querySelector('#spaces .space-name').click(), true`, nil)
	tb.wait(`document.querySelector('#spaces .connector-form')`, "the connector form")
	tb.eval(`(() => {
		const f = document.querySelector('#spaces .connector-form');
		const kind = f.querySelector('select');
		kind.value = 'folder';
		kind.dispatchEvent(new Event('change'));
		f.querySelector('input[type=text]').value = `+jsString(dir)+`;
		f.querySelector('button').click();
		return true;
	})()`, nil)
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
