package server_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// mathAnswer has inline and display formulas, prices that are not math,
// and citations.
const mathAnswer = "The energy of a body at rest is $E = mc^2$ [1].\n\n" +
	"$$\\int_0^1 x^2\\,dx = \\frac{1}{3} + \\sum_{n=1}^{\\infty} \\frac{1}{n^2} - \\frac{\\pi^2}{6} + \\sqrt{\\alpha^2 + \\beta^2 + \\gamma^2 + \\delta^2}$$\n\n" +
	"A ticket cost $5 and a meal $10 [2], and \\(a^2 + b^2 = c^2\\) holds."

// Formulas in an answer are drawn (inline and display), prices stay text,
// a display formula does not widen a phone's page, and copying part of an
// answer keeps the sources it cites.
func TestBrowserMathAndCopyWithSources(t *testing.T) {
	browser := newBrowser(t)
	e := newEnv(t, nil)
	e.model.Answer = mathAnswer
	tb := newTab(t, browser)
	tb.do(chromedp.EmulateViewport(1366, 900), chromedp.Navigate(e.srv.URL+"/"))
	tb.ask("search", "What is the energy of a body at rest?")
	tb.wait(`document.querySelector('.turn-foot:not([hidden])') && document.querySelectorAll('.answer .math.math-done').length === 3`, "the formulas drawn")
	var m struct {
		Katex, Display int
		Text           string
	}
	tb.eval(`({katex: document.querySelectorAll('.answer .katex').length, display: document.querySelectorAll('.answer .katex-display').length, text: document.querySelector('.answer').innerText})`, &m)
	if m.Katex != 3 || m.Display != 1 || !strings.Contains(m.Text, "cost $5 and a meal $10") || strings.Contains(m.Text, "$E") {
		t.Errorf("math: %+v", m)
	}
	tb.screenshot("math-desktop")

	// Copy the first paragraph: its text and its cited source.
	var copied string
	tb.eval(`(() => {
		const p = document.querySelector('.answer p');
		const r = document.createRange(); r.selectNodeContents(p);
		const sel = getSelection(); sel.removeAllRanges(); sel.addRange(r);
		const dt = new DataTransfer();
		p.dispatchEvent(new ClipboardEvent('copy', {clipboardData: dt, bubbles: true, cancelable: true}));
		return dt.getData('text/plain');
	})()`, &copied)
	if !strings.Contains(copied, "energy of a body at rest") || !strings.Contains(copied, "Sources:\n[1] ") || strings.Contains(copied, "[2] ") {
		t.Errorf("copied %q", copied)
	}

	tb.do(chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile))
	tb.media("dark")
	tb.eval(`new Promise(r => requestAnimationFrame(() => r(true)))`, nil)
	var fits bool
	tb.eval(`document.documentElement.scrollWidth <= innerWidth && document.querySelector('.answer').scrollWidth <= document.querySelector('.answer').clientWidth + 1`, &fits)
	if !fits {
		t.Error("a display formula widens the phone's page")
	}
	tb.eval(`document.querySelector('.answer .katex-display').scrollIntoView({block: 'center'}), true`, nil)
	tb.screenshot("math-phone-dark")
}
