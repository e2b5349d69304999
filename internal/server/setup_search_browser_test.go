package server_test

import (
	"context"
	"log/slog"
	"net"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/sova-ai/sova/internal/doctor"
	"github.com/sova-ai/sova/internal/server"
)

// A server whose web search answers nowhere says so in the banner, naming
// the provider and what to set; a question asked anyway ends in an error
// that names web search, not "nothing found".
func TestBrowserSetupBannerSearch(t *testing.T) {
	browser := newBrowser(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String()
	_ = ln.Close()
	e := newEnv(t, map[string]string{"SOVA_SEARXNG_URL": refused})
	e.model.SetModels(e.app.Config.Model, e.app.Config.FastModel) // the model endpoint is fine
	report := doctor.AtStart(context.Background(), e.app.Config, slog.New(slog.DiscardHandler), doctor.Options{})
	var problems setupFrom
	for _, c := range report.Failed() {
		problems = append(problems, server.SetupProblem{Check: c.Name, Fix: c.Fix})
	}
	a := e.app
	srv := httptest.NewServer(server.New(server.Options{Service: a.Service, Store: a.Store, Auth: testAuth(a), Version: "test", Images: a.Images, Setup: problems}))
	t.Cleanup(srv.Close)

	tb := newTab(t, browser)
	tb.do(chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile), chromedp.Navigate(srv.URL+"/"))
	tb.wait(`document.querySelector('#setup-banner')`, "the setup banner")
	var b struct {
		Text     string
		Checks   []string
		Overflow bool
	}
	tb.eval(`(() => { const b = document.querySelector('#setup-banner');
		return {text: b.innerText, checks: [...b.querySelectorAll('li')].map(l => l.dataset.check), overflow: document.documentElement.scrollWidth > innerWidth}; })()`, &b)
	if len(b.Checks) != 1 || b.Checks[0] != "web search: searxng" || !strings.Contains(b.Text, "Web search does not answer (searxng)") ||
		!strings.Contains(b.Text, "SOVA_SEARXNG_URL") || strings.Contains(b.Text, refused) || b.Overflow {
		t.Errorf("banner %+v", b)
	}
	tb.screenshot("setup-banner-search-phone")

	tb.ask("search", "How do tidal stream turbines compare with barrages?")
	tb.wait(`document.querySelector('.turn .turn-error:not([hidden]) .error-text')`, "the run's error")
	var msg string
	tb.eval(`document.querySelector('.turn .turn-error .error-text').innerText`, &msg)
	t.Logf("error shown: %q", msg)
	if !strings.Contains(msg, "web search failed") || !strings.Contains(msg, "searxng") || strings.Contains(msg, "found nothing") {
		t.Errorf("the run's error reads %q", msg)
	}
}
