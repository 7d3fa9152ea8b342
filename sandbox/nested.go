package sandbox

// OuterProxy is the proxies of the fence sandbox a nested run is inside,
// on its loopback: the nested run's own proxies reach out through the
// HTTP one, or, with Reuse (the outer sandbox refuses to listen), the
// command uses them directly. Ports of 0 with Reuse are no proxies.
type OuterProxy struct {
	HTTPPort  int  `json:"httpPort"`
	SOCKSPort int  `json:"socksPort"`
	Reuse     bool `json:"reuse,omitempty"`
}

// NestedWeaker says, in a line, what a run nested in a fence sandbox (of
// the namespace engine) could not narrow of plan: that sandbox's mount,
// pid, ipc and network namespaces, Landlock domain and seccomp filter
// stay in force, and the Landlock-only engine adds plan's own rules on
// top, so what is left is only the part of plan that Landlock and
// seccomp cannot express without namespaces of its own. network, when
// not empty, is what of the network it could not narrow; root adds
// what the filter refuses a command running as uid 0; judged says fence
// judges connect(), which a non-dumpable process cannot pass.
func NestedWeaker(plan *Plan, root, judged bool, network string) []string {
	line := "inside a fence sandbox, whose policy still holds: this run narrows it with Landlock and seccomp, and could not narrow modes and timestamps of files that sandbox lets the command write, the outer sandbox's /tmp (readable where this policy allows reading; TMPDIR is a private directory in it) or the outer sandbox's processes in /proc (visible, not signalled)"
	if root {
		line += "; as root, chmod and chown are refused"
	}
	if plan.Mounts.Devices != "host" {
		line += "; no new pseudo-terminal or /dev/shm"
	}
	if plan.Network == "none" && judged {
		line += "; a process that makes itself non-dumpable (ssh, to an agent) cannot connect"
	}
	out := []string{line}
	if network != "" {
		out = append(out, "inside a fence sandbox, this run could not narrow "+network)
	}
	return out
}
