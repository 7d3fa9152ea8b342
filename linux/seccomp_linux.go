package linux

import (
	"sort"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// Offsets in struct seccomp_data.
const (
	offNr   = 0
	offArch = 4
	offArg0 = 16 // low 32 bits on little-endian machines
	offArg1 = 24
	offArg2 = 32
)

const (
	retAllow = unix.SECCOMP_RET_ALLOW
	retKill  = unix.SECCOMP_RET_KILL_PROCESS
	retEPERM = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	retNoSys = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
)

// nsFlags are the clone/unshare flags that create namespaces.
const nsFlags = unix.CLONE_NEWNS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC |
	unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWTIME

// deniedSyscalls fail with EPERM inside the sandbox: tracing other
// processes, changing mounts or namespaces, loading code into the kernel,
// and other whole-machine operations.
var deniedSyscalls = map[string]uintptr{
	"ptrace": unix.SYS_PTRACE, "process_vm_readv": unix.SYS_PROCESS_VM_READV, "process_vm_writev": unix.SYS_PROCESS_VM_WRITEV,
	"mount": unix.SYS_MOUNT, "umount2": unix.SYS_UMOUNT2, "pivot_root": unix.SYS_PIVOT_ROOT, "chroot": unix.SYS_CHROOT,
	"move_mount": unix.SYS_MOVE_MOUNT, "open_tree": unix.SYS_OPEN_TREE, "fsopen": unix.SYS_FSOPEN, "fsconfig": unix.SYS_FSCONFIG,
	"fsmount": unix.SYS_FSMOUNT, "fspick": unix.SYS_FSPICK, "mount_setattr": unix.SYS_MOUNT_SETATTR, "setns": unix.SYS_SETNS,
	"bpf": unix.SYS_BPF, "perf_event_open": unix.SYS_PERF_EVENT_OPEN, "userfaultfd": unix.SYS_USERFAULTFD,
	"keyctl": unix.SYS_KEYCTL, "add_key": unix.SYS_ADD_KEY, "request_key": unix.SYS_REQUEST_KEY,
	"kexec_load": unix.SYS_KEXEC_LOAD, "kexec_file_load": unix.SYS_KEXEC_FILE_LOAD,
	"init_module": unix.SYS_INIT_MODULE, "finit_module": unix.SYS_FINIT_MODULE, "delete_module": unix.SYS_DELETE_MODULE,
	"reboot": unix.SYS_REBOOT, "swapon": unix.SYS_SWAPON, "swapoff": unix.SYS_SWAPOFF, "acct": unix.SYS_ACCT,
	"open_by_handle_at": unix.SYS_OPEN_BY_HANDLE_AT, "syslog": unix.SYS_SYSLOG,
	// io_uring runs file and socket operations on kernel threads, out of
	// the filter's sight, and has been a steady source of kernel bugs.
	"io_uring_setup": unix.SYS_IO_URING_SETUP, "io_uring_enter": unix.SYS_IO_URING_ENTER, "io_uring_register": unix.SYS_IO_URING_REGISTER,
}

// SeccompSummary describes the filter for plans and `fence doctor`.
func SeccompSummary() []string {
	names := make([]string, 0, len(deniedSyscalls)+len(archDenied))
	for n := range deniedSyscalls {
		names = append(names, n)
	}
	for n := range archDenied {
		names = append(names, n)
	}
	sort.Strings(names)
	return append(names,
		"clone and unshare with namespace flags", "clone3 (ENOSYS, so libc falls back to clone)",
		"ioctl TIOCSTI and TIOCLINUX", "personality other than PER_LINUX and queries",
		"in the Landlock-only engine: prlimit64, setpriority, ioprio_set, sched_setaffinity, sched_setscheduler, sched_setparam and sched_setattr on any process but the caller")
}

// seccompOptions are the parts of the filter that depend on the plan.
type seccompOptions struct {
	// denySockets refuses socket families other than AF_UNIX, when no
	// network namespace isolates the command.
	denySockets bool
	// denyMPTCP refuses MPTCP sockets, which Landlock's TCP rules do not
	// cover, so that programs fall back to plain TCP.
	denyMPTCP bool
	// netGuard, in the Landlock-only engine, keeps sockets to what the
	// supervisor's connect() judging covers (see netRules); filtered says
	// the network is the proxies' ("none"). denySockets then leaves only
	// unix sockets.
	netGuard, filtered bool
	// guardModes, in the Landlock-only engine, keeps the command from
	// changing modes, owners and extended attributes where no mount makes
	// the host read-only (see modeRules); root, when the command runs as
	// uid 0, refuses chmod and chown entirely.
	guardModes, root bool
	// guardProcesses, in the Landlock-only engine, refuses the calls that
	// change another process's limits and scheduling (see
	// otherProcessRules): there the supervisor is in the command's sight.
	guardProcesses bool
}

// seccompProgram assembles the filter. It kills a process that calls in
// through another architecture's table.
func seccompProgram(o seccompOptions) ([]bpf.RawInstruction, error) {
	prog := []bpf.Instruction{
		bpf.LoadAbsolute{Off: offArch, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: auditArch, SkipTrue: 1},
		bpf.RetConstant{Val: retKill},
		bpf.LoadAbsolute{Off: offNr, Size: 4},
	}
	prog = append(prog, archPrologue...)
	prog = append(prog, beaconRules(o.guardModes)...)
	nrs := make([]int, 0, len(deniedSyscalls)+len(archDenied))
	for _, nr := range deniedSyscalls {
		nrs = append(nrs, int(nr))
	}
	for _, nr := range archDenied {
		nrs = append(nrs, int(nr))
	}
	sort.Ints(nrs)
	for _, nr := range nrs {
		prog = append(prog, bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: uint32(nr), SkipTrue: 1}, bpf.RetConstant{Val: retEPERM})
	}
	prog = append(prog, bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: unix.SYS_CLONE3, SkipTrue: 1}, bpf.RetConstant{Val: retNoSys})
	for _, nr := range []uint32{unix.SYS_CLONE, unix.SYS_UNSHARE} {
		prog = append(prog,
			bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: nr, SkipTrue: 4},
			bpf.LoadAbsolute{Off: offArg0, Size: 4},
			bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: nsFlags, SkipFalse: 1},
			bpf.RetConstant{Val: retEPERM},
			bpf.RetConstant{Val: retAllow},
		)
	}
	if o.guardModes {
		prog = append(prog, modeRules(o.root)...)
	}
	if o.guardProcesses {
		prog = append(prog, otherProcessRules()...)
	}
	switch {
	case o.netGuard:
		if o.denyMPTCP && !o.filtered {
			// netRules refuses MPTCP on a filtered network; on the host's,
			// Landlock's TCP layer (bind refused) needs it refused too.
			prog = append(prog, mptcpRefusal()...)
		}
		prog = append(prog, netRules(o.filtered, o.denySockets)...)
	case o.denySockets:
		prog = append(prog,
			bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: unix.SYS_SOCKET, SkipTrue: 4},
			bpf.LoadAbsolute{Off: offArg0, Size: 4},
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.AF_UNIX, SkipTrue: 1},
			bpf.RetConstant{Val: retEPERM},
			bpf.RetConstant{Val: retAllow},
		)
	case o.denyMPTCP:
		prog = append(prog,
			bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: unix.SYS_SOCKET, SkipTrue: 4},
			bpf.LoadAbsolute{Off: offArg2, Size: 4},
			bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: unix.IPPROTO_MPTCP, SkipTrue: 1},
			bpf.RetConstant{Val: retEPERM},
			bpf.RetConstant{Val: retAllow},
		)
	}
	prog = append(prog,
		bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: unix.SYS_IOCTL, SkipTrue: 5},
		bpf.LoadAbsolute{Off: offArg1, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.TIOCSTI, SkipTrue: 2},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.TIOCLINUX, SkipTrue: 1},
		bpf.RetConstant{Val: retAllow},
		bpf.RetConstant{Val: retEPERM},

		bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: unix.SYS_PERSONALITY, SkipTrue: 5},
		bpf.LoadAbsolute{Off: offArg0, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: 0xffffffff, SkipTrue: 2},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: 0 /* PER_LINUX */, SkipTrue: 1},
		bpf.RetConstant{Val: retEPERM},
		bpf.RetConstant{Val: retAllow},

		bpf.RetConstant{Val: retAllow},
	)
	return bpf.Assemble(prog)
}

// mptcpRefusal refuses socket() of an MPTCP socket, which Landlock's TCP
// rules do not see, and leaves the system call number loaded for the
// rules after it otherwise.
func mptcpRefusal() []bpf.Instruction {
	return []bpf.Instruction{
		bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: unix.SYS_SOCKET, SkipTrue: 4},
		bpf.LoadAbsolute{Off: offArg2, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: unix.IPPROTO_MPTCP, SkipTrue: 1},
		bpf.RetConstant{Val: retEPERM},
		bpf.LoadAbsolute{Off: offNr, Size: 4},
	}
}
