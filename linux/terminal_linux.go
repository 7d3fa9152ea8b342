package linux

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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

// bindTerminal binds the caller's terminal at console in the private
// /dev being built at dev. The detached copy is checked to be the very
// node the standard stream is (the name could have been reused since it
// was looked up, by another session's new terminal): when it is not, or
// there is no terminal, or the bind fails, nothing is bound, and the
// command's terminal has no name, as before.
func bindTerminal(dev string) {
	path, want, ok := callerTerminal()
	if !ok {
		return
	}
	fd, err := cloneTree(path, false, false)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	var got unix.Stat_t
	if err := unix.Fstat(fd, &got); err != nil || !sameFile(&got, &want) {
		return
	}
	attach(fd, path, filepath.Join(dev, consoleName), false)
}

// consoleStreams opens /dev/console for each of the standard streams
// that is the terminal bound there, so that the command's streams are
// named by it. A stream it cannot open (the terminal belongs to another
// user) stays as it is; the name is found then by ttyname's search of
// /dev.
func consoleStreams() (streams [3]*os.File) {
	var console unix.Stat_t
	if unix.Stat("/dev/"+consoleName, &console) != nil {
		return streams
	}
	for fd := range 3 {
		var st unix.Stat_t
		if unix.Fstat(fd, &st) != nil || !sameFile(&st, &console) {
			continue
		}
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
		if err != nil {
			continue
		}
		nfd, err := unix.Open("/dev/"+consoleName, flags&unix.O_ACCMODE|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		if unix.Fstat(nfd, &st) != nil || !sameFile(&st, &console) {
			unix.Close(nfd)
			continue
		}
		streams[fd] = os.NewFile(uintptr(nfd), "/dev/"+consoleName)
	}
	return streams
}

// useConsole gives cmd the console for its standard streams that are
// the terminal.
func useConsole(cmd *exec.Cmd) {
	streams := consoleStreams()
	if streams[0] != nil {
		cmd.Stdin = streams[0]
	}
	if streams[1] != nil {
		cmd.Stdout = streams[1]
	}
	if streams[2] != nil {
		cmd.Stderr = streams[2]
	}
}
