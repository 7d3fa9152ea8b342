package linux

import (
	"fmt"
	"path"
	"strings"

	"golang.org/x/sys/unix"
)

// runtimeDir makes the plan's private XDG_RUNTIME_DIR in the private
// /tmp, mode 0700, owned by the user the command runs as: the tmpfs is
// fresh, so nothing a previous run left can be there, and mkdir never
// follows a link at the path (one made again from the host fails it
// with EEXIST). It runs before anything is bound into the private /tmp.
func (b *rootBuilder) runtimeDir() error {
	dir := b.plan.Mounts.RuntimeDir
	if dir == "" {
		return nil
	}
	if !b.plan.Mounts.PrivateTmp || path.Dir(dir) != "/tmp" || strings.Contains(dir[len("/tmp/"):], "/") {
		return fmt.Errorf("BUG: private XDG_RUNTIME_DIR %q is not a directory of the private /tmp", dir)
	}
	at := b.at(dir)
	if err := unix.Mkdir(at, 0o700); err != nil {
		return fmt.Errorf("create the private XDG_RUNTIME_DIR %q: mkdir: %w", dir, err)
	}
	// The umask may have taken bits off; the spec wants exactly 0700.
	// Nothing but the init runs yet to swap the directory meanwhile.
	if err := unix.Chmod(at, 0o700); err != nil {
		return fmt.Errorf("create the private XDG_RUNTIME_DIR %q: chmod: %w", dir, err)
	}
	return nil
}
