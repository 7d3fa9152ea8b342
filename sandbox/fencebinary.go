package sandbox

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fence-sandbox/fence/policy/inputs"
)

// fenceBinaryBind binds the fence binary (Options.FenceBinary) read-only
// at its own path when it lies below /tmp and no other bind brings it
// into the private /tmp: GIT_SSH_COMMAND names it as ssh's ProxyCommand
// (`fence ssh-proxy`), and the private /tmp would hide it. It comes
// before the masks, so a deny rule over it still hides it. A command can
// put nothing of its own in its place that is not its own already: what
// runs it runs inside the sandbox, and the host's file stays read-only.
func (b *builder) fenceBinaryBind(binds []Bind) []Bind {
	self := b.fenceBinary
	if self == "" || b.plan.Network != "none" || !under(self, "/tmp") {
		return binds
	}
	if slices.ContainsFunc(binds, func(x Bind) bool { return under(self, x.Path) }) {
		return binds
	}
	if fi, err := inputs.Stat(self); err != nil || !fi.Mode().IsRegular() {
		return binds
	}
	return append(binds, Bind{Path: self, Kind: KindFenceBinary, Why: "the fence binary, which GIT_SSH_COMMAND runs as ssh's ProxyCommand"})
}

// FenceBinaryVisible reports whether the fence binary at self (its links
// resolved) is there inside the sandbox at the same path: not hidden by
// the private /tmp, nor by a mask.
func (p *Plan) FenceBinaryVisible(self string) bool {
	if slices.ContainsFunc(p.Mounts.Masks, func(m Mask) bool { return under(self, m.Path) }) {
		return false
	}
	if !p.Mounts.PrivateTmp || !under(self, "/tmp") {
		return true
	}
	return slices.ContainsFunc(p.Mounts.Binds, func(b Bind) bool { return under(self, b.Path) })
}

// sshThroughProxy lets git reach ssh remotes through fence's SOCKS proxy
// (unless the caller chose a GIT_SSH_COMMAND), with fence itself, at
// self, as the ProxyCommand.
func sshThroughProxy(plan *Plan, self string) {
	if plan.Network != "none" || slices.ContainsFunc(plan.Env, func(kv string) bool { return strings.HasPrefix(kv, "GIT_SSH_COMMAND=") }) {
		return
	}
	if self == "" || !plan.FenceBinaryVisible(self) {
		return
	}
	plan.Env = append(plan.Env, fmt.Sprintf("GIT_SSH_COMMAND=ssh -o ProxyCommand='%s ssh-proxy %%h %%p'", self))
}
