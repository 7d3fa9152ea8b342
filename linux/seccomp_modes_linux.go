package linux

import (
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// Without a mount namespace nothing on the host is read-only, and
// Landlock does not cover changing a file's mode, owner or extended
// attributes: the kernel asks only that the caller own the file. So in
// the Landlock-only engine the seccomp filter keeps these from widening
// anything (after systemd's RestrictSUIDSGID= and Nix's build sandbox):
//
//   - no call sets a setuid or setgid bit, by chmod or when creating a
//     file (openat2, whose mode the filter cannot see, fails with ENOSYS
//     so that callers fall back to openat);
//   - chmod refuses the world-writable bit;
//   - setting or removing extended attributes fails with EOPNOTSUPP, as
//     on a file system without them: an ACL would be chmod by another
//     name;
//   - for root, who owns every system file, chmod and chown fail
//     entirely, in the workspace too.

// Mode bits the filter watches.
const (
	modeSetID     = unix.S_ISUID | unix.S_ISGID
	modeChmodDeny = modeSetID | unix.S_IWOTH
	// openCreates are the open flags that make the mode argument count.
	// __O_TMPFILE is 0x400000 on every architecture fence builds for.
	openCreates = unix.O_CREAT | 0x400000
)

const (
	offArg3    = 40
	retNoXattr = unix.SECCOMP_RET_ERRNO | uint32(unix.EOPNOTSUPP)
)

// modeCall is a system call whose mode argument the filter checks.
type modeCall struct {
	nr   uint32
	mode uint32 // offset of the mode argument
	// flags, when not 0, is the offset of open flags: the mode is checked
	// only when they create a file.
	flags uint32
}

// chmodCalls change the mode of an existing file.
var chmodCalls = append([]modeCall{
	{nr: unix.SYS_FCHMOD, mode: offArg1},
	{nr: unix.SYS_FCHMODAT, mode: offArg2},
	{nr: unix.SYS_FCHMODAT2, mode: offArg2},
}, archChmodCalls...)

// createCalls create a file with a mode.
var createCalls = append([]modeCall{
	{nr: unix.SYS_OPENAT, mode: offArg3, flags: offArg2},
	{nr: unix.SYS_MKNODAT, mode: offArg2},
}, archCreateCalls...)

// chownCalls change a file's owner or group.
var chownCalls = append([]uint32{unix.SYS_FCHOWN, unix.SYS_FCHOWNAT}, archChownCalls...)

// xattrWrites set or remove extended attributes (ACLs among them).
var xattrWrites = []uint32{
	unix.SYS_SETXATTR, unix.SYS_LSETXATTR, unix.SYS_FSETXATTR, unix.SYS_SETXATTRAT,
	unix.SYS_REMOVEXATTR, unix.SYS_LREMOVEXATTR, unix.SYS_FREMOVEXATTR, unix.SYS_REMOVEXATTRAT,
}

// modeRules is the part of the filter that guards modes, owners and
// extended attributes in the Landlock-only engine; root refuses chmod
// and chown entirely. The accumulator holds the syscall number on entry
// and on every way through.
func modeRules(root bool) []bpf.Instruction {
	var prog []bpf.Instruction
	ret := func(nrs []uint32, val uint32) {
		for _, nr := range nrs {
			prog = append(prog, bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: nr, SkipTrue: 1}, bpf.RetConstant{Val: val})
		}
	}
	if root {
		nrs := append([]uint32(nil), chownCalls...)
		for _, c := range chmodCalls {
			nrs = append(nrs, c.nr)
		}
		ret(nrs, retEPERM)
	} else {
		for _, c := range chmodCalls {
			prog = append(prog, modeCheck(c, modeChmodDeny)...)
		}
	}
	for _, c := range createCalls {
		prog = append(prog, modeCheck(c, modeSetID)...)
	}
	ret([]uint32{unix.SYS_OPENAT2}, retNoSys)
	ret(xattrWrites, retNoXattr)
	return prog
}

// modeCheck refuses c with EPERM when its mode has a bit of deny.
func modeCheck(c modeCall, deny uint32) []bpf.Instruction {
	check := []bpf.Instruction{
		bpf.LoadAbsolute{Off: c.mode, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: deny, SkipFalse: 1},
		bpf.RetConstant{Val: retEPERM},
		bpf.RetConstant{Val: retAllow},
	}
	if c.flags != 0 {
		check = append([]bpf.Instruction{
			bpf.LoadAbsolute{Off: c.flags, Size: 4},
			bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: openCreates, SkipFalse: 3},
		}, check...)
	}
	return append([]bpf.Instruction{bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: c.nr, SkipTrue: uint8(len(check))}}, check...)
}
