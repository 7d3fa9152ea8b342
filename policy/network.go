package policy

import (
	"fmt"
	"net/netip"
	"strings"

	"golang.org/x/net/idna"
)

// NetDecision is the verdict on one destination, with the rule that
// decided it (empty when none matched).
type NetDecision struct {
	Allowed bool   `json:"allowed"`
	Host    string `json:"host"` // normalised
	Rule    string `json:"rule,omitempty"`
	Reason  string `json:"reason"`
	// Key and Pattern are Rule in parts: the list ("network.deniedDomains")
	// and the entry of it that matched.
	Key     string `json:"-"`
	Pattern string `json:"-"`
	// Fix, when set, says what to change in the policy to allow the
	// destination, for the hint a refusal carries.
	Fix string `json:"-"`
	// Upstream is the upstream proxy's host:port when the connection is
	// forwarded to it (network.defaultAction "proxy").
	Upstream string `json:"upstream,omitempty"`
}

func domainDecision(allowed bool, host, key, pattern, reason string) NetDecision {
	d := NetDecision{Allowed: allowed, Host: host, Rule: key + ` "` + pattern + `"`, Key: key, Pattern: pattern, Reason: reason}
	if !allowed && key == "network.deniedDomains" {
		d.Fix = fmt.Sprintf("remove %q from network.deniedDomains if the command needs the host", pattern)
	}
	return d
}

// NetworkDecision turns a verdict on a connection to target (host:port)
// into the shape `fence check` and reports share, naming the list, the
// entry that decided and where the entry was written.
func (p *Policy) NetworkDecision(access, requested, target string, nd NetDecision) Decision {
	d := Decision{Allowed: nd.Allowed || p.HostNetwork && nd.Rule == "", Access: access, Requested: requested, Path: target, Rule: nd.Rule}
	switch {
	case nd.Key != "":
		d.Rule, d.Pattern, d.Source = nd.Key, &nd.Pattern, p.domainOrigins[nd.Key+"\x00"+nd.Pattern]
	case nd.Rule == "" && p.HostNetwork:
		d.Rule = "network.allowedDomains"
		d.Pattern = new(string)
		*d.Pattern = "*"
	case nd.Rule == "":
		d.Rule = "network.allowedDomains"
	}
	if nd.Upstream != "" {
		d.Note = nd.Reason + " (network.upstreamProxy), which decides it by its own rules; addresses are still checked first"
	}
	if !d.Allowed {
		switch {
		case p.NoNetwork && nd.Key != "network.deniedDomains":
			d.Source = "command line: --no-network"
			d.Suggestion = "--no-network refuses every connection: run without it if the command needs the network"
		case nd.Key == "network.deniedDomains":
			d.Suggestion = "remove the entry from network.deniedDomains if the command needs the host"
		case nd.Fix != "":
			d.Suggestion = nd.Fix
		case nd.Rule != "":
			d.Suggestion = nd.Reason
		default:
			d.Suggestion = "add the host to network.allowedDomains: fence config allow domain " + nd.Host
		}
	}
	return d
}

// NormalizeHost lowercases a host name, drops a trailing dot and turns
// an internationalised name into its punycode form, so that every
// spelling of a name meets the same rules. IP addresses come back in
// their canonical form, including the legacy IPv4 spellings a client
// could send (2130706433, 0177.0.0.1, 0x7f.1); a host whose last label
// is a number but that is no address is invalid, as URL parsers have it.
func NormalizeHost(host string) (string, error) {
	host = strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"), ".")
	if addr, err := netip.ParseAddr(host); err == nil {
		return addr.Unmap().String(), nil
	}
	if addr, ok := parseLegacyIPv4(host); ok {
		return addr.String(), nil
	}
	if endsInNumber(host) {
		return "", fmt.Errorf("%q is not a valid host name: it ends in a number but is not an IPv4 address", host)
	}
	ascii, err := idna.Lookup.ToASCII(host)
	if err != nil {
		return "", fmt.Errorf("%q is not a valid host name: %w", host, err)
	}
	return strings.ToLower(ascii), nil
}

// DecideHost judges a destination by name before anything is resolved:
// deniedDomains first, then allowedDomains; a host neither names is
// refused, or under network.defaultAction "proxy" allowed through the
// upstream proxy (Upstream set; its addresses still to be checked).
func (p *Policy) DecideHost(host string) NetDecision {
	h, err := NormalizeHost(host)
	if err != nil {
		return NetDecision{Host: host, Reason: err.Error()}
	}
	if rule, ok := matchDomain(p.DeniedDomains, h); ok {
		return domainDecision(false, h, "network.deniedDomains", rule, "denied by network.deniedDomains")
	}
	if rule, ok := matchDomain(p.AllowedDomains, h); ok {
		return domainDecision(true, h, "network.allowedDomains", rule, "allowed")
	}
	if p.Upstream != nil {
		return p.forwarded(h)
	}
	return NetDecision{Host: h, Reason: "not in network.allowedDomains"}
}

// DecideHostPort is DecideHost for a connection to port: it also lets
// ssh (port 22) reach ssh.allowedHosts, so that ssh and git over ssh
// work through the proxy for the hosts the ssh rules allow.
func (p *Policy) DecideHostPort(host, port string) NetDecision {
	d := p.DecideHost(host)
	if d.Allowed && d.Upstream == "" || port != "22" || !p.SSH.Enabled || d.Key == "network.deniedDomains" {
		return d
	}
	if ok, _ := p.SSH.DecideSSHHost(d.Host); ok {
		return NetDecision{Allowed: true, Host: d.Host, Rule: "ssh.allowedHosts", Reason: "allowed for ssh"}
	}
	if pattern, hit := matchHost(p.SSH.DeniedHosts, strings.ToLower(d.Host)); hit && d.Upstream != "" {
		// ssh's own deny list holds for a forwarded ssh connection too.
		return NetDecision{Host: d.Host, Rule: `ssh.deniedHosts "` + pattern + `"`, Key: "ssh.deniedHosts", Pattern: pattern, Reason: "denied by ssh.deniedHosts, which network.defaultAction \"proxy\" does not forward"}
	}
	return d
}

// matchDomain finds the first rule that matches the normalised host h:
// "*" matches everything, "*.example.com" any subdomain (not the apex),
// anything else the name or address itself.
func matchDomain(rules []string, h string) (string, bool) {
	hostAddr, hostIsAddr := parseAddr(h)
	for _, r := range rules {
		switch {
		case r == "*":
			return r, true
		case strings.HasPrefix(r, "*."):
			if !hostIsAddr && strings.HasSuffix(h, r[1:]) {
				return r, true
			}
		case hostIsAddr:
			if a, ok := parseAddr(r); ok && a == hostAddr {
				return r, true
			}
		case r == h:
			return r, true
		}
	}
	return "", false
}

func parseAddr(s string) (netip.Addr, bool) {
	a, err := netip.ParseAddr(s)
	return a.Unmap(), err == nil
}

func containsAddr(rules []string, addr netip.Addr) bool {
	for _, r := range rules {
		if a, ok := parseAddr(r); ok && a == addr {
			return true
		}
	}
	return false
}

// normalizeRules puts domain rules in the form hosts are matched in. A
// rule that cannot be normalised stays as written (validation has
// already refused malformed ones).
func normalizeRules(rules []string) []string {
	out := make([]string, 0, len(rules))
	for _, r := range rules {
		prefix, name := "", r
		if strings.HasPrefix(r, "*.") {
			prefix, name = "*.", r[2:]
		}
		if r != "*" {
			if n, err := NormalizeHost(name); err == nil {
				name = n
			}
		}
		out = append(out, prefix+name)
	}
	return out
}
