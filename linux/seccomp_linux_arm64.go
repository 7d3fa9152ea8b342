package linux

import (
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

const auditArch = unix.AUDIT_ARCH_AARCH64

var archPrologue []bpf.Instruction

var archDenied = map[string]uintptr{}

// arm64 has only the *at forms of chmod, open, mknod and chown.
var (
	archChmodCalls  []modeCall
	archCreateCalls []modeCall
	archChownCalls  []uint32
)
