package server_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// The extreme mode in the browser: the plan, the searches with their
// sources, the X search, the code cell with its output and the chart drawn
// by the sandbox as an image from the run-files endpoint, and the chart in
// the answer; again after the chat is reopened. The screenshot is
// test/artifacts/extreme.png.
func TestBrowserExtreme(t *testing.T) {
	needSandbox(t)
	browser := newBrowser(t)
	e := newGroupEnv(t, map[string]string{"XAI_API_KEY": "xai-test-key"})
	tb := newTab(t, browser)
	tb.do(chromedp.EmulateViewport(1280, 1400), chromedp.Navigate(e.srv.URL+"/"))
	tb.media("light")
	tb.wait(`document.body.classList.contains('ready')`, "the page")
	tb.ask("extreme", extremeQuestion)

	loaded := `(sel) => { const i = document.querySelector(sel); return !!i && i.complete && i.naturalWidth > 100; }`
	tb.wait(`(`+loaded+`)('.turn .ext-chart img')`, "the chart of the code cell")
	tb.wait(`(`+loaded+`)('.turn .answer img')`, "the chart in the answer")
	tb.wait(`!document.querySelector('.turn .ext-card .spinner') && document.querySelector('.turn .turn-foot')?.textContent`, "the finished run")

	var v struct {
		Mode     string
		Themes   int
		Todos    int
		Queries  []string
		Sources  int
		X        int
		Output   string
		ChartSrc string
		Answer   string
		Cites    int
	}
	tb.eval(`(() => {
		const turn = document.querySelector('.turn');
		return {
			mode: document.querySelector('#mode-btn').dataset.mode,
			themes: turn.querySelectorAll('.ext-plan .ext-theme').length,
			todos: turn.querySelectorAll('.ext-plan .ext-todos li').length,
			queries: [...turn.querySelectorAll('.ext-query')].map(q => q.dataset.status + ':' + q.querySelector('.ext-title').textContent),
			sources: turn.querySelectorAll('.ext-query .ext-source').length,
			x: turn.querySelectorAll('.ext-x[data-status="completed"] .ext-source').length,
			output: turn.querySelector('.ext-code .ext-out pre')?.textContent || '',
			chartSrc: turn.querySelector('.ext-chart img')?.getAttribute('src') || '',
			answer: turn.querySelector('.answer')?.textContent || '',
			cites: turn.querySelectorAll('.answer a.cite').length,
		};
	})()`, &v)
	if v.Mode != "extreme" || v.Themes != 2 || v.Todos != 3 || len(v.Queries) != 1 || !strings.HasPrefix(v.Queries[0], "completed:") ||
		v.Sources == 0 || v.X == 0 || !strings.Contains(v.Output, "average growth 3.7") ||
		!strings.Contains(v.ChartSrc, "/files/charts/") || v.Cites < 2 || strings.Contains(v.Answer, "[9]") {
		t.Errorf("the page shows %+v", v)
	}
	// Opened, the steps show the plan, the search and the cell with its chart.
	tb.do(chromedp.Click(css(".turn details.steps > summary")))
	tb.wait(`document.querySelector('.turn details.steps').open && document.querySelector('.turn .ext-chart img').checkVisibility()`, "the opened steps")
	tb.do(chromedp.EmulateViewport(1280, 2400))
	tb.screenshot("extreme")

	// Reopened, the chat shows the stored run: the cell with its chart and
	// the answer's chart.
	tb.do(chromedp.Reload())
	tb.wait(`document.body.classList.contains('ready') && document.querySelector('.turn')`, "the reopened chat")
	tb.wait(`(`+loaded+`)('.turn .ext-chart img') && (`+loaded+`)('.turn .answer img')`, "the charts of the stored answer")
}
