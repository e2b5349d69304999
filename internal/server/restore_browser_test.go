package server_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/chromedp/chromedp"
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
