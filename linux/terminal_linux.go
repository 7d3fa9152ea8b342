package linux

import (
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// The command's terminal has a name. The sandbox's /dev/pts is a devpts
// of its own (for the pseudo-terminals the command opens: script, tmux),
// which does not hold the caller's terminal, so ttyname(3) found none
// ("not a tty"). The init binds the caller's terminal, and only it, at
// /dev/console, and hands the command that node opened anew in place of
// the standard streams that were the terminal: /proc/self/fd/N then
// names /dev/console, which is what glibc's and musl's ttyname check
// first.

// consoleName is where the caller's terminal is bound in the private /dev.
const consoleName = "console"

// callerTerminal finds the terminal that one of this process's standard
// streams is (standard input first) by the name it has in this mount
// namespace, and returns that name and the fd's identity.
func callerTerminal() (path string, st unix.Stat_t, ok bool) {
	for fd := range 3 {
		if _, err := unix.IoctlGetTermios(fd, unix.TCGETS); err != nil {
			continue
		}
		p, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
		if err != nil || !strings.HasPrefix(p, "/dev/") {
			continue
		}
		var byFD, byPath unix.Stat_t
		if unix.Fstat(fd, &byFD) != nil || unix.Stat(p, &byPath) != nil || !sameFile(&byFD, &byPath) {
			continue
		}
		return p, byFD, true
	}
	return "", unix.Stat_t{}, false
}

func sameFile(a, b *unix.Stat_t) bool {
	return a.Dev == b.Dev && a.Ino == b.Ino && a.Mode&unix.S_IFMT == unix.S_IFCHR && b.Mode&unix.S_IFMT == unix.S_IFCHR
}
