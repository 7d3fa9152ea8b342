package policy

import (
	"net/netip"
	"strings"
)

// AddrClass is what kind of destination an address is, for the checks
// the proxies make on what an allowed name resolves to.
type AddrClass string

// The address classes. Public addresses need no rule beyond the name's;
// private ones need network.allowPrivateAddresses; loopback ones a port
// in network.allowLocalOutboundPorts; the rest an allowedDomains entry
// naming the address itself.
const (
	AddrPublic      AddrClass = "public"
	AddrLoopback    AddrClass = "loopback"
	AddrUnspecified AddrClass = "unspecified"
	AddrLinkLocal   AddrClass = "linkLocal"
	AddrMetadata    AddrClass = "metadata"
	AddrPrivate     AddrClass = "private"
	AddrReserved    AddrClass = "reserved"
)

// MetadataAddrs are the cloud metadata and credential service addresses:
// AWS's instance metadata (also GCP's, Azure's and most others'), the ECS
// task and EKS pod identity endpoints, Alibaba's metadata and Azure's
// wire server. A name that resolves to one is refused unless
// allowedDomains lists the address itself, so DNS cannot be a route to
// the machine's credentials.
var MetadataAddrs = []netip.Addr{
	netip.MustParseAddr("169.254.169.254"), netip.MustParseAddr("fd00:ec2::254"),
	netip.MustParseAddr("169.254.170.2"), netip.MustParseAddr("169.254.170.23"), netip.MustParseAddr("fd00:ec2::23"),
	netip.MustParseAddr("100.100.100.200"), netip.MustParseAddr("168.63.129.16"),
}

// AddrRange is a special-purpose range: its class and what it is.
type AddrRange struct {
	Prefix netip.Prefix
	Class  AddrClass
	What   string
}

func addrRange(prefix string, class AddrClass, what string) AddrRange {
	return AddrRange{netip.MustParsePrefix(prefix), class, what}
}

// SpecialRanges are the ranges that are not the public internet. Those
// of class private are the ones network.allowPrivateAddresses can open.
var SpecialRanges = []AddrRange{
	addrRange("0.0.0.0/8", AddrUnspecified, "“this network”, which connects to the host itself"),
	addrRange("127.0.0.0/8", AddrLoopback, "the host's loopback"),
	addrRange("169.254.0.0/16", AddrLinkLocal, "link-local"),
	addrRange("10.0.0.0/8", AddrPrivate, "private, RFC 1918"),
	addrRange("172.16.0.0/12", AddrPrivate, "private, RFC 1918"),
	addrRange("192.168.0.0/16", AddrPrivate, "private, RFC 1918"),
	addrRange("100.64.0.0/10", AddrPrivate, "carrier-grade NAT, RFC 6598"),
	addrRange("198.18.0.0/15", AddrPrivate, "benchmarking, RFC 2544"),
	addrRange("192.0.0.0/24", AddrPrivate, "IETF protocol assignments, RFC 6890"),
	addrRange("192.0.2.0/24", AddrPrivate, "documentation, RFC 5737"),
	addrRange("198.51.100.0/24", AddrPrivate, "documentation, RFC 5737"),
	addrRange("203.0.113.0/24", AddrPrivate, "documentation, RFC 5737"),
	addrRange("224.0.0.0/4", AddrReserved, "multicast"),
	addrRange("240.0.0.0/4", AddrReserved, "reserved, and broadcast"),
	addrRange("::/128", AddrUnspecified, "the unspecified address, which connects to the host itself"),
	addrRange("::1/128", AddrLoopback, "the host's loopback"),
	addrRange("fe80::/10", AddrLinkLocal, "link-local"),
	addrRange("fc00::/7", AddrPrivate, "unique local, RFC 4193"),
	addrRange("fec0::/10", AddrPrivate, "site-local, RFC 3879"),
	addrRange("64:ff9b:1::/48", AddrPrivate, "local-use NAT64, RFC 8215"),
	addrRange("2001:db8::/32", AddrPrivate, "documentation, RFC 3849"),
	addrRange("100::/64", AddrReserved, "discard-only, RFC 6666"),
	addrRange("ff00::/8", AddrReserved, "multicast"),
}

// embedded are the IPv6 ranges whose addresses carry an IPv4 address
// that a host, a tunnel or a translator may deliver to, and where in the
// address it sits.
var embedded = []struct {
	prefix netip.Prefix
	at     int
	what   string
}{
	{netip.MustParsePrefix("::ffff:0:0/96"), 12, "IPv4-mapped"},
	{netip.MustParsePrefix("::ffff:0:0:0/96"), 12, "IPv4-translated"},
	{netip.MustParsePrefix("::/96"), 12, "IPv4-compatible"},
	{netip.MustParsePrefix("64:ff9b::/96"), 12, "NAT64"},
	{netip.MustParsePrefix("2002::/16"), 2, "6to4"},
}

// EmbeddedIPv4 returns the IPv4 address that a is another spelling of
// (IPv4-mapped, -translated or -compatible, NAT64 or 6to4), and the
// spelling's name.
func EmbeddedIPv4(a netip.Addr) (netip.Addr, string, bool) {
	if !a.Is6() {
		return netip.Addr{}, "", false
	}
	a = a.WithZone("")
	if a == netip.IPv6Unspecified() || a == netip.IPv6Loopback() {
		return netip.Addr{}, "", false
	}
	b := a.As16()
	for _, e := range embedded {
		if e.prefix.Contains(a) {
			return netip.AddrFrom4([4]byte(b[e.at : e.at+4])), e.what, true
		}
	}
	return netip.Addr{}, "", false
}

// ClassifyAddr says what a is: an IPv4 address spelt as IPv6 is judged
// as the IPv4 address, and a zone is ignored.
func ClassifyAddr(a netip.Addr) AddrRange {
	a = a.WithZone("").Unmap()
	if v4, _, ok := EmbeddedIPv4(a); ok {
		a = v4
	}
	for _, m := range MetadataAddrs {
		if a == m {
			return AddrRange{netip.PrefixFrom(m, m.BitLen()), AddrMetadata, "the cloud metadata address"}
		}
	}
	for _, r := range SpecialRanges {
		if r.Prefix.Contains(a) {
			return r
		}
	}
	return AddrRange{Class: AddrPublic, What: "public"}
}

// parseLegacyIPv4 reads the spellings of an IPv4 address that inet_aton
// and URL parsers accept besides dotted decimal: one to four parts, each
// decimal, octal (a leading 0) or hexadecimal (0x), the last one filling
// the bytes left, as in 2130706433, 0177.0.0.1, 0x7f.1 and 127.1.
func parseLegacyIPv4(s string) (netip.Addr, bool) {
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var out uint64
	for i, p := range parts {
		n, ok := parseIPv4Part(p)
		last := i == len(parts)-1
		if !ok || !last && n > 255 || last && n >= 1<<(8*(5-len(parts))) {
			return netip.Addr{}, false
		}
		if last {
			out |= n
		} else {
			out |= n << (8 * (3 - i))
		}
	}
	return netip.AddrFrom4([4]byte{byte(out >> 24), byte(out >> 16), byte(out >> 8), byte(out)}), true
}

// parseIPv4Part reads one part of a legacy IPv4 spelling; a value past
// 32 bits is refused however it is written.
func parseIPv4Part(p string) (uint64, bool) {
	base := uint64(10)
	switch {
	case strings.HasPrefix(p, "0x") || strings.HasPrefix(p, "0X"):
		base, p = 16, p[2:]
		if p == "" {
			return 0, true // "0x" is zero to a URL parser
		}
	case len(p) > 1 && p[0] == '0':
		base, p = 8, p[1:]
	case p == "":
		return 0, false
	}
	var n uint64
	for i := 0; i < len(p); i++ {
		d, ok := digitValue(p[i])
		if !ok || d >= base {
			return 0, false
		}
		if n = n*base + d; n > 1<<32 {
			return 0, false
		}
	}
	return n, true
}

func digitValue(c byte) (uint64, bool) {
	switch {
	case '0' <= c && c <= '9':
		return uint64(c - '0'), true
	case 'a' <= c && c <= 'f':
		return uint64(c-'a') + 10, true
	case 'A' <= c && c <= 'F':
		return uint64(c-'A') + 10, true
	}
	return 0, false
}

// endsInNumber reports whether the last label of host is a number, which
// URL parsers take as an attempt at an IPv4 address: such a host is an
// address or invalid, never a name.
func endsInNumber(host string) bool {
	last := host[strings.LastIndexByte(host, '.')+1:]
	if rest, hex := strings.CutPrefix(strings.ToLower(last), "0x"); hex {
		return strings.Trim(rest, "0123456789abcdef") == ""
	}
	return last != "" && strings.Trim(last, "0123456789") == ""
}
