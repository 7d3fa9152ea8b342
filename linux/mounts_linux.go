package linux

import "fmt"

// MountError is a failed mount step, with what was being mounted where.
type MountError struct {
	Op     string
	Source string
	Target string
	Flags  uintptr
	Err    error
}

func (e *MountError) Error() string {
	return fmt.Sprintf("%s %q on %q (flags %#x): %v", e.Op, e.Source, e.Target, e.Flags, e.Err)
}

func (e *MountError) Unwrap() error { return e.Err }

// staging is where the new root is assembled before pivot_root. It is a
// tmpfs mounted over /tmp of the child's private mount namespace, after
// every source below /tmp has been captured as a detached mount.
const staging = "/tmp"

var minimalDevices = []string{"null", "zero", "full", "random", "urandom", "tty"}

// treeKey names the detached mount of a bind source, read-only or not.
func treeKey(path string, write bool) string {
	if write {
		return "rw:" + path
	}
	return "ro:" + path
}
