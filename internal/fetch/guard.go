package fetch

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
)

// AllowHostsEnv is the setting operators use to let the fetcher reach
// addresses it refuses by default. Error messages name it.
const AllowHostsEnv = "SOVA_FETCH_ALLOW_HOSTS"

// ErrBlocked is matched (errors.Is) by every refusal of the address guard.
// Use errors.As with *BlockedError for the details.
var ErrBlocked = errors.New("address refused by the fetch guard")

// BlockedError reports a URL, host or IP address the guard refused.
//
// Its text reaches the people who use Sova (a page that could not be
// read), so when a host name resolved to the refused address, the address
// is left out of it: that is how the host's network is laid out, for the
// log only (Private).
type BlockedError struct {
	Host   string     // host name as written in the URL, if known
	IP     netip.Addr // the refused address; invalid when the refusal is by name or scheme
	Reason string     // why it is refused, e.g. "loopback address"
	// resolved is set when Host is a name that resolved to IP.
	resolved bool
}

// Private is the address a host name resolved to.
func (e *BlockedError) Private() string {
	if !e.resolved || !e.IP.IsValid() {
		return ""
	}
	return e.Host + " resolved to " + e.IP.String()
}

func (e *BlockedError) Error() string {
	var b strings.Builder
	switch {
	case e.resolved && e.Host != "":
		fmt.Fprintf(&b, "refused to connect to %s: it resolves to a %s; if it must be reachable, add %q to %s", e.Host, e.Reason, e.Host, AllowHostsEnv)
		return b.String()
	case e.IP.IsValid() && e.Host != "" && e.Host != e.IP.String():
		fmt.Fprintf(&b, "refused to connect to %s (%s): %s", e.Host, e.IP, e.Reason)
	case e.IP.IsValid():
		fmt.Fprintf(&b, "refused to connect to %s: %s", e.IP, e.Reason)
	case e.Host != "":
		fmt.Fprintf(&b, "refused to connect to %s: %s", e.Host, e.Reason)
	default:
		// Not about an address (e.g. a scheme): nothing to allow.
		return "refused: " + e.Reason
	}
	switch {
	case e.IP.IsValid() && isMetadataAddr(e.IP):
		fmt.Fprintf(&b, "; if it must be reachable, add exactly %q to %s (ranges do not cover metadata addresses)", e.IP.String(), AllowHostsEnv)
	case e.IP.IsValid() && e.Host != "" && e.Host != e.IP.String():
		fmt.Fprintf(&b, "; if it must be reachable, add %q or %q (or a CIDR range containing it) to %s", e.Host, e.IP.String(), AllowHostsEnv)
	case e.IP.IsValid():
		fmt.Fprintf(&b, "; if it must be reachable, add %q (or a CIDR range containing it) to %s", e.IP.String(), AllowHostsEnv)
	default:
		fmt.Fprintf(&b, "; if it must be reachable, add %q to %s", e.Host, AllowHostsEnv)
	}
	return b.String()
}

// Is makes errors.Is(err, ErrBlocked) true.
func (e *BlockedError) Is(target error) bool { return target == ErrBlocked }

type blockedRange struct {
	prefix netip.Prefix
	reason string
}

// blockedRanges are refused unless AllowHosts covers them. More specific
// prefixes come first so the reason given is the most precise one.
var blockedRanges = []blockedRange{
	{netip.MustParsePrefix("0.0.0.0/8"), `"this network" address (0.0.0.0/8)`},
	{netip.MustParsePrefix("10.0.0.0/8"), "private address (RFC 1918)"},
	{netip.MustParsePrefix("100.64.0.0/10"), "carrier-grade NAT address (RFC 6598)"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback address"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local address"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private address (RFC 1918)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignment (RFC 6890)"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation address (RFC 5737)"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private address (RFC 1918)"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking address (RFC 2544)"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation address (RFC 5737)"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation address (RFC 5737)"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast address"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved or broadcast address"},
	{netip.MustParsePrefix("::/128"), "unspecified address"},
	{netip.MustParsePrefix("::1/128"), "loopback address"},
	{netip.MustParsePrefix("::/96"), "IPv4-compatible IPv6 address (deprecated)"},
	{netip.MustParsePrefix("100::/64"), "discard-only address (RFC 6666)"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation address (RFC 3849)"},
	{netip.MustParsePrefix("fc00::/7"), "unique local address (RFC 4193)"},
	{netip.MustParsePrefix("fe80::/10"), "link-local address"},
	{netip.MustParsePrefix("fec0::/10"), "site-local address (deprecated)"},
	{netip.MustParsePrefix("ff00::/8"), "multicast address"},
}

// metadataAddrs are cloud instance-metadata endpoints. They sit inside the
// ranges above as well; they are listed so that only an AllowHosts entry
// naming the exact address (not a wider CIDR) unblocks them.
var metadataAddrs = []netip.Addr{
	netip.MustParseAddr("169.254.169.254"), // AWS, GCP, Azure, OpenStack, ...
	netip.MustParseAddr("169.254.170.2"),   // AWS ECS task metadata
	netip.MustParseAddr("100.100.100.200"), // Alibaba Cloud
	netip.MustParseAddr("fd00:ec2::254"),   // AWS IPv6
}

// metadataHosts are instance-metadata host names, refused before any lookup.
var metadataHosts = []string{
	"metadata.google.internal",
	"metadata.goog",
	"metadata",
}

var (
	nat64Prefix      = netip.MustParsePrefix("64:ff9b::/96")
	nat64LocalPrefix = netip.MustParsePrefix("64:ff9b:1::/48")
	sixToFourPrefix  = netip.MustParsePrefix("2002::/16")
)

// blockedReason says why ip is refused by default, or "" for a public address.
func blockedReason(ip netip.Addr) string {
	ip = ip.WithZone("").Unmap()
	for _, m := range metadataAddrs {
		if ip == m {
			return "cloud instance-metadata address"
		}
	}
	for _, r := range blockedRanges {
		if r.prefix.Contains(ip) {
			return r.reason
		}
	}
	// IPv6 forms that embed an IPv4 address: judge the embedded one.
	if ip.Is6() {
		b := ip.As16()
		var v4 netip.Addr
		switch {
		case nat64Prefix.Contains(ip), nat64LocalPrefix.Contains(ip):
			v4 = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
		case sixToFourPrefix.Contains(ip):
			v4 = netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})
		}
		if v4.IsValid() {
			if r := blockedReason(v4); r != "" {
				return fmt.Sprintf("IPv6 address embedding %s, a %s", v4, r)
			}
		}
	}
	return ""
}

func isMetadataAddr(ip netip.Addr) bool {
	ip = ip.WithZone("").Unmap()
	for _, m := range metadataAddrs {
		if ip == m {
			return true
		}
	}
	return false
}

// guard decides which hosts and addresses the fetcher may connect to.
type guard struct {
	names     map[string]bool // exact host names allowed
	suffixes  []string        // ".example.lan" for an entry "*.example.lan"
	prefixes  []netip.Prefix  // allowed addresses and networks
	proxyHost string          // the configured proxy, always reachable
}

func newGuard(allow []string, proxyHost string) *guard {
	g := &guard{names: map[string]bool{}, proxyHost: normalizeHost(proxyHost)}
	for _, entry := range allow {
		name, prefix, err := parseAllowEntry(entry)
		switch {
		case err != nil:
			// Config.Validate reports these; an entry that cannot be
			// understood allows nothing.
		case prefix.IsValid():
			g.prefixes = append(g.prefixes, prefix)
		case strings.HasPrefix(name, "*."):
			g.suffixes = append(g.suffixes, name[1:])
		default:
			g.names[name] = true
		}
	}
	return g
}

// parseAllowEntry reads one AllowHosts entry: a host name, "*.domain", an IP
// address or a CIDR range.
func parseAllowEntry(entry string) (name string, prefix netip.Prefix, err error) {
	s := strings.TrimSpace(entry)
	if s == "" {
		return "", netip.Prefix{}, errors.New("empty entry")
	}
	if strings.Contains(s, "://") {
		return "", netip.Prefix{}, fmt.Errorf("%q is a URL, not a host name: list just the host (e.g. searx.lan), IP address or CIDR range", s)
	}
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return "", netip.Prefix{}, fmt.Errorf("%q is not a valid CIDR range (e.g. 10.0.0.0/8): %w", s, err)
		}
		return "", netip.PrefixFrom(p.Addr().Unmap(), unmappedBits(p)).Masked(), nil
	}
	if ip, err := netip.ParseAddr(strings.Trim(s, "[]")); err == nil {
		ip = ip.WithZone("").Unmap()
		return "", netip.PrefixFrom(ip, ip.BitLen()), nil
	}
	name = normalizeHost(s)
	rest := strings.TrimPrefix(name, "*.")
	if rest == "" || strings.ContainsAny(rest, ":/*@ ") {
		return "", netip.Prefix{}, fmt.Errorf("%q is not a host name, IP address or CIDR range (ports and URLs are not accepted)", s)
	}
	return name, netip.Prefix{}, nil
}

// unmappedBits converts the length of an IPv4-mapped IPv6 prefix
// (::ffff:10.0.0.0/104) to its IPv4 length.
func unmappedBits(p netip.Prefix) int {
	if p.Addr().Is4In6() && p.Bits() >= 96 {
		return p.Bits() - 96
	}
	return p.Bits()
}

func normalizeHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(h)), ".")
}

// nameAllowed reports whether the host name is listed in AllowHosts.
func (g *guard) nameAllowed(host string) bool {
	host = normalizeHost(host)
	if host == "" {
		return false
	}
	if g.names[host] || (g.proxyHost != "" && host == g.proxyHost) {
		return true
	}
	for _, s := range g.suffixes {
		if strings.HasSuffix(host, s) {
			return true
		}
	}
	return false
}

// ipAllowed reports whether AllowHosts covers ip. Metadata addresses are
// covered only by an entry naming exactly that address.
func (g *guard) ipAllowed(ip netip.Addr) bool {
	ip = ip.WithZone("").Unmap()
	exactOnly := isMetadataAddr(ip)
	for _, p := range g.prefixes {
		if exactOnly && p.Bits() != ip.BitLen() {
			continue
		}
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// checkIP returns a *BlockedError when ip may not be dialled.
func (g *guard) checkIP(host string, ip netip.Addr) error {
	if g.ipAllowed(ip) {
		return nil
	}
	if reason := blockedReason(ip); reason != "" {
		return &BlockedError{Host: host, IP: ip.WithZone("").Unmap(), Reason: reason}
	}
	return nil
}

// checkURL refuses, before any lookup or connection, URLs whose scheme is
// not http(s) and hosts that are forbidden by their literal form: IP
// literals in private ranges (including numeric spellings such as
// 2130706433 or 0x7f.1 that some resolvers accept) and metadata host names.
// Names that resolve to forbidden addresses are caught at dial time.
func (g *guard) checkURL(u *url.URL) error {
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	default:
		return &BlockedError{Reason: fmt.Sprintf("URL scheme %q is not allowed, only http and https", u.Scheme)}
	}
	host := normalizeHost(u.Hostname())
	if host == "" {
		return &BlockedError{Reason: fmt.Sprintf("URL %q has no host", u.Redacted())}
	}
	if g.nameAllowed(host) {
		return nil
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return g.checkIP(host, ip)
	}
	if ip, ok := parseLegacyIPv4(host); ok {
		if err := g.checkIP("", ip); err != nil {
			be := err.(*BlockedError)
			be.Reason = fmt.Sprintf("%q is a numeric spelling of %s, a %s", host, ip, be.Reason)
			return be
		}
		return nil
	}
	for _, m := range metadataHosts {
		if host == m {
			return &BlockedError{Host: host, Reason: "cloud instance-metadata host name"}
		}
	}
	return nil
}

// parseLegacyIPv4 parses the IPv4 spellings inet_aton(3) and the WHATWG URL
// standard accept besides dotted decimal: 1 to 4 parts, each decimal, octal
// (leading 0) or hexadecimal (0x), the last part filling the remaining
// bytes. "2130706433", "0x7f.1" and "0177.0.0.1" are all 127.0.0.1.
func parseLegacyIPv4(host string) (netip.Addr, bool) {
	parts := strings.Split(host, ".")
	if len(parts) == 0 || len(parts) > 4 {
		return netip.Addr{}, false
	}
	var v uint64
	for i, p := range parts {
		n, ok := parseIPv4Number(p)
		if !ok {
			return netip.Addr{}, false
		}
		if i < len(parts)-1 {
			if n > 255 {
				return netip.Addr{}, false
			}
			v |= n << (8 * (3 - i))
			continue
		}
		if n >= 1<<(8*(5-len(parts))) {
			return netip.Addr{}, false
		}
		v |= n
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

func parseIPv4Number(s string) (uint64, bool) {
	base := 10
	switch {
	case len(s) >= 2 && (s[:2] == "0x" || s[:2] == "0X"):
		s, base = s[2:], 16
		if s == "" {
			return 0, true
		}
	case len(s) >= 2 && s[0] == '0':
		s, base = s[1:], 8
	}
	if s == "" {
		return 0, false
	}
	n, err := strconv.ParseUint(s, base, 32)
	return n, err == nil
}

// control is the net.Dialer Control hook: it sees the address actually
// being connected to, after name resolution, so DNS tricks cannot slip a
// private address past the guard.
func (g *guard) control(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return fmt.Errorf("fetch guard: unexpected dial address %q: %w", address, err)
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return fmt.Errorf("fetch guard: unexpected dial address %q: %w", address, err)
	}
	return g.checkIP("", ip)
}

// guardedTransport checks every request's URL before handing it to the
// underlying transport, so requests made through Fetcher.Client (and each
// redirect hop) are refused early for literal private addresses.
type guardedTransport struct {
	guard *guard
	base  *http.Transport
}

func (t *guardedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := t.guard.checkURL(req.URL); err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, err
	}
	return t.base.RoundTrip(req)
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach the
// underlying transport.
func (t *guardedTransport) CloseIdleConnections() { t.base.CloseIdleConnections() }
