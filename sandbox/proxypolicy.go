package sandbox

import "github.com/fence-sandbox/fence/policy"

// ProxyPolicy is the part of the policy the proxies judge by, rebuilt
// from the plan: the domain and ssh rules, and what an allowed name may
// resolve to (the host's loopback at the relayed local ports, the private
// ranges allowed, anything with the host's network), and where the hosts
// no domain rule names are forwarded.
func (p *Plan) ProxyPolicy() *policy.Policy {
	if p.Proxy == nil {
		return &policy.Policy{}
	}
	return &policy.Policy{
		HostNetwork:           p.Network == "host",
		AllowedDomains:        p.Proxy.AllowedDomains,
		DeniedDomains:         p.Proxy.DeniedDomains,
		SSH:                   p.Proxy.SSH,
		LocalOutboundPorts:    p.Proxy.LocalPorts,
		AllowPrivateAddresses: p.Proxy.AllowPrivateAddresses,
		NoNetwork:             p.Proxy.NoNetwork,
		Upstream:              p.Proxy.Upstream,
	}
}
