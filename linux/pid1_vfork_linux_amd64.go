package linux

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// spawnFlags are the clone flags of the command's child: it shares pid
// 1's memory until its exec (no copy of the supervisor's page tables to
// make and tear down), unless it makes itself dumpable, which is a
// property of the memory it would share with pid 1.
func spawnFlags(dumpable bool) uintptr {
	if dumpable {
		return uintptr(unix.SIGCHLD)
	}
	return unix.CLONE_VM | unix.CLONE_VFORK | uintptr(unix.SIGCHLD)
}

// rawVfork is clone(flags) on the same stack, safe with CLONE_VFORK (see
// pid1_vfork_linux_amd64.s).
func rawVfork(flags uintptr) (pid uintptr, errno syscall.Errno)
