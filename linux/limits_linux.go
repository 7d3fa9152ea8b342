package linux

import (
	"fmt"
	"os"
	"os/exec"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fence-sandbox/fence/policy"
)

// watchTimeout kills p (the sandbox's init, whose death ends every process
// of the pid namespace) when d has passed; fired says whether it did.
func watchTimeout(p *os.Process, d time.Duration) (fired func() bool, stop func()) {
	if d <= 0 {
		return func() bool { return false }, func() {}
	}
	var done atomic.Bool
	t := time.AfterFunc(d, func() {
		done.Store(true)
		p.Kill()
	})
	return done.Load, func() { t.Stop() }
}

// setInheritedLimits sets the resource limits on the init just before it
// starts the command, so that the command and everything it forks inherit
// them from its first instruction. The address-space limit is not among
// them: the init's Go runtime has reserved more address space than a small
// limit allows, and would fail to start a thread (see limitAddressSpace).
func setInheritedLimits(l policy.RunLimits) error {
	for _, r := range []struct {
		resource int
		value    uint64
		name     string
	}{
		{unix.RLIMIT_CPU, l.CPUSeconds, "cpu"},
		{unix.RLIMIT_FSIZE, l.FileSizeMB << 20, "file size"},
		{unix.RLIMIT_NOFILE, l.OpenFiles, "open files"},
		{unix.RLIMIT_NPROC, l.Processes, "processes"},
	} {
		if r.value == 0 {
			continue
		}
		// syscall.Setrlimit, so that os/exec does not restore the
		// caller's RLIMIT_NOFILE in the child.
		lim := syscall.Rlimit{Cur: r.value, Max: r.value}
		if r.resource == unix.RLIMIT_CPU {
			lim.Max++ // SIGXCPU at the limit, which a program may catch to clean up; SIGKILL a second later
		}
		if err := syscall.Setrlimit(r.resource, &lim); err != nil {
			return fmt.Errorf("set the %s limit: %w", r.name, err)
		}
	}
	return nil
}

// limitAddressSpace makes cmd start through the system shell, which sets
// RLIMIT_AS (soft and hard) and then execs the command in its place, so
// that the limit holds from the command's first instruction. The command
// sees its resolved path as argv[0].
func limitAddressSpace(cmd *exec.Cmd, mb uint64) {
	if mb == 0 {
		return
	}
	script := fmt.Sprintf(`ulimit -v %d && exec "$0" "$@"`, mb<<10)
	cmd.Args = append([]string{"/bin/sh", "-c", script, cmd.Path}, cmd.Args[1:]...)
	cmd.Path = "/bin/sh"
}
