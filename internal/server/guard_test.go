package server_test

// Issue 18: other web sites may not use Sova through the person's browser
// (Host, cross-origin and Content-Type checks), chat ids are bounded, and
// unclean paths get a JSON error.

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/sova-ai/sova"
)

// send makes one request to the test server and decodes a JSON error
// answer (when there is one).
func send(t *testing.T, e *env, method, path, body string, header map[string]string) (*http.Response, apiErr) {
	t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body == "" {
		req.Body = nil
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var ae apiErr
	if resp.StatusCode >= 400 {
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") || json.Unmarshal(raw, &ae) != nil || ae.Error.Code == "" {
			t.Errorf("%s %s: %d answer is not the JSON error: %s %q", method, path, resp.StatusCode, resp.Header.Get("Content-Type"), raw)
		}
	}
	return resp, ae
}

// nothingStarted fails the test when the model was asked anything, or a
// run exists, or a chat other than those the test made.
func nothingStarted(t *testing.T, e *env, made ...string) {
	t.Helper()
	ctx := context.Background()
	if n := e.model.Count(); n != 0 {
		t.Errorf("the model got %d requests; no run should have started", n)
	}
	for _, state := range []string{sova.RunRunning, sova.RunWaiting, sova.RunCompleted, sova.RunFailed, sova.RunCancelled, sova.RunInterrupted} {
		if runs, _ := e.app.Store.RunsInState(ctx, state); len(runs) > 0 {
			t.Errorf("%d %s runs exist, e.g. %+v", len(runs), state, runs[0])
		}
	}
	chats, _ := e.app.Store.ListChats(ctx, sova.LocalUserID, 10, 0)
	for _, c := range chats {
		if !slices.Contains(made, c.ID) || c.MessageCount != 0 {
			t.Errorf("a chat was stored or written to: %+v", c)
		}
	}
}

const question = `{"id":"xsite","group":"chat","messages":[{"role":"user","content":"hello"}]}`

// DNS rebinding: a page of evil.example whose name now resolves to
// 127.0.0.1 reaches the server with Host: evil.example. It must get
// nothing, whatever it sends.
func TestForeignHostRefused(t *testing.T) {
	e := newEnv(t, nil)
	if err := e.app.Store.CreateChat(context.Background(), &sova.Chat{ID: "private", UserID: sova.LocalUserID, Mode: "chat"}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		method, path, body string
		header             map[string]string
	}{
		{"GET", "/api/chats", "", nil},
		{"GET", "/api/chats/private", "", nil},
		{"GET", "/", "", nil},
		{"GET", "/healthz", "", nil},
		{"POST", "/api/search", question, map[string]string{"Content-Type": "application/json"}},
		// No Origin, no Sec-Fetch-Site: what a rebound same-origin page sends.
		{"POST", "/v1/chat/completions", `{"model":"chat","messages":[{"role":"user","content":"hi"}]}`, map[string]string{"Content-Type": "application/json"}},
		// An API key does not lift the Host check.
		{"GET", "/api/chats", "", map[string]string{"Authorization": "Bearer sova_x"}},
		{"DELETE", "/api/chats/private", "", map[string]string{"Authorization": "Bearer sova_x"}},
	} {
		for _, host := range []string{"evil.example", "evil.example:" + port(e), "127.0.0.1.evil.example", "localhost.evil.example"} {
			h := map[string]string{"Host": host}
			for k, v := range tc.header {
				h[k] = v
			}
			resp, ae := send(t, e, tc.method, tc.path, tc.body, h)
			if resp.StatusCode != http.StatusMisdirectedRequest || ae.Error.Code != "host_not_allowed" || !strings.Contains(ae.Error.Message, "SOVA_ALLOWED_HOSTS") {
				t.Errorf("%s %s with Host %q: %d %+v, want 421 host_not_allowed naming SOVA_ALLOWED_HOSTS", tc.method, tc.path, host, resp.StatusCode, ae)
			}
		}
	}
	if _, err := e.app.Store.GetChat(context.Background(), sova.LocalUserID, "private"); err != nil {
		t.Errorf("the chat is gone: %v", err)
	}
	if n := e.model.Count(); n != 0 {
		t.Errorf("the model got %d requests", n)
	}

	// Loopback names and addresses, with any port, are served.
	for _, host := range []string{"127.0.0.1:" + port(e), "localhost:" + port(e), "LOCALHOST", "localhost.", "127.0.0.2:9", "127.255.0.1", "[::1]:" + port(e), "[::1]"} {
		resp, _ := send(t, e, "GET", "/api/chats", "", map[string]string{"Host": host})
		if resp.StatusCode != 200 {
			t.Errorf("Host %q: %d, want 200", host, resp.StatusCode)
		}
	}
}

func port(e *env) string {
	u, _ := url.Parse(e.srv.URL)
	return u.Port()
}

// A request another origin's page sends (Sec-Fetch-Site, or an Origin that
// is not the Host) may read but not act.
func TestCrossOriginUnsafeRequestsRefused(t *testing.T) {
	e := newEnv(t, nil)
	if err := e.app.Store.CreateChat(context.Background(), &sova.Chat{ID: "keep", UserID: sova.LocalUserID, Mode: "chat"}); err != nil {
		t.Fatal(err)
	}
	with := func(extra map[string]string) map[string]string {
		h := map[string]string{"Content-Type": "application/json"}
		for k, v := range extra {
			h[k] = v
		}
		return h
	}
	for _, h := range []map[string]string{
		{"Sec-Fetch-Site": "cross-site"},
		{"Sec-Fetch-Site": "same-site", "Origin": "http://127.0.0.1:1"},
		{"Origin": "http://evil.example"},                  // a browser without Sec-Fetch-Site
		{"Origin": "http://localhost:" + port(e)},          // another origin of this machine
		{"Origin": "null", "Sec-Fetch-Site": "cross-site"}, // a sandboxed frame
	} {
		for _, rq := range []struct{ method, path, body string }{
			{"POST", "/api/search", question},
			{"POST", "/v1/chat/completions", `{"model":"chat","messages":[{"role":"user","content":"hi"}]}`},
			{"DELETE", "/api/chats/keep", ""},
			{"POST", "/api/runs/x/cancel", ""},
		} {
			resp, ae := send(t, e, rq.method, rq.path, rq.body, with(h))
			if resp.StatusCode != http.StatusForbidden || ae.Error.Code != "cross_origin_request" || !strings.Contains(ae.Error.Message, "SOVA_PUBLIC_URL") {
				t.Errorf("%s %s with %v: %d %+v, want 403 cross_origin_request", rq.method, rq.path, h, resp.StatusCode, ae)
			}
		}
	}
	nothingStarted(t, e, "keep")
	if _, err := e.app.Store.GetChat(context.Background(), sova.LocalUserID, "keep"); err != nil {
		t.Errorf("the chat was deleted: %v", err)
	}

	// Reading is a safe method: the Host check alone guards it.
	if resp, _ := send(t, e, "GET", "/api/chats", "", map[string]string{"Sec-Fetch-Site": "cross-site"}); resp.StatusCode != 200 {
		t.Errorf("cross-site GET: %d", resp.StatusCode)
	}
	// The page's own requests, and API clients with a key, pass.
	for _, h := range []map[string]string{
		{"Sec-Fetch-Site": "same-origin", "Origin": e.srv.URL},
		{"Origin": e.srv.URL},
		{"Sec-Fetch-Site": "cross-site", "Authorization": "Bearer sova_key"},
		{},
	} {
		resp, ae := send(t, e, "POST", "/api/search", `{"group":"chat","messages":[{"role":"user","content":"hi"}]}`, with(h))
		if resp.StatusCode != 200 {
			t.Errorf("POST with %v: %d %+v, want 200", h, resp.StatusCode, ae)
		}
	}
}

// A JSON body must say it is JSON: text/plain (what a page can send across
// origins without asking) and forms are refused with 415.
func TestJSONBodiesNeedJSONContentType(t *testing.T) {
	e := newSpacesEnv(t, nil)
	for _, ct := range []string{"", "text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/jsonx", "application/json-seq", "text/json"} {
		for _, rq := range []struct{ method, path, body string }{
			{"POST", "/api/search", question},
			{"POST", "/v1/chat/completions", `{"model":"chat","messages":[{"role":"user","content":"hi"}]}`},
			{"POST", "/api/spaces", `{"name":"planted"}`},
		} {
			h := map[string]string{}
			if ct != "" {
				h["Content-Type"] = ct
			}
			resp, ae := send(t, e, rq.method, rq.path, rq.body, h)
			if resp.StatusCode != http.StatusUnsupportedMediaType || ae.Error.Code != "unsupported_media_type" || !strings.Contains(ae.Error.Message, "application/json") {
				t.Errorf("%s %s as %q: %d %+v, want 415 unsupported_media_type", rq.method, rq.path, ct, resp.StatusCode, ae)
			}
		}
	}
	nothingStarted(t, e)
	if spaces, _ := e.app.Store.ListSpaces(context.Background(), sova.LocalUserID); len(spaces) != 0 {
		t.Errorf("spaces were created: %+v", spaces)
	}
	for _, ct := range []string{"application/json", "application/json; charset=utf-8", "Application/JSON;charset=UTF-8"} {
		if resp, ae := send(t, e, "POST", "/api/search", `{"group":"chat","messages":[{"role":"user","content":"hi"}]}`, map[string]string{"Content-Type": ct}); resp.StatusCode != 200 {
			t.Errorf("as %q: %d %+v", ct, resp.StatusCode, ae)
		}
	}
}

// Chat ids clients choose are bounded and plain: they travel in a header,
// in paths and in the UI's links.
func TestChatIDRules(t *testing.T) {
	e := newEnv(t, nil)
	body := func(id string) string {
		b, _ := json.Marshal(map[string]any{"id": id, "group": "chat", "messages": []map[string]string{{"role": "user", "content": "hi"}}})
		return string(b)
	}
	ctJSON := map[string]string{"Content-Type": "application/json"}
	for _, id := range []string{
		strings.Repeat("a", 900_000),
		strings.Repeat("b", 129),
		"../../etc/passwd",
		"<img src=x onerror=alert(1)>",
		"chat 1",
		"chat.1",
		"чат",
		"a\r\nX-Injected: 1",
	} {
		resp, ae := send(t, e, "POST", "/api/search", body(id), ctJSON)
		if resp.StatusCode != 400 || ae.Error.Code != "invalid_chat_id" || ae.Error.Type != "invalid_request_error" || !strings.Contains(ae.Error.Message, "128") {
			t.Errorf("id %.40q: %d %+v, want 400 invalid_chat_id", id, resp.StatusCode, ae)
		}
		if h := resp.Header.Get("X-Chat-ID"); h != "" {
			t.Errorf("id %.40q echoed in X-Chat-ID (%d bytes)", id, len(h))
		}
		if len(ae.Error.Message) > 400 {
			t.Errorf("the error repeats the id: %d bytes", len(ae.Error.Message))
		}
	}
	nothingStarted(t, e)

	// What clients generate: AI SDK ids (16 alphanumerics), UUIDs, Sova's
	// own (UUID v7), and the longest allowed.
	for _, id := range []string{"aB3dE5gH7jK9mN1p", "0f8fad5b-d9cb-469f-a165-70867728950e", "01936c4e-8f2a-7b3c-9d1e-2f3a4b5c6d7e", "chat_1", strings.Repeat("z", 128)} {
		resp, ae := send(t, e, "POST", "/api/search", body(id), ctJSON)
		if resp.StatusCode != 200 || resp.Header.Get("X-Chat-ID") != id {
			t.Errorf("id %q: %d %+v, X-Chat-ID %q", id, resp.StatusCode, ae, resp.Header.Get("X-Chat-ID"))
		}
	}
}

// ".." and "//" in a path get the API's JSON error, not the ServeMux's
// HTML redirect to the cleaned path.
func TestUncleanPathsGetJSONError(t *testing.T) {
	e := newEnv(t, nil)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, p := range []string{"/api/../healthz", "/api/chats/../../etc/passwd", "/api/runs/x/files/../../../etc/passwd", "/assets/../index.html", "/api//chats", "/./healthz", "/v1/models/..", "/c/x/../../api/chats"} {
		for _, method := range []string{"GET", "POST"} {
			req, _ := http.NewRequest(method, e.srv.URL+p, nil)
			req.URL.Opaque = p // sent exactly as written
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var ae apiErr
			_ = json.Unmarshal(raw, &ae)
			if resp.StatusCode != 400 || ae.Error.Code != "invalid_path" || resp.Header.Get("Location") != "" {
				t.Errorf("%s %s: %d %s, Location %q; want 400 invalid_path", method, p, resp.StatusCode, raw, resp.Header.Get("Location"))
			}
		}
	}
}
