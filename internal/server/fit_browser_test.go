package server_test

import (
	"testing"

	"github.com/chromedp/chromedp"
)

// In English too (TestBrowserChromeFits covers Russian), an answer with its
// sources, steps, footer and follow-ups fits a 360 px and a 390 px phone:
// the page does not scroll sideways.
func TestBrowserPhoneFitsEnglish(t *testing.T) {
	browser := newBrowser(t)
	e := newEnv(t, map[string]string{"SOVA_DISABLE_FOLLOWUPS": "false"})
	e.model.Answer = richAnswer + "\n\n$$\\sum_{n=1}^{\\infty} \\frac{1}{n^2} = \\frac{\\pi^2}{6} \\quad \\text{and a long formula that goes on} \\quad \\int_0^\\infty e^{-x^2} dx = \\frac{\\sqrt{\\pi}}{2}$$"
	tb := newTab(t, browser)
	tb.do(chromedp.EmulateViewport(360, 780, chromedp.EmulateScale(2), chromedp.EmulateMobile), chromedp.Navigate(e.srv.URL+"/"))
	tb.ask("search", "How did presidents describe the economy in the 1930s, and what did the newspapers of the time make of it?")
	tb.wait(`document.querySelector('.turn .turn-foot:not([hidden])') && document.querySelector('.followup-chip') && document.querySelector('.answer .math-done')`, "the answer")
	for _, w := range []int64{360, 390} {
		tb.do(chromedp.EmulateViewport(w, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile))
		tb.eval(`new Promise(r => requestAnimationFrame(() => r(true)))`, nil)
		var fit struct {
			Scroll, Inner int
			Wide          []string
		}
		tb.eval(`(() => {
			const out = {scroll: document.documentElement.scrollWidth, inner: innerWidth, wide: []};
			for (const el of document.querySelectorAll('.turn *, .composer *, .topbar *')) {
				const r = el.getBoundingClientRect();
				if (r.width && r.right > innerWidth + 1 && el.checkVisibility() && !el.closest('pre, .source-grid, .md table, .math-display')) out.wide.push(el.className || el.tagName);
			}
			return out;
		})()`, &fit)
		if fit.Scroll > fit.Inner || len(fit.Wide) > 0 {
			t.Errorf("%d px: page %d px wide in %d; wider elements %v", w, fit.Scroll, fit.Inner, fit.Wide)
		}
		tb.screenshot("fit-en-phone-" + map[int64]string{390: "390", 360: "360"}[w])
	}
}
