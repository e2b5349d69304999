package server_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/oauth2-proxy/mockoidc"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/app"
	"github.com/sova-ai/sova/internal/auth"
	"github.com/sova-ai/sova/internal/config"
	"github.com/sova-ai/sova/internal/server"
	"github.com/sova-ai/sova/internal/sovatest"
	"github.com/sova-ai/sova/internal/store/storetest"
)

// oidcEnv is Sova with single sign-on against an in-process provider.
type oidcEnv struct {
	app *app.App
	url string
	idp *mockoidc.MockOIDC
}

func newOIDCEnv(t *testing.T, engine string) *oidcEnv {
	t.Helper()
	idp, err := mockoidc.Run()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = idp.Shutdown() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	arts := sovatest.DefaultArticles()
	model := sovatest.NewModel(t)
	site := sovatest.NewSite(t, arts)
	vars := sovatest.Env(model, sovatest.NewSearXNG(t, site, arts), t.TempDir())
	c := idp.Config()
	vars["SOVA_OIDC_ISSUER"] = c.Issuer
	vars["SOVA_OIDC_CLIENT_ID"] = c.ClientID
	vars["SOVA_OIDC_CLIENT_SECRET"] = c.ClientSecret
	vars["SOVA_OIDC_REDIRECT_URL"] = base + "/api/auth/oidc/callback"
	vars["SOVA_OIDC_DEFAULT_ROLE"] = "pro"
	vars["SOVA_OIDC_NAME"] = "Team login"
	if engine == "postgres" {
		vars["SOVA_DATABASE_URL"] = storetest.PostgresDSN(t)
	}
	cfg, err := config.FromEnv(vars)
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.New(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(server.New(server.Options{Service: a.Service, Store: a.Store, Auth: a.Auth,
		Accounts: a.Accounts, OIDC: a.OIDC, Settings: a.Store, Limits: a.Limits}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(func() {
		srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = a.Close(ctx)
	})
	return &oidcEnv{app: a, url: base, idp: idp}
}

// client is a browser: a cookie jar; follow says whether it follows
// redirects.
func (e *oidcEnv) client(follow bool) *http.Client {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	if !follow {
		c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	}
	return c
}

func get(t *testing.T, c *http.Client, u string) *http.Response {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

func me(t *testing.T, c *http.Client, base string) (sova.User, int) {
	t.Helper()
	resp, err := c.Get(base + "/api/me")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var u sova.User
	_ = json.NewDecoder(resp.Body).Decode(&u)
	return u, resp.StatusCode
}

func TestSingleSignOn(t *testing.T) {
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			e := newOIDCEnv(t, engine)
			anon := e.client(true)
			resp, err := anon.Get(e.url + "/api/auth/providers")
			if err != nil {
				t.Fatal(err)
			}
			var prov struct {
				Password bool
				OIDC     struct{ Name, Login string }
			}
			_ = json.NewDecoder(resp.Body).Decode(&prov)
			resp.Body.Close()
			if !prov.Password || prov.OIDC.Name != "Team login" || prov.OIDC.Login != "/api/auth/oidc/login" {
				t.Errorf("providers = %+v", prov)
			}
			if _, code := me(t, anon, e.url); code != 401 {
				t.Errorf("me before sign-in: %d; with SSO configured and no account, nobody is the local user", code)
			}

			// First sign-in: the account is made with the default role.
			jane := &mockoidc.MockUser{Subject: "jane-sub", Email: "jane@example.com", PreferredUsername: "jane"}
			e.idp.QueueUser(jane)
			b := e.client(true)
			if resp := get(t, b, e.url+"/api/auth/oidc/login"); resp.StatusCode != 200 || resp.Request.URL.Path != "/" || resp.Request.URL.RawQuery != "" {
				t.Fatalf("sign-in ended at %s: %d", resp.Request.URL, resp.StatusCode)
			}
			u, code := me(t, b, e.url)
			if code != 200 || u.Name != "jane" || u.Role != sova.RolePro {
				t.Fatalf("me after sign-in: %d %+v", code, u)
			}
			var session *http.Cookie
			for _, c := range b.Jar.Cookies(mustURL(t, e.url+"/")) {
				if c.Name == auth.SessionCookie {
					session = c
				}
			}
			if session == nil {
				t.Fatal("no session cookie")
			}
			// Again, in another browser: the same account, none new.
			e.idp.QueueUser(jane)
			b2 := e.client(true)
			get(t, b2, e.url+"/api/auth/oidc/login")
			if u2, _ := me(t, b2, e.url); u2.ID != u.ID {
				t.Errorf("second sign-in: %+v, want the account %s", u2, u.ID)
			}
			// Another person whose user name is taken gets a name of their own.
			e.idp.QueueUser(&mockoidc.MockUser{Subject: "other-sub", Email: "jane@other.example", PreferredUsername: "jane"})
			b3 := e.client(true)
			get(t, b3, e.url+"/api/auth/oidc/login")
			if u3, _ := me(t, b3, e.url); u3.Name != "jane-2" || u3.ID == u.ID {
				t.Errorf("another jane: %+v", u3)
			}
			if n, _ := e.app.Store.CountAccounts(t.Context()); n != 2 {
				t.Errorf("%d accounts, want 2", n)
			}

			// Tampered sign-ins are refused: no session, back to the sign-in page.
			refused := func(name string, tamper func(c *http.Client, callback *url.URL)) {
				t.Helper()
				e.idp.QueueUser(jane)
				c := e.client(false)
				resp := get(t, c, e.url+"/api/auth/oidc/login")
				authorize, err := url.Parse(resp.Header.Get("Location"))
				if err != nil || resp.StatusCode != 302 || authorize.Query().Get("code_challenge") == "" ||
					authorize.Query().Get("code_challenge_method") != "S256" || authorize.Query().Get("nonce") == "" {
					t.Fatalf("%s: login redirect %d %s", name, resp.StatusCode, authorize)
				}
				resp = get(t, c, authorize.String())
				callback, err := url.Parse(resp.Header.Get("Location"))
				if err != nil || !strings.HasPrefix(callback.String(), e.url+"/api/auth/oidc/callback") {
					t.Fatalf("%s: provider redirect %d %s", name, resp.StatusCode, callback)
				}
				tamper(c, callback)
				resp = get(t, c, callback.String())
				if resp.StatusCode != 303 || resp.Header.Get("Location") != "/?sso_error=1" {
					t.Errorf("%s: callback %d → %s", name, resp.StatusCode, resp.Header.Get("Location"))
				}
				for _, ck := range resp.Cookies() {
					if ck.Name == auth.SessionCookie && ck.Value != "" {
						t.Errorf("%s: a session was started", name)
					}
				}
			}
			flow := func(c *http.Client, i int, value string) {
				u := mustURL(t, e.url+"/api/auth/oidc/callback")
				for _, ck := range c.Jar.Cookies(u) {
					if ck.Name == auth.OIDCFlowCookie {
						parts := strings.Split(ck.Value, ".")
						parts[i] = value
						c.Jar.SetCookies(u, []*http.Cookie{{Name: auth.OIDCFlowCookie, Value: strings.Join(parts, "."), Path: "/api/auth/oidc"}})
						return
					}
				}
				t.Fatal("no flow cookie")
			}
			refused("state changed", func(_ *http.Client, cb *url.URL) {
				q := cb.Query()
				q.Set("state", q.Get("state")+"x")
				cb.RawQuery = q.Encode()
			})
			refused("another browser's flow", func(c *http.Client, _ *url.URL) {
				c.Jar, _ = cookiejar.New(nil)
			})
			refused("nonce of another sign-in", func(c *http.Client, _ *url.URL) { flow(c, 1, "other-nonce") })
			refused("PKCE verifier of another sign-in", func(c *http.Client, _ *url.URL) {
				flow(c, 2, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
			})
			refused("provider error", func(_ *http.Client, cb *url.URL) {
				cb.RawQuery = "error=access_denied&state=" + cb.Query().Get("state")
			})
			// A disabled account cannot sign in through the provider either.
			if err := e.app.Store.SetDisabled(t.Context(), u.ID, true); err != nil {
				t.Fatal(err)
			}
			refused("disabled account", func(*http.Client, *url.URL) {})
		})
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
