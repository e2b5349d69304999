package server_test

// The search groups in a real headless Chromium: one run per group against
// the local fakes, each tool's result drawn by its view (js/views/groups.js),
// remote images through the image proxy, a screenshot per group in
// test/artifacts/<group>.png; and the mode menu, every entry reachable on a
// 900 px tall window and on a phone.

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
)

func TestBrowserGroups(t *testing.T) {
	browser := newBrowser(t)
	e := newGroupEnv(t, allKeys(nil))
	calls := map[string][]llm.ToolCall{
		"web": {
			{ID: "a", Name: "web_search", Arguments: `{"queries":["eiffel tower","eiffel tower history","eiffel tower height"]}`},
			{ID: "b", Name: "get_weather_data", Arguments: `{"location":"Berlin","days":5}`},
			{ID: "c", Name: "nearby_places_search", Arguments: `{"location":"Red Square, Moscow","type":"cafe","radius":500}`},
			{ID: "d", Name: "track_flight", Arguments: `{"flight_number":"BA283"}`},
			{ID: "e", Name: "movie_or_tv_search", Arguments: `{"query":"Inception"}`},
		},
		"stocks": {
			{ID: "a", Name: "stock_chart", Arguments: `{"title":"Apple and Toyota","symbols":["AAPL","7203.T"],"range":"5d"}`},
			{ID: "b", Name: "currency_converter", Arguments: `{"from":"USD","to":["EUR","GBP"],"amount":100}`},
		},
		"crypto": {
			{ID: "a", Name: "coin_data", Arguments: `{"coinId":"bitcoin"}`},
			{ID: "b", Name: "coin_ohlc", Arguments: `{"coinId":"bitcoin","days":"7"}`},
		},
	}
	e.model.GroupCalls = func(r *llmtest.Request) []llm.ToolCall {
		for _, g := range []string{"web", "stocks", "crypto"} {
			if r.HasTool(calls[g][1].Name) {
				return calls[g]
			}
		}
		return nil
	}
	// What each group's views must show: a selector inside the turn's
	// tool views (or under the answer) and how many at least.
	groups := []struct {
		id, question string
		want         map[string]int
	}{
		{"web", "Tell me about the Eiffel Tower, Berlin's weather, cafés near Red Square, flight BA283 and Inception", map[string]int{
			".g-images .g-image": 3, ".g-weather .g-forecast li": 3, ".g-places .g-place": 2, ".g-flight .g-flight-code": 2, ".g-film .g-poster": 1}},
		{"academic", "attention in transformer models", map[string]int{".g-papers .g-paper": 2, ".g-paper .g-chip.pdf": 1}},
		{"youtube", "how do go channels work", map[string]int{".g-videos .g-video": 2, ".g-video .g-thumb": 2, ".g-transcript .g-time": 1}},
		{"reddit", "sqlc or gorm", map[string]int{".g-reddit .g-post": 2}},
		{"code", "range over func iterators", map[string]int{".g-code li": 2}},
		{"x", "what do people say about go 1.23", map[string]int{".g-x .g-xpost": 2}},
		{"stocks", "How did Apple and Toyota do?", map[string]int{".g-stocks svg.g-chart .g-line-path": 2, ".g-stocks .g-legend-item": 2, ".g-fx .g-fx-to": 2}},
		{"crypto", "How is bitcoin doing this week?", map[string]int{".g-coin .g-price": 1, ".g-ohlc svg.g-candles .g-candle": 5}},
	}
	tb := newTab(t, browser)
	tb.do(chromedp.EmulateViewport(1280, 900), chromedp.Navigate(e.srv.URL+"/"))
	tb.media("light")
	tb.wait(`document.body.classList.contains('ready')`, "the page")
	for i, g := range groups {
		t.Run(g.id, func(t *testing.T) {
			tb.t = t
			if i > 0 {
				tb.do(chromedp.Click(css("#new-chat")))
				tb.wait(`document.querySelectorAll('.turn').length === 0`, "a new chat")
			}
			tb.ask(g.id, g.question)
			tb.wait(`(() => { const t = document.querySelector('.turn'); return t && !t.querySelector('.turn-foot').hidden && t.querySelector('.answer').textContent.includes('The sources agree'); })()`, g.id+" answer")
			// Steps fold when the answer comes: open them to see the views.
			tb.eval(`document.querySelector('.turn .steps').open = true, true`, nil)
			for sel, n := range g.want {
				tb.wait(fmt.Sprintf(`document.querySelectorAll('.turn %s').length >= %d`, sel, n), g.id+": "+sel)
			}
			// Remote images load through the proxy, and load.
			var imgs []struct{ Src, State string }
			tb.eval(`[...document.querySelectorAll('.turn .g-view img, .turn .g-images img')].map(i => ({src: i.getAttribute('src'), state: i.complete ? (i.naturalWidth > 0 ? 'ok' : 'broken') : 'loading'}))`, &imgs)
			for _, im := range imgs {
				if !strings.HasPrefix(im.Src, "/api/image?url=") {
					t.Errorf("an image loads from %s, not through the proxy", im.Src)
				}
			}
			tb.wait(`[...document.querySelectorAll('.turn .g-view img, .turn .g-images img')].every(i => i.complete && i.naturalWidth > 0)`, g.id+" images loaded")
			tb.do(chromedp.EmulateViewport(1280, 2400))
			tb.screenshot(g.id)
			tb.do(chromedp.EmulateViewport(1280, 900))
		})
	}
	tb.t = t
	// A stored chat draws its tools' views again from the stored results.
	tb.do(chromedp.Reload())
	tb.wait(`document.querySelector('.turn .answer') && document.querySelector('.turn .answer').textContent.includes('The sources agree')`, "the stored chat")
	tb.eval(`document.querySelector('.turn .steps').open = true, true`, nil)
	tb.wait(`document.querySelectorAll('.turn .g-ohlc svg.g-candles .g-candle').length >= 5 && document.querySelector('.turn .g-coin .g-price')`, "the stored crypto views")
}

// The mode menu fits the screen: on a 900 px tall window and on a phone,
// every group and mode can be scrolled to and clicked, and names are
// translated.
func TestBrowserModeMenuFits(t *testing.T) {
	browser := newBrowser(t)
	e := newGroupEnv(t, nil)
	for _, size := range []struct {
		name string
		w, h int64
		mob  bool
	}{{"desktop-900", 1280, 900, false}, {"phone", 390, 700, true}} {
		t.Run(size.name, func(t *testing.T) {
			tb := newTab(t, browser)
			if size.mob {
				tb.do(chromedp.EmulateViewport(size.w, size.h, chromedp.EmulateScale(2), chromedp.EmulateMobile, chromedp.EmulatePortrait))
			} else {
				tb.do(chromedp.EmulateViewport(size.w, size.h))
			}
			tb.do(chromedp.Navigate(e.srv.URL + "/"))
			tb.wait(`document.querySelectorAll('.mode-option').length >= 10`, "the modes")
			tb.do(chromedp.Click(css("#mode-btn")))
			tb.wait(`!document.querySelector('#mode-menu').hidden`, "the menu open")
			var res struct {
				Total       int
				Unreachable []string
				Names       []string
			}
			tb.eval(`(() => {
				const menu = document.querySelector('#mode-menu');
				const r = menu.getBoundingClientRect();
				const out = {total: 0, unreachable: [], names: []};
				if (r.top < 0 || r.bottom > innerHeight || r.left < 0 || r.right > innerWidth) out.unreachable.push('menu ' + JSON.stringify(r));
				for (const o of menu.querySelectorAll('.mode-option')) {
					out.total++;
					o.scrollIntoView({block: 'nearest'});
					const b = o.getBoundingClientRect();
					const hit = document.elementFromPoint(b.left + b.width / 2, b.top + Math.min(b.height / 2, 12));
					if (!hit || !o.contains(hit)) out.unreachable.push(o.dataset.mode);
					out.names.push(o.dataset.mode + '=' + o.querySelector('.mode-option-name').textContent);
				}
				return out;
			})()`, &res)
			if res.Total < 12 || len(res.Unreachable) > 0 {
				t.Errorf("%d entries, unreachable: %v", res.Total, res.Unreachable)
			}
			for _, want := range []string{"web=Web", "academic=Academic", "stocks=Stocks", "chat=Chat"} {
				if !strings.Contains(strings.Join(res.Names, " "), want) {
					t.Errorf("names %v lack %s", res.Names, want)
				}
			}
			// The last entry (wherever it is) can be picked.
			tb.eval(`(() => { const o = [...document.querySelectorAll('.mode-option')].pop(); o.scrollIntoView({block: 'nearest'}); return true; })()`, nil)
			tb.screenshot("mode-menu-" + size.name)
			tb.do(chromedp.Click(css(`.mode-option[data-mode="chat"]`)))
			tb.wait(`document.querySelector('#mode-btn').dataset.mode === 'chat' && document.querySelector('#mode-menu').hidden`, "chat picked")
		})
	}
}
