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

// dumpableForClone makes the supervisor dumpable again before it clones
// the sandbox child, as it is in a process's first run: a child that
// inherits non-dumpable has its /proc files owned by root, and the
// supervisor of an unprivileged user could not write its id maps. Only a
// process that runs more than one sandbox (cmd.Main called again, as
// fence's own tests do) was made non-dumpable by an earlier run.
func dumpableForClone() error {
	d, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	if err != nil || d != 0 {
		return err
	}
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_DUMPABLE) before the sandbox's clone: %w", err)
	}
	return nil
}
