package cmd

import (
	"fmt"
	"runtime"

	"github.com/fence-sandbox/fence/darwin"

	"github.com/fence-sandbox/fence/sandbox"
)

// bindingDebug says, for -d, where the command's servers may listen, by
// the plan's network and Landlock TCP layer.
func bindingDebug(p *sandbox.Plan) string {
	if runtime.GOOS == "darwin" {
		return darwin.NetworkDebug(p)
	}
	switch tcp := p.Landlock.TCP; {
	case tcp.RefusesListen():
		return "TCP servers are refused (bind and listen fail with EACCES): the network is the host's, where they would listen on its addresses; network.allowLocalBinding: true lets them"
	case tcp != nil:
		return fmt.Sprintf("Landlock's TCP rules (network.allowLocalBinding false): connect only to ports %v, bind only to %v", tcp.Connect, tcp.Bind)
	case p.Network == "none":
		return "servers may listen in the sandbox's own network namespace, which reaches nothing of the host's (network.allowLocalBinding false refuses them; the Landlock-only engine always does)"
	}
	return "servers listen on the host's network (network.allowLocalBinding true)"
}
