package policy

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// DecideAddr judges an address that the allowed name host resolved to,
// for a connection to port. Public addresses pass. An address that
// deniedDomains lists is refused, and one that allowedDomains lists
// itself passes whatever it is. Otherwise a metadata address is refused;
// with the host's network (allowedDomains "*") the rest pass, since the
// command reaches them anyway; a loopback address passes only at a port
// of network.allowLocalOutboundPorts, a private one only inside
// network.allowPrivateAddresses, and link-local, unspecified and
// reserved ones never. IPv4 addresses spelt as IPv6 are judged as IPv4.
func (p *Policy) DecideAddr(host, port string, addr netip.Addr) NetDecision {
	addr = addr.WithZone("").Unmap()
	spellings := []netip.Addr{addr}
	if v4, _, ok := EmbeddedIPv4(addr); ok {
		spellings = append(spellings, v4)
	}
	for _, a := range spellings {
		if rule, ok := matchDomain(p.DeniedDomains, a.String()); ok {
			return domainDecision(false, host, "network.deniedDomains", rule, fmt.Sprintf("resolves to %s, which network.deniedDomains denies", addr))
		}
	}
	r := ClassifyAddr(addr)
	allowed := NetDecision{Allowed: true, Host: host, Reason: "allowed"}
	if r.Class == AddrPublic || slices.ContainsFunc(spellings, func(a netip.Addr) bool { return containsAddr(p.AllowedDomains, a) }) {
		return allowed
	}
	if r.Class != AddrMetadata && p.HostNetwork {
		return allowed
	}
	switch r.Class {
	case AddrLoopback:
		if n, err := strconv.Atoi(port); err == nil && slices.Contains(p.LocalOutboundPorts, n) {
			return allowed
		}
	case AddrPrivate:
		if i := slices.IndexFunc(p.AllowPrivateAddresses, func(pr netip.Prefix) bool { return pr.Contains(r.inIPv4(addr)) }); i >= 0 {
			return allowed
		}
	}
	return addrRefusal(host, port, addr, r)
}

// inIPv4 is addr as r was matched: its IPv4 form when r is an IPv4 range.
func (r AddrRange) inIPv4(addr netip.Addr) netip.Addr {
	if v4, _, ok := EmbeddedIPv4(addr); ok && r.Prefix.Addr().Is4() {
		return v4
	}
	return addr
}

// addrRefusal is the refusal of addr, of range r, naming what would
// allow it.
func addrRefusal(host, port string, addr netip.Addr, r AddrRange) NetDecision {
	what := r.What
	if r.Class != AddrMetadata {
		what = fmt.Sprintf("%s (%s)", r.What, r.Prefix)
	}
	spelt := addr.String()
	if v4, how, ok := EmbeddedIPv4(addr); ok {
		spelt = fmt.Sprintf("%s, an %s spelling of %s", addr, how, v4)
	}
	d := NetDecision{Host: host, Rule: "sandbox." + string(r.Class) + "Address"}
	switch r.Class {
	case AddrMetadata:
		d.Reason = fmt.Sprintf("resolves to %s, the cloud metadata address, which only an allowedDomains entry naming the address itself can allow", spelt)
		d.Fix = fmt.Sprintf("only network.allowedDomains: [%q] allows the metadata address; think twice", r.inIPv4(addr))
	case AddrLoopback:
		d.Reason = fmt.Sprintf("resolves to %s, %s, which the proxies reach only at a port network.allowLocalOutboundPorts lists: set network.allowLocalOutboundPorts: [%s] and network.allowLocalOutbound: true", spelt, what, port)
		d.Fix = fmt.Sprintf("set network.allowLocalOutboundPorts: [%s] and network.allowLocalOutbound: true in fence.jsonc if the command needs the host's port", port)
	case AddrPrivate:
		key := fmt.Sprintf("network.allowPrivateAddresses: [%q]", r.Prefix)
		d.Reason = fmt.Sprintf("resolves to %s, a %s address, which only network.allowPrivateAddresses allows: set %s (or the address alone)", spelt, what, key)
		d.Fix = fmt.Sprintf("set %s in fence.jsonc (or a narrower range) if the command needs it", key)
	default:
		d.Reason = fmt.Sprintf("resolves to %s, a %s address, which only an allowedDomains entry naming the address itself can allow", spelt, what)
		d.Fix = fmt.Sprintf("add %q to network.allowedDomains if the command needs that address", r.inIPv4(addr))
	}
	return d
}

// ParsePrivateRange reads an entry of network.allowPrivateAddresses: a
// CIDR or a single address, in canonical (masked) form.
func ParsePrivateRange(s string) (netip.Prefix, error) {
	if !strings.Contains(s, "/") {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return netip.Prefix{}, err
		}
		if a.Zone() != "" {
			return netip.Prefix{}, fmt.Errorf("%q has an IPv6 zone", s)
		}
		return netip.PrefixFrom(a, a.BitLen()), nil
	}
	return netip.ParsePrefix(s)
}

// checkPrivateRange accepts CIDRs and addresses that hold private
// addresses, written without a zone and without host bits past the
// prefix.
func checkPrivateRange(s string) string {
	pr, err := ParsePrivateRange(s)
	switch {
	case strings.Contains(s, "%"):
		return "has an IPv6 zone, which is not supported"
	case err != nil:
		return "is not a CIDR or an address: want a range such as \"10.20.0.0/16\" or an address such as \"10.20.0.5\""
	case pr.Addr().Is4In6() && pr.Bits() >= 96:
		return fmt.Sprintf("is an IPv4-mapped IPv6 range: write it in IPv4, as %q", netip.PrefixFrom(pr.Addr().Unmap(), pr.Bits()-96).Masked())
	case pr != pr.Masked():
		return fmt.Sprintf("has bits set past its prefix length: write %q", pr.Masked())
	}
	for _, r := range SpecialRanges {
		if r.Class == AddrPrivate && r.Prefix.Overlaps(pr) {
			return ""
		}
	}
	switch c := ClassifyAddr(pr.Addr()); c.Class {
	case AddrPublic:
		return "holds no private address: public addresses need no entry here, only their names in network.allowedDomains"
	case AddrLoopback:
		return "is the host's loopback, which network.allowLocalOutboundPorts opens, port by port"
	default:
		return fmt.Sprintf("is %s, which only an allowedDomains entry naming the address itself can allow", c.What)
	}
}

// privateRanges compiles network.allowPrivateAddresses; entries that do
// not parse are dropped (validation has refused them already).
func privateRanges(entries []string) []netip.Prefix {
	var out []netip.Prefix
	for _, e := range entries {
		if pr, err := ParsePrivateRange(e); err == nil && !slices.Contains(out, pr.Masked()) {
			out = append(out, pr.Masked())
		}
	}
	return out
}
