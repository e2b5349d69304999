package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// The page's chrome on small and translated screens: in Russian, an
// answer with its footer and follow-up chips fits a 390 and a 360 px
// phone; a follow-up chip that wraps is a rounded box, not an oval; the
// form that connects a source uses the sidebar's width.
func TestBrowserChromeFits(t *testing.T) {
	browser := newBrowser(t)
	e := newSpacesEnv(t, nil)
	if _, err := e.app.Spaces.CreateSpace(t.Context(), e.user, "Cloud", ""); err != nil {
		t.Fatal(err)
	}
	tb := newTab(t, browser)
	ua, err := chromedp.Run(tb.ctx, chromedp.Evaluate[string](`navigator.userAgent`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(tb.ctx, emulation.SetUserAgentOverride, emulation.SetUserAgentOverrideParams{UserAgent: ua, AcceptLanguage: "ru-RU,ru"}); err != nil {
		t.Fatal(err)
	}
	tb.do(chromedp.EmulateViewport(1366, 900), chromedp.Navigate(e.srv.URL+"/"))
	tb.media("dark")
	tb.wait(`document.body.classList.contains('ready') && document.querySelector('#spaces .space-name')`, "the page")

	// The connect form in the sidebar.
	tb.eval(`document.querySelector('#spaces .space-name').click(), true`, nil)
	tb.wait(`document.querySelector('#spaces .connector-form input')`, "the connector form")
	var form struct{ Input, Sidebar float64 }
	tb.eval(`({input: document.querySelector('#spaces .connector-form input').getBoundingClientRect().width,
		sidebar: document.querySelector('#sidebar').getBoundingClientRect().width})`, &form)
	if form.Input < form.Sidebar-70 {
		t.Errorf("connector input %.0f px wide in a %.0f px sidebar", form.Input, form.Sidebar)
	}
	tb.screenshot("chrome-sidebar-connector-dark")

	tb.ask("search", "Как президенты описывали экономику в 1930-е?")
	tb.wait(`document.querySelector('.turn .turn-foot:not([hidden])')`, "the answer")
	// Follow-up chips as the turn draws them, one long enough to wrap.
	tb.eval(`import('/assets/js/convenience.js').then(m => {
		const chips = m.followUpChips(['Как Рузвельт объяснял банковские каникулы в первой беседе у камина и почему люди ему поверили?', 'А Гувер?'], () => {});
		document.querySelector('.turn .extras').append(chips);
		return true;
	})`, nil)
	// A sandbox chart (white, from matplotlib) is inverted in dark mode;
	// a photo is not.
	var filters []string
	tb.eval(`(() => {
		const a = document.querySelector('.turn .answer');
		const chart = document.createElement('img'); chart.setAttribute('src', '/api/runs/r1/files/charts/c.png');
		const photo = document.createElement('img'); photo.setAttribute('src', '/api/image?url=x');
		a.append(chart, photo);
		const out = [getComputedStyle(chart).filter, getComputedStyle(photo).filter];
		chart.remove(); photo.remove();
		return out;
	})()`, &filters)
	if len(filters) != 2 || !strings.Contains(filters[0], "invert") || filters[1] != "none" {
		t.Errorf("dark-mode filters of a chart and a photo: %v", filters)
	}
	for _, w := range []int64{390, 360} {
		tb.do(chromedp.EmulateViewport(w, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile))
		tb.eval(`new Promise(r => requestAnimationFrame(() => r(true)))`, nil)
		var fit struct {
			Page, Foot bool
			Wide       []string
			Ovals      []string
		}
		tb.eval(`(() => {
			const out = {page: document.documentElement.scrollWidth <= innerWidth, wide: [], ovals: []};
			const foot = document.querySelector('.turn .turn-foot');
			out.foot = foot.scrollWidth <= foot.clientWidth + 1;
			for (const el of document.querySelectorAll('.turn *')) {
				const r = el.getBoundingClientRect();
				if (r.width && r.right > innerWidth + 1 && el.checkVisibility() && !el.closest('pre, .source-grid, .md table')) out.wide.push(el.className || el.tagName);
			}
			for (const c of document.querySelectorAll('.followup-chip')) {
				const r = c.getBoundingClientRect();
				if (r.height > 40 && parseFloat(getComputedStyle(c).borderTopLeftRadius) >= r.height / 2 - 1) out.ovals.push(c.textContent);
			}
			return out;
		})()`, &fit)
		if !fit.Page || !fit.Foot || len(fit.Wide) > 0 || len(fit.Ovals) > 0 {
			t.Errorf("%d px: %+v", w, fit)
		}
		tb.eval(`document.querySelector('.turn .turn-foot').scrollIntoView({block: 'center'}), true`, nil)
		tb.screenshot("chrome-ru-phone-" + map[int64]string{390: "390", 360: "360"}[w])
	}
}

// Esc stops the run on screen; with the mode menu open it closes the menu
// first and the run goes on.
func TestBrowserEscStops(t *testing.T) {
	browser := newBrowser(t)
	e := newEnv(t, nil)
	e.site.SetDelay(2 * time.Second) // the run spends seconds reading pages
	tb := newTab(t, browser)
	tb.do(chromedp.EmulateViewport(1366, 900), chromedp.Navigate(e.srv.URL+"/"))
	tb.ask("search", "What did Hoover say about prosperity?")
	tb.wait(`document.querySelector('#send.stop') && document.querySelector('.turn .page[data-state="reading"]')`, "the run reading pages")
	tb.do(chromedp.Click(css("#mode-btn")))
	tb.wait(`!document.querySelector('#mode-menu').hidden`, "the menu")
	tb.do(chromedp.KeyEvent(kb.Escape))
	tb.wait(`document.querySelector('#mode-menu').hidden`, "the menu closed")
	var running bool
	tb.eval(`!!document.querySelector('#send.stop')`, &running)
	if !running {
		t.Fatal("Esc that closed the menu also stopped the run")
	}
	tb.do(chromedp.KeyEvent(kb.Escape))
	tb.wait(`document.querySelector('.turn .turn-error.note:not([hidden])') && !document.querySelector('#send.stop')`, "the run stopped by Esc")
}

// A code block in an answer has a copy button that copies the code alone.
func TestBrowserCodeCopy(t *testing.T) {
	browser := newBrowser(t)
	e := newEnv(t, nil)
	e.model.Answer = "Print it with the standard library [1]:\n\n```go\nfmt.Println(\"hi\")\n```\n\nThat is all [2]."
	tb := newTab(t, browser)
	tb.do(chromedp.EmulateViewport(1366, 900), chromedp.Navigate(e.srv.URL+"/"))
	tb.ask("search", "How do I print in Go?")
	tb.wait(`document.querySelector('.turn .turn-foot:not([hidden])') && document.querySelector('.turn .answer pre .code-copy')`, "the answer's code block")
	tb.eval(`Object.defineProperty(navigator, 'clipboard', {configurable: true, value: {writeText: async (s) => { window.__copied = s; }}}), true`, nil)
	tb.do(chromedp.Click(css(".turn .answer pre .code-copy")))
	tb.wait(`window.__copied !== undefined`, "the copy")
	var copied string
	tb.eval(`window.__copied`, &copied)
	if copied != `fmt.Println("hi")` {
		t.Errorf("copied %q", copied)
	}
	tb.screenshot("code-copy")

	// The answer's Copy keeps its sources.
	tb.eval(`window.__copied = undefined, true`, nil)
	tb.do(chromedp.Click(css(".turn .turn-foot .ghost-btn")))
	tb.wait(`window.__copied !== undefined`, "the answer copied")
	tb.eval(`window.__copied`, &copied)
	if !strings.HasPrefix(copied, "Print it with the standard library [1]:") || !strings.Contains(copied, "\nSources:\n[1] ") || !strings.Contains(copied, e.site.URL+"/a/") {
		t.Errorf("copied answer %q", copied)
	}
}

// The sidebar's search finds chats by what was said in them, not only by
// their titles (GET /api/chats?q=, the messages' full-text index).
func TestBrowserChatContentSearch(t *testing.T) {
	browser := newBrowser(t)
	e := newEnv(t, nil)
	ids := map[string]string{}
	for _, q := range []string{"What is a tidal barrage?", "Tell me about the weather in Oslo"} {
		resp := e.post(t, "/api/search", `{"group":"chat","messages":[{"role":"user","parts":[{"type":"text","text":"`+q+`"}]}]}`)
		ids[q] = resp.Header.Get("X-Chat-ID")
		frames(t, resp.Body)
		resp.Body.Close()
	}
	if _, body := e.as(t, "", "GET", "/api/chats?q=barrages", ""); !strings.Contains(body, ids["What is a tidal barrage?"]) || strings.Contains(body, ids["Tell me about the weather in Oslo"]) {
		t.Fatalf("GET /api/chats?q=barrages: %s", body)
	}
	tb := newTab(t, browser)
	tb.do(chromedp.EmulateViewport(1366, 900), chromedp.Navigate(e.srv.URL+"/"))
	tb.wait(`document.querySelectorAll('.chat-item').length === 2`, "two chats")
	tb.do(chromedp.SendKeys(css(".chat-search"), "barrage"))
	tb.wait(`document.querySelectorAll('.chat-item').length === 1 && document.querySelector('.chat-item').dataset.id === `+jsString(ids["What is a tidal barrage?"]), "the chat that spoke of barrages")
	tb.screenshot("chat-content-search")
}
