package server_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/sova-ai/sova/internal/server"
)

// guarded serves e's app again with the access settings of opt.
func guarded(t *testing.T, e *env, opt server.Options) *env {
	t.Helper()
	opt.Service, opt.Store, opt.Auth, opt.Version = e.app.Service, e.app.Store, testAuth(e.app), "test"
	srv := httptest.NewServer(server.New(opt))
	t.Cleanup(srv.Close)
	c := *e
	c.srv = srv
	return &c
}

func TestHostsFromSettings(t *testing.T) {
	base := newEnv(t, nil)
	for _, tc := range []struct {
		name          string
		opt           server.Options
		serve, refuse []string
	}{
		{"allowed hosts", server.Options{AllowedHosts: []string{"sova.lan", "*.corp.example", "10.0.0.5:8080", "[fd00::5]"}},
			[]string{"sova.lan", "SOVA.lan:8080", "a.corp.example", "b.a.corp.example:1", "10.0.0.5", "10.0.0.5:9", "[fd00::5]:8080", "[FD00:0::5]", "127.0.0.1", "localhost:1"},
			[]string{"corp.example", "evil.example", "sova.lan.evil.example", "10.0.0.6", "[fd00::6]", "xcorp.example"}},
		{"any host", server.Options{AllowedHosts: []string{"*"}}, []string{"evil.example", "10.1.2.3"}, nil},
		{"public url", server.Options{PublicURL: "https://Sova.Example.com:8443/app"},
			[]string{"sova.example.com", "sova.example.com:8443", "localhost"}, []string{"example.com", "other.example.com"}},
		{"listening on one address", server.Options{Addr: "192.168.1.5:8080"},
			[]string{"192.168.1.5:8080", "127.0.0.1"}, []string{"192.168.1.6", "evil.example"}},
		{"listening on a name", server.Options{Addr: "sova-box:8080"}, []string{"sova-box:8080"}, []string{"evil.example", "192.168.1.5"}},
		{"listening on all interfaces", server.Options{Addr: "0.0.0.0:8080"},
			[]string{"192.168.1.5:8080", "10.9.8.7", "[fd00::1]:8080", "localhost"}, []string{"evil.example", "nas.lan"}},
		{"listening on all interfaces, IPv6", server.Options{Addr: "[::]:8080"}, []string{"192.168.1.5"}, []string{"evil.example"}},
		{"listening on every address", server.Options{Addr: ":8080"}, []string{"192.168.1.5"}, []string{"evil.example"}},
		{"loopback listen address adds nothing", server.Options{Addr: "127.0.0.1:8080"}, []string{"127.0.0.1"}, []string{"192.168.1.5", "evil.example"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := guarded(t, base, tc.opt)
			for _, h := range tc.serve {
				if resp, ae := send(t, e, "GET", "/api/modes", "", map[string]string{"Host": h}); resp.StatusCode != 200 {
					t.Errorf("Host %q: %d %+v, want 200", h, resp.StatusCode, ae)
				}
			}
			for _, h := range tc.refuse {
				if resp, _ := send(t, e, "GET", "/api/modes", "", map[string]string{"Host": h}); resp.StatusCode != http.StatusMisdirectedRequest {
					t.Errorf("Host %q: %d, want 421", h, resp.StatusCode)
				}
			}
		})
	}
}

// Behind a proxy that passes its own Host, an old browser's Origin (no
// Sec-Fetch-Site) is SOVA_PUBLIC_URL's origin: trusted.
func TestPublicURLOriginTrusted(t *testing.T) {
	base := newEnv(t, nil)
	e := guarded(t, base, server.Options{PublicURL: "https://sova.example.com:443/"})
	body := `{"group":"chat","messages":[{"role":"user","content":"hi"}]}`
	for _, origin := range []string{"https://sova.example.com"} {
		h := map[string]string{"Content-Type": "application/json", "Origin": origin}
		if resp, ae := send(t, e, "POST", "/api/search", body, h); resp.StatusCode != 200 {
			t.Errorf("Origin %s: %d %+v", origin, resp.StatusCode, ae)
		}
	}
	for _, origin := range []string{"http://sova.example.com", "https://evil.example", "https://sova.example.com:8443"} {
		h := map[string]string{"Content-Type": "application/json", "Origin": origin}
		if resp, ae := send(t, e, "POST", "/api/search", body, h); resp.StatusCode != 403 || ae.Error.Code != "cross_origin_request" {
			t.Errorf("Origin %s: %d %+v, want 403", origin, resp.StatusCode, ae)
		}
	}
}
