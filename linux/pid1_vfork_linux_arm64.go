package linux

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// spawnFlags are the clone flags of the command's child: a plain fork
// here (the shared-memory start is written for amd64 only).
func spawnFlags(bool) uintptr { return uintptr(unix.SIGCHLD) }

// rawVfork is clone(flags), flags without CLONE_VM.
//
//go:nosplit
//go:norace
func rawVfork(flags uintptr) (uintptr, syscall.Errno) {
	return rawCall(unix.SYS_CLONE, flags, 0, 0, 0)
}
