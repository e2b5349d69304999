package server_test

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/sova-ai/sova/internal/server"
)

// The mode menu is compact and grouped: on a phone it fits the screen with
// one line per mode; X without its key is shown off with the reason and
// cannot be picked. The model that answers is chosen in the composer and
// kept as the person's setting.
func TestBrowserModeMenuCompact(t *testing.T) {
	browser := newBrowser(t)
	e := newGroupEnv(t, nil) // no XAI_API_KEY: the x group has no tool
	e.model.SetModels("main-model", "fast-model", "big-model")
	a := e.app
	srv := httptest.NewServer(server.New(server.Options{Service: a.Service, Store: a.Store, Auth: testAuth(a), Version: "test",
		Images: a.Images, Settings: a.Store, Models: a.Model}))
	t.Cleanup(srv.Close)

	for _, size := range []struct {
		name   string
		w, h   int64
		mobile bool
		scheme string
	}{{"desktop", 1366, 900, false, "light"}, {"phone-dark", 390, 844, true, "dark"}} {
		t.Run(size.name, func(t *testing.T) {
			tb := newTab(t, browser)
			if size.mobile {
				tb.do(chromedp.EmulateViewport(size.w, size.h, chromedp.EmulateScale(2), chromedp.EmulateMobile))
			} else {
				tb.do(chromedp.EmulateViewport(size.w, size.h))
			}
			tb.media(size.scheme)
			tb.do(chromedp.Navigate(srv.URL + "/"))
			tb.wait(`document.querySelectorAll('.mode-option').length >= 10 && document.querySelector('#model-select')`, "the modes and the model picker")
			tb.do(chromedp.Click(css("#mode-btn")))
			tb.wait(`!document.querySelector('#mode-menu').hidden`, "the menu")
			var m struct {
				Sections  []string
				TwoLines  []string
				X         string
				XDisabled bool
				Overflow  bool
				MenuH     float64
				Options   int
			}
			tb.eval(`(() => {
				const menu = document.querySelector('#mode-menu');
				const out = {sections: [...menu.querySelectorAll('.mode-section-title')].map(s => s.textContent), twoLines: [], options: 0};
				for (const d of menu.querySelectorAll('.mode-option-desc')) {
					out.options++;
					if (d.getBoundingClientRect().height > parseFloat(getComputedStyle(d).lineHeight) * 1.5) out.twoLines.push(d.closest('.mode-option').dataset.mode);
				}
				const x = menu.querySelector('.mode-option[data-mode="x"]');
				out.x = x ? x.querySelector('.mode-option-desc').textContent : '';
				out.xDisabled = !!x && x.getAttribute('aria-disabled') === 'true';
				out.overflow = document.documentElement.scrollWidth > innerWidth || menu.getBoundingClientRect().right > innerWidth;
				out.menuH = menu.scrollHeight;
				return out;
			})()`, &m)
			if !strings.HasPrefix(strings.Join(m.Sections, ","), "Answer,Research,Focus") {
				t.Errorf("sections %v", m.Sections)
			}
			if len(m.TwoLines) > 0 || m.Overflow || !m.XDisabled || !strings.Contains(m.X, "XAI_API_KEY") {
				t.Errorf("menu %+v", m)
			}
			// One short line a mode: the whole menu is about 36 px a mode.
			if m.MenuH > float64(m.Options)*36+120 {
				t.Errorf("menu %.0f px tall for %d modes", m.MenuH, m.Options)
			}
			tb.screenshot("mode-menu-compact-" + size.name)
			// X cannot be picked.
			tb.eval(`document.querySelector('.mode-option[data-mode="x"]').click(), true`, nil)
			var mode string
			tb.eval(`document.querySelector('#mode-btn').dataset.mode`, &mode)
			if mode == "x" {
				t.Error("the withdrawn x group was picked")
			}
			tb.do(chromedp.Click(css(`.mode-option[data-mode="academic"]`)))
			tb.wait(`document.querySelector('#mode-btn').dataset.mode === 'academic' && document.querySelector('#mode-menu').hidden`, "academic picked")
		})
	}

	// The model picker keeps the choice as the person's setting.
	tb := newTab(t, browser)
	tb.do(chromedp.EmulateViewport(1366, 900), chromedp.Navigate(srv.URL+"/"))
	tb.wait(`document.querySelectorAll('#model-select option').length === 3`, "the models in the composer")
	tb.do(chromedp.SetValue(css("#model-select"), "big-model"))
	tb.eval(`document.querySelector('#model-select').dispatchEvent(new Event('change')), true`, nil)
	tb.wait(`fetch('/api/me').then(r => r.json()).then(b => b.settings?.model === 'big-model')`, "the model saved")
	tb.do(chromedp.Reload())
	tb.wait(`document.querySelector('#model-select')?.value === 'big-model'`, "the model after a reload")
	var opts []string
	tb.eval(`[...document.querySelectorAll('#model-select option')].map(o => o.value + '=' + o.textContent)`, &opts)
	if fmt.Sprint(opts) != "[=main-model fast-model=fast-model big-model=big-model]" {
		t.Errorf("options %v", opts)
	}
}
