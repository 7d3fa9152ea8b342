package linux

import (
	"fmt"
	"os"
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

// inheritedLimits are the resource limits the init sets on itself before it
// starts the command, so that the command and everything it forks inherit
// them from the first instruction on. The address-space limit is not among
// them: the init's Go runtime has reserved more than a small limit allows.
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

// limitAddressSpace sets RLIMIT_AS on the started command.
func limitAddressSpace(pid int, mb uint64) error {
	if mb == 0 {
		return nil
	}
	lim := unix.Rlimit{Cur: mb << 20, Max: mb << 20}
	if err := unix.Prlimit(pid, unix.RLIMIT_AS, &lim, nil); err != nil {
		return fmt.Errorf("set the address-space limit: %w", err)
	}
	return nil
}
