package server_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
)

// A group's results show with the answer while the steps are folded, the
// same after a reload (videos included, whose model text is not their
// cards' data); list items carry a number only where the answer cites
// them, and that number is the answer's; a tool that failed shows a badge
// on Steps and a line under the answer.
func TestBrowserGroupResults(t *testing.T) {
	browser := newBrowser(t)
	e := newGroupEnv(t, allKeys(nil))
	e.model.GroupCalls = func(r *llmtest.Request) []llm.ToolCall {
		if r.HasTool("stock_chart") {
			return []llm.ToolCall{
				// A symbol the market data service does not know: the call fails
				// (a sloppy range would now be mended, not fail).
				{ID: "a", Name: "stock_chart", Arguments: `{"title":"Apple","symbols":["ZZZQ"],"range":"1mo"}`},
				{ID: "b", Name: "currency_converter", Arguments: `{"from":"USD","to":["EUR"],"amount":100}`},
			}
		}
		return nil
	}
	tb := newTab(t, browser)
	tb.do(chromedp.EmulateViewport(1366, 900), chromedp.Navigate(e.srv.URL+"/"))
	tb.media("light")
	tb.wait(`document.body.classList.contains('ready')`, "the page")

	finished := `(() => { const t = document.querySelector('.turn'); return t && !t.querySelector('.turn-foot').hidden && !t.querySelector('.steps').open; })()`
	// shown: elements matching sel outside the folded steps that a person sees.
	shown := func(sel string) string {
		return `[...document.querySelectorAll('.turn .extras ` + sel + `')].filter(e => e.checkVisibility() && !e.closest('.steps')).length`
	}

	// Videos: with the answer, and again after a reload.
	tb.ask("youtube", "how do go channels work")
	tb.wait(finished, "the youtube answer")
	tb.wait(shown(".tool-result .g-videos .g-video")+` >= 2`, "the videos with the answer")
	tb.screenshot("results-youtube")
	tb.do(chromedp.Reload())
	tb.wait(`document.querySelector('.turn .turn-foot:not([hidden])')`, "the reopened youtube chat")
	tb.wait(shown(".tool-result .g-videos .g-video .g-thumb")+` >= 2`, "the videos after a reload")

	// Papers: numbered only where cited, with the answer's numbers.
	tb.do(chromedp.Click(css("#new-chat")))
	tb.wait(`document.querySelectorAll('.turn').length === 0`, "a new chat")
	tb.ask("academic", "attention in transformer models")
	tb.wait(finished, "the academic answer")
	tb.wait(shown(".g-papers .g-paper")+` >= 2`, "the papers with the answer")
	var papers struct {
		Papers int
		Wrong  []string
		Cited  int
	}
	tb.eval(`(() => {
		const turn = document.querySelector('.turn');
		const cites = new Map([...turn.querySelectorAll('.answer a.cite')].map(a => [a.href, a.dataset.n]));
		const out = {papers: 0, wrong: [], cited: cites.size};
		for (const p of turn.querySelectorAll('.extras .g-paper')) {
			out.papers++;
			const href = p.querySelector('a.g-title')?.href || '';
			const n = p.querySelector('.g-num')?.textContent || '';
			if (n !== (cites.get(href) || '')) out.wrong.push(href + ' numbered "' + n + '", cited as "' + (cites.get(href) || '') + '"');
		}
		return out;
	})()`, &papers)
	if papers.Papers < 2 || len(papers.Wrong) > 0 || turnListIsOrdered(tb, ".g-papers") {
		t.Errorf("papers: %+v", papers)
	}

	// A failed tool: a badge on the folded steps and a line under the answer.
	tb.do(chromedp.Click(css("#new-chat")))
	tb.wait(`document.querySelectorAll('.turn').length === 0`, "a new chat")
	tb.ask("stocks", "How did Apple do?")
	tb.wait(finished, "the stocks answer")
	var failed struct{ Badge, Line string }
	tb.eval(`(() => {
		const turn = document.querySelector('.turn');
		const b = turn.querySelector('.steps > summary .steps-badge.bad');
		const l = turn.querySelector('.extras .tool-failures li[data-tool="stock_chart"]');
		return {badge: b && b.checkVisibility() ? b.textContent : '', line: l && l.checkVisibility() ? l.textContent : ''};
	})()`, &failed)
	if failed.Badge != "1 tool failed" || !strings.Contains(failed.Line, "ZZZQ") {
		t.Errorf("the failed tool shows as %+v", failed)
	}
	tb.wait(shown(".g-fx")+` >= 1`, "the converter's result with the answer")
	tb.screenshot("results-failed-tool")
	tb.do(chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile))
	tb.media("dark")
	var overflow bool
	tb.eval(`document.documentElement.scrollWidth > innerWidth`, &overflow)
	if overflow {
		t.Error("the phone page overflows")
	}
	tb.screenshot("results-failed-tool-phone-dark")
}

// turnListIsOrdered reports whether a list under sel in the turn numbers
// its items (an <ol>).
func turnListIsOrdered(tb *tab, sel string) bool {
	tb.t.Helper()
	var ordered bool
	tb.eval(`!!document.querySelector('.turn `+sel+` ol')`, &ordered)
	return ordered
}
