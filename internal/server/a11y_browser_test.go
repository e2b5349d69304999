package server_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/sova-ai/sova"
)

// axeSource is axe-core from test/axe (npm ci --prefix test/axe), or the
// test is skipped.
func axeSource(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "test", "axe", "node_modules", "axe-core", "axe.min.js"))
	if err != nil {
		t.Skipf("axe-core is not installed (npm ci --prefix test/axe): %v", err)
	}
	return string(b)
}

// axeTab is a tab that may run axe: the page's CSP (scripts of this origin
// only, Trusted Types) would refuse the injected checker.
func axeTab(t *testing.T, browser context.Context) *tab {
	tb := newTab(t, browser)
	if _, err := chromedp.Call(tb.ctx, page.SetBypassCSP, page.SetBypassCSPParams{Enabled: true}); err != nil {
		t.Fatal(err)
	}
	return tb
}

// axe runs axe-core on the page as it is and fails the test for each
// serious or critical violation, naming the rule and the elements.
func (tb *tab) axe(src, what string) {
	tb.t.Helper()
	tb.eval(`window.axe ? true : (() => { `+src+`; return true; })()`, nil)
	var found []struct {
		ID, Impact, Help string
		Nodes            []string
	}
	tb.eval(`axe.run(document, {resultTypes: ['violations'], runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']}})
		.then(r => r.violations.filter(v => v.impact === 'serious' || v.impact === 'critical')
			.map(v => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 5).map(n => n.target.join(' ') + ' ' + (n.failureSummary || '').replace(/\s+/g, ' ').slice(0, 160))})))`, &found)
	for _, v := range found {
		tb.t.Errorf("%s: %s %s (%s): %s", what, v.Impact, v.ID, v.Help, strings.Join(v.Nodes, " | "))
	}
}

// No serious or critical accessibility violation (axe-core, WCAG 2.1 A
// and AA) on the start page, an answer, a report, the assistant's
// confirmation, settings, spaces and sign-in, light and dark, on a
// desktop and a phone.
func TestBrowserAccessibility(t *testing.T) {
	src := axeSource(t)
	browser := newBrowser(t)
	e := newSpacesEnv(t, nil)
	e.model.Answer = richAnswer
	if _, err := e.app.Spaces.CreateSpace(t.Context(), e.user, "History", ""); err != nil {
		t.Fatal(err)
	}
	// A chat with a report and a held action, as stored.
	ctx := t.Context()
	chat := &sova.Chat{UserID: e.user, Title: "Report and action", Mode: "deep_research"}
	if err := e.app.Store.CreateChat(ctx, chat); err != nil {
		t.Fatal(err)
	}
	parts, _ := json.Marshal([]map[string]any{
		{"type": "text", "text": "The report is ready [1]."},
		{"type": "data-report", "data": map[string]any{"runId": "r1", "pdfUrl": "/api/runs/r1/report.pdf", "markdownUrl": "/api/runs/r1/report.md"}},
		{"type": "data-assistant_confirmation", "data": map[string]any{"status": "waiting", "actions": []map[string]any{{
			"id": "a1", "tool": "send_email", "title": "Send an email",
			"view": map[string]any{"recipients": []string{"anna@example.org"}, "subject": "Vostok", "excerpt": "The deadline moves to March."}}}}},
	})
	for _, m := range []*sova.Message{
		{Role: "user", Content: "Write a report on Vostok and mail it to Anna", Mode: "deep_research"},
		{Role: "assistant", Mode: "deep_research", FinishReason: "stop", Content: "The report is ready [1].", Parts: parts,
			Sources: []sova.Source{{Number: 1, URL: e.site.URL + "/a/1", Title: "Vostok"}}},
	} {
		m.ChatID = chat.ID
		if err := e.app.Store.AddMessage(ctx, e.user, m); err != nil {
			t.Fatal(err)
		}
	}

	// Desktop in both schemes, and a phone (390×844), where the layout
	// changes: the sidebar becomes a drawer, the composer and cards narrow.
	for _, pass := range []struct {
		scheme string
		phone  bool
	}{{"light", false}, {"dark", false}, {"light", true}, {"dark", true}} {
		name := pass.scheme
		viewport := chromedp.EmulateViewport(1366, 900)
		if pass.phone {
			name += " phone"
			viewport = chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile)
		}
		tb := axeTab(t, browser)
		tb.do(viewport, chromedp.Navigate(e.srv.URL+"/"))
		tb.media(pass.scheme)
		tb.wait(`document.body.classList.contains('ready') && document.querySelectorAll('.mode-option').length >= 3 && document.querySelector('#spaces .space-name')`, "the start page")
		tb.axe(src, name+" start page and spaces")
		if pass.scheme == "light" {
			tb.ask("search", "How did presidents describe the economy in the 1930s?")
			tb.wait(`document.querySelector('.turn-foot:not([hidden])')`, "the answer")
			tb.axe(src, name+" answer")
		}
		tb.do(chromedp.Navigate(e.srv.URL + "/c/" + chat.ID))
		tb.wait(`document.querySelector('.asst-confirm .asst-yes') && document.querySelector('.turn .extras a[href$="report.pdf"], .turn .extras .report-card, .turn .extras [class*=report]')`, "the report and the confirmation")
		tb.axe(src, name+" report and confirmation")
		if pass.phone {
			tb.screenshot("a11y-phone-" + pass.scheme)
		}
		tb.eval(`document.querySelector('#settings-open').click(), true`, nil)
		tb.wait(`document.querySelector('#settings-dialog')?.open`, "the settings")
		tb.axe(src, name+" settings")
	}

	ae := newAccountsEnv(t, "sqlite", nil)
	tb := axeTab(t, browser)
	tb.do(chromedp.Navigate(ae.srv.URL + "/"))
	tb.wait(`document.querySelector('#signin') !== null`, "the sign-in form")
	tb.axe(src, "sign-in")
}
