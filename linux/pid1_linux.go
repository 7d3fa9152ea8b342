package linux

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The duties of pid 1, run by the sandbox child once the sandbox is
// built: start the command, forward signals to it, follow its stops for
// job control, answer the -p dial requests, reap every child, and exit
// with the command's status.
//
// This code runs in the child the supervisor cloned, which has no Go
// runtime of its own: every function here is //go:nosplit (the stack
// cannot grow), allocates nothing, and makes only raw system calls, on
// the buffers of a pid1Prog the supervisor prepared before the clone
// (newPid1Prog). The linker checks that the nosplit chain fits in the
// stack the runtime guarantees; the child-path test checks the rest.
//
// Every signal stays blocked in pid 1. The forwarded ones and SIGCHLD are
// read from a signalfd: blocked, they are queued even for the init of a
// pid namespace, which the kernel otherwise spares signals it has no
// handler for. The command starts with an empty mask.

// pid1Prog is what pid 1 runs: prepared by the supervisor, then read (and
// its scratch fields written) only by the child.
//
// The child writes no pointer into it (that would need the runtime's
// write barrier), and indexes no slice where the bounds check's panic
// path would not fit the stack: buffers are arrays, with masked indices.
// Calls nest at most four deep below run, every frame about 80 bytes:
// the linker's limit is for the whole chain from the child's entry.
type pid1Prog struct {
	// Prepared by the supervisor.

	argv, envv []*byte // NUL-terminated strings, each list ending with nil
	// cands are the paths the command may be at, in PATH order; slash is
	// whether the command was named by a path, to be executed as given.
	cands        []*byte
	slash        bool
	namespaces   bool
	foreground   bool
	newSession   bool
	dumpable     bool    // the command's first exec is judged
	addressSpace uint64  // RLIMIT_AS in bytes, 0 for none
	cloneFlags   uintptr // of the command's child: see spawnFlags
	// nofile is the RLIMIT_NOFILE fence was started with, for a command
	// that has no limit of its own (Cur 0: none to restore).
	nofile  unix.Rlimit
	ports   []uint16
	console *byte // "/dev/console"
	// names are the supervisor's, for its messages: the child does not
	// read them.
	names pid1Names

	// Scratch and state, the child's own.

	sync, jobs int32
	sfd        int32
	execPipe   [2]int32
	pid        int32 // the command, and its process group
	self       int32
	reported   bool
	exited     bool
	stopped    uint32 // a stop of the command to report, 0 for none
	dialOK     int8   // a connect that ended: 1 connected, -1 failed
	code       int32
	dialFD     int32 // a connect in progress, -1 for none
	deadline   int64 // of dialFD, in CLOCK_MONOTONIC nanoseconds
	allSigs    uint64
	noSigs     uint64
	fwdSigs    uint64
	status     int32
	execErr    execFailure
	polls      [3]unix.PollFd
	ts         unix.Timespec
	sigbuf     [4 * 128]byte // signalfd_siginfo records
	in, out    syncMsg
	iov        unix.Iovec
	// msg sends out alone, msgRights with rights attached: both prepared,
	// as a pointer written in the child would need the runtime's write
	// barrier.
	msg, msgRights unix.Msghdr
	rights         rightsCmsg
	dialsOff       bool // the supervisor closed the sync socket
	addr           unix.RawSockaddrInet4
	soErr          int32
	soErrLen       uint32
	st, cst        unix.Stat_t
	stfs           unix.Statfs_t
	rlim           unix.Rlimit
	path           [32]byte // /proc/PID/stat
	buf            [512]byte
}

// execFailure is what the command's child writes on the exec pipe when
// it could not execute the command: the candidate (-1: none found), the
// errno, and the candidate's path.
type execFailure struct {
	cand, errno int32
	path        uintptr
}

// rightsCmsg is a control message carrying one descriptor.
type rightsCmsg struct {
	hdr unix.Cmsghdr
	fd  int32
	_   int32
}

// pid-1 steps, as msgPid1Failed names them.
const (
	pid1StepSignalfd int32 = 1 + iota
	pid1StepSubreaper
	pid1StepPipe
	pid1StepFork
)

// Reasons the command could not be executed, found in the sandbox's view
// (see whyNotExecutable): msgExecFailed carries one with the mode.
const (
	whyNone uint32 = iota
	whyStat
	whyDir
	whyNoExecBit
	whyNoexecMount
	whyModeUser
	whyPolicy
)

// dialTimeout bounds a -p connection's connect, in nanoseconds.
const dialTimeout = 5_000_000_000

// run does pid 1's duties and exits with the command's status. It never
// returns.
//
//go:nosplit
//go:norace
func (p *pid1Prog) run(c *childFDs) {
	p.sync, p.jobs, p.dialFD = c.sync, c.jobs, -1
	rawCall(unix.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&p.allSigs)), 0, 8)
	fd, errno := rawCall(unix.SYS_SIGNALFD4, ^uintptr(0), uintptr(unsafe.Pointer(&p.fwdSigs)), 8, unix.SFD_CLOEXEC|unix.SFD_NONBLOCK)
	if errno != 0 {
		p.fail(pid1StepSignalfd, errno)
	}
	p.sfd = int32(fd)
	if !p.namespaces {
		// No pid namespace: the command's orphans come here while it runs
		// (and to the supervisor after it, which kills what is left).
		if _, errno := rawCall(unix.SYS_PRCTL, unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0); errno != 0 {
			p.fail(pid1StepSubreaper, errno)
		}
	}
	pid, _ := rawCall(unix.SYS_GETPID, 0, 0, 0, 0)
	p.self = int32(pid)
	if _, errno := rawCall(unix.SYS_PIPE2, uintptr(unsafe.Pointer(&p.execPipe)), unix.O_CLOEXEC, 0, 0); errno != 0 {
		p.fail(pid1StepPipe, errno)
	}
	pid, errno = p.spawn()
	if errno != 0 {
		p.fail(pid1StepFork, errno)
	}
	p.pid = int32(pid)
	if p.started() {
		p.loop()
	}
	p.execFailed()
}

// spawn starts the command's child, which runs command: with
// CLONE_VM|CLONE_VFORK (see spawnFlags), on this stack below this frame
// while pid 1 sleeps until its exec, and writing only the scratch fields
// of p that pid 1 overwrites before it reads them.
//
//go:nosplit
//go:norace
func (p *pid1Prog) spawn() (uintptr, syscall.Errno) {
	pid, errno := rawVfork(p.cloneFlags)
	if pid == 0 && errno == 0 {
		p.command() // does not return
	}
	return pid, errno
}

// fail reports a pid-1 step that failed before the command started, and
// exits.
//
//go:nosplit
//go:norace
func (p *pid1Prog) fail(step int32, errno syscall.Errno) {
	p.out = syncMsg{Kind: msgPid1Failed, Step: step, Errno: int32(errno)}
	rawCall(unix.SYS_SENDMSG, uintptr(p.jobs), uintptr(unsafe.Pointer(&p.msg)), unix.MSG_NOSIGNAL, 0)
	exitGroup(125)
}

// started waits until the command has executed (the exec pipe closes at
// its exec) and reports whether it has; when not, execErr says why.
//
//go:nosplit
//go:norace
func (p *pid1Prog) started() bool {
	if !p.newSession {
		// As the child does itself: whichever comes first, signals to the
		// group reach it from now on.
		rawCall(unix.SYS_SETPGID, uintptr(p.pid), uintptr(p.pid), 0, 0)
	}
	rawCall(unix.SYS_CLOSE, uintptr(p.execPipe[1]), 0, 0, 0)
	n, errno := rawCall(unix.SYS_READ, uintptr(p.execPipe[0]), uintptr(unsafe.Pointer(&p.execErr)), unsafe.Sizeof(p.execErr), 0)
	for errno == unix.EINTR {
		n, errno = rawCall(unix.SYS_READ, uintptr(p.execPipe[0]), uintptr(unsafe.Pointer(&p.execErr)), unsafe.Sizeof(p.execErr), 0)
	}
	rawCall(unix.SYS_CLOSE, uintptr(p.execPipe[0]), 0, 0, 0)
	return n != unsafe.Sizeof(p.execErr)
}

// execFailed tells the supervisor why the command could not be executed
// (it prints the message), reaps the command's child and exits: 127 when
// the command was not found, 126 when it could not be executed.
//
//go:nosplit
//go:norace
func (p *pid1Prog) execFailed() {
	why, perm := whyNone, uint32(0)
	if p.execErr.cand >= 0 && p.execErr.errno == int32(unix.EACCES) {
		why, perm = p.whyNotExecutable(p.execErr.path)
	}
	p.out = syncMsg{Kind: msgExecFailed, Step: p.execErr.cand, Errno: p.execErr.errno, Arg: why<<16 | perm}
	rawCall(unix.SYS_SENDMSG, uintptr(p.jobs), uintptr(unsafe.Pointer(&p.msg)), unix.MSG_NOSIGNAL, 0)
	for {
		got, errno := rawCall(unix.SYS_WAIT4, uintptr(p.pid), uintptr(unsafe.Pointer(&p.status)), 0, 0)
		if errno != unix.EINTR || int32(got) == p.pid {
			break
		}
	}
	if p.execErr.cand < 0 || p.execErr.errno == int32(unix.ENOENT) {
		exitGroup(127)
	}
	exitGroup(126)
}

// whyNotExecutable tells what refused to execute path (see
// startFailure for the words): the file itself, a filesystem mounted
// noexec, or, when none of these, the policy (the kernel's access check
// does not see Landlock). perm is the file's permission bits (for
// whyStat the errno).
//
//go:nosplit
//go:norace
func (p *pid1Prog) whyNotExecutable(path uintptr) (why, perm uint32) {
	if _, errno := rawCall(unix.SYS_NEWFSTATAT, atFDCWD, path, uintptr(unsafe.Pointer(&p.st)), 0); errno != 0 {
		return whyStat, uint32(errno)
	}
	perm = p.st.Mode & 0o777
	switch {
	case p.st.Mode&unix.S_IFMT == unix.S_IFDIR:
		return whyDir, perm
	case p.st.Mode&unix.S_IFMT == unix.S_IFREG && p.st.Mode&0o111 == 0:
		return whyNoExecBit, perm
	}
	if _, errno := rawCall6(unix.SYS_FACCESSAT2, atFDCWD, path, unix.X_OK, unix.AT_EACCESS, 0, 0); errno != 0 {
		if _, errno := rawCall(unix.SYS_STATFS, path, uintptr(unsafe.Pointer(&p.stfs)), 0, 0); errno == 0 && p.stfs.Flags&unix.ST_NOEXEC != 0 {
			return whyNoexecMount, perm
		}
		return whyModeUser, perm
	}
	return whyPolicy, perm
}

// command is the command's child: it takes its process group (and the
// terminal) or a session of its own, its standard streams, its limits,
// then executes the command. It never returns.
//
//go:nosplit
//go:norace
func (p *pid1Prog) command() {
	if p.newSession {
		rawCall(unix.SYS_SETSID, 0, 0, 0, 0)
	} else {
		rawCall(unix.SYS_SETPGID, 0, 0, 0, 0)
		if p.foreground {
			// SIGTTOU is blocked: a background group may take the terminal.
			pid, _ := rawCall(unix.SYS_GETPID, 0, 0, 0, 0)
			p.status = int32(pid)
			rawCall(unix.SYS_IOCTL, 0, unix.TIOCSPGRP, uintptr(unsafe.Pointer(&p.status)), 0)
		}
	}
	if p.namespaces {
		p.consoleStreams()
	}
	if p.addressSpace > 0 {
		p.rlim = unix.Rlimit{Cur: p.addressSpace, Max: p.addressSpace}
		rawCall(unix.SYS_PRLIMIT64, 0, unix.RLIMIT_AS, uintptr(unsafe.Pointer(&p.rlim)), 0)
	}
	if p.nofile.Cur > 0 {
		rawCall(unix.SYS_PRLIMIT64, 0, unix.RLIMIT_NOFILE, uintptr(unsafe.Pointer(&p.nofile)), 0)
	}
	if p.dumpable {
		// A child of a non-dumpable process is itself non-dumpable until
		// it executes: the supervisor could not read the argv of this
		// first exec. pid 1 itself stays non-dumpable.
		rawCall(unix.SYS_PRCTL, unix.PR_SET_DUMPABLE, 1, 0, 0)
	}
	rawCall(unix.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&p.noSigs)), 0, 8)
	p.execErr = execFailure{cand: -1, errno: int32(unix.ENOENT)}
	for i := range p.cands {
		// The first candidate that is a file with an execute bit is the
		// command, as a shell would find it (one named by a path is
		// executed as it is); how its exec fails is final.
		path := uintptr(unsafe.Pointer(p.cands[i]))
		if !p.slash {
			if _, errno := rawCall(unix.SYS_NEWFSTATAT, atFDCWD, path, uintptr(unsafe.Pointer(&p.st)), 0); errno != 0 || p.st.Mode&unix.S_IFMT == unix.S_IFDIR || p.st.Mode&0o111 == 0 {
				continue
			}
		}
		_, errno := rawCall(unix.SYS_EXECVE, path, uintptr(unsafe.Pointer(unsafe.SliceData(p.argv))), uintptr(unsafe.Pointer(unsafe.SliceData(p.envv))), 0)
		p.execErr = execFailure{cand: int32(i), errno: int32(errno), path: path}
		break
	}
	rawCall(unix.SYS_WRITE, uintptr(p.execPipe[1]), uintptr(unsafe.Pointer(&p.execErr)), unsafe.Sizeof(p.execErr), 0)
	exitGroup(127)
}

// consoleStreams gives the command /dev/console, opened anew, for each of
// its standard streams that is the caller's terminal bound there (see
// terminal_linux.go), so that the streams are named by it. A stream it
// cannot open (the terminal belongs to another user) stays as it is.
//
//go:nosplit
//go:norace
func (p *pid1Prog) consoleStreams() {
	if _, errno := rawCall(unix.SYS_NEWFSTATAT, atFDCWD, uintptr(unsafe.Pointer(p.console)), uintptr(unsafe.Pointer(&p.cst)), 0); errno != 0 || p.cst.Mode&unix.S_IFMT != unix.S_IFCHR {
		return
	}
	for fd := uintptr(0); fd < 3; fd++ {
		if _, errno := rawCall(unix.SYS_FSTAT, fd, uintptr(unsafe.Pointer(&p.st)), 0, 0); errno != 0 || !p.sameAsConsole() {
			continue
		}
		flags, errno := rawCall(unix.SYS_FCNTL, fd, unix.F_GETFL, 0, 0)
		if errno != 0 {
			continue
		}
		nfd, errno := rawCall6(unix.SYS_OPENAT, atFDCWD, uintptr(unsafe.Pointer(p.console)), flags&unix.O_ACCMODE|unix.O_NOCTTY|unix.O_CLOEXEC, 0, 0, 0)
		if errno != 0 {
			continue
		}
		if _, errno := rawCall(unix.SYS_FSTAT, nfd, uintptr(unsafe.Pointer(&p.st)), 0, 0); errno == 0 && p.sameAsConsole() {
			rawCall(unix.SYS_DUP3, nfd, fd, 0, 0)
		}
		rawCall(unix.SYS_CLOSE, nfd, 0, 0, 0)
	}
}

// sameAsConsole reports whether st is the terminal node cst is.
//
//go:nosplit
//go:norace
func (p *pid1Prog) sameAsConsole() bool {
	return p.st.Dev == p.cst.Dev && p.st.Ino == p.cst.Ino && p.st.Mode&unix.S_IFMT == unix.S_IFCHR
}

// loop serves until the command has exited, then exits with its status:
// the dial requests first (a connection being set up is handed over
// before pid 1 exits), then the supervisor's job requests, then signals.
//
//go:nosplit
//go:norace
func (p *pid1Prog) loop() {
	p.polls[0] = unix.PollFd{Fd: p.sfd, Events: unix.POLLIN}
	p.polls[1] = unix.PollFd{Fd: p.jobs, Events: unix.POLLIN}
	for {
		p.polls[2] = unix.PollFd{Fd: -1}
		timeout := uintptr(0)
		switch {
		case p.dialFD >= 0:
			p.polls[2] = unix.PollFd{Fd: p.dialFD, Events: unix.POLLOUT}
			left := p.deadline - p.now()
			if left < 0 {
				left = 0
			}
			p.ts = unix.Timespec{Sec: left / 1_000_000_000, Nsec: left % 1_000_000_000}
			timeout = uintptr(unsafe.Pointer(&p.ts))
		case p.exited:
			exitGroup(int(p.code))
		case len(p.ports) > 0 && !p.dialsOff:
			p.polls[2] = unix.PollFd{Fd: p.sync, Events: unix.POLLIN}
		}
		if _, errno := rawCall6(unix.SYS_PPOLL, uintptr(unsafe.Pointer(&p.polls)), 3, timeout, 0, 0, 0); errno != 0 {
			continue // EINTR; nothing else can fail here
		}
		switch {
		case p.polls[2].Fd < 0:
		case p.dialFD < 0:
			if p.polls[2].Revents != 0 {
				p.dialRequest()
			}
		case p.polls[2].Revents != 0:
			p.connected()
		case p.now() >= p.deadline:
			p.dialOK = -1
		}
		if p.dialOK != 0 {
			p.dialed()
		}
		if p.polls[1].Revents != 0 {
			p.jobRequest()
		}
		if p.polls[0].Revents != 0 && p.signals() {
			p.reap()
		}
		if p.stopped != 0 {
			p.reportStop()
		}
	}
}

// now is CLOCK_MONOTONIC in nanoseconds.
//
//go:nosplit
//go:norace
func (p *pid1Prog) now() int64 {
	rawCall(unix.SYS_CLOCK_GETTIME, unix.CLOCK_MONOTONIC, uintptr(unsafe.Pointer(&p.ts)), 0, 0)
	return p.ts.Sec*1_000_000_000 + p.ts.Nsec
}

// signals takes the queued signals and forwards them to the command,
// except SIGCHLD: it reports whether one came.
//
// A signal that ends processes is followed by SIGCONT to the command's
// group, so that it takes effect on a stopped command, and on a group
// whose stopped member holds up the command itself (a shell between
// vfork and exec when the stop came, with its signals blocked until the
// child goes on).
//
//go:nosplit
//go:norace
func (p *pid1Prog) signals() (child bool) {
	for {
		n, errno := rawCall(unix.SYS_READ, uintptr(p.sfd), uintptr(unsafe.Pointer(&p.sigbuf)), unsafe.Sizeof(p.sigbuf), 0)
		if errno != 0 || n == 0 {
			return child
		}
		for off := uintptr(0); off+128 <= n; off += 128 {
			sig := uintptr(*(*uint32)(unsafe.Add(unsafe.Pointer(&p.sigbuf), off)))
			switch {
			case sig == uintptr(unix.SIGCHLD):
				child = true
			case p.exited:
			default:
				rawCall(unix.SYS_KILL, uintptr(p.pid), sig, 0, 0)
				if sig != uintptr(unix.SIGUSR1) && sig != uintptr(unix.SIGUSR2) {
					p.reported = false
					rawCall(unix.SYS_KILL, uintptr(-p.pid), uintptr(unix.SIGCONT), 0, 0)
				}
			}
		}
	}
}

// reap waits for every child that has ended; the command's stop is noted
// for reporting, its end recorded as the exit code (128+N for signal N).
//
//go:nosplit
//go:norace
func (p *pid1Prog) reap() {
	for {
		got, errno := rawCall6(unix.SYS_WAIT4, ^uintptr(0), uintptr(unsafe.Pointer(&p.status)), unix.WNOHANG|unix.WUNTRACED, 0, 0, 0)
		if errno == unix.EINTR {
			continue
		}
		if errno != 0 || got == 0 {
			return
		}
		if int32(got) != p.pid || p.exited {
			continue
		}
		ws := uint32(p.status)
		switch {
		case ws&0xff == 0x7f: // stopped
			p.stopped = ws >> 8 & 0xff
		case ws&0x7f != 0: // killed by a signal
			p.exited, p.code = true, 128+int32(ws&0x7f)
		default:
			p.exited, p.code = true, int32(ws>>8&0xff)
		}
	}
}

// reportStop tells the supervisor that the command stopped, unless an
// earlier stop is still unanswered: a command that stops over and over
// (continued by a child of its own) cannot queue more stops than one,
// which would stop fence again each time it is continued, nor fill the
// socket while fence is stopped and block pid 1.
//
//go:nosplit
//go:norace
func (p *pid1Prog) reportStop() {
	sig := p.stopped
	p.stopped = 0
	if p.reported || p.exited {
		return
	}
	p.reported = true
	p.out = syncMsg{Kind: msgJobStopped, Arg: sig}
	if p.holdsTerminal() {
		p.out.Step = 1
	}
	rawCall(unix.SYS_SENDMSG, uintptr(p.jobs), uintptr(unsafe.Pointer(&p.msg)), unix.MSG_NOSIGNAL, 0)
}

// jobRequest does what the supervisor asks on the job socket: stop the
// command's group with a signal (a Ctrl-Z that reached fence's group,
// not the command's), or continue it, with the terminal when asked and
// no group of the sandbox has it.
//
//go:nosplit
//go:norace
func (p *pid1Prog) jobRequest() {
	n, errno := rawCall6(unix.SYS_RECVFROM, uintptr(p.jobs), uintptr(unsafe.Pointer(&p.in)), unsafe.Sizeof(p.in), unix.MSG_DONTWAIT, 0, 0)
	if errno == unix.EAGAIN || errno == unix.EINTR {
		return
	}
	if errno != 0 || n == 0 {
		p.polls[1].Fd = -1 // the supervisor is gone; its death signal follows
		return
	}
	if n != unsafe.Sizeof(p.in) || p.exited {
		return
	}
	switch p.in.Kind {
	case msgJobStop:
		rawCall(unix.SYS_KILL, uintptr(-p.pid), uintptr(p.in.Arg), 0, 0)
	case msgJobContinue:
		if p.in.Arg == 1 && !p.holdsTerminal() {
			p.status = p.pid
			rawCall(unix.SYS_IOCTL, 0, unix.TIOCSPGRP, uintptr(unsafe.Pointer(&p.status)), 0)
		}
		p.reported = false
		rawCall(unix.SYS_KILL, uintptr(-p.pid), uintptr(unix.SIGCONT), 0, 0)
	}
}

// holdsTerminal reports whether a process group of the sandbox is the
// terminal's foreground. In a pid namespace any group pid 1 can name is
// the sandbox's; without one, the command's group and those its
// descendants lead.
//
//go:nosplit
//go:norace
func (p *pid1Prog) holdsTerminal() bool {
	if _, errno := rawCall(unix.SYS_IOCTL, 0, unix.TIOCGPGRP, uintptr(unsafe.Pointer(&p.status)), 0); errno != 0 || p.status <= 0 {
		return false
	}
	fg := p.status
	if p.namespaces || fg == p.pid {
		return true
	}
	for hops := 0; fg > 1 && hops < 64; hops++ {
		ppid := p.parentOf(fg)
		if ppid <= 0 {
			return false
		}
		if ppid == p.self {
			return true
		}
		fg = ppid
	}
	return false
}

// parentOf reads pid's parent from /proc/PID/stat, whose second field
// (the command name, in parentheses) may hold spaces and parentheses; 0
// when it cannot. (Indices are masked to the buffers' sizes: a bounds
// check's panic path would not fit the stack.)
//
//go:nosplit
//go:norace
func (p *pid1Prog) parentOf(pid int32) int32 {
	n := p.procPath(pid)
	p.path[n&31] = 0
	fd, errno := rawCall6(unix.SYS_OPENAT, atFDCWD, uintptr(unsafe.Pointer(&p.path)), unix.O_RDONLY|unix.O_CLOEXEC, 0, 0, 0)
	if errno != 0 {
		return 0
	}
	got, errno := rawCall(unix.SYS_READ, fd, uintptr(unsafe.Pointer(&p.buf)), unsafe.Sizeof(p.buf), 0)
	rawCall(unix.SYS_CLOSE, fd, 0, 0, 0)
	if errno != 0 {
		return 0
	}
	end := int(got)
	i := end - 1
	for i >= 0 && p.buf[i&511] != ')' {
		i--
	}
	if i < 0 {
		return 0
	}
	// ") S PPID ...": skip the state, read the number.
	for i += 3; i < end && p.buf[i&511] != ' '; i++ {
	}
	ppid := int32(0)
	for i++; i < end && p.buf[i&511] >= '0' && p.buf[i&511] <= '9'; i++ {
		ppid = ppid*10 + int32(p.buf[i&511]-'0')
	}
	return ppid
}

// procPath writes /proc/PID/stat into path and returns its length.
//
//go:nosplit
//go:norace
func (p *pid1Prog) procPath(pid int32) int {
	n := 0
	for _, c := range [6]byte{'/', 'p', 'r', 'o', 'c', '/'} {
		p.path[n&31] = c
		n++
	}
	digits := 1
	for v := pid; v >= 10; v /= 10 {
		digits++
	}
	for i, v := digits-1, pid; i >= 0; i, v = i-1, v/10 {
		p.path[(n+i)&31] = byte('0' + v%10)
	}
	n += digits
	for _, c := range [5]byte{'/', 's', 't', 'a', 't'} {
		p.path[n&31] = c
		n++
	}
	return n
}

// dialRequest reads a dial request and starts connecting to its port on
// the sandbox's loopback; a port that is not forwarded is refused.
//
//go:nosplit
//go:norace
func (p *pid1Prog) dialRequest() {
	n, errno := rawCall6(unix.SYS_RECVFROM, uintptr(p.sync), uintptr(unsafe.Pointer(&p.in)), unsafe.Sizeof(p.in), unix.MSG_DONTWAIT, 0, 0)
	if errno == unix.EAGAIN || errno == unix.EINTR {
		return
	}
	if errno != 0 || n == 0 {
		p.dialsOff = true // the supervisor is gone: no more requests
		return
	}
	if n != unsafe.Sizeof(p.in) || p.in.Kind != msgDial {
		return
	}
	p.dialOK = -1
	forwarded := false
	for i := range p.ports {
		forwarded = forwarded || uint32(p.ports[i]) == p.in.Arg
	}
	if !forwarded {
		return
	}
	fd, errno := rawCall(unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0, 0)
	if errno != 0 {
		return
	}
	port := uint16(p.in.Arg)
	p.addr = unix.RawSockaddrInet4{Family: unix.AF_INET, Port: port<<8 | port>>8, Addr: [4]byte{127, 0, 0, 1}}
	_, errno = rawCall(unix.SYS_CONNECT, fd, uintptr(unsafe.Pointer(&p.addr)), unsafe.Sizeof(p.addr), 0)
	p.dialFD = int32(fd)
	switch errno {
	case 0:
		p.dialOK = 1
	case unix.EINPROGRESS:
		p.dialOK = 0
		p.deadline = p.now() + dialTimeout
	}
}

// connected notes how the connect in progress ended.
//
//go:nosplit
//go:norace
func (p *pid1Prog) connected() {
	p.soErrLen = 4
	_, errno := rawCall6(unix.SYS_GETSOCKOPT, uintptr(p.dialFD), unix.SOL_SOCKET, unix.SO_ERROR, uintptr(unsafe.Pointer(&p.soErr)), uintptr(unsafe.Pointer(&p.soErrLen)), 0)
	p.dialOK = -1
	if errno == 0 && p.soErr == 0 {
		p.dialOK = 1
	}
}

// dialed answers the dial request whose connect ended: msgDialed, with
// the connected socket attached when it connected. pid 1 keeps no copy.
//
//go:nosplit
//go:norace
func (p *pid1Prog) dialed() {
	p.out = syncMsg{Kind: msgDialed}
	if p.dialOK > 0 {
		p.out.Arg = 1
		p.rights.fd = p.dialFD
		rawCall(unix.SYS_SENDMSG, uintptr(p.sync), uintptr(unsafe.Pointer(&p.msgRights)), unix.MSG_NOSIGNAL, 0)
	} else {
		rawCall(unix.SYS_SENDMSG, uintptr(p.sync), uintptr(unsafe.Pointer(&p.msg)), unix.MSG_NOSIGNAL, 0)
	}
	if p.dialFD >= 0 {
		rawCall(unix.SYS_CLOSE, uintptr(p.dialFD), 0, 0, 0)
	}
	p.dialFD, p.dialOK = -1, 0
}

// rawCall is a raw system call with up to four arguments.
//
//go:nosplit
//go:norace
func rawCall(trap, a1, a2, a3, a4 uintptr) (uintptr, syscall.Errno) {
	r, _, errno := syscall.RawSyscall6(trap, a1, a2, a3, a4, 0, 0)
	return r, errno
}

// rawCall6 is a raw system call with six arguments.
//
//go:nosplit
//go:norace
func rawCall6(trap, a1, a2, a3, a4, a5, a6 uintptr) (uintptr, syscall.Errno) {
	r, _, errno := syscall.RawSyscall6(trap, a1, a2, a3, a4, a5, a6)
	return r, errno
}

// exitGroup ends the process with code.
//
//go:nosplit
//go:norace
func exitGroup(code int) {
	for {
		syscall.RawSyscall6(unix.SYS_EXIT_GROUP, uintptr(code), 0, 0, 0, 0, 0)
	}
}
