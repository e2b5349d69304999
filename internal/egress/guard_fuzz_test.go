package egress

import (
	"net/netip"
	"strconv"
	"strings"
	"testing"
)

// FuzzLegacyIPv4: every spelling parseLegacyIPv4 accepts names the address
// its decimal number does, and plain dotted decimal reads as netip reads
// it; nothing panics. Seeds: testdata/fuzz/FuzzLegacyIPv4.
func FuzzLegacyIPv4(f *testing.F) {
	f.Add("0x7f.1")
	f.Fuzz(func(t *testing.T, host string) {
		addr, ok := parseLegacyIPv4(host)
		if !ok {
			if std, err := netip.ParseAddr(host); err == nil && std.Is4() {
				t.Fatalf("%q is an IPv4 address (%s) the guard does not read", host, std)
			}
			return
		}
		if !addr.Is4() {
			t.Fatalf("%q read as %s, not IPv4", host, addr)
		}
		b := addr.As4()
		n := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
		if again, ok := parseLegacyIPv4(strconv.FormatUint(uint64(n), 10)); !ok || again != addr {
			t.Fatalf("%q read as %s, but its number %d reads as %s", host, addr, n, again)
		}
		if std, err := netip.ParseAddr(host); err == nil && std != addr {
			t.Fatalf("%q: guard reads %s, netip %s", host, addr, std)
		}
		if strings.Count(host, ".") > 3 {
			t.Fatalf("%q has more than four parts", host)
		}
	})
}
