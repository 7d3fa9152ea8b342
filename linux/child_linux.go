package linux

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The sandbox child. The supervisor lowers the plan into a program, a
// list of steps (system calls whose arguments it prepares in memory:
// paths as C strings, structs, the seccomp filters), clones a child of
// its own and the child runs the program on that memory, which the clone
// copied, and then the duties of pid 1 (pid1_linux.go). This is the
// technique of the syscall package's forkAndExecInChild: between
// runtime_BeforeFork and the command's exec the child is a copy of one
// thread of a Go program whose runtime it must not use. So every
// function of the child:
//
//   - is //go:nosplit: runtime_BeforeFork spoils the stack guard, and a
//     stack check would throw. The linker checks that each chain of
//     nosplit calls fits in the stack the guard leaves (it fails the
//     build with "nosplit stack over limit" otherwise);
//   - allocates nothing, calls nothing of the runtime, takes no lock, and
//     makes system calls only through syscall.RawSyscall6 (which is
//     nosplit and goes to the kernel without the scheduler);
//   - reads only what the supervisor prepared and writes only into the
//     program's own buffers (slots, the stat buffer, the report).
//
// TestChildNosplit checks the first two from the source and the
// compiler's escape analysis.

// A step is one system call of the program, or one of a few fixed
// operations on the program's buffers (op).
type step struct {
	op uint32
	nr uintptr
	a  [6]uintptr
	// in, for each argument, is the slot (plus one) whose value replaces
	// it when the step runs: a descriptor an earlier step made.
	in [6]int16
	// out is the slot (plus one) that gets the call's result.
	out int16
	// tolerate is an errno that is no failure (errAny: every one); after
	// it the next skipErr steps are skipped. After success, the next
	// skipOK steps are.
	tolerate        uintptr
	skipOK, skipErr uint16
}

// Operations of a step.
const (
	opSyscall      uint32 = iota // nr with a
	opIfMode                     // fstatat(a0, a1, stat, a3): fails with errMismatch unless the type is a4
	opIfDirFD                    // fstat(a0): fails with errMismatch unless a directory
	opSameFile                   // fstat(a0): fails with errMismatch unless the device node a1 (dev), a2 (ino)
	opMkdirDir                   // mkdirat(AT_FDCWD, a0, a1); an existing name must be a directory (not a link)
	opLandlockPath               // a path rule: see landlockPath
	opSendReady                  // the ready message with the slots of sendSlots attached
)

// errAny tolerates every errno; errMismatch is the failure of a check.
const (
	errAny      = ^uintptr(0)
	errMismatch = uintptr(0xfff)
)

// childProg is what the child runs: the steps, and the memory they use.
type childProg struct {
	steps []step
	slots []uintptr
	// stat is the buffer of the checks.
	stat *unix.Stat_t
	// beneath is the buffer of landlock_add_rule.
	beneath *landlockPathBeneath
	// ready is the ready message, sent with the descriptors of the
	// slots in sendSlots, through msg (whose control buffer is cmsg,
	// the descriptors written at rights).
	ready     *syncMsg
	msg       *unix.Msghdr
	rights    []int32
	sendSlots []int16
	// report is the failure message; wait the buffer msgMapsDone is
	// read into.
	report, wait *syncMsg
	// sigOld and sigDfl are resetSignals' buffers.
	sigOld, sigDfl sigaction
	fds            childFDs
	cloneFlags     uintptr
	// title is the memory of the command line the child inherited,
	// which /proc shows; the child writes titleSrc over it.
	title, titleSrc []byte
	// ppid is what getppid returns to the child while the supervisor
	// lives: its pid, or 0 from inside a new pid namespace.
	ppid uintptr
	pid1 *pid1Prog
	// keep holds what the steps point into, until the clone.
	keep []any
}

// landlockPathBeneath is struct landlock_path_beneath_attr (packed).
type landlockPathBeneath struct {
	access [8]byte // u64, unaligned in the packed struct
	parent int32
}

// forkChild clones the child, which never returns from here: it runs
// the program and then pid 1's duties. The caller holds
// syscall.ForkLock and is locked to its thread.
//
// forkChild itself is not nosplit: its stack check runs before the
// fork, and it calls the two parts of the child one after the other, so
// that each chain of nosplit calls (the program's, pid 1's) has the
// whole of the stack the linker checks it against.
//
//go:noinline
//go:norace
func forkChild(p *childProg) (pid uintptr, errno syscall.Errno) {
	runtimeBeforeFork()
	pid, _, errno = syscall.RawSyscall6(unix.SYS_CLONE, p.cloneFlags|uintptr(unix.SIGCHLD), 0, 0, 0, 0, 0)
	if errno != 0 || pid != 0 {
		runtimeAfterFork()
		return pid, errno
	}
	childMain(p)
	p.pid1.run(&p.fds)
	childExit(125)
	return 0, 0 // not reached
}

// childMain is the child up to pid 1's duties: it dies with the
// supervisor, waits for its id maps and runs the program. A failed step
// is reported, and the child exits.
//
//go:nosplit
//go:norace
func childMain(p *childProg) {
	syscall.RawSyscall6(unix.SYS_PRCTL, unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0, 0)
	if ppid, _, _ := syscall.RawSyscall6(unix.SYS_GETPPID, 0, 0, 0, 0, 0, 0); ppid != p.ppid {
		childExit(125) // the supervisor died before the prctl
	}
	// Out of fence's process group at once, before a Ctrl-Z or Ctrl-C
	// for fence's group reaches the child too (the supervisor does the
	// same from its side).
	syscall.RawSyscall6(unix.SYS_SETPGID, 0, 0, 0, 0, 0, 0)
	// Every signal stays blocked, as runtime_BeforeFork left them (pid
	// 1's duties read them from a signalfd): one sent to the init of a
	// pid namespace while its action is the default would be dropped,
	// and one that came since the clone would act now. The Go runtime's
	// handlers go, as runtime_AfterForkInChild would take them, but
	// without its restoring the signal mask.
	resetSignals(&p.sigOld, &p.sigDfl)
	n, _, e := syscall.RawSyscall6(unix.SYS_READ, uintptr(p.fds.sync), uintptr(unsafe.Pointer(p.wait)), uintptr(syncMsgSize), 0, 0, 0)
	if e != 0 || n != uintptr(syncMsgSize) || p.wait.Kind != msgMapsDone {
		childExit(125)
	}
	for j := 0; j < len(p.title) && j < len(p.titleSrc); j++ {
		p.title[j] = p.titleSrc[j]
	}
	if i, errno := runSteps(p); i >= 0 {
		p.report.Kind, p.report.Step, p.report.Errno = msgFailed, int32(i), int32(errno)
		syscall.RawSyscall6(unix.SYS_WRITE, uintptr(p.fds.sync), uintptr(unsafe.Pointer(p.report)), uintptr(syncMsgSize), 0, 0, 0)
		childExit(125)
	}
}

// resetSignals sets the action of every signal that has a handler (the
// Go runtime's) back to the default; an ignored one stays ignored. old
// and dfl are its buffers.
//
//go:nosplit
//go:norace
func resetSignals(old, dfl *sigaction) {
	for sig := uintptr(1); sig <= 64; sig++ {
		if sig == uintptr(unix.SIGKILL) || sig == uintptr(unix.SIGSTOP) {
			continue
		}
		if _, _, e := syscall.RawSyscall6(unix.SYS_RT_SIGACTION, sig, 0, uintptr(unsafe.Pointer(old)), 8, 0, 0); e != 0 {
			continue
		}
		if old.handler != sigIgn && old.handler != sigDfl {
			*dfl = sigaction{}
			syscall.RawSyscall6(unix.SYS_RT_SIGACTION, sig, uintptr(unsafe.Pointer(dfl)), 0, 8, 0, 0)
		}
	}
}

// sigaction is the kernel's struct sigaction (with sa_restorer, as on
// amd64 and arm64).
type sigaction struct {
	handler, flags, restorer uintptr
	mask                     uint64
}

// The handlers SIG_DFL and SIG_IGN.
const (
	sigDfl = uintptr(0)
	sigIgn = uintptr(1)
)

// childExit ends the child.
//
//go:nosplit
//go:norace
func childExit(code uintptr) {
	for {
		syscall.RawSyscall6(unix.SYS_EXIT_GROUP, code, 0, 0, 0, 0, 0)
	}
}

// runSteps runs the program's steps, and returns the index and errno of
// the one that failed, or -1.
//
//go:nosplit
//go:norace
func runSteps(p *childProg) (int, uintptr) {
	for i := 0; i < len(p.steps); i++ {
		s := &p.steps[i]
		r, e := runStep(p, s)
		if e != 0 {
			if s.tolerate != errAny && s.tolerate != e {
				return i, e
			}
			i += int(s.skipErr)
			continue
		}
		if s.out > 0 {
			p.slots[s.out-1] = r
		}
		i += int(s.skipOK)
	}
	return -1, 0
}

// runStep runs one step, its arguments taken from the slots where in
// says.
//
//go:nosplit
//go:norace
func runStep(p *childProg, s *step) (uintptr, uintptr) {
	a := s.a
	for j := 0; j < 6; j++ {
		if s.in[j] > 0 {
			a[j] = p.slots[s.in[j]-1]
		}
	}
	switch s.op {
	case opIfMode:
		if _, _, e := syscall.RawSyscall6(sysFstatat, a[0], a[1], uintptr(unsafe.Pointer(p.stat)), a[3], 0, 0); e != 0 {
			return 0, uintptr(e)
		}
		if uintptr(p.stat.Mode&unix.S_IFMT) != a[4] {
			return 0, errMismatch
		}
		return 0, 0
	case opIfDirFD:
		if _, _, e := syscall.RawSyscall6(unix.SYS_FSTAT, a[0], uintptr(unsafe.Pointer(p.stat)), 0, 0, 0, 0); e != 0 {
			return 0, uintptr(e)
		}
		if p.stat.Mode&unix.S_IFMT != unix.S_IFDIR {
			return 0, errMismatch
		}
		return 0, 0
	case opSameFile:
		if _, _, e := syscall.RawSyscall6(unix.SYS_FSTAT, a[0], uintptr(unsafe.Pointer(p.stat)), 0, 0, 0, 0); e != 0 {
			return 0, uintptr(e)
		}
		if p.stat.Mode&unix.S_IFMT != unix.S_IFCHR || uintptr(p.stat.Dev) != a[1] || uintptr(p.stat.Ino) != a[2] {
			return 0, errMismatch
		}
		return 0, 0
	case opMkdirDir:
		return mkdirDir(p, a[0], a[1])
	case opLandlockPath:
		return landlockPath(p, a[0], a[1], a[2], a[3])
	case opSendReady:
		return sendReady(p, a[0])
	}
	r, _, e := syscall.RawSyscall6(s.nr, a[0], a[1], a[2], a[3], a[4], a[5])
	return r, uintptr(e)
}

// mkdirDir makes the directory path, or finds it there: a directory, not
// a link to one.
//
//go:nosplit
//go:norace
func mkdirDir(p *childProg, path, mode uintptr) (uintptr, uintptr) {
	_, _, e := syscall.RawSyscall6(unix.SYS_MKDIRAT, atFDCWD, path, mode, 0, 0, 0)
	if e != unix.EEXIST {
		return 0, uintptr(e)
	}
	if _, _, e := syscall.RawSyscall6(sysFstatat, atFDCWD, path, uintptr(unsafe.Pointer(p.stat)), unix.AT_SYMLINK_NOFOLLOW, 0, 0); e != 0 {
		return 0, uintptr(e)
	}
	if p.stat.Mode&unix.S_IFMT != unix.S_IFDIR {
		return 0, uintptr(unix.ENOTDIR)
	}
	return 0, 0
}

// landlockPath adds the rule of path to the ruleset: the rights dirAccess
// on a directory, those of fileAccess among them on anything else. A
// path that does not exist fails with ENOENT (which the step tolerates).
//
//go:nosplit
//go:norace
func landlockPath(p *childProg, path, dirAccess, fileAccess, ruleset uintptr) (uintptr, uintptr) {
	fd, _, e := syscall.RawSyscall6(unix.SYS_OPENAT, atFDCWD, path, unix.O_PATH|unix.O_CLOEXEC, 0, 0, 0)
	if e != 0 {
		return 0, uintptr(e)
	}
	access := dirAccess
	if _, _, e := syscall.RawSyscall6(unix.SYS_FSTAT, fd, uintptr(unsafe.Pointer(p.stat)), 0, 0, 0, 0); e != 0 {
		syscall.RawSyscall6(unix.SYS_CLOSE, fd, 0, 0, 0, 0, 0)
		return 0, uintptr(e)
	}
	if p.stat.Mode&unix.S_IFMT != unix.S_IFDIR {
		access &= fileAccess
	}
	if access == 0 {
		// None of the rule's rights applies here (nor is handled):
		// Landlock refuses an empty rule, and it would grant nothing.
		syscall.RawSyscall6(unix.SYS_CLOSE, fd, 0, 0, 0, 0, 0)
		return 0, 0
	}
	for j := 0; j < 8; j++ {
		p.beneath.access[j] = byte(access >> (8 * j))
	}
	p.beneath.parent = int32(fd)
	_, _, e = syscall.RawSyscall6(unix.SYS_LANDLOCK_ADD_RULE, ruleset, unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(p.beneath)), 0, 0, 0)
	syscall.RawSyscall6(unix.SYS_CLOSE, fd, 0, 0, 0, 0, 0)
	return 0, uintptr(e)
}

// sendReady sends the ready message on fd with the descriptors of the
// slots sendSlots names.
//
//go:nosplit
//go:norace
func sendReady(p *childProg, fd uintptr) (uintptr, uintptr) {
	for j := 0; j < len(p.sendSlots) && j < len(p.rights); j++ {
		p.rights[j] = int32(p.slots[p.sendSlots[j]-1])
	}
	_, _, e := syscall.RawSyscall6(unix.SYS_SENDMSG, fd, uintptr(unsafe.Pointer(p.msg)), 0, 0, 0, 0)
	return 0, uintptr(e)
}

// atFDCWD is AT_FDCWD as a system call argument.
const atFDCWD = ^uintptr(99) // -100

// The runtime's side of a fork, as the syscall package calls it (the
// linker lets these be named from outside; gVisor does too). The child
// does not call runtime_AfterForkInChild: it restores the signal mask,
// and a signal that came since the clone (a Ctrl-Z) would stop the child
// there; resetSignals does the rest of its work.

//go:linkname runtimeBeforeFork syscall.runtime_BeforeFork
func runtimeBeforeFork()

//go:linkname runtimeAfterFork syscall.runtime_AfterFork
func runtimeAfterFork()
