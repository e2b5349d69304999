package mcp

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"time"
)

// guardedTransport is the HTTP transport of users' own servers: it
// refuses to connect to loopback, private, link-local and unspecified
// addresses (checked on the address actually dialled, so a name that
// resolves to one is refused too), except for the allowed hosts.
func guardedTransport(allow []string) http.RoundTripper {
	allowed := func(host string) bool {
		return slices.ContainsFunc(allow, func(a string) bool { return strings.EqualFold(a, host) })
	}
	d := &net.Dialer{Timeout: 10 * time.Second}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		if allowed(host) {
			return d.DialContext(ctx, network, addr)
		}
		guarded := *d
		guarded.Control = func(_, address string, _ syscall.RawConn) error {
			h, _, err := net.SplitHostPort(address)
			if err != nil {
				return err
			}
			ip := net.ParseIP(h)
			if ip == nil || allowed(ip.String()) {
				return nil
			}
			if ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsUnspecified() || ip.IsMulticast() {
				return fmt.Errorf("%s is a private address; an administrator may allow it with SOVA_MCP_ALLOW_HOSTS", host)
			}
			return nil
		}
		return guarded.DialContext(ctx, network, addr)
	}
	return t
}
