package auth_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/auth"
	"github.com/sova-ai/sova/internal/store"
	"github.com/sova-ai/sova/internal/store/storetest"
)

func TestPassword(t *testing.T) {
	h, err := auth.HashPassword("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Errorf("hash %q", h)
	}
	h2, _ := auth.HashPassword("correct horse")
	if h == h2 {
		t.Error("two hashes of one password are equal: no salt")
	}
	if !auth.CheckPassword(h, "correct horse") || auth.CheckPassword(h, "correct horsE") {
		t.Error("CheckPassword")
	}
	for _, bad := range []string{"", "$argon2id$v=19$m=999999999,t=2,p=1$c2FsdHNhbHQ$" + strings.Repeat("A", 43), "$bcrypt$x"} {
		if auth.CheckPassword(bad, "x") {
			t.Errorf("malformed hash %q matched", bad)
		}
	}
	if _, err := auth.HashPassword("short"); !errors.Is(err, auth.ErrWeakPassword) {
		t.Errorf("short password: %v", err)
	}
}

func TestProxies(t *testing.T) {
	p, err := auth.ParseProxies([]string{"10.0.0.0/8", "::1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := auth.ParseProxies([]string{"proxy.lan"}); err == nil {
		t.Error("a host name was accepted")
	}
	req := func(remote, xff, proto string) *http.Request {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = remote
		if xff != "" {
			r.Header.Set("X-Forwarded-For", xff)
		}
		if proto != "" {
			r.Header.Set("X-Forwarded-Proto", proto)
		}
		return r
	}
	for _, c := range []struct {
		r      *http.Request
		ip     string
		secure bool
	}{
		{req("203.0.113.5:1234", "1.2.3.4", "https"), "203.0.113.5", false}, // not a proxy: headers ignored
		{req("10.1.2.3:1234", "1.2.3.4", "https"), "1.2.3.4", true},
		{req("10.1.2.3:1234", "6.6.6.6, 1.2.3.4, 10.9.9.9", "http"), "1.2.3.4", false},
		{req("[::1]:1234", "", "https"), "::1", true},
	} {
		if got := p.ClientIP(c.r); got != c.ip {
			t.Errorf("ClientIP(%s, %q) = %s, want %s", c.r.RemoteAddr, c.r.Header.Get("X-Forwarded-For"), got, c.ip)
		}
		if got := p.Secure(c.r); got != c.secure {
			t.Errorf("Secure(%s) = %v", c.r.RemoteAddr, got)
		}
	}
}

func TestAccounts(t *testing.T) {
	for _, e := range storetest.Engines {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			testAccounts(t, e.Open(t))
		})
	}
}

func mustUser(t *testing.T, s *store.DB, name, role, password string) *sova.Account {
	t.Helper()
	a := &sova.Account{Name: name, Role: role}
	if password != "" {
		h, err := auth.HashPassword(password)
		if err != nil {
			t.Fatal(err)
		}
		a.PasswordHash = h
	}
	if err := s.CreateAccount(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	return a
}

func testAccounts(t *testing.T, s *store.DB) {
	ctx := t.Context()
	ann := mustUser(t, s, "ann", sova.RolePro, "ann's password")
	a := auth.NewAccounts(auth.Options{Store: s, Throttle: auth.ThrottleOptions{PerAccount: 3, PerIP: 100}})

	get := func(mod func(r *http.Request)) (sova.User, error) {
		r := httptest.NewRequest("GET", "/api/chats", nil)
		mod(r)
		return a.Authenticate(r)
	}
	// No credentials.
	if _, err := get(func(*http.Request) {}); !errors.Is(err, auth.ErrUnauthenticated) {
		t.Errorf("no credentials: %v", err)
	}

	// API keys.
	key, prefix, hash, err := auth.NewAPIKey()
	if err != nil || !strings.HasPrefix(key, "sova_") || !strings.HasPrefix(key, prefix) || len(key) != 48 {
		t.Fatalf("NewAPIKey = %q %q %v", key, prefix, err)
	}
	k := &sova.APIKey{UserID: ann.ID, Prefix: prefix, Hash: hash}
	if err := s.CreateAPIKey(ctx, k); err != nil {
		t.Fatal(err)
	}
	bearer := func(tok string) func(*http.Request) {
		return func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+tok) }
	}
	u, err := get(bearer(key))
	if err != nil || u != (sova.User{ID: ann.ID, Name: "ann", Role: sova.RolePro}) {
		t.Fatalf("with the key: %+v, %v", u, err)
	}
	if got, _ := s.GetAPIKeyByHash(ctx, hash); got.LastUsedAt.IsZero() {
		t.Error("the key's use was not recorded")
	}
	for _, tok := range []string{"sk-openai", key[:len(key)-1] + "x", "sova_short"} {
		if _, err := get(bearer(tok)); !errors.Is(err, auth.ErrUnauthenticated) {
			t.Errorf("bearer %q: %v", tok, err)
		}
	}
	if err := s.RevokeAPIKey(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := get(bearer(key)); !errors.Is(err, auth.ErrUnauthenticated) {
		t.Errorf("revoked key: %v", err)
	}

	// Sign-in and the session cookie.
	if _, _, _, err := a.SignIn(ctx, "ann", "wrong password", "192.0.2.1"); !errors.Is(err, auth.ErrBadCredentials) {
		t.Errorf("wrong password: %v", err)
	}
	if _, _, _, err := a.SignIn(ctx, "nobody", "whatever!", "192.0.2.1"); !errors.Is(err, auth.ErrBadCredentials) {
		t.Errorf("unknown name: %v", err)
	}
	secret, u, exp, err := a.SignIn(ctx, "ann", "ann's password", "192.0.2.1")
	if err != nil || u.ID != ann.ID || exp.Before(time.Now().Add(29*24*time.Hour)) {
		t.Fatalf("SignIn = %+v, %v, %v", u, exp, err)
	}
	if _, err := s.GetSession(ctx, secret); !errors.Is(err, sova.ErrNotFound) {
		t.Error("the session's secret is stored in clear")
	}
	cookie := func(v string) func(*http.Request) {
		return func(r *http.Request) { r.AddCookie(&http.Cookie{Name: auth.SessionCookie, Value: v}) }
	}
	if u, err := get(cookie(secret)); err != nil || u.ID != ann.ID {
		t.Fatalf("with the cookie: %+v, %v", u, err)
	}
	secret2, _, _, err := a.SignIn(ctx, "ann", "ann's password", "192.0.2.1")
	if err != nil || secret2 == secret {
		t.Fatalf("a second sign-in reused the session: %v", err)
	}
	if err := a.SignOut(ctx, secret); err != nil {
		t.Fatal(err)
	}
	if _, err := get(cookie(secret)); !errors.Is(err, auth.ErrUnauthenticated) {
		t.Errorf("after sign-out: %v", err)
	}
	if _, err := get(cookie(secret2)); err != nil {
		t.Errorf("the other session ended too: %v", err)
	}
	if err := s.SetDisabled(ctx, ann.ID, true); err != nil {
		t.Fatal(err)
	}
	if _, err := get(cookie(secret2)); !errors.Is(err, auth.ErrUnauthenticated) {
		t.Errorf("disabled account: %v", err)
	}
	if _, _, _, err := a.SignIn(ctx, "ann", "ann's password", "192.0.2.1"); !errors.Is(err, auth.ErrBadCredentials) {
		t.Errorf("disabled account signed in: %v", err)
	}

	// Throttling: three attempts for an account, then a wait.
	mustUser(t, s, "bob", sova.RoleFree, "bob's password")
	for range 3 {
		_, _, _, _ = a.SignIn(ctx, "bob", "guess", "192.0.2.2")
	}
	var th *auth.ErrThrottled
	if _, _, _, err := a.SignIn(ctx, "bob", "bob's password", "192.0.2.3"); !errors.As(err, &th) || th.RetryAfter <= 0 {
		t.Errorf("fourth attempt: %v, want throttled", err)
	}
}

func TestExpiredSession(t *testing.T) {
	s := storetest.SQLite(t)
	mustUser(t, s, "ann", sova.RoleFree, "ann's password")
	now := time.Now()
	a := auth.NewAccounts(auth.Options{Store: s, SessionTTL: time.Hour, Now: func() time.Time { return now }})
	secret, _, _, err := a.SignIn(t.Context(), "ann", "ann's password", "192.0.2.1")
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Hour)
	r := httptest.NewRequest("GET", "/api/me", nil)
	r.AddCookie(&http.Cookie{Name: auth.SessionCookie, Value: secret})
	if _, err := a.Authenticate(r); !errors.Is(err, auth.ErrUnauthenticated) {
		t.Errorf("expired session: %v", err)
	}
}

func TestIPThrottle(t *testing.T) {
	s := storetest.SQLite(t)
	a := auth.NewAccounts(auth.Options{Store: s, Throttle: auth.ThrottleOptions{PerIP: 2}})
	for _, name := range []string{"a", "b"} {
		if _, _, _, err := a.SignIn(t.Context(), name, "whatever!", "192.0.2.9"); !errors.Is(err, auth.ErrBadCredentials) {
			t.Fatal(err)
		}
	}
	var th *auth.ErrThrottled
	if _, _, _, err := a.SignIn(t.Context(), "c", "whatever!", "192.0.2.9"); !errors.As(err, &th) {
		t.Errorf("third name from one address: %v", err)
	}
	if _, _, _, err := a.SignIn(t.Context(), "c", "whatever!", "192.0.2.10"); !errors.Is(err, auth.ErrBadCredentials) {
		t.Errorf("another address: %v", err)
	}
}

func TestAnonymousAndAuto(t *testing.T) {
	s := storetest.SQLite(t)
	anon := auth.NewAccounts(auth.Options{Store: s, Anonymous: true})
	r := httptest.NewRequest("GET", "/api/chats", nil)
	r.RemoteAddr = "192.0.2.7:5555"
	u, err := anon.Authenticate(r)
	if err != nil || u.Role != sova.RoleAnonymous || u.ID != auth.AnonymousID("192.0.2.7") || strings.Contains(u.ID, "192") {
		t.Errorf("anonymous: %+v, %v", u, err)
	}
	r.AddCookie(&http.Cookie{Name: auth.SessionCookie, Value: "stale"})
	if _, err := anon.Authenticate(r); !errors.Is(err, auth.ErrUnauthenticated) {
		t.Errorf("a stale cookie fell through to anonymous: %v", err)
	}

	auto := &auth.Auto{Accounts: auth.NewAccounts(auth.Options{Store: s}), Store: s}
	r = httptest.NewRequest("GET", "/api/chats", nil)
	if u, err := auto.Authenticate(r); err != nil || u.ID != sova.LocalUserID {
		t.Errorf("no accounts: %+v, %v; want the local user", u, err)
	}
	mustUser(t, s, "ann", sova.RoleAdmin, "")
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := auto.Authenticate(r)
		if errors.Is(err, auth.ErrUnauthenticated) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("with an account, still %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
