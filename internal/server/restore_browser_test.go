package server_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/sova-ai/sova/internal/doctor"
	"github.com/sova-ai/sova/internal/server"
)

// gatedModes serves e's server with GET /api/modes held until the returned
// release is called, so a page loads its chat before it knows the modes.
func gatedModes(t *testing.T, e *env) (url string, release func()) {
	t.Helper()
	gate := make(chan struct{})
	inner := e.srv.Config.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/modes" {
			select {
			case <-gate:
			case <-r.Context().Done():
				return
			}
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	var closed bool
	return srv.URL, func() {
		if !closed {
			closed = true
			close(gate)
		}
	}
}

// storedModes is the mode of each stored message of a chat.
func storedModes(t *testing.T, e *env, chatID string) []string {
	t.Helper()
	_, body := e.as(t, "", "GET", "/api/chats/"+chatID, "")
	var got struct {
		Messages []struct{ Role, Mode string }
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("chat %s: %v (%s)", chatID, err, body)
	}
	var out []string
	for _, m := range got.Messages {
		out = append(out, m.Role+":"+m.Mode)
	}
	return out
}

// Reopening a chat puts the composer back in the chat's mode even when the
// chat loads before the list of modes, and a follow-up typed there runs in
// that mode, not in the mode the browser last used.
func TestBrowserChatModeRestored(t *testing.T) {
	browser := newBrowser(t)
	e := newEnv(t, nil)
	resp := e.post(t, "/api/search", `{"group":"chat","messages":[{"role":"user","parts":[{"type":"text","text":"What is a barrage?"}]}]}`)
	chatID := resp.Header.Get("X-Chat-ID")
	frames(t, resp.Body)
	resp.Body.Close()
	if chatID == "" {
		t.Fatal("no chat id")
	}

	url, release := gatedModes(t, e)
	defer release()
	tb := newTab(t, browser)
	tb.do(chromedp.EmulateViewport(1366, 900), chromedp.Navigate(url+"/"))
	// The browser's own last mode is search.
	tb.eval(`localStorage.setItem('sova.mode', 'search'), true`, nil)
	tb.do(chromedp.Navigate(url + "/c/" + chatID))
	tb.wait(`document.querySelector('.turn .turn-foot:not([hidden])')`, "the stored chat (its modes still held)")
	release()
	tb.wait(`document.querySelectorAll('.mode-option').length >= 3`, "the modes")
	var mode string
	tb.eval(`document.querySelector('#mode-btn').dataset.mode`, &mode)
	if mode != "chat" {
		t.Fatalf("reopened chat shows mode %q, want chat", mode)
	}

	tb.do(chromedp.SendKeys(css("#input"), "And a tidal stream turbine?"))
	tb.enter(false)
	tb.wait(`document.querySelectorAll('.turn').length === 2 && document.querySelectorAll('.turn-foot:not([hidden])').length === 2`, "the follow-up answer")
	got := storedModes(t, e, chatID)
	if len(got) != 4 || got[3] != "assistant:chat" {
		t.Errorf("stored messages %v: the follow-up did not run in the chat's mode", got)
	}
	tb.screenshot("mode-restored")
}

// setupFrom answers the failures of the start-up checks as `sova serve`
// passes them to the server.
type setupFrom []server.SetupProblem

func (s setupFrom) SetupProblems() []server.SetupProblem { return s }

// A server whose model endpoint refuses its key says so in a banner on
// every page, naming what to set, before anyone asks; a question asked
// anyway ends in an error that names the model endpoint.
func TestBrowserSetupBanner(t *testing.T) {
	browser := newBrowser(t)
	e := newEnv(t, map[string]string{"SOVA_LLM_API_KEY": "wrong-key"})
	e.model.RequireKey("test-key")
	report := doctor.AtStart(context.Background(), e.app.Config, slog.New(slog.DiscardHandler), doctor.Options{})
	var problems setupFrom
	for _, c := range report.Failed() {
		problems = append(problems, server.SetupProblem{Check: c.Name, Fix: c.Fix})
	}
	if len(problems) == 0 {
		t.Fatalf("the checks found nothing wrong: %+v", report)
	}
	a := e.app
	srv := httptest.NewServer(server.New(server.Options{Service: a.Service, Store: a.Store, Auth: testAuth(a), Version: "test", Images: a.Images, Setup: problems}))
	t.Cleanup(srv.Close)

	for _, size := range []struct {
		name   string
		w, h   int64
		mobile bool
		scheme string
	}{{"desktop", 1366, 900, false, "light"}, {"phone-dark", 390, 844, true, "dark"}} {
		tb := newTab(t, browser)
		if size.mobile {
			tb.do(chromedp.EmulateViewport(size.w, size.h, chromedp.EmulateScale(2), chromedp.EmulateMobile))
		} else {
			tb.do(chromedp.EmulateViewport(size.w, size.h))
		}
		tb.media(size.scheme)
		tb.do(chromedp.Navigate(srv.URL + "/"))
		tb.wait(`document.querySelector('#setup-banner')`, "the setup banner")
		var b struct {
			Text     string
			Checks   []string
			Visible  bool
			Overflow bool
		}
		tb.eval(`(() => {
			const b = document.querySelector('#setup-banner');
			const r = b.getBoundingClientRect();
			return {text: b.innerText, checks: [...b.querySelectorAll('li')].map(l => l.dataset.check),
				visible: b.checkVisibility() && r.top >= 0 && r.bottom <= innerHeight && r.height > 20,
				overflow: document.documentElement.scrollWidth > innerWidth || r.right > innerWidth};
		})()`, &b)
		if !b.Visible || b.Overflow || len(b.Checks) != 1 || b.Checks[0] != "API key" ||
			!strings.Contains(b.Text, "refuses the API key") || !strings.Contains(b.Text, "SOVA_LLM_API_KEY") || strings.Contains(b.Text, "wrong-key") {
			t.Errorf("%s: banner %+v", size.name, b)
		}
		tb.screenshot("setup-banner-" + size.name)
		if size.mobile {
			continue
		}
		// Asked anyway, the question fails with the model endpoint's error,
		// not as a search that found nothing.
		tb.ask("search", "How do tidal stream turbines compare with barrages?")
		tb.wait(`document.querySelector('.turn .turn-error:not([hidden]) .error-text')`, "the run's error")
		var msg string
		tb.eval(`document.querySelector('.turn .turn-error .error-text').innerText`, &msg)
		t.Logf("error shown: %q", msg)
		if !strings.Contains(strings.ToLower(msg), "model") || strings.Contains(msg, "found nothing") {
			t.Errorf("the run's error reads %q", msg)
		}
		tb.screenshot("setup-error-answer")
	}
}
