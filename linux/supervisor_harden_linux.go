package linux

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// hardenSupervisor keeps the supervisor's memory, which holds what the
// sandbox must not read (the variables env.deny removed, an upstream
// proxy's credentials), from ever landing in a file: no core dump,
// whatever GOTRACEBACK says or a crash, and no access to its /proc files
// by other processes of the user. It runs right after the child is
// started, so that the command keeps the caller's core limit.
func hardenSupervisor() error {
	if err := unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{}); err != nil {
		return fmt.Errorf("set the supervisor's RLIMIT_CORE to 0: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_DUMPABLE) on the supervisor: %w", err)
	}
	return nil
}
