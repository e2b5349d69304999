// Package egress is Sova's one way out: every request the server sends to
// another host (page fetches, search and data providers, the model
// endpoint, MCP servers, WebDAV shares, the image proxy, single sign-on,
// external readers, voice) goes through a Client made here.
//
// # Address guard
//
// Addresses come from strangers (search results, pages, discovery
// documents) and from the people who use Sova (an MCP server, a WebDAV
// share, an image), so each path has a Guard against server-side request
// forgery. Only http and https URLs are sent, and the guard refuses
// private (RFC 1918, RFC 4193), loopback, link-local, unspecified,
// multicast, carrier-grade NAT (100.64.0.0/10), 0.0.0.0/8, benchmarking
// (198.18.0.0/15), reserved and documentation addresses, IPv6 forms
// embedding any of those (IPv4-mapped, IPv4-compatible, NAT64), 6to4 and
// Teredo addresses, and cloud instance-metadata endpoints (169.254.169.254,
// 169.254.170.2, 100.100.100.200, fd00:ec2::254, metadata.google.internal,
// ...). Numeric spellings of IPv4 addresses (2130706433, 0x7f.1,
// 0177.0.0.1) are decoded and judged as addresses.
//
// The check runs on the address actually being connected to, inside
// net.Dialer.Control after name resolution, so a name that resolves (or
// re-resolves, as in DNS rebinding) to a refused address is refused. URLs
// are also checked before each request and before every redirect.
//
// What a path may reach beyond the public Internet is its Policy: an
// allow-list setting (SOVA_FETCH_ALLOW_HOSTS, SOVA_MCP_ALLOW_HOSTS) and,
// for WebDAV, a switch for private networks (SOVA_CONNECTORS_ALLOW_PRIVATE).
// No range and no switch opens a metadata address: only an allow-list
// entry naming that exact address does. Hosts an administrator configured
// (the model endpoint, a provider's base URL, the OIDC issuer) are allowed
// by name by the path that uses them; where they lead to (redirects,
// endpoints named in a discovery document) is checked like anything else.
//
// Refusals never name the address a host name resolved to; that goes to
// the log only (BlockedError.Private), so the server cannot be used to
// learn what names resolve to inside its network.
//
// # Failures
//
// Errors carry a kind (ErrTransient, ErrRateLimited, ErrAuth, ErrNotFound,
// ErrInvalid, ErrBlocked; see KindOf), one RetryAfter reads the wait a
// server asked for, and a Breaker per endpoint stops calls to an endpoint
// that keeps failing, failing them at once for a cool-down with an error
// that says so (ErrOpen).
package egress

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Defaults for zero Config fields.
const (
	DefaultTimeout      = 30 * time.Second
	DefaultMaxRedirects = 5
)

// ErrTooManyRedirects is matched when a request stops because the redirect
// limit was reached.
var ErrTooManyRedirects = errors.New("too many redirects")

// Config configures a Client.
type Config struct {
	Policy
	// Timeout bounds a whole request, redirects and body included
	// (default 30s; negative: only the request's context).
	Timeout time.Duration
	// ResponseHeaderTimeout bounds the wait for an answer's headers
	// (default: Timeout, when positive).
	ResponseHeaderTimeout time.Duration
	// MaxRedirects is how many redirects are followed (default 5;
	// negative: none).
	MaxRedirects int
	// ProxyURL is an optional proxy (http, https or socks5). The
	// environment's proxy settings are never used: through a proxy the
	// dial-time check would see only the proxy.
	ProxyURL *url.URL
}

// NewTransport returns an HTTP transport that dials through g and checks
// every request's URL with it. It ignores proxy settings of the
// environment; proxy, when set, is used and always reachable.
func NewTransport(g *Guard, proxy *url.URL, responseHeaderTimeout time.Duration) http.RoundTripper {
	base := &http.Transport{
		DialContext:           g.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          64,
		MaxIdleConnsPerHost:   8,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: responseHeaderTimeout,
		ExpectContinueTimeout: time.Second,
	}
	if proxy != nil {
		base.Proxy = http.ProxyURL(proxy)
	}
	return &guardedTransport{guard: g, base: base}
}

// NewClient returns an HTTP client under cfg's policy: guarded dialing,
// every request and redirect checked, a redirect limit and a timeout.
func NewClient(cfg Config) *http.Client {
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxRedirects == 0 {
		cfg.MaxRedirects = DefaultMaxRedirects
	}
	if cfg.ResponseHeaderTimeout == 0 && cfg.Timeout > 0 {
		cfg.ResponseHeaderTimeout = cfg.Timeout
	}
	if cfg.ProxyURL != nil && cfg.Proxy == "" {
		cfg.Proxy = cfg.ProxyURL.Hostname()
	}
	g := NewGuard(cfg.Policy)
	return &http.Client{
		Transport:     NewTransport(g, cfg.ProxyURL, cfg.ResponseHeaderTimeout),
		CheckRedirect: CheckRedirect(g, cfg.MaxRedirects, ""),
		Timeout:       max(cfg.Timeout, 0),
	}
}

// CheckRedirect is an http.Client.CheckRedirect that follows at most max
// redirects (none when negative; setting, when given, is named in the
// error) and checks each target with g before it is requested.
func CheckRedirect(g *Guard, limit int, setting string) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if len(via) > max(limit, 0) {
			if setting != "" {
				return fmt.Errorf("more than %d redirects (%s): %w", max(limit, 0), setting, ErrTooManyRedirects)
			}
			return fmt.Errorf("more than %d redirects: %w", max(limit, 0), ErrTooManyRedirects)
		}
		if err := g.CheckURL(req.URL); err != nil {
			return fmt.Errorf("redirect to %s: %w", req.URL.Redacted(), err)
		}
		return nil
	}
}

// WithGuard returns base behind g's per-request URL check; base must dial
// through g.DialContext for the dial-time check.
func WithGuard(g *Guard, base http.RoundTripper) http.RoundTripper {
	return &guardedTransport{guard: g, base: base}
}

// ServiceClient returns the client of a service an administrator
// configured (a search provider, a reader, the model or voice endpoint):
// the hosts of bases are reachable wherever they are, by name, and every
// other host, redirects included, must pass the guard. timeout as in
// Config.Timeout.
func ServiceClient(timeout time.Duration, bases ...string) *http.Client {
	return NewClient(Config{Policy: Policy{Allow: Hosts(bases...)}, Timeout: timeout})
}

// Hosts returns the host names of the given URLs, skipping those that
// have none.
func Hosts(urls ...string) []string {
	var out []string
	for _, b := range urls {
		if u, err := url.Parse(strings.TrimSpace(b)); err == nil && u.Hostname() != "" {
			out = append(out, u.Hostname())
		}
	}
	return out
}
