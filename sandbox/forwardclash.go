package sandbox

import (
	"errors"
	"fmt"
	"slices"
)

// CheckForward refuses a -p port that the sandbox's loopback already
// uses for fence's own listeners (a proxy's port, or a host port that
// network.allowLocalOutboundPorts relays in), where the command's server
// could not listen: a mistake better named before the run than met as a
// bind error inside it.
func (p *Proxy) CheckForward(f Forward) error {
	switch {
	case f.Port == p.HTTPPort:
		return fmt.Errorf("-p %s: port %d is the HTTP proxy's inside the sandbox (network.httpProxyPort): expose another port, or move the proxy", f.HostAddr, f.Port)
	case f.Port == p.SOCKSPort:
		return fmt.Errorf("-p %s: port %d is the SOCKS5 proxy's inside the sandbox (network.socksProxyPort): expose another port, or move the proxy", f.HostAddr, f.Port)
	case slices.Contains(p.LocalPorts, f.Port):
		return fmt.Errorf("-p %s: port %d is relayed into the sandbox from the host (network.allowLocalOutboundPorts), so no server inside can listen on it", f.HostAddr, f.Port)
	}
	return nil
}

// addForwards adds the -p ports to the plan's proxy, which relays them
// (landlockTCP lets the server inside listen on them).
func (p *Plan) addForwards(forwards []Forward) error {
	if len(forwards) == 0 {
		return nil
	}
	if p.Network == "host" {
		return errors.New("-p has nothing to do when the network is the host's: the command's servers are on the host already")
	}
	for _, f := range forwards {
		if err := p.Proxy.CheckForward(f); err != nil {
			return err
		}
		p.Proxy.Forwards = append(p.Proxy.Forwards, f)
	}
	return nil
}
