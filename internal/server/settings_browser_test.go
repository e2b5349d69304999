package server_test

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sova-ai/sova"
)

// The settings dialog: a free user sees what their limit leaves, opens
// the settings, picks a language, a time zone and a model from the
// endpoint's list, writes instructions and saves them.
func TestBrowserSettings(t *testing.T) {
	browser := newBrowser(t)
	e := newAccountsEnv(t, "sqlite", map[string]string{"SOVA_LIMIT_PRO_MESSAGES": "50"}) // instructions are a pro feature
	e.model.SetModels("main-model", "big-model")
	acc := e.addUser(t, "ann", sova.RolePro, "ann's password")
	tb := newTab(t, browser)
	tb.do(chromedp.Navigate(e.srv.URL + "/"))
	tb.wait(`document.querySelector('#signin') !== null`, "the sign-in form")
	tb.do(chromedp.SendKeys(css("#signin-name"), "ann"), chromedp.SendKeys(css("#signin-password"), "ann's password"),
		chromedp.Click(css(".signin-submit")))
	waitAcrossReload(tb, `document.querySelector('#account-usage')?.textContent.includes('50')`, "the usage line")
	// "Sign out" stays on one line in the sidebar's foot.
	var signOut struct{ Lines, Overflow bool }
	tb.eval(`(() => { const b = document.querySelector('#sign-out'); const r = document.createRange(); r.selectNodeContents(b);
		return {lines: r.getClientRects().length > 1 || r.getBoundingClientRect().height > 24, overflow: b.scrollWidth > b.clientWidth + 1}; })()`, &signOut)
	if signOut.Lines || signOut.Overflow {
		t.Errorf("Sign out wraps: %+v", signOut)
	}

	tb.do(chromedp.Click(css("#settings-open")))
	tb.wait(`document.querySelector('#settings-dialog')?.open && document.querySelectorAll('#settings-model option').length === 3`, "the settings dialog with the models")
	tb.screenshot("ui-settings")
	tb.do(chromedp.SendKeys(css("#settings-instructions"), "Answer like a pirate."),
		chromedp.SetValue(css("#settings-language"), "ru"),
		chromedp.SendKeys(css("#settings-timezone"), "Asia/Tokyo"),
		chromedp.SetValue(css("#settings-model"), "big-model"),
		chromedp.Click(css("#settings-save")))
	tb.wait(`document.querySelector('#settings-dialog') === null`, "the dialog to close")
	got, err := e.app.Store.UserSettings(t.Context(), acc.ID)
	if err != nil || got.CustomInstructions != "Answer like a pirate." || got.Language != "ru" || got.TimeZone != "Asia/Tokyo" || got.Model != "big-model" {
		t.Errorf("saved %+v, %v", got, err)
	}
	// A wrong time zone is refused with the server's reason.
	tb.do(chromedp.Click(css("#settings-open")))
	tb.wait(`document.querySelector('#settings-timezone')?.value === 'Asia/Tokyo'`, "the saved settings")
	tb.do(chromedp.SetValue(css("#settings-timezone"), "Mars/Olympus"), chromedp.Click(css("#settings-save")))
	tb.wait(`!document.querySelector('#settings-error').hidden && document.querySelector('#settings-error').textContent.includes('Mars/Olympus')`, "the error")
}

// With single sign-on configured, the sign-in page offers it.
func TestBrowserSignInOffersSSO(t *testing.T) {
	browser := newBrowser(t)
	e := newOIDCEnv(t, "sqlite")
	tb := newTab(t, browser)
	tb.do(chromedp.Navigate(e.url + "/?sso_error=1"))
	tb.wait(`document.querySelector('#signin-sso')?.textContent === 'Team login' && !document.querySelector('#signin-error').hidden`, "the SSO button and the error")
	tb.do(chromedp.Click(css("#signin-sso")))
	// The page goes to the provider and back, so polls may lose their page.
	deadline := time.Now().Add(30 * time.Second)
	for {
		ok, err := chromedp.Run(tb.ctx, chromedp.Evaluate[bool](`document.querySelector('#account-name')?.textContent === 'jane.doe'`))
		if err == nil && ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the app, signed in through the provider: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
