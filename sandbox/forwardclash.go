package sandbox

import (
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
