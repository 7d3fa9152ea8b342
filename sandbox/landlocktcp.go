package sandbox

import "slices"

// landlockTCP is the plan's Landlock TCP layer. In the sandbox's own
// network namespace there is none unless network.allowLocalBinding is
// false: a server there reaches nothing of the host's, and a test that
// starts one dials a port of the kernel's choosing. With it false, only
// the proxies and the relayed ports may be connected, and nothing may
// bind but the -p ports (which the init connects to). On the host's network a server would listen on the host's
// addresses, so bind() is refused on every port unless
// network.allowLocalBinding is true; connections stay the host's.
func (b *builder) landlockTCP() *LandlockTCP {
	p := b.plan.Proxy
	switch {
	case b.plan.Network == "none" && !b.pol.NamespaceBinding:
		tcp := ProxyTCP(p, p.HTTPPort, p.SOCKSPort)
		for _, f := range p.Forwards {
			tcp.Bind = append(tcp.Bind, f.Port)
			tcp.Connect = append(tcp.Connect, f.Port)
		}
		return tcp
	case b.plan.Network == "host" && !b.pol.LocalBinding:
		return &LandlockTCP{AnyConnect: true}
	}
	return nil
}

// ProxyTCP is the TCP a sandbox whose network is filtered may connect
// to: the proxies, where they listen (inside the sandbox's network
// namespace at the plan's ports, or on the host's loopback at the ports
// the supervisor picked; none at port 0), and the relayed local ports.
func ProxyTCP(p *Proxy, httpPort, socksPort int) *LandlockTCP {
	connect := slices.Clone(p.LocalPorts)
	if httpPort != 0 {
		connect = append([]int{httpPort, socksPort}, connect...)
	}
	return &LandlockTCP{Connect: connect}
}

// RefusesListen reports whether the plan refuses TCP servers on the
// host's network, where listen() on an unbound socket would bind a port
// that Landlock's bind rule never sees: the backend judges listen() too.
func (t *LandlockTCP) RefusesListen() bool { return t != nil && t.AnyConnect }
