package policy

// localOutboundWithoutPorts warns of network.allowLocalOutbound true
// with no network.allowLocalOutboundPorts: it opens no host port, which
// its author rarely means.
func (l *linter) localOutboundWithoutPorts() {
	n := l.r.Config.Network
	if !isTrue(n.AllowLocalOutbound) || len(n.AllowLocalOutboundPorts) > 0 {
		return
	}
	l.add(Warning{Check: "local-outbound-no-ports", Msg: "network.allowLocalOutbound is true but network.allowLocalOutboundPorts lists no port, so no port of the host's loopback is reachable: list the ports the command needs, as in \"allowLocalOutboundPorts\": [5432]"})
}
