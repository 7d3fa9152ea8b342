package policy

import (
	"cmp"
	"fmt"
	"slices"
)

// Inside the sandbox's network namespace the init listens on the
// proxies' ports (network.httpProxyPort and socksProxyPort, or their
// defaults) and relays each of network.allowLocalOutboundPorts at the
// same number: two of them on one port would fail to bind when the run
// starts. portClash finds such a port in c, the config merged so far,
// and points at what p, the file merged last, wrote to cause it.
func portClash(c Config, p *parsed) error {
	proxies := []struct {
		key, what string
		port      int
	}{
		{"network.httpProxyPort", "the HTTP proxy's", cmp.Or(c.Network.HTTPProxyPort, DefaultHTTPProxyPort)},
		{"network.socksProxyPort", "the SOCKS5 proxy's", cmp.Or(c.Network.SocksProxyPort, DefaultSocksProxyPort)},
	}
	if proxies[0].port == proxies[1].port {
		key := blame(p, proxies[1].key, proxies[0].key)
		return p.errorf(key, "port %d is both proxies' port inside the sandbox: give network.httpProxyPort and network.socksProxyPort different ports", proxies[0].port)
	}
	for _, port := range c.Network.AllowLocalOutboundPorts {
		for _, px := range proxies {
			if port != px.port {
				continue
			}
			key := px.key
			if j := slices.Index(p.cfg.Network.AllowLocalOutboundPorts, port); j >= 0 {
				key = fmt.Sprintf("network.allowLocalOutboundPorts[%d]", j)
			}
			return p.errorf(key, "port %d is %s port inside the sandbox (%s, %d unless set), where a host port cannot be relayed too: set %s to another port", port, px.what, px.key, defaultPort(px.key), px.key)
		}
	}
	return nil
}

// blame is the first of keys that p sets, else the last.
func blame(p *parsed, keys ...string) string {
	for _, k := range keys {
		if _, set := p.pos[k]; set {
			return k
		}
	}
	return keys[len(keys)-1]
}

func defaultPort(key string) int {
	if key == "network.httpProxyPort" {
		return DefaultHTTPProxyPort
	}
	return DefaultSocksProxyPort
}
