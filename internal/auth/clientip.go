package auth

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Proxies are the reverse proxies whose X-Forwarded-For and
// X-Forwarded-Proto headers are believed (SOVA_TRUSTED_PROXIES). From any
// other peer the headers are ignored: a client could write anything there.
type Proxies []netip.Prefix

// ParseProxies reads addresses and CIDR ranges ("10.0.0.0/8", "::1").
func ParseProxies(list []string) (Proxies, error) {
	var out Proxies
	for _, s := range list {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("%q is neither an address nor a CIDR range", s)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

func (p Proxies) trusted(a netip.Addr) bool {
	a = a.Unmap()
	for _, pr := range p {
		if pr.Contains(a) {
			return true
		}
	}
	return false
}

func remoteAddr(r *http.Request) netip.Addr {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, _ := netip.ParseAddr(host)
	return a.Unmap()
}

// ClientIP is the address of the client: the peer's, or, when the peer
// is a trusted proxy, the last address in X-Forwarded-For that is not
// one of the trusted proxies.
func (p Proxies) ClientIP(r *http.Request) string {
	peer := remoteAddr(r)
	if !peer.IsValid() {
		return r.RemoteAddr
	}
	if !p.trusted(peer) {
		return peer.String()
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break
		}
		if !p.trusted(a) {
			return a.Unmap().String()
		}
	}
	return peer.String()
}

// Secure reports whether the client reached Sova over TLS: directly, or
// through a trusted proxy that says so in X-Forwarded-Proto.
func (p Proxies) Secure(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	if !p.trusted(remoteAddr(r)) {
		return false
	}
	proto, _, _ := strings.Cut(r.Header.Get("X-Forwarded-Proto"), ",")
	return strings.EqualFold(strings.TrimSpace(proto), "https")
}
