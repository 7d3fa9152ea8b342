// Command listener tries to take exec judging from the sandbox's
// supervisor: it installs a seccomp filter of its own that hands execve
// to a listener it holds, answers every notification "continue", and
// then runs argv. For filters that notify on the same call the newest
// decides alone, so a sandbox whose supervisor judges execs must refuse
// the filter.
//
//	listener ARGV...
//
// It prints "listener: <error>" when the filter is refused.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

func main() {
	runtime.LockOSThread() // the filter is this thread's alone
	fd, err := install()
	if err != nil {
		fmt.Println("listener:", err)
		os.Exit(1)
	}
	go answer(fd)
	path, err := exec.LookPath(os.Args[1])
	if err != nil {
		fmt.Println("listener:", err)
		os.Exit(1)
	}
	err = syscall.Exec(path, os.Args[1:], os.Environ())
	fmt.Println("listener: exec:", err)
	os.Exit(1)
}

// install puts a filter with a listener on execve on this thread.
func install() (uintptr, error) {
	raw, err := bpf.Assemble([]bpf.Instruction{
		bpf.LoadAbsolute{Off: 0, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.SYS_EXECVE, SkipTrue: 1},
		bpf.RetConstant{Val: unix.SECCOMP_RET_ALLOW},
		bpf.RetConstant{Val: unix.SECCOMP_RET_USER_NOTIF},
	})
	if err != nil {
		return 0, err
	}
	filter := make([]unix.SockFilter, len(raw))
	for i, ins := range raw {
		filter[i] = unix.SockFilter{Code: ins.Op, Jt: ins.Jt, Jf: ins.Jf, K: ins.K}
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return 0, err
	}
	fd, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER, uintptr(unsafe.Pointer(&prog)))
	if e != 0 {
		return 0, e
	}
	return fd, nil
}

// answer lets every notified call go on.
func answer(fd uintptr) {
	var notif [80]byte // struct seccomp_notif
	for {
		clear(notif[:])
		if _, _, e := unix.Syscall(unix.SYS_IOCTL, fd, unix.SECCOMP_IOCTL_NOTIF_RECV, uintptr(unsafe.Pointer(&notif[0]))); e != 0 {
			continue
		}
		resp := struct {
			id    uint64
			val   int64
			error int32
			flags uint32
		}{id: *(*uint64)(unsafe.Pointer(&notif[0])), flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE}
		unix.Syscall(unix.SYS_IOCTL, fd, unix.SECCOMP_IOCTL_NOTIF_SEND, uintptr(unsafe.Pointer(&resp)))
	}
}
