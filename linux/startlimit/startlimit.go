// Package startlimit records the open-files limit fence was started with.
//
// Go's syscall package raises the soft RLIMIT_NOFILE to the hard limit
// when it initializes, and restores the original only in the children
// os/exec starts. The sandbox child is a fork of fence, not such a child,
// so it needs the original from elsewhere: this package reads it before
// syscall's initialization raises it. It imports nothing (unsafe is no
// package to initialize), and Go initializes packages in import path
// order among those whose imports are initialized, so it runs before
// syscall, whose path sorts after it. On Linux it reaches the kernel
// through syscall.RawSyscall6, which needs no initialization of its
// package.
//
// It must not import anything.
package startlimit

// NoFile is the RLIMIT_NOFILE fence was started with; ok is false when
// it could not be read.
func NoFile() (soft, hard uint64, ok bool) { return start[0], start[1], read }

var (
	start [2]uint64 // struct rlimit: soft, hard
	read  bool
)
