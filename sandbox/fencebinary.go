package sandbox

import (
	"os"
	"slices"
)

// ShowFenceBinary makes the fence binary at self visible inside the
// sandbox at the same path, for the commands fence points at it
// (GIT_SSH_COMMAND's ssh-proxy): a binary below /tmp that no bind brings
// in would be missing from the private /tmp. It is bound read-only, as
// the binary always is: a command can put nothing of its own there that
// is not its own already, since whatever runs it runs inside the
// sandbox. It reports whether self is visible inside.
func (p *Plan) ShowFenceBinary(self string) bool {
	if !p.Mounts.PrivateTmp || !under(self, "/tmp") {
		return true
	}
	if slices.ContainsFunc(p.Mounts.Binds, func(b Bind) bool { return under(self, b.Path) }) {
		return true
	}
	if fi, err := os.Stat(self); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	p.Mounts.Binds = append(p.Mounts.Binds, Bind{Path: self, Why: "the fence binary, which GIT_SSH_COMMAND runs as ssh's ProxyCommand"})
	sortByDepth(p.Mounts.Binds, func(x Bind) string { return x.Path })
	return true
}
