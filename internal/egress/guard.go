package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sova-ai/sova/internal/errtext"
)

// ErrBlocked is matched (errors.Is) by every refusal of the address guard.
// Use errors.As with *BlockedError for the details.
var ErrBlocked = errors.New("address refused")

// Policy says which addresses one outbound path may reach beyond the
// public Internet. Every path has one; they differ only in these settings.
type Policy struct {
	// Allow lists hosts let through though they are not public: host names
	// ("searx.lan"), wildcards ("*.corp.lan"), IP addresses ("127.0.0.1")
	// or CIDR ranges ("10.0.0.0/8"). A host allowed by name may resolve to
	// any address. Metadata addresses are let through only by an entry
	// naming exactly that address, never by a range.
	Allow []string
	// AllowSetting is the setting that fills Allow, named in refusals
	// ("SOVA_FETCH_ALLOW_HOSTS"); empty when Allow is not a setting.
	AllowSetting string
	// AllowPrivate lets through every non-public address except cloud
	// instance-metadata ones, which no switch opens.
	AllowPrivate bool
	// PrivateSetting is the setting behind AllowPrivate, named in
	// refusals ("SOVA_CONNECTORS_ALLOW_PRIVATE").
	PrivateSetting string
	// Proxy is the host of a configured proxy, always reachable.
	Proxy string
	// Rewrite, when set (tests only), rewrites the host:port about to be
	// dialled, standing in for DNS: the guard still judges the rewritten
	// address, while allowances by name use the original host.
	Rewrite func(hostport string) string
}

// BlockedError reports a URL, host or IP address the guard refused.
//
// Its text reaches the people who use Sova, so when a host name resolved
// to the refused address the address is left out of it: how the host's
// network is laid out is for the log only (Private). Otherwise a person
// could learn what any name resolves to inside the server's network.
type BlockedError struct {
	Host   string     // host name as written in the URL, if known
	IP     netip.Addr // the refused address; invalid when refused by name or scheme
	Reason string     // why, e.g. "loopback address"; never names a resolved address
	Hint   string     // what an administrator can do, if anything
	// resolved is set when Host is a name that resolved to IP.
	resolved bool
}

// Private is the address a host name resolved to, for the log.
func (e *BlockedError) Private() string {
	if !e.resolved || !e.IP.IsValid() {
		return ""
	}
	return e.Host + " resolved to " + e.IP.String()
}

func (e *BlockedError) Error() string {
	var s string
	switch {
	case e.resolved && e.Host != "":
		s = fmt.Sprintf("refused to connect to %s: it resolves to a %s", e.Host, e.Reason)
	case e.IP.IsValid() && e.Host != "" && e.Host != e.IP.String():
		s = fmt.Sprintf("refused to connect to %s (%s): %s", e.Host, e.IP, e.Reason)
	case e.IP.IsValid():
		s = fmt.Sprintf("refused to connect to %s: %s", e.IP, e.Reason)
	case e.Host != "":
		s = fmt.Sprintf("refused to connect to %s: %s", e.Host, e.Reason)
	default:
		return "refused: " + e.Reason
	}
	if e.Hint != "" {
		s += "; " + e.Hint
	}
	return s
}

// Is makes errors.Is(err, ErrBlocked) true.
func (e *BlockedError) Is(target error) bool { return target == ErrBlocked }

type blockedRange struct {
	prefix netip.Prefix
	reason string
}

// blockedRanges are refused unless a Policy lets them through. More
// specific prefixes come first so the reason given is the most precise.
var blockedRanges = []blockedRange{
	{netip.MustParsePrefix("0.0.0.0/8"), `"this network" address (0.0.0.0/8)`},
	{netip.MustParsePrefix("10.0.0.0/8"), "private address (RFC 1918)"},
	{netip.MustParsePrefix("100.64.0.0/10"), "carrier-grade NAT address (RFC 6598)"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback address"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local address"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private address (RFC 1918)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignment (RFC 6890)"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation address (RFC 5737)"},
	{netip.MustParsePrefix("192.88.99.0/24"), "6to4 relay anycast address (RFC 7526)"},
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
	// Transition mechanisms carry a packet to an address that the IPv6
	// form hides (Teredo even obfuscates it), so they are refused whole.
	{netip.MustParsePrefix("2001::/32"), "Teredo address (RFC 4380)"},
	{netip.MustParsePrefix("2002::/16"), "6to4 address (RFC 3056)"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation address (RFC 3849)"},
	{netip.MustParsePrefix("fc00::/7"), "unique local address (RFC 4193)"},
	{netip.MustParsePrefix("fe80::/10"), "link-local address"},
	{netip.MustParsePrefix("fec0::/10"), "site-local address (deprecated)"},
	{netip.MustParsePrefix("ff00::/8"), "multicast address"},
}

// metadataAddrs are cloud instance-metadata endpoints. Most sit inside the
// ranges above as well; they are listed so that only an Allow entry naming
// the exact address (not a range, not AllowPrivate) lets them through.
var metadataAddrs = []netip.Addr{
	netip.MustParseAddr("169.254.169.254"), // AWS, GCP, Azure, OpenStack, ...
	netip.MustParseAddr("169.254.170.2"),   // AWS ECS task credentials
	netip.MustParseAddr("169.254.169.123"), // AWS time sync
	netip.MustParseAddr("100.100.100.200"), // Alibaba Cloud
	netip.MustParseAddr("fd00:ec2::254"),   // AWS IPv6
}

// metadataHosts are instance-metadata host names, refused before any lookup.
var metadataHosts = []string{
	"metadata.google.internal",
	"metadata.goog",
	"metadata",
	"instance-data",
	"instance-data.ec2.internal",
}

var (
	nat64Prefix      = netip.MustParsePrefix("64:ff9b::/96")
	nat64LocalPrefix = netip.MustParsePrefix("64:ff9b:1::/48")
	translatedPrefix = netip.MustParsePrefix("::ffff:0:0:0/96") // SIIT, RFC 2765
)

// blockedReason says why ip is refused by default, or "" for a public
// address. The reason never names an address, so it may be shown even
// when ip came from resolving a name.
func blockedReason(ip netip.Addr) string {
	ip = ip.WithZone("").Unmap()
	if isMetadataAddr(ip) {
		return "cloud instance-metadata address"
	}
	for _, r := range blockedRanges {
		if r.prefix.Contains(ip) {
			return r.reason
		}
	}
	// IPv6 forms that embed an IPv4 address: judge the embedded one.
	if ip.Is6() {
		b := ip.As16()
		if nat64Prefix.Contains(ip) || nat64LocalPrefix.Contains(ip) || translatedPrefix.Contains(ip) {
			v4 := netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
			if r := blockedReason(v4); r != "" {
				return "IPv6 address embedding a " + r
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

// Guard decides which hosts and addresses one outbound path may connect
// to. It is safe for concurrent use.
type Guard struct {
	policy   Policy
	names    map[string]bool // exact host names allowed
	suffixes []string        // ".example.lan" for an entry "*.example.lan"
	prefixes []netip.Prefix  // allowed addresses and networks
	proxy    string          // the configured proxy, always reachable
}

// NewGuard returns the guard of p. Entries of p.Allow that cannot be
// understood allow nothing (ValidateAllow reports them).
func NewGuard(p Policy) *Guard {
	g := &Guard{policy: p, names: map[string]bool{}, proxy: normalizeHost(p.Proxy)}
	for _, entry := range p.Allow {
		name, prefix, err := ParseAllowEntry(entry)
		switch {
		case err != nil:
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

// ValidateAllow reports the first entry of an allow-list setting that
// cannot be understood, naming the setting.
func ValidateAllow(setting string, entries []string) error {
	for _, e := range entries {
		if _, _, err := ParseAllowEntry(e); err != nil {
			return fmt.Errorf("%s: %w", setting, err)
		}
	}
	return nil
}

// ParseAllowEntry reads one allow-list entry: a host name, "*.domain", an
// IP address or a CIDR range.
func ParseAllowEntry(entry string) (name string, prefix netip.Prefix, err error) {
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

// NameAllowed reports whether the host name is let through by name.
func (g *Guard) NameAllowed(host string) bool {
	host = normalizeHost(host)
	if host == "" {
		return false
	}
	if g.names[host] || (g.proxy != "" && host == g.proxy) {
		return true
	}
	for _, s := range g.suffixes {
		if strings.HasSuffix(host, s) {
			return true
		}
	}
	return false
}

// ipAllowed reports whether the policy covers ip. Metadata addresses are
// covered only by an entry naming exactly that address.
func (g *Guard) ipAllowed(ip netip.Addr) bool {
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
	return g.policy.AllowPrivate && !exactOnly
}

// hint says what an administrator can do about a refusal.
func (g *Guard) hint(host string, ip netip.Addr, resolved bool) string {
	if ip.IsValid() && isMetadataAddr(ip) {
		if g.policy.AllowSetting == "" {
			return "instance-metadata addresses are never reachable"
		}
		return fmt.Sprintf("instance-metadata addresses are reachable only when %s names the exact address", g.policy.AllowSetting)
	}
	var opts []string
	switch {
	case g.policy.AllowSetting != "" && host != "" && (resolved || !ip.IsValid()):
		opts = append(opts, fmt.Sprintf("add %q to %s", host, g.policy.AllowSetting))
	case g.policy.AllowSetting != "" && host != "" && host != ip.String():
		opts = append(opts, fmt.Sprintf("add %q or %q (or a CIDR range containing it) to %s", host, ip.String(), g.policy.AllowSetting))
	case g.policy.AllowSetting != "" && ip.IsValid():
		opts = append(opts, fmt.Sprintf("add %q (or a CIDR range containing it) to %s", ip.String(), g.policy.AllowSetting))
	}
	if g.policy.PrivateSetting != "" && !g.policy.AllowPrivate {
		opts = append(opts, fmt.Sprintf("set %s=true", g.policy.PrivateSetting))
	}
	if len(opts) == 0 {
		return ""
	}
	return "if it must be reachable, " + strings.Join(opts, " or ")
}

func (g *Guard) blocked(host string, ip netip.Addr, reason string, resolved bool) *BlockedError {
	return &BlockedError{Host: host, IP: ip, Reason: reason, resolved: resolved, Hint: g.hint(host, ip, resolved)}
}

// CheckIP returns a *BlockedError when ip may not be dialled.
func (g *Guard) CheckIP(ip netip.Addr) error {
	return g.checkIP("", ip)
}

func (g *Guard) checkIP(host string, ip netip.Addr) error {
	ip = ip.WithZone("").Unmap()
	if g.ipAllowed(ip) {
		return nil
	}
	if reason := blockedReason(ip); reason != "" {
		return g.blocked(host, ip, reason, false)
	}
	return nil
}

// CheckURL refuses, before any lookup or connection, URLs whose scheme is
// not http(s) and hosts that are forbidden by their literal form: IP
// literals in refused ranges (including numeric spellings such as
// 2130706433 or 0x7f.1 that some resolvers accept) and metadata host
// names. Names that resolve to refused addresses are caught at dial time.
func (g *Guard) CheckURL(u *url.URL) error {
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	default:
		return &BlockedError{Reason: fmt.Sprintf("URL scheme %q is not allowed, only http and https", u.Scheme)}
	}
	host := normalizeHost(u.Hostname())
	if host == "" {
		return &BlockedError{Reason: fmt.Sprintf("URL %q has no host", u.Redacted())}
	}
	if g.NameAllowed(host) {
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
		if host == m || strings.HasSuffix(host, "."+m) && m != "metadata" {
			return g.blocked(host, netip.Addr{}, "cloud instance-metadata host name", false)
		}
	}
	return nil
}

// Resolver looks host names up; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// CheckGiven checks an address a person gives (an MCP server, a WebDAV
// share, an image) when it is given: the URL's form, then every address
// its host resolves to. The refusal names the rule but never the address
// a name resolved to. A name that does not resolve passes: it is checked
// again when dialled, which is what counts.
func (g *Guard) CheckGiven(ctx context.Context, r Resolver, u *url.URL) error {
	if err := g.CheckURL(u); err != nil {
		return err
	}
	host := normalizeHost(u.Hostname())
	if g.NameAllowed(host) {
		return nil
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return nil // judged by CheckURL
	}
	if r == nil {
		r = net.DefaultResolver
	}
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ips, err := r.LookupNetIP(lctx, "ip", host)
	if err != nil {
		return nil
	}
	for _, ip := range ips {
		if err := g.checkIP(host, ip); err != nil {
			be := err.(*BlockedError)
			be.resolved = true
			be.Hint = g.hint(host, be.IP, true)
			return be
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
// being connected to, after name resolution, so DNS tricks (rebinding
// included) cannot slip a refused address past the guard.
func (g *Guard) control(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return fmt.Errorf("address guard: unexpected dial address %q: %w", address, err)
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return fmt.Errorf("address guard: unexpected dial address %q: %w", address, err)
	}
	return g.checkIP("", ip)
}

// DialContext connects to addr (host:port) if the guard allows the
// address it resolves to. A refusal names the host, never the address.
func (g *Guard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("bad dial address %q: %w", addr, err)
	}
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	if !g.NameAllowed(host) {
		d.Control = g.control
	}
	if g.policy.Rewrite != nil {
		addr = g.policy.Rewrite(addr)
	}
	conn, err := d.DialContext(ctx, network, addr)
	if err != nil {
		// The dial error's text names the address the host resolved to:
		// what a person sees leaves it out (the log keeps it, Private).
		var be *BlockedError
		if errors.As(err, &be) {
			if be.Host == "" {
				be.Host = host
				be.resolved = net.ParseIP(host) == nil
				be.Hint = g.hint(host, be.IP, be.resolved)
			}
			return nil, be
		}
		return nil, &dialError{err: err}
	}
	return conn, nil
}

// dialError is a failed connection whose text leaves out the address
// dialled; the log gets it (Private). errors.Is and errors.As see the
// cause.
type dialError struct{ err error }

func (e *dialError) Error() string   { return errtext.Network(e.err) }
func (e *dialError) Private() string { return e.err.Error() }
func (e *dialError) Unwrap() error   { return e.err }

// guardedTransport checks every request's URL before handing it to the
// underlying transport, so each request and each redirect hop is refused
// early for literal refused addresses; the dialer checks the rest.
type guardedTransport struct {
	guard *Guard
	base  http.RoundTripper
}

func (t *guardedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := t.guard.CheckURL(req.URL); err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, err
	}
	return t.base.RoundTrip(req)
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach the
// underlying transport.
func (t *guardedTransport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
