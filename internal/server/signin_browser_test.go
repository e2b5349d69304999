package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sova-ai/sova"
)

// With accounts, the page shows the sign-in form; signing in opens the
// app with the person's name and a sign-out item, which brings the form
// back.
func TestBrowserSignIn(t *testing.T) {
	browser := newBrowser(t)
	e := newAccountsEnv(t, "sqlite", nil)
	e.addUser(t, "ann", sova.RoleFree, "ann's password")
	tb := newTab(t, browser)
	tb.do(chromedp.Navigate(e.srv.URL + "/"))
	tb.wait(`document.querySelector('#signin') !== null && document.querySelector('#app').hidden`, "the sign-in form")
	tb.screenshot("ui-signin")

	tb.do(chromedp.SendKeys(css("#signin-name"), "ann"), chromedp.SendKeys(css("#signin-password"), "not it at all"),
		chromedp.Click(css(".signin-submit")))
	tb.wait(`!document.querySelector('#signin-error').hidden && document.querySelector('#signin-error').textContent.includes('wrong name or password')`, "the error")

	tb.do(chromedp.SendKeys(css("#signin-password"), "ann's password"), chromedp.Click(css(".signin-submit")))
	waitAcrossReload(tb, `document.querySelector('#account-name')?.textContent === 'ann' && !document.querySelector('#app').hidden && document.querySelector('#signin') === null`, "the app, signed in")
	var cookie string
	tb.eval(`document.cookie`, &cookie)
	if cookie != "" {
		t.Errorf("the session cookie is readable by scripts: %q", cookie)
	}
	tb.do(chromedp.Click(css("#sign-out")))
	waitAcrossReload(tb, `document.querySelector('#signin') !== null`, "the sign-in form after signing out")
}

// waitAcrossReload is tab.wait for a condition that holds after the page
// navigates (sign-in and sign-out reload it): a poll cut short by the
// navigation is started again.
func waitAcrossReload(tb *tab, cond, what string) {
	tb.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := chromedp.Run(tb.ctx, chromedp.Poll[chromedp.Void](cond, chromedp.WithPollingTimeout(30*time.Second), chromedp.WithPollingInterval(25*time.Millisecond)))
		if err == nil {
			return
		}
		if !strings.Contains(err.Error(), "navigated") || time.Now().After(deadline) {
			tb.t.Fatalf("waiting for %s: %v", what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
