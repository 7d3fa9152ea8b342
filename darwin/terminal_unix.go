//go:build darwin || linux

package darwin

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"

	"github.com/fence-sandbox/fence/sandbox"
)

// terminal is fence's controlling terminal, the one whose Ctrl-C and
// Ctrl-Z and whose foreground the user's shell works with, whatever the
// standard streams are.
type terminal struct {
	fd int // -1 without one
	// stdinTTY is whether standard input is that terminal, the one the
	// command's group can be given.
	stdinTTY bool
	close    func()
}

// openTerminal opens fence's controlling terminal. Release with close.
func openTerminal() *terminal {
	t := &terminal{fd: -1, close: func() {}}
	if fd, err := unix.Open("/dev/tty", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0); err == nil {
		t.fd, t.close = fd, func() { unix.Close(fd) }
	} else {
		for fd := range 3 {
			if _, ok := sandbox.TerminalGroup(fd); ok {
				t.fd = fd
				break
			}
		}
	}
	_, t.stdinTTY = sandbox.TerminalGroup(0)
	return t
}

// foreground reports whether fence's process group is the terminal's
// foreground.
func (t *terminal) foreground() bool {
	fg, ok := sandbox.TerminalGroup(t.fd)
	return ok && fg == unix.Getpgrp()
}

// stdinForeground reports whether fence's group is the foreground of the
// terminal standard input is, so that the command's group is to take it.
func stdinForeground() bool {
	fg, ok := sandbox.TerminalGroup(0)
	return ok && fg == unix.Getpgrp()
}

// stopOwnGroup stops fence's process group, as the terminal's stop would:
// the other members with sig, fence itself with SIGSTOP (fence catches
// SIGTSTP, and the Go runtime keeps its handler for good once it has).
// A group no shell could continue (an orphaned one) is not stopped.
func stopOwnGroup(sig unix.Signal) {
	self, pgrp := os.Getpid(), unix.Getpgrp()
	sid, _ := unix.Getsid(0)
	members, ok := groupMembers(pgrp)
	if !ok {
		return
	}
	parents := map[int]procIDs{}
	for _, m := range members {
		if p, _, _, ok := processInfo(m.ppid); ok {
			parents[m.ppid] = p
		}
	}
	if orphaned(members, parents, sid) {
		return
	}
	for _, m := range members {
		if m.pid != self {
			unix.Kill(m.pid, sig)
		}
	}
	unix.Kill(self, unix.SIGSTOP)
}

// groupGone reports whether no process is left in process group pgrp.
func groupGone(pgrp int) bool {
	return errors.Is(unix.Kill(-pgrp, 0), unix.ESRCH)
}

func parentOf(pid int) (int, bool) {
	ids, _, _, ok := processInfo(pid)
	return ids.ppid, ok
}
