package server

// The checks every request passes before a route sees it, so that a web
// page the person visits cannot use Sova through their browser
// (docs/security.md):
//
//   - Host: only the names Sova is configured for are served, so a page
//     whose name was re-pointed at this machine (DNS rebinding) gets no
//     answer it could read. Loopback names always; SOVA_PUBLIC_URL's host;
//     SOVA_ALLOWED_HOSTS; the listen address's host, or any IP address when
//     Sova listens on all interfaces (an address cannot be re-pointed).
//   - Path: only clean paths; ".", ".." and empty segments get a JSON 400
//     instead of the ServeMux's HTML redirect.
//   - Cross-origin: unsafe methods from another origin are refused
//     (http.CrossOriginProtection: Sec-Fetch-Site, else Origin against
//     Host), with SOVA_PUBLIC_URL's origin trusted. A request carrying
//     "Authorization: Bearer" is exempt: a browser sends that header only
//     when a script sets it, and across origins only after a CORS preflight
//     that Sova never grants.
//
// JSON bodies must also say they are JSON (requireJSON, called by decode):
// a page can send text/plain across origins without a preflight.

import (
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
)

// guard wraps the routes in the checks above.
type guard struct {
	hosts hostPolicy
	cop   *http.CrossOriginProtection
	log   *slog.Logger
	next  http.Handler
}

func newGuard(opt Options, next http.Handler) *guard {
	g := &guard{hosts: newHostPolicy(opt), cop: http.NewCrossOriginProtection(), log: opt.Logger, next: next}
	if o := publicOrigin(opt.PublicURL); o != "" {
		if err := g.cop.AddTrustedOrigin(o); err != nil {
			opt.Logger.Error("SOVA_PUBLIC_URL is not a usable origin; it is not trusted", "url", opt.PublicURL, "err", err)
		}
	}
	return g
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !g.hosts.allowed(r.Host) {
		g.log.Warn("refused a request for a host name Sova is not configured for (SOVA_ALLOWED_HOSTS, SOVA_PUBLIC_URL)",
			"host", quoteShort(r.Host), "method", r.Method, "path", quoteShort(r.URL.Path))
		writeError(w, http.StatusMisdirectedRequest, "invalid_request_error", "host_not_allowed",
			"this Sova does not answer to the host name "+quoteShort(r.Host)+
				"; if that is how you reach it, add the name to SOVA_ALLOWED_HOSTS or set SOVA_PUBLIC_URL to the address you open")
		return
	}
	if p := r.URL.EscapedPath(); r.Method != http.MethodConnect && p != cleanPath(p) {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_path",
			"the path "+quoteShort(p)+` has ".", ".." or empty segments; Sova answers only clean paths`)
		return
	}
	if !hasBearer(r) {
		if err := g.cop.Check(r); err != nil {
			g.log.Warn("refused a cross-origin request", "method", r.Method, "path", quoteShort(r.URL.Path),
				"origin", quoteShort(r.Header.Get("Origin")), "sec_fetch_site", quoteShort(r.Header.Get("Sec-Fetch-Site")))
			writeError(w, http.StatusForbidden, "permission_error", "cross_origin_request",
				"cross-origin "+r.Method+" refused: a page of another origin may not act on Sova through your browser. "+
					"If this page is Sova itself opened under another address, set SOVA_PUBLIC_URL to that address")
			return
		}
	}
	g.next.ServeHTTP(w, r)
}

// requireJSON answers 415 unless the request says its body is JSON:
// Content-Type application/json, with or without parameters.
func requireJSON(w http.ResponseWriter, r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err == nil && mt == "application/json" {
		return true
	}
	got := "no Content-Type"
	if ct != "" {
		got = "Content-Type " + quoteShort(ct)
	}
	writeError(w, http.StatusUnsupportedMediaType, "invalid_request_error", "unsupported_media_type",
		"send the body as JSON with Content-Type: application/json (got "+got+")")
	return false
}

// hasBearer reports an Authorization: Bearer header (API clients).
func hasBearer(r *http.Request) bool {
	scheme, _, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	return ok && strings.EqualFold(scheme, "Bearer")
}

// hostPolicy is the set of Host names served.
type hostPolicy struct {
	any      bool            // SOVA_ALLOWED_HOSTS=*
	names    map[string]bool // lower case, IPv6 without brackets, no port
	suffixes []string        // ".example.com" for "*.example.com"
	anyIP    bool            // listening on all interfaces: any IP address
}

func newHostPolicy(opt Options) hostPolicy {
	p := hostPolicy{names: map[string]bool{"localhost": true}}
	for _, h := range opt.AllowedHosts {
		p.add(h)
	}
	if u, err := url.Parse(opt.PublicURL); err == nil && u.Host != "" {
		p.add(u.Host)
	}
	if opt.Addr != "" {
		if host, _, err := net.SplitHostPort(opt.Addr); err == nil {
			if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
				p.anyIP = true
			} else {
				p.add(host)
			}
		}
	}
	return p
}

func (p *hostPolicy) add(h string) {
	h = strings.TrimSpace(h)
	switch {
	case h == "*":
		p.any = true
	case strings.HasPrefix(h, "*."):
		p.suffixes = append(p.suffixes, "."+hostOnly(h[2:]))
	case h != "":
		p.names[hostOnly(h)] = true
	}
}

func (p *hostPolicy) allowed(hostport string) bool {
	if p.any {
		return true
	}
	h := hostOnly(hostport)
	if h == "" {
		return false
	}
	if p.names[h] {
		return true
	}
	if ip := net.ParseIP(h); ip != nil {
		return ip.IsLoopback() || p.anyIP
	}
	for _, s := range p.suffixes {
		if strings.HasSuffix(h, s) {
			return true
		}
	}
	return false
}

// hostOnly lower-cases a Host value and drops its port, the brackets of
// an IPv6 address and a final dot; addresses are written canonically.
func hostOnly(hostport string) string {
	h := hostport
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		h = host
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if ip := net.ParseIP(h); ip != nil {
		return ip.String() // one spelling per address: fd00:0::5 is fd00::5
	}
	return strings.TrimSuffix(strings.ToLower(h), ".")
}

// publicOrigin is SOVA_PUBLIC_URL as a browser writes it in Origin:
// scheme://host[:port], lower case, without a default port.
func publicOrigin(publicURL string) string {
	u, err := url.Parse(publicURL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return ""
	}
	scheme, host := strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	if port := u.Port(); (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		host = strings.TrimSuffix(host, ":"+port)
	}
	return scheme + "://" + host
}

// cleanPath is the canonical form of a path as http.ServeMux computes it:
// "." and ".." resolved, repeated slashes joined, a final slash kept.
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	if p[0] != '/' {
		p = "/" + p
	}
	np := path.Clean(p)
	if p[len(p)-1] == '/' && np != "/" {
		np += "/"
	}
	return np
}

// quoteShort quotes a client's value for a message, cut to 100 bytes.
func quoteShort(s string) string {
	if len(s) > 100 {
		return strconv.Quote(s[:100]) + "…"
	}
	return strconv.Quote(s)
}
