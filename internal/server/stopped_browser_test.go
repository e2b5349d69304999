package server_test

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// stepsSeen is what a turn shows of a run's work: its queries, the pages
// it read or was reading, and the sources it found.
type stepsSeen struct {
	Queries []string
	Pages   int
	Sources int
	Stopped bool
}

const stepsSeenJS = `(() => { const t = document.querySelector('.turn:last-child');
	return {queries: [...t.querySelectorAll('.query')].map(q => q.textContent.trim()).sort(),
		pages: t.querySelectorAll('.page').length, sources: t.querySelectorAll('.source-card').length,
		stopped: !!t.querySelector('.turn-error.note:not([hidden])')}; })()`

// A run stopped while it reads pages keeps, after a reload, the queries,
// pages and sources it showed when it was stopped.
func TestBrowserStoppedTurnKeepsSteps(t *testing.T) {
	browser := newBrowser(t)
	e := newEnv(t, nil)
	e.site.SetDelay(3 * time.Second) // the run spends seconds reading pages
	tb := newTab(t, browser)
	tb.do(chromedp.EmulateViewport(1366, 900), chromedp.Navigate(e.srv.URL+"/"))
	tb.ask("search", "What did Hoover say about prosperity?")
	tb.wait(`document.querySelector('#send.stop') && document.querySelector('.turn .page[data-state="reading"]') && document.querySelector('.turn .source-card') && location.pathname.startsWith('/c/')`, "the run reading pages")
	tb.do(chromedp.Click(css("#send")))
	tb.wait(`document.querySelector('.turn .turn-error.note:not([hidden])') && !document.querySelector('#send.stop')`, "the stopped run")
	var live stepsSeen
	tb.eval(stepsSeenJS, &live)
	if len(live.Queries) == 0 || live.Pages == 0 || live.Sources == 0 {
		t.Fatalf("the live turn showed %+v", live)
	}
	var chatID string
	tb.eval(`location.pathname.slice(3)`, &chatID)
	// The cancelled answer is stored when the run has ended.
	deadline := time.Now().Add(20 * time.Second)
	for len(storedModes(t, e, chatID)) < 2 {
		if time.Now().After(deadline) {
			t.Fatal("the stopped answer was not stored")
		}
		time.Sleep(50 * time.Millisecond)
	}
	tb.do(chromedp.Reload())
	tb.wait(`document.querySelector('.turn .turn-error.note:not([hidden])')`, "the stored stopped turn")
	var stored stepsSeen
	tb.eval(stepsSeenJS, &stored)
	if len(stored.Queries) != len(live.Queries) || stored.Pages != live.Pages || stored.Sources != live.Sources || !stored.Stopped {
		t.Errorf("after a reload the stopped turn shows %+v; live it showed %+v", stored, live)
	}
	tb.screenshot("stopped-turn-reloaded")
}
