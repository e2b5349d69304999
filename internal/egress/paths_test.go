package egress_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sova-ai/sova"
	"github.com/sova-ai/sova/internal/apiclient"
	"github.com/sova-ai/sova/internal/auth"
	"github.com/sova-ai/sova/internal/connectors"
	"github.com/sova-ai/sova/internal/egress"
	"github.com/sova-ai/sova/internal/fetch"
	"github.com/sova-ai/sova/internal/imageproxy"
	"github.com/sova-ai/sova/internal/mcp"
	"github.com/sova-ai/sova/internal/search"
)

// target is a server on 127.0.0.2, an address no outbound path may reach:
// it counts what reaches it.
func target(t *testing.T) (port string, hits *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("cannot listen on 127.0.0.2: %v", err)
	}
	hits = new(atomic.Int32)
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><body><p>secret internal page</p></body></html>")
	})}}
	srv.Start()
	t.Cleanup(srv.Close)
	_, port, _ = net.SplitHostPort(ln.Addr().String())
	return port, hits
}

// hostileRows are addresses and redirects every outbound path refuses.
// redirect is the URL of a server on an allowed host (127.0.0.1, the
// host the paths are configured with) that redirects to the target.
func hostileRows(port, redirect string) []struct{ name, url string } {
	return []struct{ name, url string }{
		{"loopback", "http://127.0.0.2:" + port + "/"},
		{"decimal", "http://2130706434:" + port + "/"},
		{"hex", "http://0x7f.0.0.2:" + port + "/"},
		{"hex short", "http://0x7f.2:" + port + "/"},
		{"octal", "http://0177.0.0.2:" + port + "/"},
		{"ipv4-mapped", "http://[::ffff:127.0.0.2]:" + port + "/"},
		{"name resolving to loopback", "http://localhost:" + port + "/"},
		{"ipv6 loopback", "http://[::1]:" + port + "/"},
		{"aws metadata", "http://169.254.169.254/latest/meta-data/"},
		{"ecs credentials", "http://169.254.170.2/v2/credentials"},
		{"alibaba metadata", "http://100.100.100.200/latest/meta-data/"},
		{"gcp metadata name", "http://metadata.google.internal/computeMetadata/v1/"},
		{"aws ipv6 metadata", "http://[fd00:ec2::254]/"},
		{"private", "http://10.0.0.1/"},
		{"cgnat", "http://100.64.0.1/"},
		{"this network", "http://0.0.0.1/"},
		{"benchmark", "http://198.18.0.1/"},
		{"nat64", "http://[64:ff9b::7f00:2]/"},
		{"nat64 local", "http://[64:ff9b:1::a00:1]/"},
		{"6to4", "http://[2002:7f00:2::1]/"},
		{"teredo", "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/"},
		{"link-local v6", "http://[fe80::1]/"},
		{"unique local", "http://[fd12::1]/"},
		{"redirect to loopback", redirect},
	}
}

// allowedAddr is the address the paths are configured to reach (a
// provider's base, an MCP allow-list entry, the OIDC issuer): 127.0.0.3,
// so that "localhost" (127.0.0.1) is not covered by it.
const allowedAddr = "127.0.0.3"

// serveAllowed starts h on allowedAddr.
func serveAllowed(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	ln, err := net.Listen("tcp", allowedAddr+":0")
	if err != nil {
		t.Skipf("cannot listen on %s: %v", allowedAddr, err)
	}
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: h}}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// redirector answers every request with a redirect to the target,
// keeping the method (307).
func redirector(t *testing.T, port string) *httptest.Server {
	return serveAllowed(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://127.0.0.2:"+port+r.URL.Path, http.StatusTemporaryRedirect)
	}))
}

// refused reports whether err is the guard's refusal (or, for paths
// that flatten errors to text, says so), and that its text does not
// give away what a name resolved to.
func refused(err error) bool {
	if err == nil {
		return false
	}
	return errors.Is(err, egress.ErrBlocked) || strings.Contains(err.Error(), "refused to connect")
}

// One table of hostile addresses and redirects against every outbound
// path: each refuses each row, and the server on 127.0.0.2 sees nothing.
func TestEveryPathRefusesHostileAddresses(t *testing.T) {
	port, hits := target(t)
	redir := redirector(t, port)
	rows := hostileRows(port, redir.URL+"/r")
	ctx := context.Background()
	short := func() (context.Context, context.CancelFunc) { return context.WithTimeout(ctx, 3*time.Second) }

	fetcher := fetch.New(fetch.Config{AllowHosts: []string{allowedAddr}, Timeout: 3 * time.Second})
	images := &imageproxy.Proxy{Client: fetcher.Client(), MaxBytes: 1 << 20, Timeout: 3 * time.Second}
	mcpClient := mcp.NewClient(nil, mcp.Options{Timeout: 3 * time.Second, AllowHosts: []string{allowedAddr}})
	api := apiclient.New(apiclient.Options{Provider: "test", Bases: []string{redir.URL}, Timeout: 3 * time.Second, RetryBackoff: -1})
	// The web search providers as the app builds them: one client on
	// which the configured services' hosts (here the redirector's) are
	// reachable; each provider's URL is the row's.
	searchClient := egress.ServiceClient(3*time.Second, redir.URL)
	searchOpts := []search.Option{search.WithTimeout(3 * time.Second), search.WithRetryBackoff(0)}
	searchProviders := func(raw string) []search.Provider {
		return []search.Provider{
			search.NewSearXNG(raw, searchClient, searchOpts...),
			search.NewBrave("key", raw, searchClient, searchOpts...),
			search.NewDuckDuckGo(raw, searchClient, searchOpts...),
			search.NewWikipedia(raw, searchClient, searchOpts...),
			search.NewExa("key", raw, searchClient, searchOpts...),
			search.NewTavily("key", raw, searchClient, searchOpts...),
		}
	}
	reader, err := fetch.NewExternalReader(fetch.ExternalConfig{Service: fetch.ReaderJina, BaseURL: redir.URL, Timeout: 3 * time.Second, CheckURL: fetcher.CheckURL})
	if err != nil {
		t.Fatal(err)
	}

	paths := []struct {
		name string
		try  func(t *testing.T, raw string) error
	}{
		{"fetch", func(t *testing.T, raw string) error {
			c, cancel := short()
			defer cancel()
			_, err := fetcher.Fetch(c, raw)
			return err
		}},
		{"image proxy", func(t *testing.T, raw string) error {
			c, cancel := short()
			defer cancel()
			_, err := images.Fetch(c, raw)
			var ie *imageproxy.Error
			if errors.As(err, &ie) && ie.Code != imageproxy.CodeRefused {
				return fmt.Errorf("code %s: %w", ie.Code, err)
			}
			return err
		}},
		{"mcp when added", func(t *testing.T, raw string) error {
			if strings.HasPrefix(raw, redir.URL) {
				return egress.ErrBlocked // an allowed host: its redirect is refused when dialled (next path)
			}
			c, cancel := short()
			defer cancel()
			return mcpClient.CheckUserURL(c, raw)
		}},
		{"mcp when dialled", func(t *testing.T, raw string) error {
			c, cancel := short()
			defer cancel()
			ts := mcpClient.Tools(c, sova.User{ID: sova.LocalUserID}, []mcp.Server{{Name: "probe", URL: raw}})
			defer ts.Close()
			if len(ts.Problems) != 1 {
				return fmt.Errorf("no problem reported: %d tools", len(ts.Tools))
			}
			return errors.New(ts.Problems[0].Error)
		}},
		{"webdav", func(t *testing.T, raw string) error {
			c, cancel := short()
			defer cancel()
			// As Connect does: checked when given, then when dialled.
			if err := connectors.CheckShare(c, raw, false); err != nil {
				return err
			}
			_, err := connectors.WebDAV{URL: raw, Transport: connectors.GuardedTransport(false), Timeout: 3 * time.Second}.List(c, 10)
			return err
		}},
		{"oidc", func(t *testing.T, raw string) error {
			c, cancel := short()
			defer cancel()
			return oidcWith(c, t, raw, port)
		}},
		{"provider api", func(t *testing.T, raw string) error {
			c, cancel := short()
			defer cancel()
			_, err := api.Get(c, raw, nil)
			return err
		}},
		{"search providers", func(t *testing.T, raw string) error {
			c, cancel := short()
			defer cancel()
			// Each provider must refuse; the first that does not is
			// the path's answer.
			for _, p := range searchProviders(raw) {
				if _, err := p.Search(c, search.Query{Text: "q"}); !refused(err) {
					return fmt.Errorf("%s: %w", p.Name(), err)
				}
			}
			return egress.ErrBlocked
		}},
		{"reader", func(t *testing.T, raw string) error {
			c, cancel := short()
			defer cancel()
			if strings.HasPrefix(raw, redir.URL) {
				raw = "https://example.com/page" // the reader service itself redirects
			}
			_, err := reader.Fetch(c, raw)
			return err
		}},
	}
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			for _, row := range rows {
				err := p.try(t, row.url)
				if !refused(err) {
					t.Errorf("%s: %s not refused: %v", row.name, row.url, err)
				}
				if err != nil && strings.HasPrefix(row.url, "http://localhost") && strings.Contains(err.Error(), "127.0.0.1") {
					t.Errorf("%s: the error names the resolved address: %v", row.name, err)
				}
			}
		})
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the server on 127.0.0.2 got %d requests", n)
	}
}

// oidcWith starts single sign-on against an issuer on 127.0.0.1 whose
// discovery document names raw as its token endpoint and keys; for the
// redirect row the discovery document itself redirects.
func oidcWith(ctx context.Context, t *testing.T, raw, port string) error {
	var issuer string
	idp := serveAllowed(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(raw, "redirect:") || strings.HasSuffix(raw, "/r") {
			http.Redirect(w, r, "http://127.0.0.2:"+port+r.URL.Path, http.StatusFound)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer": issuer, "authorization_endpoint": issuer + "/auth",
			"token_endpoint": raw, "jwks_uri": raw, "id_token_signing_alg_values_supported": []string{"RS256"},
		})
	}))
	defer idp.Close()
	issuer = idp.URL
	_, err := auth.NewOIDC(ctx, auth.OIDCConfig{Issuer: issuer, ClientID: "sova", ClientSecret: "s3cret"}, nil)
	return err
}

// With private networks allowed (SOVA_CONNECTORS_ALLOW_PRIVATE), WebDAV
// still never reaches a metadata address.
func TestAllowPrivateNeverOpensMetadata(t *testing.T) {
	for _, raw := range []string{"http://169.254.169.254/", "http://169.254.170.2/v2/credentials", "http://100.100.100.200/", "http://[fd00:ec2::254]/", "http://metadata.google.internal/"} {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		err := connectors.CheckShare(ctx, raw, true)
		if err == nil {
			t.Errorf("%s given with private networks allowed: accepted", raw)
		}
		if !strings.HasPrefix(raw, "http://[") { // gowebdav cannot build IPv6 literal URLs
			_, err = connectors.WebDAV{URL: raw, Transport: connectors.GuardedTransport(true), Timeout: 3 * time.Second}.List(ctx, 10)
		}
		cancel()
		if !errors.Is(err, egress.ErrBlocked) {
			t.Errorf("%s with private networks allowed: %v", raw, err)
		}
	}
}
