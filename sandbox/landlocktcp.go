package sandbox

// landlockTCP is the plan's Landlock TCP layer. In the sandbox's own
// network namespace there is none unless network.allowLocalBinding is
// false: a server there reaches nothing of the host's, and a test that
// starts one dials a port of the kernel's choosing. With it false, only
// the proxies and the relayed ports may be connected, and nothing may
// bind. On the host's network a server would listen on the host's
// addresses, so bind() is refused on every port unless
// network.allowLocalBinding is true; connections stay the host's.
func (b *builder) landlockTCP() *LandlockTCP {
	p := b.plan.Proxy
	switch {
	case b.plan.Network == "none" && !b.pol.NamespaceBinding:
		return &LandlockTCP{Connect: append([]int{p.HTTPPort, p.SOCKSPort}, p.LocalPorts...)}
	case b.plan.Network == "host" && !b.pol.LocalBinding:
		return &LandlockTCP{AnyConnect: true}
	}
	return nil
}

// RefusesListen reports whether the plan refuses TCP servers on the
// host's network, where listen() on an unbound socket would bind a port
// that Landlock's bind rule never sees: the backend judges listen() too.
func (t *LandlockTCP) RefusesListen() bool { return t != nil && t.AnyConnect }
