// Command fakebeacon fakes, outside any fence sandbox, the facts a nested
// fence run is told from: it sets no_new_privs, installs a seccomp filter
// that answers fence's beacon as a namespace-engine sandbox would and
// refuses user namespaces, and executes its arguments with
// FENCE_SANDBOX=1. A fence run under it must not take itself for nested.
//
//	fakebeacon ARGV...
package main

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

const (
	offNr   = 0
	offArg0 = 16
	beacon  = 0x666e6365
)

// block runs body for system call nr; body leaves the number loaded.
func block(nr uint32, body []bpf.Instruction) []bpf.Instruction {
	return append([]bpf.Instruction{bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: nr, SkipTrue: uint8(len(body))}}, body...)
}

func filter() []bpf.Instruction {
	prog := []bpf.Instruction{bpf.LoadAbsolute{Off: offNr, Size: 4}}
	prog = append(prog, block(unix.SYS_PRCTL, []bpf.Instruction{
		bpf.LoadAbsolute{Off: offArg0, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: beacon, SkipFalse: 1},
		bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(unix.ENOANO)},
		bpf.LoadAbsolute{Off: offNr, Size: 4},
	})...)
	prog = append(prog, block(unix.SYS_CLONE3, []bpf.Instruction{bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)}})...)
	for _, nr := range []uint32{unix.SYS_CLONE, unix.SYS_UNSHARE} {
		prog = append(prog, block(nr, []bpf.Instruction{
			bpf.LoadAbsolute{Off: offArg0, Size: 4},
			bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: unix.CLONE_NEWUSER, SkipFalse: 1},
			bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)},
			bpf.LoadAbsolute{Off: offNr, Size: 4},
		})...)
	}
	return append(prog, bpf.RetConstant{Val: unix.SECCOMP_RET_ALLOW})
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "fakebeacon:", err)
		os.Exit(2)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: fakebeacon ARGV...")
	}
	raw, err := bpf.Assemble(filter())
	if err != nil {
		return err
	}
	filt := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		filt[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	fp := unix.SockFprog{Len: uint16(len(filt)), Filter: &filt[0]}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if _, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fp))); e != 0 {
		return fmt.Errorf("seccomp: %w", e)
	}
	path, err := exec.LookPath(args[0])
	if err != nil {
		return err
	}
	return syscall.Exec(path, args, append(os.Environ(), "FENCE_SANDBOX=1"))
}
