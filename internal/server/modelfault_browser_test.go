package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// A question asked in the browser while the model endpoint refuses its
// key, or cannot be reached, ends within 2 s of pressing Enter in an error
// that names the model endpoint and the setting to fix, never as a search
// that found nothing.
func TestBrowserModelFaultNamedWithin2s(t *testing.T) {
	browser := newBrowser(t)
	for _, f := range []struct {
		name, setting string
		env           map[string]string
	}{
		{"wrong key", "SOVA_LLM_API_KEY", map[string]string{"SOVA_LLM_API_KEY": "wrong-key"}},
		{"unreachable", "SOVA_LLM_BASE_URL", map[string]string{"SOVA_LLM_BASE_URL": "http://127.0.0.1:1/v1"}},
	} {
		t.Run(f.name, func(t *testing.T) {
			e := newEnv(t, f.env)
			e.model.RequireKey("test-key")
			for _, mode := range []string{"search", "deep_research"} {
				tb := newTab(t, browser)
				tb.do(chromedp.EmulateViewport(1366, 900))
				tb.do(chromedp.Navigate(e.srv.URL + "/"))
				tb.ask(mode, "How did presidents describe the economy in the 1930s?")
				start := time.Now()
				tb.wait(`document.querySelector('.turn .turn-error:not([hidden]) .error-text')?.innerText.length > 0`, "the run's error")
				took := time.Since(start)
				var msg string
				tb.eval(`document.querySelector('.turn .turn-error .error-text').innerText`, &msg)
				t.Logf("%s: error shown after %s: %q", mode, took.Round(time.Millisecond), msg)
				if !strings.Contains(msg, "model endpoint") || !strings.Contains(msg, f.setting) || strings.Contains(msg, "found nothing") || strings.Contains(msg, "wrong-key") {
					t.Errorf("%s: the run's error reads %q, want the model endpoint and %s named", mode, msg, f.setting)
				}
				if took > 2*time.Second {
					t.Errorf("%s: the error showed %s after Enter, want under 2s", mode, took)
				}
			}
		})
	}
}
