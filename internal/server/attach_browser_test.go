package server_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sova-ai/sova/internal/llm/llmtest"
)

// A file attached to a question goes to the chat's own space, shows its
// upload, and is searched with the question; a file over the size limit
// shows the server's reason and is not added.
func TestBrowserAttachFiles(t *testing.T) {
	browser := newBrowser(t)
	e := newSpacesEnv(t, map[string]string{"SOVA_SPACES_MAX_UPLOAD_BYTES": "20000"})
	dir := t.TempDir()
	small := filepath.Join(dir, "vostok-budget.md")
	big := filepath.Join(dir, "archive.txt")
	if err := os.WriteFile(small, []byte("# Vostok budget\n\nThe Vostok expedition budget for the year is seven million roubles, approved by the board in March.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(big, []byte(strings.Repeat("a long archive line\n", 2000)), 0o644); err != nil {
		t.Fatal(err)
	}
	var sawDoc atomic.Bool
	e.model.Handle(func(r *llmtest.Request) llmtest.Reply {
		if b, _ := json.Marshal(r); strings.Contains(string(b), "seven million roubles") {
			sawDoc.Store(true)
		}
		return e.model.Respond(r)
	})

	for _, size := range []struct {
		name   string
		w, h   int64
		mobile bool
	}{{"desktop", 1366, 900, false}, {"phone", 390, 844, true}} {
		tb := newTab(t, browser)
		if size.mobile {
			tb.do(chromedp.EmulateViewport(size.w, size.h, chromedp.EmulateScale(2), chromedp.EmulateMobile))
		} else {
			tb.do(chromedp.EmulateViewport(size.w, size.h))
		}
		tb.do(chromedp.Navigate(e.srv.URL + "/"))
		tb.wait(`document.body.classList.contains('ready') && document.querySelector('.attach-btn')`, "the attach button")
		if size.mobile {
			// The phone: a file over the limit says why, in the composer.
			tb.do(chromedp.SetUploadFiles(css(".attach-input"), []string{big}))
			tb.wait(`document.querySelector('.attach-item.error .attach-error')`, "the size error")
			var msg string
			var overflow bool
			tb.eval(`document.querySelector('.attach-item.error .attach-error').textContent`, &msg)
			tb.eval(`document.documentElement.scrollWidth > innerWidth`, &overflow)
			if !strings.Contains(msg, "20000") || overflow {
				t.Errorf("size error %q (page overflows: %v)", msg, overflow)
			}
			tb.screenshot("attach-too-big-phone")
			// The space made for the refused first file is not left
			// behind, empty: the desktop chat's is the only one.
			n := -1
			for end := time.Now().Add(20 * time.Second); n != 1 && time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
				var list struct {
					Spaces []struct{ Description string }
				}
				do(t, http.MethodGet, e.srv.URL+"/api/spaces", nil, "", &list)
				n = len(list.Spaces)
			}
			if n != 1 {
				t.Errorf("%d spaces after a refused first upload, want the desktop chat's one", n)
			}
			continue
		}
		tb.do(chromedp.SetUploadFiles(css(".attach-input"), []string{small}))
		tb.wait(`document.querySelector('.attach-item[data-state="done"]')`, "the uploaded file")
		tb.screenshot("attach-desktop")
		tb.ask("search", "What is the Vostok budget this year?")
		tb.wait(`document.querySelector('.turn-foot:not([hidden])') && !document.querySelector('.attach-item')`, "the answer")
		var chatID string
		tb.eval(`location.pathname.slice(3)`, &chatID)
		if !sawDoc.Load() {
			t.Error("the attached file was not searched with the question")
		}
		var list struct {
			Spaces []struct {
				Description   string
				DocumentCount int
			}
		}
		if code := do(t, http.MethodGet, e.srv.URL+"/api/spaces", nil, "", &list); code != 200 || len(list.Spaces) != 1 ||
			list.Spaces[0].Description != "sova:chat:"+chatID || list.Spaces[0].DocumentCount != 1 {
			t.Errorf("spaces after attaching: %d %+v", code, list.Spaces)
		}
	}
}
