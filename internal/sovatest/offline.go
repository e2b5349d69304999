package sovatest

import (
	"fmt"
	"net"
	"net/http"
)

// Offline returns a copy of c that never reaches the internet, whatever
// address a page or a search result names (a cited site's favicon, a
// thumbnail): host names other than localhost and public IP addresses are
// refused before a name is resolved or a connection made. Loopback
// addresses (the local fakes tests start) pass, and so do private,
// link-local and metadata addresses, which the client's own guard must
// refuse (tests of the guard aim at them).
func Offline(c *http.Client) *http.Client {
	if c == nil {
		c = &http.Client{}
	}
	out := *c
	next := c.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	out.Transport = offlineTransport{next: next}
	return &out
}

type offlineTransport struct{ next http.RoundTripper }

func (t offlineTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	host := r.URL.Hostname()
	ip := net.ParseIP(host)
	public := ip != nil && ip.IsGlobalUnicast() && !ip.IsPrivate()
	if (ip == nil && host != "localhost") || public {
		return nil, fmt.Errorf("sovatest: %s is not a local fake; tests never reach the internet", host)
	}
	return t.next.RoundTrip(r)
}
