package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/app"
	"github.com/sova-ai/sova/internal/auth"
	"github.com/sova-ai/sova/internal/server"
)

// testUserHeader names, in a test's request, a user other than the one
// the app's Authenticator answers for: a second person with data of their
// own. "-" is a request without credentials.
const testUserHeader = "X-Test-User"

// testAuth is the tests' Authenticator: the app's own (without accounts,
// every request is the local user's), unless the request names another
// user in testUserHeader.
func testAuth(a *app.App) auth.Authenticator {
	return auth.Func(func(r *http.Request) (sova.User, error) {
		switch id := r.Header.Get(testUserHeader); id {
		case "":
			return a.Auth.Authenticate(r)
		case "-":
			return sova.User{}, auth.ErrUnauthenticated
		default:
			return sova.User{ID: id}, nil
		}
	})
}

// userOf is the id of the user the app's Authenticator gives a request
// that names no one.
func userOf(t testing.TB, a *app.App) string {
	t.Helper()
	u, err := a.Auth.Authenticate(httptest.NewRequest(http.MethodGet, "/api/chats", nil))
	if err != nil || u.ID == "" {
		t.Fatalf("the app's Authenticator: %+v %v", u, err)
	}
	return u.ID
}

// as sends a request acting for user ("" for the app's own, "-" for none)
// and returns the response with its body read.
func (e *env) as(t *testing.T, user, method, path, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if user != "" {
		req.Header.Set(testUserHeader, user)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

// errorCode reads the code of a JSON error body ("" if it is none).
func errorCode(body string) string {
	var v struct {
		Error struct{ Message, Type, Code string }
	}
	if json.Unmarshal([]byte(body), &v) != nil || v.Error.Message == "" || v.Error.Type == "" {
		return ""
	}
	return v.Error.Code
}

// Every route that acts for someone asks the Authenticator first: a
// request without a user gets 401 and reaches no handler. The health check
// and the browser UI's files are for anyone.
func TestRequestWithoutUserIs401(t *testing.T) {
	e := newSpacesEnv(t, nil)
	routes := []struct{ method, path, body string }{
		{"GET", "/api/modes", ""},
		{"POST", "/api/search", `{"id":"c","group":"chat","messages":[{"role":"user","content":"hi"}]}`},
		{"GET", "/api/chats", ""},
		{"GET", "/api/chats/c", ""},
		{"DELETE", "/api/chats/c", ""},
		{"GET", "/api/chats/c/stream", ""},
		{"PATCH", "/api/chats/c", `{"title":"t"}`},
		{"GET", "/api/chats/c/export.md", ""},
		{"GET", "/api/passages?url=sova://spaces/x/documents/d%23chunk-1", ""},
		{"GET", "/api/runs/r", ""},
		{"GET", "/api/runs/r/stream", ""},
		{"POST", "/api/runs/r/cancel", ""},
		{"POST", "/api/runs/r/restart", ""},
		{"GET", "/api/runs/r/files", ""},
		{"GET", "/api/runs/r/files.zip", ""},
		{"GET", "/api/runs/r/files/main.md", ""},
		{"GET", "/api/runs/r/report.md", ""},
		{"GET", "/api/runs/r/report.pdf", ""},
		{"GET", "/v1/models", ""},
		{"POST", "/v1/chat/completions", `{"model":"chat","messages":[{"role":"user","content":"hi"}]}`},
		{"GET", "/agents", ""},
		{"GET", "/agents/a/state", ""},
		{"GET", "/api/spaces", ""},
		{"POST", "/api/spaces", `{"name":"x"}`},
		{"GET", "/api/spaces/x", ""},
		{"PATCH", "/api/spaces/x", `{"name":"y"}`},
		{"DELETE", "/api/spaces/x", ""},
		{"GET", "/api/spaces/x/documents", ""},
		{"POST", "/api/spaces/x/documents", ""},
		{"GET", "/api/spaces/x/documents/d", ""},
		{"DELETE", "/api/spaces/x/documents/d", ""},
		{"GET", "/api/spaces/x/search?q=a", ""},
		{"GET", "/api/me", ""},
	}
	for _, rt := range routes {
		resp, body := e.as(t, "-", rt.method, rt.path, rt.body)
		if resp.StatusCode != http.StatusUnauthorized || errorCode(body) != "unauthenticated" ||
			!strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") || resp.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("%s %s without a user: %d %s %q", rt.method, rt.path, resp.StatusCode, resp.Header, body)
		}
	}
	if chats, _ := e.app.Store.ListChats(context.Background(), e.user, 10, 0); len(chats) != 0 {
		t.Errorf("a refused request stored %d chats", len(chats))
	}
	if e.model.Count() != 0 {
		t.Errorf("a refused request reached the model %d times", e.model.Count())
	}
	for _, path := range []string{"/healthz", "/readyz", "/", "/assets/app.css"} {
		if resp, body := e.as(t, "-", "GET", path, ""); resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s is for anyone: %d %s", path, resp.StatusCode, body)
		}
	}
	// Unknown API paths keep their 404.
	if resp, body := e.as(t, "-", "GET", "/api/nothing", ""); resp.StatusCode != http.StatusNotFound || errorCode(body) != "not_found" {
		t.Errorf("unknown path: %d %s", resp.StatusCode, body)
	}
}

// Handlers act for the user of the request, never for one of their own
// choosing: what one user stores, another does not see.
func TestHandlersActForTheRequestsUser(t *testing.T) {
	e := newEnv(t, nil)
	resp, body := e.as(t, "bob", "POST", "/api/search", `{"id":"bobs","group":"chat","messages":[{"role":"user","content":"What is the capital of Australia?"}]}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("bob's question: %d %s", resp.StatusCode, body)
	}
	runID := resp.Header.Get("X-Run-ID")
	if chats, _ := e.app.Store.ListChats(context.Background(), "bob", 10, 0); len(chats) != 1 || chats[0].ID != "bobs" {
		t.Errorf("bob's chats: %+v", chats)
	}
	if rn, err := e.app.Store.GetRun(context.Background(), "bob", runID); err != nil || rn.UserID != "bob" {
		t.Errorf("bob's run: %+v %v", rn, err)
	}
	if chats, _ := e.app.Store.ListChats(context.Background(), e.user, 10, 0); len(chats) != 0 {
		t.Errorf("bob's chat is stored for %s too: %+v", e.user, chats)
	}
	// The app's user does not see it.
	for _, path := range []string{"/api/chats/bobs", "/api/runs/" + runID, "/api/runs/" + runID + "/stream"} {
		if resp, body := e.as(t, "", "GET", path, ""); resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s of another user: %d %s", path, resp.StatusCode, body)
		}
	}
	if resp, _ := e.as(t, "", "GET", "/api/chats/bobs/stream", ""); resp.StatusCode != http.StatusNotFound {
		t.Errorf("stream of another user's chat: %d", resp.StatusCode)
	}
	if resp, body := e.as(t, "", "GET", "/api/chats", ""); resp.StatusCode != http.StatusOK || strings.Contains(body, "bobs") {
		t.Errorf("chat list shows another user's chat: %s", body)
	}
	// Bob does.
	if resp, body := e.as(t, "bob", "GET", "/api/chats/bobs", ""); resp.StatusCode != http.StatusOK || !strings.Contains(body, "Canberra") {
		t.Errorf("bob's own chat: %d %s", resp.StatusCode, body)
	}
}

// An Authenticator that fails (its store is down) is a server fault, not
// the request's: 500, and the request goes no further.
func TestAuthenticatorFault(t *testing.T) {
	for _, tt := range []struct {
		name   string
		auth   auth.Authenticator
		status int
		code   string
	}{
		{"fault", auth.Func(func(*http.Request) (sova.User, error) { return sova.User{}, errors.New("session store unreachable") }), 500, "internal"},
		{"no user", auth.Func(func(*http.Request) (sova.User, error) { return sova.User{}, nil }), 401, "unauthenticated"},
		{"wrapped", auth.Func(func(*http.Request) (sova.User, error) {
			return sova.User{}, errors.Join(errors.New("API key revoked"), auth.ErrUnauthenticated)
		}), 401, "unauthenticated"},
		{"none configured", nil, 401, "unauthenticated"},
	} {
		srv := httptest.NewServer(server.New(server.Options{Auth: tt.auth}))
		resp, err := http.Get(srv.URL + "/api/chats")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		srv.Close()
		// (A handler that ran would panic without a store: "internal error".)
		if resp.StatusCode != tt.status || errorCode(string(b)) != tt.code || strings.Contains(string(b), "unreachable") ||
			tt.status == 500 && !strings.Contains(string(b), "who this request is for") {
			t.Errorf("%s: %d %s", tt.name, resp.StatusCode, b)
		}
	}
}
