package startlimit

import "unsafe"

func init() {
	if sysPrlimit64 == 0 {
		return
	}
	_, _, errno := rawSyscall6(sysPrlimit64, 0, rlimitNofile, 0, uintptr(unsafe.Pointer(&start)), 0, 0)
	read = errno == 0
}

// rlimitNofile is RLIMIT_NOFILE, the same on every Linux architecture.
const rlimitNofile = 7

//go:linkname rawSyscall6 syscall.RawSyscall6
func rawSyscall6(trap, a1, a2, a3, a4, a5, a6 uintptr) (r1, r2, errno uintptr)
