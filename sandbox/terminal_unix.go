//go:build unix

package sandbox

import (
	"os/signal"

	"golang.org/x/sys/unix"
)

// TerminalGroup is the foreground process group of the terminal fd is,
// as this process's pid namespace numbers it (0 for a group outside it);
// ok is false when fd is not this process's controlling terminal.
func TerminalGroup(fd int) (pgrp int, ok bool) {
	if fd < 0 {
		return 0, false
	}
	pgrp, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	return pgrp, err == nil
}

// GiveTerminal makes pgrp the foreground group of the terminal fd is,
// from a process that may be in the background (tcsetpgrp from there
// sends the caller SIGTTOU unless it ignores it).
func GiveTerminal(fd, pgrp int) {
	signal.Ignore(unix.SIGTTOU)
	defer signal.Reset(unix.SIGTTOU)
	unix.IoctlSetPointerInt(fd, unix.TIOCSPGRP, pgrp)
}
