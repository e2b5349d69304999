package egress

import (
	"errors"
	"net/netip"
	"net/url"
	"strings"
	"testing"
)

func TestBlockedReason(t *testing.T) {
	tests := []struct {
		ip      string
		blocked bool
	}{
		{"10.0.0.1", true},
		{"10.255.255.255", true},
		{"172.16.0.1", true},
		{"172.31.255.254", true},
		{"172.32.0.1", false},
		{"192.168.1.1", true},
		{"127.0.0.1", true},
		{"127.8.9.10", true},
		{"169.254.169.254", true},
		{"169.254.1.1", true},
		{"100.64.0.1", true},
		{"100.127.255.255", true},
		{"100.128.0.1", false},
		{"100.100.100.200", true},
		{"0.0.0.0", true},
		{"0.1.2.3", true},
		{"224.0.0.1", true},
		{"239.255.255.250", true},
		{"255.255.255.255", true},
		{"8.8.8.8", false},
		{"1.1.1.1", false},
		{"93.184.216.34", false},
		{"::", true},
		{"::1", true},
		{"fe80::1", true},
		{"fe80::1%eth0", true},
		{"fc00::1", true},
		{"fd12:3456::1", true},
		{"fd00:ec2::254", true},
		{"ff02::1", true},
		{"::ffff:127.0.0.1", true},
		{"::ffff:10.0.0.1", true},
		{"::ffff:169.254.169.254", true},
		{"::ffff:8.8.8.8", false},
		{"::127.0.0.1", true},       // IPv4-compatible, deprecated
		{"64:ff9b::a00:1", true},    // NAT64 of 10.0.0.1
		{"64:ff9b::808:808", false}, // NAT64 of 8.8.8.8
		{"2002:7f00:1::1", true},    // 6to4 of 127.0.0.1
		{"2002:808:808::1", true},   // 6to4: refused whole
		{"2606:4700:4700::1111", false},
		{"2001:4860:4860::8888", false},
	}
	for _, tt := range tests {
		t.Run(tt.ip, func(t *testing.T) {
			got := blockedReason(netip.MustParseAddr(tt.ip))
			if (got != "") != tt.blocked {
				t.Errorf("blockedReason(%s) = %q, want blocked=%v", tt.ip, got, tt.blocked)
			}
		})
	}
}

func TestParseLegacyIPv4(t *testing.T) {
	tests := []struct {
		host string
		want string // "" when not a numeric host
	}{
		{"2130706433", "127.0.0.1"},
		{"0x7f.1", "127.0.0.1"},
		{"0x7f000001", "127.0.0.1"},
		{"0177.0.0.1", "127.0.0.1"},
		{"0177.1", "127.0.0.1"},
		{"127.1", "127.0.0.1"},
		{"10.1", "10.0.0.1"},
		{"0x0A.0.0.1", "10.0.0.1"},
		{"167772161", "10.0.0.1"},
		{"0xa9fea9fe", "169.254.169.254"},
		{"0", "0.0.0.0"},
		{"127.0.0.1", "127.0.0.1"},
		{"4294967296", ""}, // too large
		{"256.1.1.1", ""},
		{"1.2.3.4.5", ""},
		{"example.com", ""},
		{"0x", "0.0.0.0"},
		{"08.1.1.1", ""}, // 8 is not an octal digit
		{"1e3", ""},
		{"", ""},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			ip, ok := parseLegacyIPv4(tt.host)
			switch {
			case tt.want == "" && ok:
				t.Errorf("parseLegacyIPv4(%q) = %s, want not numeric", tt.host, ip)
			case tt.want != "" && (!ok || ip.String() != tt.want):
				t.Errorf("parseLegacyIPv4(%q) = %s, %v; want %s", tt.host, ip, ok, tt.want)
			}
		})
	}
}

func TestGuardCheckURL(t *testing.T) {
	tests := []struct {
		name    string
		allow   []string
		url     string
		blocked bool
	}{
		{"public name", nil, "https://example.com/a", false},
		{"public ip", nil, "http://93.184.216.34/", false},
		{"private ip", nil, "http://10.0.0.1/", true},
		{"ipv6 loopback", nil, "http://[::1]/", true},
		{"ipv6 mapped loopback", nil, "http://[::ffff:127.0.0.1]:8080/", true},
		{"ipv6 link-local with zone", nil, "http://[fe80::1%25eth0]/", true},
		{"hex dotted", nil, "http://0x7f.1/", true},
		{"decimal", nil, "http://2130706433/", true},
		{"octal", nil, "http://0177.0.0.1/", true},
		{"metadata ip", nil, "http://169.254.169.254/latest/meta-data/", true},
		{"metadata ipv6", nil, "http://[fd00:ec2::254]/", true},
		{"metadata name", nil, "http://metadata.google.internal/computeMetadata/v1/", true},
		{"metadata name trailing dot", nil, "http://Metadata.Google.Internal./", true},
		{"unspecified", nil, "http://0.0.0.0:8080/", true},
		{"cgnat", nil, "http://100.64.1.1/", true},
		{"ftp scheme", nil, "ftp://example.com/file", true},
		{"file scheme", nil, "file:///etc/passwd", true},
		{"gopher scheme", nil, "gopher://127.0.0.1:25/", true},
		{"no host", nil, "http:///path", true},
		{"allowed ip", []string{"127.0.0.1"}, "http://127.0.0.1:9000/", false},
		{"allowed cidr", []string{"10.0.0.0/8"}, "http://10.2.3.4/", false},
		{"allowed cidr numeric form", []string{"127.0.0.0/8"}, "http://2130706433/", false},
		{"cidr elsewhere", []string{"10.0.0.0/8"}, "http://192.168.0.1/", true},
		{"allowed ipv6", []string{"::1"}, "http://[::1]:80/", false},
		{"allowed mapped via v4 entry", []string{"127.0.0.1"}, "http://[::ffff:127.0.0.1]/", false},
		{"allowed name", []string{"searx.lan"}, "http://SEARX.lan:8888/search", false},
		{"allowed wildcard", []string{"*.corp.lan"}, "http://wiki.corp.lan/", false},
		{"wildcard needs subdomain", []string{"*.corp.lan"}, "http://corp.lan/", false},
		{"metadata needs exact entry", []string{"169.254.0.0/16"}, "http://169.254.169.254/", true},
		{"metadata exact entry", []string{"169.254.169.254"}, "http://169.254.169.254/", false},
		{"metadata wide v4 range", []string{"0.0.0.0/0"}, "http://169.254.169.254/", true},
		{"range covers other link-local", []string{"169.254.0.0/16"}, "http://169.254.10.10/", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := url.Parse(tt.url)
			if err != nil {
				t.Fatalf("parse %q: %v", tt.url, err)
			}
			err = NewGuard(Policy{Allow: tt.allow}).CheckURL(u)
			if tt.blocked != (err != nil) {
				t.Fatalf("checkURL(%s) with allow %v = %v, want blocked=%v", tt.url, tt.allow, err, tt.blocked)
			}
			if err != nil && !errors.Is(err, ErrBlocked) {
				t.Errorf("error %v does not match ErrBlocked", err)
			}
		})
	}
}

// "corp.lan" itself is not covered by "*.corp.lan", but checkURL lets
// names through (they are judged at dial time), so check nameAllowed too.
func TestGuardNameAllowed(t *testing.T) {
	g := NewGuard(Policy{Allow: []string{"*.corp.lan", "searx.lan", "10.0.0.0/8"}, Proxy: "proxy.lan"})
	for host, want := range map[string]bool{
		"wiki.corp.lan":   true,
		"a.b.corp.lan":    true,
		"corp.lan":        false,
		"evilcorp.lan":    false,
		"searx.lan":       true,
		"searx.lan.":      true,
		"other.searx.lan": false,
		"proxy.lan":       true,
		"10.0.0.1":        false, // addresses are judged by ipAllowed
	} {
		if got := g.NameAllowed(host); got != want {
			t.Errorf("nameAllowed(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestBlockedErrorMessage(t *testing.T) {
	g := NewGuard(Policy{AllowSetting: "SOVA_FETCH_ALLOW_HOSTS"})
	err := g.CheckURL(&url.URL{Scheme: "http", Host: "10.0.0.1"})
	msg := err.Error()
	for _, want := range []string{"10.0.0.1", "private address", "SOVA_FETCH_ALLOW_HOSTS"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	err = g.CheckURL(&url.URL{Scheme: "http", Host: "0x7f.1"})
	if msg := err.Error(); !strings.Contains(msg, "127.0.0.1") || !strings.Contains(msg, "0x7f.1") {
		t.Errorf("numeric-host message %q should name both spellings", msg)
	}
}

// control is the dial-time check: it sees the resolved address, whatever
// name or spelling led there.
func TestGuardControl(t *testing.T) {
	g := NewGuard(Policy{Allow: []string{"192.168.0.0/16", "::1"}})
	tests := []struct {
		addr    string
		blocked bool
	}{
		{"127.0.0.1:80", true},
		{"[::1]:443", false},
		{"[::ffff:127.0.0.1]:80", true},
		{"10.0.0.1:80", true},
		{"192.168.7.7:8080", false},
		{"169.254.169.254:80", true},
		{"[fe80::1%eth0]:80", true},
		{"8.8.8.8:443", false},
		{"[2606:4700::1111]:443", false},
	}
	for _, tt := range tests {
		err := g.control("tcp", tt.addr, nil)
		if (err != nil) != tt.blocked {
			t.Errorf("control(%s) = %v, want blocked=%v", tt.addr, err, tt.blocked)
		}
		if err != nil && !errors.Is(err, ErrBlocked) {
			t.Errorf("control(%s) error %v does not match ErrBlocked", tt.addr, err)
		}
	}
	if err := g.control("tcp", "not-an-address", nil); err == nil || errors.Is(err, ErrBlocked) {
		t.Errorf("control(bad address) = %v, want a plain error", err)
	}
}
