package linux

import (
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

const auditArch = unix.AUDIT_ARCH_X86_64

// archPrologue refuses the x32 syscall table, whose numbers would slip
// past the checks for the x86-64 ones.
var archPrologue = []bpf.Instruction{
	bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: 0x40000000, SkipFalse: 1},
	bpf.RetConstant{Val: retEPERM},
}

var archDenied = map[string]uintptr{"iopl": unix.SYS_IOPL, "ioperm": unix.SYS_IOPERM, "uselib": unix.SYS_USELIB}
