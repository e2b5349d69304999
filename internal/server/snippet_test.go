package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/sova-ai/sova"
)

// pagesUnreadable makes the fetcher refuse the test site (on loopback):
// every page read fails, and search answers from the snippets.
var pagesUnreadable = map[string]string{"SOVA_FETCH_ALLOW_HOSTS": "searx.invalid"}

// When no page could be read, the sources an answer cites are the search
// engine's snippets: the stream's source parts, the finish and the stored
// message say so.
func TestSearchSnippetOnlySources(t *testing.T) {
	e := newEnv(t, pagesUnreadable)
	resp := e.post(t, "/api/search", `{"id":"chat-s","group":"search","messages":[{"id":"m1","role":"user","parts":[{"type":"text","text":"How did presidents describe the economy in the 1930s?"}]}]}`)
	defer resp.Body.Close()
	chunks := frames(t, resp.Body)
	var cited int
	for _, c := range chunks {
		switch c["type"] {
		case "source-url":
			cited++
			pm, _ := c["providerMetadata"].(map[string]any)
			if sv, _ := pm["sova"].(map[string]any); sv["snippetOnly"] != true {
				t.Errorf("source part without the snippet-only mark: %v", c)
			}
		case "finish":
			md, _ := c["messageMetadata"].(map[string]any)
			srcs, _ := md["sources"].([]any)
			if len(srcs) == 0 {
				t.Errorf("finish without sources: %v", c)
			}
			for _, s := range srcs {
				if s.(map[string]any)["snippetOnly"] != true {
					t.Errorf("finish source without the mark: %v", s)
				}
			}
		}
	}
	if cited == 0 {
		t.Fatal("no source cited")
	}

	r, err := http.Get(e.srv.URL + "/api/chats/chat-s")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	var got struct{ Messages []sova.Message }
	if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if len(got.Messages) != 2 || len(got.Messages[1].Sources) != cited {
		t.Fatalf("stored: %+v", got.Messages)
	}
	for _, s := range got.Messages[1].Sources {
		if !s.SnippetOnly {
			t.Errorf("stored source %d without the mark", s.Number)
		}
	}
}

// The browser UI labels such sources "snippet only", live and reopened.
func TestBrowserSnippetOnlySources(t *testing.T) {
	browser := newBrowser(t)
	e := newEnv(t, pagesUnreadable)
	tb := newTab(t, browser)
	tb.do(chromedp.EmulateViewport(1280, 860), chromedp.Navigate(e.srv.URL+"/"))
	tb.wait(`document.body.classList.contains('ready')`, "the page")
	tb.ask("search", "How did presidents describe the economy in the 1930s?")
	tb.wait(`document.querySelector('.turn-foot:not([hidden])') && document.querySelectorAll('.turn .source-grid.cited .source-card').length > 0`, "the answer")
	check := func(when string) {
		var cards []struct{ Flag, Title string }
		tb.eval(`[...document.querySelectorAll('.turn .source-grid.cited .source-card')].map(c => ({flag: c.querySelector('.sc-flag')?.textContent || '', title: c.title}))`, &cards)
		if len(cards) == 0 {
			t.Fatalf("%s: no cited source cards", when)
		}
		for i, c := range cards {
			if c.Flag != "snippet only" || !strings.Contains(c.Title, "could not be read") {
				t.Errorf("%s: card %d = %+v, want the snippet-only label and hint", when, i+1, c)
			}
		}
	}
	check("live")
	tb.do(chromedp.Reload())
	tb.wait(`document.querySelectorAll('.turn .source-grid.cited .source-card').length > 0`, "the reopened chat")
	check("reopened")
}
