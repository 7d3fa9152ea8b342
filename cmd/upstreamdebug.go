package cmd

import (
	"fmt"
	"io"

	"github.com/fence-sandbox/fence/sandbox"
)

// printUpstreamDebug says, for -d, where the proxies forward the hosts no
// domain rule names (network.defaultAction "proxy"), without the
// upstream's credentials.
func printUpstreamDebug(w io.Writer, p *sandbox.Plan) {
	if p.Proxy == nil || p.Proxy.Upstream == nil {
		return
	}
	fmt.Fprintf(w, "fence: debug: network: hosts no domain rule names go to the upstream proxy %s (network.defaultAction \"proxy\") as the first address they resolve to, once every address passes the address rules; denied hosts never do\n", p.Proxy.Upstream.URL())
}
