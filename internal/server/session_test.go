package server_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova"

	"net/http/httptest"

	"github.com/sova-ai/sova/internal/app"
	"github.com/sova-ai/sova/internal/auth"
	"github.com/sova-ai/sova/internal/config"
	"github.com/sova-ai/sova/internal/server"
	"github.com/sova-ai/sova/internal/sovatest"
	"github.com/sova-ai/sova/internal/store/storetest"
)

// newAccountsEnv is a server with accounts (SOVA_AUTH=accounts) on the
// given engine ("sqlite" or "postgres").
func newAccountsEnv(t *testing.T, engine string, extra map[string]string) *env {
	t.Helper()
	arts := sovatest.DefaultArticles()
	e := &env{model: sovatest.NewModel(t)}
	e.site = sovatest.NewSite(t, arts)
	e.sx = sovatest.NewSearXNG(t, e.site, arts)
	vars := sovatest.Env(e.model, e.sx, t.TempDir())
	vars["SOVA_AUTH"] = "accounts"
	if engine == "postgres" {
		vars["SOVA_DATABASE_URL"] = storetest.PostgresDSN(t)
	}
	for k, v := range extra {
		vars[k] = v
	}
	cfg, err := config.FromEnv(vars)
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.New(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.app = a
	e.srv = httptest.NewServer(server.New(server.Options{Service: a.Service, Store: a.Store, Auth: a.Auth, Accounts: a.Accounts,
		MaxBodyBytes: cfg.MaxRequestBodyBytes, Version: "test",
		Spaces: a.Spaces, MaxUploadBytes: cfg.SpacesMaxUploadBytes, MaxFileBytes: cfg.SpacesMaxFileBytes,
		Memory: a.Memory, Connectors: a.Connectors,
		Limits: a.Limits, Settings: a.Store, Models: a.Model, Usage: a.Store}))
	t.Cleanup(func() {
		e.srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = a.Close(ctx)
	})
	return e
}

// addUser creates an account with a password.
func (e *env) addUser(t *testing.T, name, role, password string) *sova.Account {
	t.Helper()
	h, err := auth.HashPassword(password)
	if err != nil {
		t.Fatal(err)
	}
	acc := &sova.Account{Name: name, Role: role, PasswordHash: h}
	if err := e.app.Store.CreateAccount(context.Background(), acc); err != nil {
		t.Fatal(err)
	}
	return acc
}

// browser is a client with a cookie jar, as a browser signs in.
type browser struct {
	t   *testing.T
	e   *env
	c   *http.Client
	key string // API key instead of the cookie, when set
}

func (e *env) browser(t *testing.T) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, e: e, c: &http.Client{Jar: jar}}
}

func (b *browser) do(method, path, body string) (*http.Response, string) {
	b.t.Helper()
	req, err := http.NewRequest(method, b.e.srv.URL+path, strings.NewReader(body))
	if err != nil {
		b.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if b.key != "" {
		req.Header.Set("Authorization", "Bearer "+b.key)
	}
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(data)
}

func (b *browser) signIn(name, password string) *http.Response {
	b.t.Helper()
	resp, body := b.do("POST", "/api/session", `{"name":"`+name+`","password":"`+password+`"}`)
	if resp.StatusCode != http.StatusOK {
		b.t.Fatalf("sign in as %s: %d %s", name, resp.StatusCode, body)
	}
	return resp
}

func TestSignInAndOut(t *testing.T) {
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			e := newAccountsEnv(t, engine, nil)
			ann := e.addUser(t, "ann", sova.RolePro, "ann's password")
			b := e.browser(t)
			if resp, body := b.do("GET", "/api/me", ""); resp.StatusCode != 401 || errorCode(body) != "unauthenticated" {
				t.Errorf("me before sign-in: %d %s", resp.StatusCode, body)
			}
			if resp, body := b.do("POST", "/api/session", `{"name":"ann","password":"wrong one"}`); resp.StatusCode != 401 ||
				errorCode(body) != "invalid_credentials" || strings.Contains(body, "wrong one") || len(resp.Cookies()) != 0 {
				t.Errorf("wrong password: %d %s", resp.StatusCode, body)
			}
			resp := b.signIn("ann", "ann's password")
			var c *http.Cookie
			for _, ck := range resp.Cookies() {
				if ck.Name == auth.SessionCookie {
					c = ck
				}
			}
			if c == nil || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Secure || c.Path != "/" {
				t.Fatalf("cookie %+v", c)
			}
			resp, body := b.do("GET", "/api/me", "")
			if resp.StatusCode != 200 || !strings.Contains(body, `"id":"`+ann.ID+`"`) || !strings.Contains(body, `"role":"pro"`) ||
				!strings.Contains(body, `"kind":"account"`) || strings.Contains(body, "argon2") {
				t.Errorf("me: %d %s", resp.StatusCode, body)
			}
			// Signing in again gives a new session and ends the old one.
			b.signIn("ann", "ann's password")
			oldReq, _ := http.NewRequest("GET", e.srv.URL+"/api/me", nil)
			oldReq.AddCookie(c)
			if r, err := http.DefaultClient.Do(oldReq); err != nil || r.StatusCode != 401 {
				t.Errorf("the earlier session still works: %v %v", r.StatusCode, err)
			} else {
				r.Body.Close()
			}
			if resp, _ := b.do("DELETE", "/api/session", ""); resp.StatusCode != 204 {
				t.Errorf("sign out: %d", resp.StatusCode)
			}
			if resp, _ := b.do("GET", "/api/me", ""); resp.StatusCode != 401 {
				t.Errorf("me after sign-out: %d", resp.StatusCode)
			}
			if n, _ := e.app.Store.DeleteSessions(context.Background(), ann.ID); n != 0 {
				t.Errorf("%d sessions left on the server after sign-out", n)
			}
		})
	}
}

func TestSignInThrottledAndSecureCookie(t *testing.T) {
	e := newAccountsEnv(t, "sqlite", map[string]string{"SOVA_TRUSTED_PROXIES": "127.0.0.1"})
	e.addUser(t, "ann", sova.RoleFree, "ann's password")
	b := e.browser(t)
	for range 5 {
		b.do("POST", "/api/session", `{"name":"ann","password":"guess guess"}`)
	}
	resp, body := b.do("POST", "/api/session", `{"name":"ann","password":"ann's password"}`)
	if resp.StatusCode != 429 || errorCode(body) != "rate_limited" || resp.Header.Get("Retry-After") == "" {
		t.Errorf("sixth attempt: %d %s %v", resp.StatusCode, body, resp.Header)
	}

	e.addUser(t, "bob", sova.RoleFree, "bob's password")
	req, _ := http.NewRequest("POST", e.srv.URL+"/api/session", strings.NewReader(`{"name":"bob","password":"bob's password"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Forwarded-Proto", "https")
	req.Header.Set("X-Forwarded-For", "198.51.100.4")
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if cs := r.Cookies(); r.StatusCode != 200 || len(cs) != 1 || !cs[0].Secure {
		t.Errorf("behind a trusted TLS proxy: %d %+v", r.StatusCode, cs)
	}
}

func TestSignInWithoutAccounts(t *testing.T) {
	e := newEnv(t, map[string]string{"SOVA_AUTH": "none"})
	if resp, body := e.as(t, "", "POST", "/api/session", `{"name":"a","password":"b"}`); resp.StatusCode != 404 {
		t.Errorf("sign-in with SOVA_AUTH=none: %d %s", resp.StatusCode, body)
	}
	if resp, body := e.as(t, "", "GET", "/api/me", ""); resp.StatusCode != 200 || !strings.Contains(body, `"kind":"local"`) {
		t.Errorf("me, local: %d %s", resp.StatusCode, body)
	}
}
