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

// The calls the x86-64 table has and arm64's lacks, for the Landlock-only
// mode rules (see seccomp_modes_linux.go).
var (
	archChmodCalls  = []modeCall{{nr: unix.SYS_CHMOD, mode: offArg1}}
	archCreateCalls = []modeCall{
		{nr: unix.SYS_OPEN, mode: offArg2, flags: offArg1},
		{nr: unix.SYS_CREAT, mode: offArg1},
		{nr: unix.SYS_MKNOD, mode: offArg1},
	}
	archChownCalls = []uint32{unix.SYS_CHOWN, unix.SYS_LCHOWN}
)
