package policy

import (
	"fmt"
	"net/netip"
	"strings"

	"golang.org/x/net/idna"
)

// MetadataAddrs are the cloud metadata service addresses. A name that
// resolves to one is refused unless allowedDomains lists the address
// itself, so DNS cannot be a route to the metadata service.
var MetadataAddrs = []netip.Addr{netip.MustParseAddr("169.254.169.254"), netip.MustParseAddr("fd00:ec2::254")}

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
}

func domainDecision(allowed bool, host, key, pattern, reason string) NetDecision {
	return NetDecision{Allowed: allowed, Host: host, Rule: key + ` "` + pattern + `"`, Key: key, Pattern: pattern, Reason: reason}
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
	if !d.Allowed {
		switch {
		case nd.Key == "network.deniedDomains":
			d.Suggestion = "remove the entry from network.deniedDomains if the command needs the host"
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
// their canonical form.
func NormalizeHost(host string) (string, error) {
	host = strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"), ".")
	if addr, err := netip.ParseAddr(host); err == nil {
		return addr.Unmap().String(), nil
	}
	ascii, err := idna.Lookup.ToASCII(host)
	if err != nil {
		return "", fmt.Errorf("%q is not a valid host name: %w", host, err)
	}
	return strings.ToLower(ascii), nil
}

// DecideHost judges a destination by name before anything is resolved:
// deniedDomains first, then allowedDomains.
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
	return NetDecision{Host: h, Reason: "not in network.allowedDomains"}
}

// DecideHostPort is DecideHost for a connection to port: it also lets
// ssh (port 22) reach ssh.allowedHosts, so that ssh and git over ssh
// work through the proxy for the hosts the ssh rules allow.
func (p *Policy) DecideHostPort(host, port string) NetDecision {
	d := p.DecideHost(host)
	if d.Allowed || port != "22" || !p.SSH.Enabled || d.Key == "network.deniedDomains" {
		return d
	}
	if ok, _ := p.SSH.DecideSSHHost(d.Host); ok {
		return NetDecision{Allowed: true, Host: d.Host, Rule: "ssh.allowedHosts", Reason: "allowed for ssh"}
	}
	return d
}

// DecideAddr judges an address an allowed name resolved to: a denied IP
// literal, or a metadata address that allowedDomains does not list
// literally, is refused.
func (p *Policy) DecideAddr(host string, addr netip.Addr) NetDecision {
	addr = addr.Unmap()
	if rule, ok := matchDomain(p.DeniedDomains, addr.String()); ok {
		return domainDecision(false, host, "network.deniedDomains", rule, fmt.Sprintf("resolves to %s, which network.deniedDomains denies", addr))
	}
	for _, m := range MetadataAddrs {
		if addr == m && !containsAddr(p.AllowedDomains, addr) {
			return NetDecision{Host: host, Rule: "sandbox.metadataAddress", Reason: fmt.Sprintf("resolves to %s, the cloud metadata address, which only an allowedDomains entry naming the address itself can allow", addr)}
		}
	}
	return NetDecision{Allowed: true, Host: host, Reason: "allowed"}
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
