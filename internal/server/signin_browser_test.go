package server_test

import (
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
	// The page reloads after signing in.
	time.Sleep(500 * time.Millisecond)
	tb.wait(`document.querySelector('#account-name')?.textContent === 'ann' && !document.querySelector('#app').hidden && document.querySelector('#signin') === null`, "the app, signed in")
	var cookie string
	tb.eval(`document.cookie`, &cookie)
	if cookie != "" {
		t.Errorf("the session cookie is readable by scripts: %q", cookie)
	}
	tb.do(chromedp.Click(css("#sign-out")))
	time.Sleep(500 * time.Millisecond)
	tb.wait(`document.querySelector('#signin') !== null`, "the sign-in form after signing out")
}
