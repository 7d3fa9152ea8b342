package linux

import (
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// Without a pid namespace the Landlock-only engine's command sees the
// supervisor and every other process of its user. Landlock scopes
// ptrace, signals and the calls that go through ptrace's access check
// (kcmp, pidfd_getfd, process_vm_*, process_madvise), but not the ones
// the kernel lets any process make on another of the same user: setting
// its resource limits (the supervisor's RLIMIT_FSIZE would drop audit
// lines, RLIMIT_NOFILE stop the proxies, RLIMIT_CORE with RLIMIT_AS dump
// its memory), its nice value, CPU affinity, scheduling policy or I/O
// priority. The filter refuses these with EPERM unless they name the
// caller itself (pid 0); reading them stays allowed.
//
// IOPRIO_WHO_PROCESS and PRIO_PROCESS are the only "which" that can name
// only the caller: a process group or a user takes in the supervisor.
const ioprioWhoProcess = 1

// pidCalls act on the process whose pid is their first argument, the
// caller's own when it is 0.
var pidCalls = []uint32{
	unix.SYS_PRLIMIT64, unix.SYS_SCHED_SETAFFINITY, unix.SYS_SCHED_SETSCHEDULER,
	unix.SYS_SCHED_SETPARAM, unix.SYS_SCHED_SETATTR,
}

// whichWhoCalls take "which" and "who" as their first two arguments, and
// name the caller alone with which and who 0.
var whichWhoCalls = []struct{ nr, self uint32 }{
	{unix.SYS_SETPRIORITY, unix.PRIO_PROCESS},
	{unix.SYS_IOPRIO_SET, ioprioWhoProcess},
}

// otherProcessRules refuses the calls above on any process but the
// caller. The accumulator holds the syscall number on entry and on every
// way through.
func otherProcessRules() []bpf.Instruction {
	var prog []bpf.Instruction
	for _, nr := range pidCalls {
		prog = append(prog, syscallBlock(nr, []bpf.Instruction{
			bpf.LoadAbsolute{Off: offArg0, Size: 4},
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: 0, SkipFalse: 1},
			bpf.RetConstant{Val: retAllow},
			bpf.RetConstant{Val: retEPERM},
		})...)
	}
	for _, c := range whichWhoCalls {
		prog = append(prog, syscallBlock(c.nr, []bpf.Instruction{
			bpf.LoadAbsolute{Off: offArg0, Size: 4},
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: c.self, SkipFalse: 3},
			bpf.LoadAbsolute{Off: offArg1, Size: 4},
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: 0, SkipFalse: 1},
			bpf.RetConstant{Val: retAllow},
			bpf.RetConstant{Val: retEPERM},
		})...)
	}
	return prog
}
