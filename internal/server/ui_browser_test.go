package server_test

// The browser UI, driven in a real headless Chromium against the real
// server wired to the local fakes (scripted model, SearXNG, article site).
// Screenshots land in test/artifacts/ (git-ignored).

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/sova-ai/sova"
	"github.com/sova-ai/sova/internal/app"
	"github.com/sova-ai/sova/internal/config"
	"github.com/sova-ai/sova/internal/server"
	"github.com/sova-ai/sova/internal/sovatest"
)

// richAnswer is a synthesis with the Markdown an answer usually has.
const richAnswer = "Presidents of the 1930s spoke about the economy in two very different registers.\n\n" +
	"**Herbert Hoover** treated the slump as a passing storm: in 1930 he told Americans that the worst was over and that prosperity was *just around the corner* [2].\n\n" +
	"**Franklin D. Roosevelt** described the economy as a system that government had a duty to repair [1]:\n\n" +
	"- In his first fireside chat he explained the bank holiday and asked people to keep their money in banks [1].\n" +
	"- By 1936 he claimed a recovery well under way, with national income up by more than half since 1933 [3].\n\n" +
	"The shift from reassurance to repair is the decade's change in how the economy was discussed [2]."

// chromiumPath finds a Chromium or Chrome binary, or "".
func chromiumPath() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless_shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// sharedChromium is the one Chromium process the package's browser tests
// share: starting one per test cost about a second each of a 2-core
// machine's time. Each test still gets a profile of its own (newBrowser).
// It is the package's only mutable global, for tests only; TestMain stops
// the process.
var sharedChromium struct {
	once   sync.Once
	ctx    context.Context
	cancel func()
	dir    string
	err    error
}

func startChromium(path string) {
	sc := &sharedChromium
	sc.dir, sc.err = os.MkdirTemp("", "sova-chromium-")
	if sc.err != nil {
		return
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(sc.dir),
		chromedp.WindowSize(1280, 860),
	}
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses to sandbox as root
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	sc.ctx = bctx
	sc.cancel = func() {
		cancelBrowser()
		cancelAlloc()
		_ = os.RemoveAll(sc.dir)
	}
	if err := chromedp.Do(bctx); err != nil {
		sc.err = fmt.Errorf("starting chromium at %s: %w", path, err)
	}
}

// stopChromium ends the shared Chromium, if a test started it.
func stopChromium() {
	if sharedChromium.cancel != nil {
		sharedChromium.cancel()
	}
}

// newBrowser gives the test a browser of its own, or skips it: a new
// browser context (cookies, storage, cache and permissions of its own, as
// a fresh profile) in the shared Chromium, disposed of when the test ends.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	path := chromiumPath()
	if path == "" {
		t.Skip("chromium is not installed (Debian: apt-get install chromium); the UI tests drive a real headless browser")
	}
	sharedChromium.once.Do(func() { startChromium(path) })
	if sharedChromium.err != nil {
		t.Fatal(sharedChromium.err)
	}
	bctx, cancel := chromedp.NewContext(sharedChromium.ctx, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("opening a browser context: %v", err)
	}
	return bctx
}

// tab is one browser tab and what its page reported.
type tab struct {
	t   *testing.T
	ctx context.Context
	mu  sync.Mutex
	bad []string // exceptions, console errors, CSP violations
}

// newTab opens a tab. Uncaught exceptions, console.error calls and
// security (CSP, Trusted Types) reports of its pages fail the test.
func newTab(t *testing.T, browser context.Context) *tab {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browser)
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	tb := &tab{t: t, ctx: ctx}
	if err := chromedp.Do(ctx); err != nil {
		t.Fatal(err)
	}
	messages := chromedp.Console(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.IsException() || (m.Source == "" && m.Type == "error") || m.Source == "security" {
				tb.mu.Lock()
				tb.bad = append(tb.bad, m.String())
				tb.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		cancelTimeout()
		cancel()
		wg.Wait()
		tb.mu.Lock()
		defer tb.mu.Unlock()
		for _, b := range tb.bad {
			t.Errorf("page reported: %s", b)
		}
	})
	return tb
}

func (tb *tab) do(steps ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	if err := chromedp.Do(tb.ctx, steps...); err != nil {
		tb.t.Fatal(err)
	}
}

// eval evaluates a JavaScript expression (awaiting a promise) and decodes
// its JSON value into v.
func (tb *tab) eval(expr string, v any) {
	tb.t.Helper()
	raw, err := chromedp.Run(tb.ctx, chromedp.Evaluate[[]byte](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		tb.t.Fatalf("evaluating %.120s: %v", expr, err)
	}
	if v != nil {
		if err := json.Unmarshal(raw, v); err != nil {
			tb.t.Fatalf("decoding %s: %v", raw, err)
		}
	}
}

// wait polls a JavaScript condition until it holds. The limit is generous
// because CI machines run the browser tests beside the whole suite.
func (tb *tab) wait(cond, what string) {
	tb.t.Helper()
	_, err := chromedp.Run(tb.ctx, chromedp.Poll[chromedp.Void](cond, chromedp.WithPollingTimeout(60*time.Second), chromedp.WithPollingInterval(25*time.Millisecond)))
	if err != nil {
		var html string
		html, _ = chromedp.Run(tb.ctx, chromedp.Evaluate[string](`(document.querySelector('#thread')?.innerText.slice(0, 1500) || '') + '\n' + (document.querySelector('.voice-mode')?.innerText.slice(0, 1500) || '') + '\n' + [...document.querySelectorAll('#toast, [role=alert]')].map(e => e.innerText).join('\n')`))
		tb.t.Fatalf("waiting for %s: %v\npage text:\n%s", what, err, html)
	}
}

// media sets the emulated colour scheme ("light" or "dark").
func (tb *tab) media(scheme string) {
	tb.t.Helper()
	_, err := chromedp.Call(tb.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
	})
	if err != nil {
		tb.t.Fatal(err)
	}
}

// screenshot saves the viewport as test/artifacts/<name>.png.
func (tb *tab) screenshot(name string) {
	tb.t.Helper()
	// Let the favicons in view load (or fall back), and transitions settle.
	// (Images in a closed <details> keep stale boxes: checkVisibility skips them.)
	tb.wait(`[...document.images].filter(i => { const r = i.getBoundingClientRect(); return i.checkVisibility() && r.bottom > 0 && r.top < innerHeight && r.right > 0 && r.left < innerWidth; }).every(i => i.complete)`, "the images in view")
	tb.eval(`new Promise(r => requestAnimationFrame(() => setTimeout(() => r(true), 250)))`, nil)
	buf, err := chromedp.Run(tb.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		tb.t.Fatal(err)
	}
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "test", "artifacts")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), buf, 0o644); err != nil {
		tb.t.Fatal(err)
	}
}

func css(s string) chromedp.CSS { return chromedp.CSS(s) }

// enter presses Enter (with Shift if shift) as a keyboard does: one keyDown
// that carries the text, whose default action a page may prevent. (The
// kb package's separate char event would type a newline past a handler
// that prevented the keydown, which no real keyboard does.)
func (tb *tab) enter(shift bool) {
	tb.t.Helper()
	var mods int64
	if shift {
		mods = int64(chromedp.ModifierShift)
	}
	for _, typ := range []input.DispatchKeyEventType{input.DispatchKeyEventTypeKeyDown, input.DispatchKeyEventTypeKeyUp} {
		p := input.DispatchKeyEventParams{Type: typ, Key: "Enter", Code: "Enter", WindowsVirtualKeyCode: 13, NativeVirtualKeyCode: 13, Modifiers: mods}
		if typ == input.DispatchKeyEventTypeKeyDown {
			p.Text, p.UnmodifiedText = "\r", "\r"
		}
		if _, err := chromedp.Call(tb.ctx, input.DispatchKeyEvent, p); err != nil {
			tb.t.Fatal(err)
		}
	}
}

// ask picks a mode in the composer's menu, types a question and presses
// Enter.
func (tb *tab) ask(mode, question string) {
	tb.t.Helper()
	tb.wait(`document.querySelectorAll('.mode-option').length >= 3`, "the modes")
	tb.do(chromedp.Click(css("#mode-btn")), chromedp.Click(css(`.mode-option[data-mode="`+mode+`"]`)))
	tb.wait(`document.querySelector('#mode-btn').dataset.mode === '`+mode+`' && document.querySelector('#mode-menu').hidden`, "mode "+mode)
	tb.do(chromedp.SendKeys(css("#input"), question))
	tb.enter(false)
}

type turnView struct {
	Question  string
	Rewritten string
	Queries   []struct{ Text, Status, Count string }
	Pages     []string
	Cards     []struct{ N, Href, Title, Host string }
	Cites     []struct{ N, Href, Target, Rel string }
	Strong    int
	Items     int
	Answer    string
	Foot      string
}

// lastTurn reads what the last turn on the page shows.
func (tb *tab) lastTurn() turnView {
	tb.t.Helper()
	var v turnView
	tb.eval(`(() => {
		const turns = document.querySelectorAll('.turn');
		const turn = turns[turns.length - 1];
		const text = (el, sel) => el.querySelector(sel)?.textContent || '';
		return {
			question: text(turn, '.turn-question'),
			rewritten: text(turn, '.step-query'),
			queries: [...turn.querySelectorAll('.query')].map(q => ({text: text(q, '.q-text'), status: q.dataset.status, count: text(q, '.q-count')})),
			pages: [...turn.querySelectorAll('.page')].map(p => p.dataset.state),
			cards: [...turn.querySelectorAll('.source-grid.cited .source-card')].map(a => ({n: a.dataset.n, href: a.href || '', title: text(a, '.sc-title'), host: text(a, '.sc-host')})),
			cites: [...turn.querySelectorAll('.answer a.cite')].map(a => ({n: a.dataset.n, href: a.href, target: a.target, rel: a.rel})),
			strong: turn.querySelectorAll('.answer strong').length,
			items: turn.querySelectorAll('.answer li').length,
			answer: text(turn, '.answer'),
			foot: text(turn, '.turn-foot'),
		};
	})()`, &v)
	return v
}

// checkCited verifies a finished search turn: numbered source cards and
// citation markers that link to them.
func checkCited(t *testing.T, v turnView, siteURL string) {
	t.Helper()
	if len(v.Cards) != 3 {
		t.Fatalf("cited source cards = %d, want 3: %+v", len(v.Cards), v.Cards)
	}
	byN := map[string]string{}
	for i, c := range v.Cards {
		if c.N != fmt.Sprint(i+1) || !strings.HasPrefix(c.Href, siteURL+"/a/") || c.Title == "" || c.Host != "127.0.0.1" {
			t.Errorf("card %d = %+v", i+1, c)
		}
		byN[c.N] = c.Href
	}
	if len(v.Cites) < 3 {
		t.Fatalf("citation markers = %d, want at least 3 (answer %q)", len(v.Cites), v.Answer)
	}
	for _, c := range v.Cites {
		if byN[c.N] == "" || c.Href != byN[c.N] || c.Target != "_blank" || !strings.Contains(c.Rel, "noopener") {
			t.Errorf("marker %+v does not open source %s", c, byN[c.N])
		}
	}
	if regexp.MustCompile(`\[\d+\]`).MatchString(v.Answer) {
		t.Errorf("raw markers left in the answer: %q", v.Answer)
	}
}

func TestBrowserSearchFlow(t *testing.T) {
	browser := newBrowser(t)
	e := newEnv(t, nil)
	e.model.Answer = richAnswer
	e.site.SetDelay(600 * time.Millisecond) // slow enough to watch pages being read
	tb := newTab(t, browser)
	tb.do(chromedp.EmulateViewport(1280, 860), chromedp.Navigate(e.srv.URL+"/"))
	tb.media("light")
	tb.wait(`document.body.classList.contains('ready') && !document.querySelector('#hero').hidden`, "the empty page")
	tb.screenshot("ui-desktop-empty")

	// Shift+Enter adds a line; Enter sends.
	tb.wait(`document.querySelectorAll('.mode-option').length >= 3`, "the modes")
	tb.do(chromedp.Click(css("#mode-btn")), chromedp.Click(css(`.mode-option[data-mode="search"]`)))
	tb.do(chromedp.SendKeys(css("#input"), "How did presidents"))
	tb.enter(true)
	tb.do(chromedp.SendKeys(css("#input"), "describe it"))
	var typed struct {
		Value string
		Turns int
	}
	tb.eval(`({value: document.querySelector('#input').value, turns: document.querySelectorAll('.turn').length})`, &typed)
	if typed.Value != "How did presidents\ndescribe it" || typed.Turns != 0 {
		t.Fatalf("after Shift+Enter: %+v", typed)
	}
	tb.eval(`document.querySelector('#input').value = '', true`, nil)
	tb.do(chromedp.SendKeys(css("#input"), "How did presidents describe the economy in the 1930s?"))
	tb.enter(false)
	tb.wait(`document.querySelectorAll('.turn').length === 1 && document.querySelector('#input').value === ''`, "the question sent")

	// The work shows while it happens.
	tb.wait(`document.querySelector('.page[data-state="reading"]')`, "a page being read")
	tb.screenshot("ui-desktop-progress")
	tb.wait(`document.querySelectorAll('.query[data-status="completed"]').length >= 3`, "completed queries")
	tb.wait(`document.querySelectorAll('.source-card').length > 0`, "source cards")
	tb.wait(`document.querySelector('.turn-foot:not([hidden])')`, "the finished answer")

	v := tb.lastTurn()
	if v.Question != "How did presidents describe the economy in the 1930s?" {
		t.Errorf("question shown as %q", v.Question)
	}
	if !strings.Contains(v.Rewritten, "(rewritten)") {
		t.Errorf("rewritten query shown as %q", v.Rewritten)
	}
	if len(v.Queries) < 3 {
		t.Errorf("queries = %+v", v.Queries)
	}
	for _, q := range v.Queries {
		if q.Status != "completed" || !regexp.MustCompile(`^\d+ results?$`).MatchString(q.Count) || q.Text == "" {
			t.Errorf("query row %+v", q)
		}
	}
	if len(v.Pages) == 0 {
		t.Error("no pages shown")
	}
	for _, p := range v.Pages {
		if p != "read" {
			t.Errorf("page state %q after the run", p)
		}
	}
	checkCited(t, v, e.site.URL)
	if v.Strong < 2 || v.Items != 2 {
		t.Errorf("Markdown not rendered: %d strong, %d list items", v.Strong, v.Items)
	}
	if !strings.Contains(v.Foot, "main-model") || !strings.Contains(v.Foot, "tokens") {
		t.Errorf("footer %q", v.Foot)
	}

	// The chat is stored, in the address bar and, once titled, in the sidebar.
	var loc struct{ Path, Title string }
	tb.wait(`document.querySelector('#topbar-title').textContent === 'Economy in the 1930s'`, "the chat title")
	tb.eval(`({path: location.pathname, title: document.querySelector('.chat-item.active .chat-title')?.textContent || ''})`, &loc)
	chatID := strings.TrimPrefix(loc.Path, "/c/")
	if !strings.HasPrefix(loc.Path, "/c/") || loc.Title != "Economy in the 1930s" {
		t.Fatalf("location %+v", loc)
	}
	if r, err := http.Get(e.srv.URL + "/api/chats/" + chatID); err != nil || r.StatusCode != 200 {
		t.Fatalf("chat %s not stored: %v", chatID, err)
	} else {
		r.Body.Close()
	}

	// The spaces panel follows the server: shown only where /api/spaces answers.
	var spacesHidden bool
	tb.eval(`document.querySelector('#spaces').hidden`, &spacesHidden)
	if r, err := http.Get(e.srv.URL + "/api/spaces"); err == nil {
		r.Body.Close()
		if spacesHidden != (r.StatusCode != 200) {
			t.Errorf("spaces panel hidden=%v while GET /api/spaces answers %d", spacesHidden, r.StatusCode)
		}
	}

	// Screenshots: light and dark, desktop and phone width.
	tb.eval(`document.querySelector('#scroller').scrollTop = 0, true`, nil)
	tb.screenshot("ui-desktop-light")
	tb.media("dark")
	tb.screenshot("ui-desktop-dark")
	tb.do(chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile))
	tb.eval(`document.querySelector('#scroller').scrollTop = 0, true`, nil)
	tb.screenshot("ui-phone-dark")
	tb.media("light")
	tb.screenshot("ui-phone-light")
	var phone struct{ Overflow, SidebarVisible, MenuVisible bool }
	tb.eval(`({
		overflow: document.documentElement.scrollWidth > window.innerWidth,
		sidebarVisible: document.querySelector('#sidebar').getBoundingClientRect().right > 0,
		menuVisible: getComputedStyle(document.querySelector('#menu-btn')).display !== 'none',
	})`, &phone)
	if phone.Overflow || phone.SidebarVisible || !phone.MenuVisible {
		t.Errorf("phone layout: %+v", phone)
	}
	tb.do(chromedp.Click(css("#menu-btn")))
	tb.wait(`document.querySelector('#sidebar').getBoundingClientRect().left >= 0 && !document.querySelector('#backdrop').hidden`, "the drawer")
	tb.screenshot("ui-phone-menu")
	tb.do(chromedp.Click(css("#sidebar-close")), chromedp.EmulateViewport(1280, 860))

	// A citation marker opens its source.
	opened := chromedp.WaitNewTarget(tb.ctx, func(info *target.Info) bool { return info.URL == v.Cites[0].Href })
	tb.do(chromedp.Click(css(`.answer a.cite[data-n="` + v.Cites[0].N + `"]`)))
	select {
	case <-opened:
	case <-time.After(10 * time.Second):
		t.Errorf("clicking marker [%s] did not open %s", v.Cites[0].N, v.Cites[0].Href)
	}

	// Reload: the chat is in the sidebar and reopens with its sources.
	tb.do(chromedp.Navigate(e.srv.URL + "/"))
	tb.wait(`document.querySelector('.chat-item[data-id="`+chatID+`"] .chat-title')?.textContent === 'Economy in the 1930s'`, "the chat in the sidebar")
	tb.do(chromedp.Click(css(`.chat-item[data-id="` + chatID + `"] .chat-open`)))
	tb.wait(`document.querySelectorAll('.turn .source-grid.cited .source-card').length === 3`, "the reopened chat's sources")
	re := tb.lastTurn()
	checkCited(t, re, e.site.URL)
	if re.Question != v.Question || len(re.Queries) != len(v.Queries) || len(re.Pages) != len(v.Pages) || re.Items != 2 {
		t.Errorf("reopened turn differs: %+v", re)
	}
	// The deep link reopens it too.
	tb.do(chromedp.Reload())
	tb.wait(`document.querySelectorAll('.turn .answer a.cite').length >= 3 && document.querySelector('.chat-item.active')?.dataset.id === '`+chatID+`'`, "the chat after a reload")

	// A follow-up in another mode continues the same chat.
	tb.ask("chat", "And what did Canberra have to do with it?")
	tb.wait(`document.querySelectorAll('.turn').length === 2 && document.querySelectorAll('.turn-foot:not([hidden])').length === 2`, "the follow-up answer")
	var stored struct{ Messages []json.RawMessage }
	r, err := http.Get(e.srv.URL + "/api/chats/" + chatID)
	if err != nil {
		t.Fatal(err)
	}
	_ = json.NewDecoder(r.Body).Decode(&stored)
	r.Body.Close()
	if len(stored.Messages) != 4 {
		t.Errorf("chat has %d messages after the follow-up, want 4", len(stored.Messages))
	}

	// Delete from the sidebar, with confirmation.
	tb.do(chromedp.Click(css(`.chat-item[data-id="` + chatID + `"] .chat-delete`)))
	tb.wait(`document.querySelector('.chat-item.confirming .confirm-delete')`, "the confirmation")
	tb.do(chromedp.Click(css(`.chat-item.confirming .confirm-delete`)))
	tb.wait(`!document.querySelector('.chat-item[data-id="`+chatID+`"]') && !document.querySelector('#hero').hidden && location.pathname === '/'`, "the chat gone")
	r, err = http.Get(e.srv.URL + "/api/chats/" + chatID)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusNotFound {
		t.Errorf("deleted chat answers %d", r.StatusCode)
	}
}

// The interface speaks Russian to a browser whose language is Russian.
func TestBrowserRussian(t *testing.T) {
	browser := newBrowser(t)
	e := newEnv(t, nil)
	tb := newTab(t, browser)
	ua, err := chromedp.Run(tb.ctx, chromedp.Evaluate[string](`navigator.userAgent`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(tb.ctx, emulation.SetUserAgentOverride, emulation.SetUserAgentOverrideParams{
		UserAgent: ua, AcceptLanguage: "ru-RU,ru",
	}); err != nil {
		t.Fatal(err)
	}
	tb.do(chromedp.EmulateViewport(1280, 860), chromedp.Navigate(e.srv.URL+"/"))
	tb.media("light")
	tb.wait(`document.body.classList.contains('ready') && document.querySelectorAll('.mode-option').length >= 3`, "the page")
	var ui struct {
		Lang, NewChat, Placeholder, Hero, Mode, Empty string
	}
	tb.eval(`({
		lang: document.documentElement.lang,
		newChat: document.querySelector('#new-chat').textContent.trim(),
		placeholder: document.querySelector('#input').placeholder,
		hero: document.querySelector('.hero-title').textContent,
		mode: document.querySelector('#mode-btn').textContent,
		empty: document.querySelector('.chat-empty')?.textContent || '',
	})`, &ui)
	want := struct{ Lang, NewChat, Placeholder, Hero, Empty string }{"ru", "Новый чат", "Спросите что угодно…", "Что вы хотите узнать?", "Чатов пока нет. Задайте первый вопрос."}
	if ui.Lang != want.Lang || ui.NewChat != want.NewChat || ui.Placeholder != want.Placeholder || ui.Hero != want.Hero || ui.Empty != want.Empty {
		t.Errorf("Russian UI = %+v", ui)
	}

	tb.ask("search", "Как президенты описывали экономику в 1930-е?")
	tb.wait(`document.querySelector('.turn-foot:not([hidden])')`, "the answer")
	tb.wait(`document.querySelector('.chat-group-title')?.textContent === 'Сегодня'`, "the chat in today's group")
	var got struct {
		Sources, Steps, Count, Group string
	}
	tb.eval(`({
		sources: document.querySelector('.sources .section-title span')?.textContent || '',
		steps: document.querySelector('.steps-now')?.textContent || '',
		count: document.querySelector('.q-count')?.textContent || '',
		group: document.querySelector('.chat-group-title')?.textContent || '',
	})`, &got)
	if got.Sources != "Источники" || !strings.HasPrefix(got.Steps, "Ход работы") || !regexp.MustCompile(`^\d+ результат(а|ов)?$`).MatchString(got.Count) || got.Group != "Сегодня" {
		t.Errorf("Russian answer view = %+v", got)
	}
	tb.eval(`document.querySelector('#scroller').scrollTop = 0, true`, nil)
	tb.screenshot("ui-desktop-ru")
}

// hostile is markup a page (or a model quoting one) might carry.
const hostile = `<script>window.__pwned=1</script><img src=x onerror="window.__pwned=1">`

// No script supplied by a page or a model runs: not in source titles, not
// in snippets, not in the answer, not when the chat is reopened.
func TestBrowserNeverRunsPageScripts(t *testing.T) {
	browser := newBrowser(t)
	var arts []sovatest.Article
	for _, a := range sovatest.DefaultArticles() {
		a.Title = hostile + " " + a.Title
		a.Body = hostile + " " + a.Body
		arts = append(arts, a)
	}
	e := newEnvArticles(t, arts)
	e.model.Answer = "Quoted from a page: " + hostile + " [1]. A link: [click me](javascript:window.__pwned=1) and <a href=\"javascript:window.__pwned=1\">raw</a> [2]. " +
		"An image: ![x](javascript:window.__pwned=1) [3]."
	e.site.SetDelay(800 * time.Millisecond) // candidates show while pages are read
	tb := newTab(t, browser)
	tb.do(chromedp.EmulateViewport(1280, 860), chromedp.Navigate(e.srv.URL+"/"))
	tb.ask("search", "How did presidents describe the economy in the 1930s?")
	// Search results carry the hostile titles as they are; the cards show
	// them as text.
	tb.wait(`[...document.querySelectorAll('.source-card .sc-title')].some(e => e.textContent.includes('`+hostile+`'))`, "hostile titles shown as text")
	tb.wait(`document.querySelector('.turn-foot:not([hidden])')`, "the answer")

	type verdict struct {
		Pwned      string
		Scripts    int
		BadImages  int
		BadLinks   int
		AnswerText bool
	}
	check := func(when string) {
		t.Helper()
		// onerror handlers fire asynchronously; give them a moment.
		tb.eval(`new Promise(r => setTimeout(() => r(true), 400))`, nil)
		var v verdict
		tb.eval(`({
			pwned: typeof window.__pwned,
			scripts: document.scripts.length,
			badImages: [...document.images].filter(i => i.getAttribute('src') === 'x' || i.hasAttribute('onerror')).length,
			badLinks: document.querySelectorAll('a[href^="javascript:"], [onerror], [onclick]').length,
			answerText: document.querySelector('.answer').textContent.includes('<img src=x onerror="window.__pwned=1">'),
		})`, &v)
		if v.Pwned != "undefined" || v.Scripts != 2 || v.BadImages != 0 || v.BadLinks != 0 || !v.AnswerText {
			t.Errorf("%s: %+v (want window.__pwned undefined, only the page's 2 scripts, markup shown as text)", when, v)
		}
	}
	check("streamed")
	tb.do(chromedp.Reload())
	tb.wait(`document.querySelectorAll('.turn .source-grid.cited .source-card').length > 0 && document.querySelector('.answer')`, "the reopened chat")
	check("reopened")
}

// newEnvArticles is newEnv with a site of the given articles.
func newEnvArticles(t *testing.T, arts []sovatest.Article) *env {
	t.Helper()
	e := &env{model: sovatest.NewModel(t)}
	e.site = sovatest.NewSite(t, arts)
	e.sx = sovatest.NewSearXNG(t, e.site, arts)
	cfg, err := config.FromEnv(sovatest.Env(e.model, e.sx, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.New(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.app, e.user = a, userOf(t, a)
	if a.Images != nil {
		a.Images.Client = sovatest.Offline(a.Images.Client) // favicons of cited sites are not fetched from the internet
	}
	e.srv = httptest.NewServer(server.New(server.Options{Service: a.Service, Store: a.Store, Auth: testAuth(a), MaxBodyBytes: cfg.MaxRequestBodyBytes, Version: "test", Images: a.Images}))
	t.Cleanup(func() {
		e.srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = a.Close(ctx)
	})
	return e
}

// The page's modules, exercised directly in the browser: the Markdown
// renderer, the stream parser and the views of parts the modes of today do
// not send yet (clarification, report, research progress, tools).
func TestBrowserModules(t *testing.T) {
	browser := newBrowser(t)
	e := newEnv(t, nil)
	tb := newTab(t, browser)
	tb.do(chromedp.Navigate(e.srv.URL + "/"))
	tb.wait(`document.body.classList.contains('ready')`, "the page")

	t.Run("markdown", func(t *testing.T) {
		tests := []struct{ name, in, want string }{
			{"strong", "Hello **world**", `<p>Hello <strong>world</strong></p>`},
			{"emphasis", "*em* and _em_ and snake_case_name", `<p><em>em</em> and <em>em</em> and snake_case_name</p>`},
			{"strong emphasis", "***both***", `<p><strong><em>both</em></strong></p>`},
			{"not emphasis", "2 * 3 * 4", `<p>2 * 3 * 4</p>`},
			{"unclosed strong", "**unclosed", `<p>**unclosed</p>`},
			{"escaped", `\*not em\*`, `<p>*not em*</p>`},
			{"strikethrough", "~~gone~~", `<p><del>gone</del></p>`},
			{"script is text", "<script>alert(1)</script>", `<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>`},
			{"img is text", `<img src=x onerror="alert(1)">`, `<p>&lt;img src=x onerror="alert(1)"&gt;</p>`},
			{"entities", "a &amp; b &lt;i&gt; &#169;", `<p>a &amp; b &lt;i&gt; ©</p>`},
			{"javascript link dropped", "[x](javascript:alert(1))", `<p>x</p>`},
			{"data link dropped", "[x](data:text/html,<b>)", `<p>x</p>`},
			{"link", `[site](https://example.com/a_(b) "T")`, `<p><a href="https://example.com/a_(b)" target="_blank" rel="noopener noreferrer" title="T">site</a></p>`},
			{"angle link", "[s](<https://e.com/a b>)", `<p><a href="https://e.com/a%20b" target="_blank" rel="noopener noreferrer">s</a></p>`},
			{"autolink", "<mailto:a@b.c>", `<p><a href="mailto:a@b.c" target="_blank" rel="noopener noreferrer">mailto:a@b.c</a></p>`},
			{"bare url", "see https://example.com/x.", `<p>see <a href="https://example.com/x" target="_blank" rel="noopener noreferrer">https://example.com/x</a>.</p>`},
			{"citations", "Claim [1], more [2, 3] and [4-5].", `<p>Claim&nbsp;<sup class="cite">1</sup>, more&nbsp;<sup class="cite">2</sup><sup class="cite">3</sup> and&nbsp;<sup class="cite">4</sup><sup class="cite">5</sup>.</p>`},
			{"brackets not citations", "[note] and [a1]", `<p>[note] and [a1]</p>`},
			{"image (through the image proxy)", "![alt](https://e.com/i.png)", `<p><img src="/api/image?url=https%3A%2F%2Fe.com%2Fi.png" alt="alt" loading="lazy" referrerpolicy="no-referrer"></p>`},
			{"javascript image dropped", "![alt](javascript:x)", `<p>alt</p>`},
			{"code span", "`code *not em* <b>`", `<p><code>code *not em* &lt;b&gt;</code></p>`},
			{"heading", "# Title\n\nText", `<h1>Title</h1><p>Text</p>`},
			{"line breaks", "line one\nline two", `<p>line one<br>line two</p>`},
			{"rule", "a\n\n---\n\nb", `<p>a</p><hr><p>b</p>`},
			{"nested list", "- a\n- b\n  - c\n- d", `<ul><li>a</li><li>b<ul><li>c</li></ul></li><li>d</li></ul>`},
			{"ordered list", "1. one\n2. two", `<ol><li>one</li><li>two</li></ol>`},
			{"list start", "3. three\n4. four", `<ol start="3"><li>three</li><li>four</li></ol>`},
			{"loose list", "- a\n\n- b", `<ul><li><p>a</p></li><li><p>b</p></li></ul>`},
			{"list after text", "Points:\n- a\n- b", `<p>Points:</p><ul><li>a</li><li>b</li></ul>`},
			{"fence", "```js\nconst a = '<b>';\n```", `<pre><code class="language-js" data-lang="js">const a = '&lt;b&gt;';</code></pre>`},
			{"unclosed fence", "```\nstill streaming", `<pre><code>still streaming</code></pre>`},
			{"quote", "> quote\ncontinued", `<blockquote><p>quote<br>continued</p></blockquote>`},
			{"table", "| a | b |\n|---|:-:|\n| 1 | 2 |", `<div class="table-wrap"><table><thead><tr><th>a</th><th class="align-center">b</th></tr></thead><tbody><tr><td>1</td><td class="align-center">2</td></tr></tbody></table></div>`},
		}
		var ins []string
		for _, tt := range tests {
			ins = append(ins, tt.in)
		}
		in, _ := json.Marshal(ins)
		var got []string
		tb.eval(`(async () => {
			const { renderMarkdown } = await import('/assets/js/markdown.js');
			return `+string(in)+`.map(s => { const d = document.createElement('div'); d.append(renderMarkdown(s)); return d.innerHTML; });
		})()`, &got)
		for i, tt := range tests {
			if got[i] != tt.want {
				t.Errorf("%s: %q\n got %s\nwant %s", tt.name, tt.in, got[i], tt.want)
			}
		}
		// Pathological input ends quickly and renders something.
		var n int
		tb.eval(`(async () => {
			const { renderMarkdown } = await import('/assets/js/markdown.js');
			const d = document.createElement('div');
			d.append(renderMarkdown('>'.repeat(5000) + ' deep\n' + '*a '.repeat(3000) + '\n' + '['.repeat(3000)));
			return d.textContent.length;
		})()`, &n)
		if n == 0 {
			t.Error("pathological input rendered nothing")
		}
	})

	t.Run("stream", func(t *testing.T) {
		tests := []struct {
			name   string
			pieces []string
			want   []map[string]string
		}{
			{"one event", []string{"data: {\"a\":1}\n\n"}, []map[string]string{{"data": `{"a":1}`, "id": ""}}},
			{"split anywhere, CRLF", []string{"da", "ta: x\r", "\n\r\ndata: y\n", "\n"}, []map[string]string{{"data": "x", "id": ""}, {"data": "y", "id": ""}}},
			{"CR endings", []string{"data: a\r\rdata: b\r\r"}, []map[string]string{{"data": "a", "id": ""}, {"data": "b", "id": ""}}},
			{"comments and ids", []string{": keep-alive\n\nid: 7\ndata: a\n\ndata: b\n\n"}, []map[string]string{{"data": "a", "id": "7"}, {"data": "b", "id": "7"}}},
			{"multi-line data", []string{"data: a\ndata: b\n\n"}, []map[string]string{{"data": "a\nb", "id": ""}}},
			{"no space after colon", []string{"data:x\n\n"}, []map[string]string{{"data": "x", "id": ""}}},
			{"cut off", []string{"data: a\n\ndata: partial"}, []map[string]string{{"data": "a", "id": ""}}},
		}
		for _, tt := range tests {
			pieces, _ := json.Marshal(tt.pieces)
			var got []map[string]string
			tb.eval(`(async () => {
				const { sseEvents } = await import('/assets/js/stream.js');
				async function* gen(ps) { for (const p of ps) yield p; }
				const out = [];
				for await (const e of sseEvents(gen(`+string(pieces)+`))) out.push(e);
				return out;
			})()`, &got)
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
			}
		}
	})

	// A run continued on another node that writes its answer anew sends
	// data-text_restart: the text that follows replaces the partial one.
	t.Run("text restart", func(t *testing.T) {
		chunks := []map[string]any{
			{"type": "start", "messageId": "m1", "messageMetadata": map[string]any{"runId": "r1", "mode": "extreme"}},
			{"type": "text-start", "id": "text-0"},
			{"type": "text-delta", "id": "text-0", "delta": "The first ans"},
			{"type": "data-status", "id": "status-continue", "data": map[string]any{"stage": "continue", "message": "Continuing the run from its last checkpoint"}},
			{"type": "data-text_restart", "id": "text-restart-r1", "data": map[string]any{"reason": "written again"}},
			{"type": "text-delta", "id": "text-0", "delta": "The answer, "},
			{"type": "text-delta", "id": "text-0", "delta": "written again."},
			{"type": "finish", "finishReason": "stop", "messageMetadata": map[string]any{"finishReason": "stop"}},
		}
		in, _ := json.Marshal(chunks)
		var got struct{ Text, Shown, Generic string }
		tb.eval(`(async () => {
			const { Turn } = await import('/assets/js/turn.js');
			const turn = new Turn({question: 'Q', mode: 'extreme'});
			document.querySelector('#thread').append(turn.el);
			turn.begin();
			for (const c of `+string(in)+`) turn.apply(c);
			turn.end();
			const out = {text: turn.text, shown: turn.el.querySelector('.answer')?.textContent || '',
				generic: [...turn.el.querySelectorAll('.step.generic')].map(g => g.dataset.part).join(',')};
			turn.el.remove();
			return out;
		})()`, &got)
		if got.Text != "The answer, written again." || strings.Contains(got.Shown, "first") || !strings.Contains(got.Shown, "written again") || got.Generic != "" {
			t.Errorf("after a restart of the text: %+v", got)
		}
	})

	t.Run("parts", func(t *testing.T) {
		chunks := []map[string]any{
			{"type": "start", "messageId": "m1", "messageMetadata": map[string]any{"runId": "r1", "mode": "deep_research"}},
			{"type": "data-status", "id": "status-plan", "data": map[string]any{"stage": "plan", "message": "Planning the research"}},
			{"type": "data-outline", "id": "plan", "data": map[string]any{"title": "old"}},
			{"type": "data-outline", "id": "plan", "data": map[string]any{"title": "Economy of the 1930s", "themes": []any{map[string]any{"name": "Banking", "todos": []string{"fireside chats", "bank holiday"}}}}},
			{"type": "data-agent", "id": "agent-1", "data": map[string]any{"name": "Researcher 1", "todos": []string{"read FDR"}, "note": "<script>window.__pwned=1</script>"}},
			{"type": "tool-input-available", "toolCallId": "t1", "toolName": "web_search", "input": map[string]any{"query": "bank holiday 1933"}, "providerExecuted": true},
			{"type": "tool-output-available", "toolCallId": "t1", "output": map[string]any{"results": 3}, "providerExecuted": true},
			{"type": "data-clarification", "data": map[string]any{"questions": []string{"Which countries?", "Which years?"}}},
			{"type": "data-report", "data": map[string]any{"runId": "r1", "pdfUrl": "/api/runs/r1/report.pdf", "markdownUrl": "/api/runs/r1/report.md"}},
			{"type": "data-report", "data": map[string]any{"runId": "r2", "pdfUrl": "javascript:window.__pwned=1", "markdownUrl": "https://example.com/r.md"}},
			{"type": "text-start", "id": "text-0"},
			{"type": "text-delta", "id": "text-0", "delta": "Done, from your notes [1]."},
			{"type": "source-url", "sourceId": "1", "url": "sova://spaces/s1/documents/d1#chunk-2", "title": "Notes on 1933"},
			{"type": "text-end", "id": "text-0"},
			{"type": "finish", "finishReason": "stop", "messageMetadata": map[string]any{"finishReason": "stop", "usage": map[string]any{"inputTokens": 5, "outputTokens": 7, "totalTokens": 12},
				"sources": []any{map[string]any{"number": 1, "url": "sova://spaces/s1/documents/d1#chunk-2", "title": "Notes on 1933", "kind": "document"}}}},
		}
		in, _ := json.Marshal(chunks)
		var got struct {
			Questions []string
			Answered  string
			FormGone  bool
			Reports   [][]string
			Generic   []string
			Tool      string
			Foot      string
			Pwned     string
			DocCite   string
			DocCard   string
		}
		tb.eval(`(async () => {
			const { Turn } = await import('/assets/js/turn.js');
			let answered = '';
			const turn = new Turn({question: 'Q', mode: 'deep_research', onAnswer: a => { answered = a; }});
			document.querySelector('#thread').append(turn.el);
			turn.begin();
			for (const c of `+string(in)+`) turn.apply(c);
			turn.end();
			const questions = [...turn.el.querySelectorAll('.clarify-questions li')].map(li => li.textContent);
			turn.el.querySelector('.clarify-input').value = 'Europe, 1929-1939';
			turn.el.querySelector('.clarify-form button[type=submit]').click();
			turn.flush();
			await new Promise(r => setTimeout(r, 50));
			return {
				questions, answered,
				formGone: !!turn.el.querySelector('.clarify-form')?.hidden,
				reports: [...turn.el.querySelectorAll('.report')].map(r => [...r.querySelectorAll('a')].map(a => a.getAttribute('href'))),
				generic: [...turn.el.querySelectorAll('.step.generic')].map(g => g.dataset.part + ': ' + g.textContent),
				tool: turn.el.querySelector('.step.tool')?.textContent || '',
				foot: turn.el.querySelector('.turn-foot')?.textContent || '',
				pwned: typeof window.__pwned,
				docCite: (b => b ? b.tagName + ' ' + b.textContent : '')(turn.el.querySelector('.answer .cite')),
				docCard: (c => c ? c.tagName + ' ' + c.textContent : '')(turn.el.querySelector('.source-card.doc')),
			};
		})()`, &got)
		if strings.Join(got.Questions, "|") != "Which countries?|Which years?" || got.Answered != "Europe, 1929-1939" || !got.FormGone {
			t.Errorf("clarification: %+v", got)
		}
		if len(got.Reports) != 2 || strings.Join(got.Reports[0], " ") != e.srv.URL+"/api/runs/r1/report.pdf "+e.srv.URL+"/api/runs/r1/report.md" || strings.Join(got.Reports[1], " ") != "https://example.com/r.md" {
			t.Errorf("reports: %v", got.Reports)
		}
		if len(got.Generic) != 2 || !strings.Contains(got.Generic[0], "outline: Outline") || !strings.Contains(got.Generic[0], "Economy of the 1930s") ||
			strings.Contains(got.Generic[0], "old") || !strings.Contains(got.Generic[0], "bank holiday") || !strings.Contains(got.Generic[1], "<script>window.__pwned=1</script>") {
			t.Errorf("generic parts: %q", got.Generic)
		}
		if !strings.Contains(got.Tool, "Web search") || !strings.Contains(got.Tool, "bank holiday 1933") {
			t.Errorf("tool: %q", got.Tool)
		}
		if !strings.Contains(got.Foot, "12 tokens") || got.Pwned != "undefined" {
			t.Errorf("foot %q, pwned %s", got.Foot, got.Pwned)
		}
		// A passage of a document has no web address: its marker and its
		// card are buttons that open the passage in the side panel.
		if got.DocCite != "BUTTON 1" || got.DocCard != "BUTTON Notes on 1933Document1" {
			t.Errorf("document source: marker %q, card %q", got.DocCite, got.DocCard)
		}
	})

	// Stored messages reopen with their work: the search pipeline's record,
	// an agent's list of steps, a research run's plan and agents.
	t.Run("stored", func(t *testing.T) {
		var got struct {
			Queries   []string
			Rewritten string
			Tool      string
			ToolDone  bool
			Cite      string
			Clarify   bool
			Generic   []string
			Plan      string
			Agents    []string
		}
		tb.eval(`(async () => {
			const { Turn } = await import('/assets/js/turn.js');
			const search = Turn.fromStored({role: 'user', content: 'Q1'}, {role: 'assistant', mode: 'search', content: 'A [1]', finishReason: 'stop',
				sources: [{number: 1, url: 'https://example.com/x', title: 'X'}],
				toolCalls: {rewrittenQuery: 'Q1 rewritten', iterations: [{queries: [{query: 'q a', results: 6}, {query: 'q b', error: 'timeout'}]}], pages: [{url: 'https://example.com/x', title: 'X', chars: 300}]}});
			const agent = Turn.fromStored({role: 'user', content: 'Q2'}, {role: 'assistant', mode: 'sgr_agent', content: 'Which?', finishReason: 'stop',
				toolCalls: [{step: 1, tool: 'web_search', input: {query: 'bmw x6 price'}, summary: '5 results'}],
				parts: [{type: 'text', text: 'Which?'}, {type: 'data-clarification', data: {runId: 'r', questions: ['Which market?']}}]});
			const research = Turn.fromStored({role: 'user', content: 'Q3'}, {role: 'assistant', mode: 'deep_research', content: 'Report', finishReason: 'stop',
				toolCalls: {plan: {goal: 'G', themes: [{title: 'T'}]}, agents: [{id: 'agent_1', specialisation: 'Banks', state: 'done'}], decisions: [], notes: 3, extra: {k: 'v'}}});
			return {
				queries: [...search.el.querySelectorAll('.query')].map(q => q.dataset.status + ':' + q.querySelector('.q-text').textContent),
				rewritten: search.el.querySelector('.step-query')?.textContent || '',
				tool: agent.el.querySelector('.step.tool')?.textContent || '',
				toolDone: !agent.el.querySelector('.step.tool .spinner'),
				cite: search.el.querySelector('.answer a.cite')?.getAttribute('href') || '',
				clarify: !!agent.el.querySelector('.clarify .clarify-form:not([hidden])'),
				generic: [...research.el.querySelectorAll('.step.generic')].map(g => g.dataset.part),
				plan: research.el.querySelector('.research-plan')?.textContent || '',
				agents: [...research.el.querySelectorAll('.agent-card')].map(a => a.textContent),
			};
		})()`, &got)
		if strings.Join(got.Queries, "|") != "completed:q a|error:q b" || got.Rewritten != "Q1 rewritten" || got.Cite != "https://example.com/x" {
			t.Errorf("stored search turn: %+v", got)
		}
		if !strings.Contains(got.Tool, "Web search") || !strings.Contains(got.Tool, "bmw x6 price") || !got.ToolDone || !got.Clarify {
			t.Errorf("stored agent turn: %+v", got)
		}
		// The research record's plan and agents show as their live parts
		// did; any other structured field as a generic step.
		if strings.Join(got.Generic, ",") != "extra" || !strings.Contains(got.Plan, "G") || !strings.Contains(got.Plan, "T") ||
			len(got.Agents) != 1 || !strings.Contains(got.Agents[0], "Researcher 1") || !strings.Contains(got.Agents[0], "Banks") {
			t.Errorf("stored research turn: %+v", got)
		}
	})

	// The deep research mode's progress parts, in the shapes of
	// internal/mode/research/events.go: a plan, one card per agent replaced
	// in place, notes with their sources, the supervisor's decisions.
	t.Run("research", func(t *testing.T) {
		const hostile = "<img src=x onerror=window.__pwned=1>"
		agent := func(state, current string, notes int, todos ...map[string]any) map[string]any {
			return map[string]any{"id": "agent_1", "number": 1, "specialisation": "Banking policy of the New Deal", "state": state,
				"currentTodo": current, "todos": todos, "notes": notes}
		}
		todo := func(id int, title, status string) map[string]any {
			return map[string]any{"id": id, "title": title, "status": status}
		}
		chunks := []map[string]any{
			{"type": "start", "messageId": "m2", "messageMetadata": map[string]any{"runId": "r3", "mode": "deep_research"}},
			{"type": "data-status", "id": "status-plan", "data": map[string]any{"stage": "plan", "message": "Planning the research"}},
			{"type": "data-research_plan", "id": "research-plan", "data": map[string]any{"goal": "How presidents of the 1930s described the economy", "revision": 0,
				"themes": []any{
					map[string]any{"title": "Hoover's reassurance", "description": "Speeches of 1930-1932", "tasks": []any{map[string]any{"title": "Collect Hoover's statements on recovery", "objective": "Quotes with dates"}}},
					map[string]any{"title": "Roosevelt's repair", "tasks": []any{map[string]any{"title": "Read the first fireside chat"}, map[string]any{"title": "Find the 1936 income figures"}}},
				}}},
			{"type": "data-status", "id": "status-research", "data": map[string]any{"stage": "research", "message": "Researching with 2 agents"}},
			{"type": "data-research_agent", "id": "agent-1", "data": agent("ready", "", 0, todo(1, "Read the first fireside chat", "pending"), todo(2, "Find the 1936 income figures", "pending"))},
			{"type": "data-research_agent", "id": "agent-2", "data": map[string]any{"id": "agent_2", "number": 2, "specialisation": "Hoover administration", "state": "working",
				"currentTodo": "Collect Hoover's statements on recovery", "todos": []any{todo(1, "Collect Hoover's statements on recovery", "in_progress")}, "notes": 0}},
			{"type": "data-research_agent", "id": "agent-1", "data": agent("working", "Read the first fireside chat", 1,
				todo(1, "Read the first fireside chat", "done"), todo(2, "Find the 1936 income figures", "in_progress"), todo(3, "Dropped task", "skipped"))},
			{"type": "data-research_note", "id": "note-1", "data": map[string]any{"item": 1, "agent": "agent_1", "todo": "Read the first fireside chat", "title": "The bank holiday explained",
				"sources": []any{map[string]any{"number": 1, "url": "https://example.com/fireside", "title": "First fireside chat"}, map[string]any{"number": 2, "url": "javascript:window.__pwned=1", "title": "Bad link"}}, "file": "notes/1.md"}},
			{"type": "data-supervisor_decision", "id": "decision-1", "data": map[string]any{"call": 1, "maxCalls": 6, "agent": "agent_1", "decision": "continue",
				"reason": "Income figures are still missing", "newTodos": []any{map[string]any{"agent": "agent_2", "title": "Compare with Hoover's 1932 claims"}}}},
		}
		// Hostile strings and wrong types everywhere: text, never markup,
		// and no exception.
		bad := []map[string]any{
			{"type": "data-research_agent", "id": "agent-3", "data": map[string]any{"id": hostile, "specialisation": hostile, "state": hostile, "currentTodo": hostile,
				"todos": []any{map[string]any{"title": hostile, "status": hostile}, "not an object", nil}, "notes": "many"}},
			{"type": "data-research_note", "id": "note-2", "data": map[string]any{"title": hostile, "sources": "nope"}},
			{"type": "data-supervisor_decision", "id": "decision-2", "data": map[string]any{"decision": hostile, "reason": hostile, "newTodos": map[string]any{"x": 1}}},
			{"type": "data-research_plan", "id": "broken", "data": []any{1, 2}},
			{"type": "data-supervisor_decision", "id": "decision-3", "data": nil},
			{"type": "data-constructor", "id": "c", "data": map[string]any{"k": "v"}},
		}
		in, _ := json.Marshal(chunks)
		tb.eval(`(async () => {
			const { Turn } = await import('/assets/js/turn.js');
			const turn = new Turn({question: 'How did presidents of the 1930s describe the economy?', mode: 'deep_research'});
			window.__researchTurn = turn;
			document.querySelector('#hero').hidden = true;
			document.querySelector('#thread').replaceChildren(turn.el);
			turn.begin();
			for (const c of `+string(in)+`) turn.apply(c);
			turn.flush();
			turn.el.querySelector('.agent-grid').scrollIntoView({block: 'start'});
			return true;
		})()`, nil)
		tb.screenshot("ui-desktop-research")
		in, _ = json.Marshal(bad)
		var got struct {
			Plan      string
			Themes    []string
			Agents    []struct{ ID, State, Spec, Current, Foot string }
			Todos     []string
			Notes     []string
			Links     []string
			Decisions []string
			Generic   []string
			Hostile   int
			Pwned     string
			Imgs      int
		}
		tb.eval(`(() => {
			const turn = window.__researchTurn;
			for (const c of `+string(in)+`) turn.apply(c);
			turn.flush();
			const text = (el, sel) => el.querySelector(sel)?.textContent || '';
			return {
				plan: text(turn.el, '.research-plan'),
				themes: [...turn.el.querySelectorAll('.plan-theme-title')].map(e => e.textContent),
				agents: [...turn.el.querySelectorAll('.agent-card')].map(a => ({id: a.dataset.agent, state: text(a, '.agent-state'), spec: text(a, '.agent-spec'), current: text(a, '.agent-current'), foot: text(a, '.agent-foot')})),
				todos: [...turn.el.querySelectorAll('.agent-card[data-agent="agent_1"] .todo')].map(li => li.dataset.status + ':' + text(li, '.todo-title') + ':' + text(li, '.todo-status')),
				notes: [...turn.el.querySelectorAll('.research-note')].map(n => text(n, '.note-title') + ' | ' + text(n, '.note-meta')),
				links: [...turn.el.querySelectorAll('.note-sources a')].map(a => a.getAttribute('href') + ' ' + a.target),
				decisions: [...turn.el.querySelectorAll('.step.decision')].map(d => d.textContent),
				generic: [...turn.el.querySelectorAll('.step.generic')].map(g => g.dataset.part),
				hostile: [...turn.el.querySelectorAll('.steps *')].filter(e => e.childElementCount === 0 && e.textContent.includes('<img src=x onerror=window.__pwned=1>')).length,
				pwned: typeof window.__pwned,
				imgs: turn.el.querySelectorAll('.steps img').length,
			};
		})()`, &got)
		if !strings.Contains(got.Plan, "Research plan") || !strings.Contains(got.Plan, "How presidents of the 1930s described the economy") ||
			!strings.Contains(got.Plan, "Read the first fireside chat") || strings.Join(got.Themes, "|") != "Hoover's reassurance|Roosevelt's repair" {
			t.Errorf("plan: %q, themes %q", got.Plan, got.Themes)
		}
		if len(got.Agents) != 3 {
			t.Fatalf("agent cards = %+v, want 3 (agent-1 replaced in place)", got.Agents)
		}
		a1 := got.Agents[0]
		if a1.ID != "agent_1" || a1.State != "working" || a1.Spec != "Banking policy of the New Deal" || a1.Current != "Now: Read the first fireside chat" || a1.Foot != "1 note" {
			t.Errorf("agent 1 card: %+v", a1)
		}
		if got.Agents[1].Spec != "Hoover administration" || got.Agents[2].Spec != hostile || got.Agents[2].Foot != "0 notes" {
			t.Errorf("other agent cards: %+v", got.Agents[1:])
		}
		want := "done:Read the first fireside chat:done|in_progress:Find the 1936 income figures:in progress|skipped:Dropped task:skipped"
		if strings.Join(got.Todos, "|") != want {
			t.Errorf("agent 1 todos:\n got %q\nwant %q", strings.Join(got.Todos, "|"), want)
		}
		if len(got.Notes) != 2 || got.Notes[0] != "The bank holiday explained | Researcher 1 · Read the first fireside chat" || !strings.HasPrefix(got.Notes[1], hostile) {
			t.Errorf("notes: %q", got.Notes)
		}
		if strings.Join(got.Links, "|") != "https://example.com/fireside _blank" {
			t.Errorf("note source links: %q", got.Links)
		}
		if len(got.Decisions) != 3 || !strings.Contains(got.Decisions[0], "Supervisor: continue") || !strings.Contains(got.Decisions[0], "review 1 of 6") ||
			!strings.Contains(got.Decisions[0], "Income figures are still missing") || !strings.Contains(got.Decisions[0], "Researcher 2: Compare with Hoover's 1932 claims") {
			t.Errorf("decisions: %q", got.Decisions)
		}
		if strings.Join(got.Generic, ",") != "constructor" {
			t.Errorf("generic parts: %q", got.Generic)
		}
		// The agent's name (its id), specialisation and todo, the note's
		// title and the decision's reason are the hostile string as text.
		if got.Hostile != 5 || got.Pwned != "undefined" || got.Imgs != 0 {
			t.Errorf("hostile strings: %d text nodes, pwned %s, %d images", got.Hostile, got.Pwned, got.Imgs)
		}
	})
}

// Runs outlive the page: reloading in the middle of one picks its stream up
// again, and the stop button cancels the run on the server.
func TestBrowserResumeAndStop(t *testing.T) {
	browser := newBrowser(t)
	e := newEnv(t, nil)
	// The page resumes through GET /api/chats/{id}/stream, which answers a
	// chat without runs with 204 (and one that does not exist with 404); a
	// server without it fails here.
	quiet := &sova.Chat{UserID: e.user, Title: "no runs"}
	if err := e.app.Store.CreateChat(context.Background(), quiet); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]int{quiet.ID: http.StatusNoContent, "none": http.StatusNotFound} {
		r, err := http.Get(e.srv.URL + "/api/chats/" + id + "/stream")
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != want {
			t.Fatalf("GET /api/chats/%s/stream: %d, want %d", id, r.StatusCode, want)
		}
	}
	e.site.SetDelay(2 * time.Second) // each run spends seconds reading pages
	tb := newTab(t, browser)
	tb.do(chromedp.EmulateViewport(1280, 860), chromedp.Navigate(e.srv.URL+"/"))

	// Reload while pages are being read: the answer still arrives.
	tb.ask("search", "How did presidents describe the economy in the 1930s?")
	tb.wait(`document.querySelector('.page[data-state="reading"]') && location.pathname.startsWith('/c/')`, "pages being read")
	tb.do(chromedp.Reload())
	tb.wait(`document.querySelector('#send.stop') && document.querySelector('.turn .query')`, "the run followed again after the reload")
	tb.wait(`document.querySelector('.turn-foot:not([hidden])') && document.querySelectorAll('.turn').length === 1`, "the resumed answer")
	checkCited(t, tb.lastTurn(), e.site.URL)

	// Stop: the run ends as cancelled, on the page and in the store.
	tb.ask("search", "What did Hoover say about prosperity?")
	tb.wait(`document.querySelectorAll('.turn').length === 2 && document.querySelector('#send.stop') && document.querySelector('.turn:last-child .page[data-state="reading"]')`, "the second run reading pages")
	tb.do(chromedp.Click(css("#send")))
	tb.wait(`document.querySelector('.turn:last-child .turn-error.note:not([hidden])') && !document.querySelector('#send.stop')`, "the stopped run")
	var chatID string
	tb.eval(`location.pathname.slice(3)`, &chatID)
	deadline := time.Now().Add(10 * time.Second)
	for {
		var got struct {
			Messages []struct{ Role, FinishReason string }
		}
		r, err := http.Get(e.srv.URL + "/api/chats/" + chatID)
		if err != nil {
			t.Fatal(err)
		}
		_ = json.NewDecoder(r.Body).Decode(&got)
		r.Body.Close()
		if n := len(got.Messages); n == 4 && got.Messages[3].FinishReason == "cancelled" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("stopped run not stored as cancelled: %+v", got.Messages)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Document spaces from the sidebar: create one, add a file, see it listed,
// search it when answering, delete the file and the space.
func TestBrowserSpaces(t *testing.T) {
	browser := newBrowser(t)
	e := newSpacesEnv(t, nil)
	doc := filepath.Join(t.TempDir(), "new-deal.md")
	if err := os.WriteFile(doc, []byte("# The New Deal\n\nThe New Deal combined relief for the unemployed, recovery of industry and reform of finance.\n\nRoosevelt described the economy as a system that government had a duty to repair.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tb := newTab(t, browser)
	tb.do(chromedp.EmulateViewport(1280, 860), chromedp.Navigate(e.srv.URL+"/"))
	tb.wait(`!document.querySelector('#spaces').hidden`, "the spaces panel")

	tb.do(chromedp.Click(css("#spaces .spaces-head button")), chromedp.SendKeys(css("#spaces .space-create input"), "History"))
	tb.enter(false)
	tb.wait(`[...document.querySelectorAll('#spaces .space-name')].some(b => b.textContent.includes('History'))`, "the new space")
	tb.do(chromedp.SetUploadFiles(css("#spaces .space input[type=file]"), []string{doc}))
	tb.wait(`document.querySelector('#spaces .space-name .count')?.textContent === '1'`, "the document counted")
	tb.do(chromedp.Click(css("#spaces .space-name")))
	tb.wait(`document.querySelector('#spaces .doc-name')?.textContent === 'new-deal.md'`, "the document listed")

	// Selected spaces go with the question.
	tb.do(chromedp.Click(css(`#spaces .space-row input[type="checkbox"]`)))
	var selected []string
	tb.eval(`JSON.parse(localStorage.getItem('sova.spaces') || '[]')`, &selected)
	if len(selected) != 1 {
		t.Fatalf("selected spaces = %v", selected)
	}
	tb.ask("search", "How did Roosevelt describe the economy?")
	tb.wait(`document.querySelector('.turn-foot:not([hidden])') || document.querySelector('.turn-error:not([hidden])')`, "the answer")
	tb.eval(`document.querySelector('#scroller').scrollTop = 0, true`, nil)
	tb.screenshot("ui-desktop-spaces")
	var failed string
	tb.eval(`document.querySelector('.turn-error:not([hidden])')?.textContent || ''`, &failed)
	if failed != "" {
		t.Errorf("asking with a space failed: %s", failed)
	}

	// Delete the document, then the space (the second click confirms).
	tb.do(chromedp.Click(css("#spaces .doc .icon-btn")))
	tb.wait(`document.querySelector('#spaces .doc .icon-btn.armed')`, "the armed delete of the document")
	tb.do(chromedp.Click(css("#spaces .doc .icon-btn")))
	tb.wait(`!document.querySelector('#spaces .doc') && document.querySelector('#spaces .space-name .count')?.textContent === '0'`, "the document gone")
	tb.do(chromedp.Click(css(`#spaces .space-row button[aria-label="Delete space"]`)))
	tb.wait(`document.querySelector('#spaces .space-row button.armed')`, "the armed delete")
	tb.do(chromedp.Click(css(`#spaces .space-row button[aria-label="Delete space"]`)))
	tb.wait(`!document.querySelector('#spaces .space')`, "the space gone")
	var list struct{ Spaces []json.RawMessage }
	if code := do(t, http.MethodGet, e.srv.URL+"/api/spaces", nil, "", &list); code != 200 || len(list.Spaces) != 0 {
		t.Errorf("spaces after delete: %d %d", code, len(list.Spaces))
	}
	tb.eval(`JSON.parse(localStorage.getItem('sova.spaces') || '[]')`, &selected)
	if len(selected) != 0 {
		t.Errorf("deleted space still selected: %v", selected)
	}
}
