package server_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/sova-ai/sova"
	"github.com/sova-ai/sova/internal/server"
)

// sharedChatEnv is e with share links on, and a stored chat with a cited
// web page and a cited document.
func sharedChatEnv(t *testing.T, on bool) (e *env, url, chatID string) {
	t.Helper()
	return sharedChatEnvMax(t, on, 0)
}

// sharedChatEnvMax is sharedChatEnv with a cap on a person's live links.
func sharedChatEnvMax(t *testing.T, on bool, maxLinks int) (e *env, url, chatID string) {
	t.Helper()
	e = newEnv(t, nil)
	a := e.app
	opt := server.Options{Service: a.Service, Store: a.Store, Auth: testAuth(a), Version: "test", Images: a.Images, MaxShareLinks: maxLinks}
	if on {
		opt.Shares = a.Store
	}
	srv := httptest.NewServer(server.New(opt))
	t.Cleanup(srv.Close)
	ctx := context.Background()
	chat := &sova.Chat{UserID: e.user, Title: "Tidal power", Mode: "search"}
	if err := a.Store.CreateChat(ctx, chat); err != nil {
		t.Fatal(err)
	}
	for _, m := range []*sova.Message{
		{Role: "user", Content: "How do tidal stream turbines compare with barrages?", Mode: "search"},
		{Role: "assistant", Mode: "search", FinishReason: "stop", Model: "secret-model", Content: "Turbines sit in the current [1]; a barrage dams an estuary [2].",
			Sources: []sova.Source{{Number: 1, URL: "https://example.org/tidal", Title: "Tidal stream"}, {Number: 2, URL: "sova://spaces/sp-private/documents/d1#c0", Title: "notes.md", Kind: "document"}}},
	} {
		m.ChatID = chat.ID
		if err := a.Store.AddMessage(ctx, e.user, m); err != nil {
			t.Fatal(err)
		}
	}
	return e, srv.URL, chat.ID
}

// Share links are off unless the server keeps them; on, a link opens the
// chat's questions, answers and sources for anyone, and nothing else;
// revoked, it opens nothing.
func TestShareLinksAPI(t *testing.T) {
	_, off, chatID := sharedChatEnv(t, false)
	if st := do(t, "POST", off+"/api/chats/"+chatID+"/shares", nil, "", nil); st != http.StatusNotFound {
		t.Errorf("share links off: POST answered %d", st)
	}

	e, url, chatID := sharedChatEnv(t, true)
	var made struct{ ID, URL string }
	if st := do(t, "POST", url+"/api/chats/"+chatID+"/shares", nil, "", &made); st != http.StatusCreated || !strings.HasPrefix(made.URL, "/s/") || made.ID == "" {
		t.Fatalf("POST shares: %d %+v", st, made)
	}
	if st := do(t, "POST", url+"/api/chats/nope/shares", nil, "", nil); st != http.StatusNotFound {
		t.Errorf("sharing a chat that does not exist: %d", st)
	}
	secret := strings.TrimPrefix(made.URL, "/s/")
	// Someone else may not list or revoke the chat's links.
	for _, m := range []string{"GET", "DELETE"} {
		req, _ := http.NewRequest(m, url+"/api/chats/"+chatID+"/shares"+map[string]string{"GET": "", "DELETE": "/" + made.ID}[m], nil)
		req.Header.Set(testUserHeader, "bob")
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != http.StatusNotFound {
			t.Errorf("bob %s the links: %s", m, r.Status)
		}
	}
	// Anyone: a client that is nobody.
	req, _ := http.NewRequest("GET", url+"/api/shared/"+secret, nil)
	req.Header.Set(testUserHeader, "-")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	got := string(raw)
	if resp.StatusCode != 200 || resp.Header.Get("Cache-Control") != "no-store" ||
		!strings.Contains(got, "Tidal power") || !strings.Contains(got, "barrage dams an estuary") || !strings.Contains(got, "https://example.org/tidal") {
		t.Fatalf("shared chat: %d %s", resp.StatusCode, got)
	}
	for _, private := range []string{chatID, e.user, "sp-private", "secret-model", "sova://"} {
		if strings.Contains(got, private) {
			t.Errorf("the shared chat shows %q: %s", private, got)
		}
	}
	var list struct{ Shares []struct{ ID string } }
	if st := do(t, "GET", url+"/api/chats/"+chatID+"/shares", nil, "", &list); st != 200 || len(list.Shares) != 1 || list.Shares[0].ID != made.ID {
		t.Errorf("list: %d %+v", st, list)
	}
	if st := do(t, "DELETE", url+"/api/chats/"+chatID+"/shares/"+made.ID, nil, "", nil); st != http.StatusNoContent {
		t.Errorf("revoke: %d", st)
	}
	if st := do(t, "GET", url+"/api/shared/"+secret, nil, "", nil); st != http.StatusNotFound {
		t.Errorf("a revoked link answers %d", st)
	}
	if st := do(t, "GET", url+"/api/shared/"+made.ID, nil, "", nil); st != http.StatusNotFound {
		t.Errorf("the stored hash opens the chat: %d", st)
	}
}

// The share button makes a link; the link opens a read-only page of the
// chat on a phone without overflow; revoked, the page says it opens
// nothing.
// A person's live links are capped (SOVA_SHARE_LINKS_MAX): one more is
// 409 limit_reached naming the cap, and revoking one makes room.
func TestShareLinksCapAPI(t *testing.T) {
	_, url, chatID := sharedChatEnvMax(t, true, 2)
	var ids []string
	for range 2 {
		var made struct{ ID string }
		if st := do(t, "POST", url+"/api/chats/"+chatID+"/shares", nil, "", &made); st != http.StatusCreated {
			t.Fatalf("POST shares under the cap: %d", st)
		}
		ids = append(ids, made.ID)
	}
	var refused apiErr
	if st := do(t, "POST", url+"/api/chats/"+chatID+"/shares", nil, "", &refused); st != http.StatusConflict ||
		refused.Error.Code != "limit_reached" || !strings.Contains(refused.Error.Message, "2 live share links") {
		t.Fatalf("the third link: %d %+v", st, refused)
	}
	var list struct{ Shares []sova.ShareLink }
	if do(t, "GET", url+"/api/chats/"+chatID+"/shares", nil, "", &list); len(list.Shares) != 2 {
		t.Errorf("links after the refusal: %+v", list.Shares)
	}
	if st := do(t, "DELETE", url+"/api/chats/"+chatID+"/shares/"+ids[0], nil, "", nil); st != http.StatusNoContent {
		t.Fatalf("DELETE: %d", st)
	}
	if st := do(t, "POST", url+"/api/chats/"+chatID+"/shares", nil, "", nil); st != http.StatusCreated {
		t.Errorf("a link after one was revoked: %d", st)
	}
}

func TestBrowserShareLink(t *testing.T) {
	browser := newBrowser(t)
	_, url, chatID := sharedChatEnv(t, true)
	tb := newTab(t, browser)
	tb.do(chromedp.EmulateViewport(1366, 900), chromedp.Navigate(url+"/c/"+chatID))
	tb.wait(`document.querySelector('#share-chat:not([hidden])')`, "the share button")
	tb.do(chromedp.Click(css("#share-chat")))
	tb.do(chromedp.Click(css(".share-create")))
	tb.wait(`document.querySelector('.share-url')?.value.includes('/s/')`, "the link")
	tb.screenshot("share-panel-desktop")
	var link string
	tb.eval(`document.querySelector('.share-url').value`, &link)

	pub := newTab(t, browser)
	pub.do(chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile), chromedp.Navigate(link))
	pub.wait(`document.body.classList.contains('ready')`, "the shared page")
	var page struct {
		Text     string
		Links    []string
		Composer bool
		Overflow bool
	}
	pub.eval(`({text: document.body.innerText, links: [...document.querySelectorAll('#shared a')].map(a => a.href),
		composer: !!document.querySelector('textarea, form, #sidebar'), overflow: document.documentElement.scrollWidth > innerWidth})`, &page)
	if !strings.Contains(page.Text, "How do tidal stream turbines") || !strings.Contains(page.Text, "barrage dams an estuary") ||
		!strings.Contains(page.Text, "notes.md") || page.Composer || page.Overflow || len(page.Links) != 2 {
		t.Errorf("shared page: %+v", page)
	}
	pub.screenshot("share-page-phone")

	tb.do(chromedp.Click(css(".share-revoke")))
	tb.wait(`!document.querySelector('.share-revoke')`, "the link revoked")
	pub.do(chromedp.Reload())
	pub.wait(`document.querySelector('.shared-gone')`, "the revoked link's page")
}
