package linux

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"

	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/sandbox"
)

// In the Landlock-only engine the command shares the host's network and
// file system with no namespace or mount between them, and Landlock
// (before ABI 9) judges TCP by port alone and pathname unix sockets not
// at all. So the seccomp notification filter also hands every connect()
// to the supervisor, which decides on the address and makes the
// connection itself:
//
//  1. it reads the address from the process's memory into its own copy,
//     duplicates the process's socket (pidfd_getfd) and checks that the
//     notification is still pending, so that both belong to the caller;
//  2. it judges its copy: inet only to 127.0.0.1 and ::1 on the ports of
//     the proxies and allowLocalOutboundPorts (a filtered network); a
//     unix path is opened O_PATH (and connected to through /proc/self/fd,
//     so that no link or rename can redirect it), and refused if it is a
//     socket the host had bound at start that the policy does not list;
//  3. it connects the duplicate, which shares the file description (and
//     so O_NONBLOCK: EINPROGRESS passes through), and returns the
//     result as the call's. A unix socket the policy does not list must
//     be one a process of the sandbox listens on (SO_PEERCRED names the
//     listener): otherwise fence shuts the connection down at once and
//     refuses it, which covers the host's sockets bound since the start.
//
// The call never continues in the kernel after a check, so another
// thread rewriting the address meanwhile changes nothing. The connect
// is made on a thread of the supervisor's that has dropped every
// capability and entered the sandbox's own Landlock rules (the TCP
// ports among them), so that it can do no more than the command could.
// An abstract address is connected to from an unconfined thread, since
// the connecting thread's own Landlock domain would scope out the
// sandbox's sockets too; it must then be one a process of the sandbox
// listens on, as Landlock's scope would have it.

// connectJudge answers the sandbox's connect() notifications.
type connectJudge struct {
	rules    connectRules
	landlock sandbox.Landlock
	stderr   io.Writer
	recorder *sandbox.Recorder

	rulesetOnce sync.Once
	ruleset     int // for the connecting threads; -1 for none
	flags       uint32
	rulesetErr  error

	work chan func(error)
	idle chan struct{} // a token per worker thread that may still start
	mu   sync.Mutex
	told map[string]bool
	// listening are the unix sockets fence put to listen for the
	// sandbox, by listenKey or abstract name.
	listening map[string]bool
}

// sizeofSockaddrStorage is the longest address connect() takes.
const sizeofSockaddrStorage = 128

// maxConnectThreads bounds the supervisor's threads that connect for
// the sandbox; a blocking connect holds one until it completes.
const maxConnectThreads = 32

func newConnectJudge(rules connectRules, plan *sandbox.Plan, rec *sandbox.Recorder, stderr io.Writer) *connectJudge {
	j := &connectJudge{rules: rules, landlock: plan.Landlock, stderr: stderr, recorder: rec,
		ruleset: -1, work: make(chan func(error)), idle: make(chan struct{}, maxConnectThreads), told: map[string]bool{}, listening: map[string]bool{}}
	for range maxConnectThreads {
		j.idle <- struct{}{}
	}
	return j
}

// handle answers one connect notification; it runs on a goroutine of
// its own, since a connect can block.
func (j *connectJudge) handle(fd uintptr, n *seccompNotif) {
	resp := seccompNotifResp{ID: n.ID}
	errno, val, ok := j.connect(fd, n)
	if !ok {
		return // the caller is gone
	}
	resp.Val, resp.Error = val, -int32(errno)
	unix.Syscall(unix.SYS_IOCTL, fd, unix.SECCOMP_IOCTL_NOTIF_SEND, uintptr(unsafe.Pointer(&resp)))
}

// call is a notified connect, as fence holds it: the caller's socket
// duplicated, its working directory (for a relative unix path, else -1),
// the file a unix path through /proc/self names (else -1), and fence's
// own copy of the address, raw and parsed.
type call struct {
	sock, cwd, target int
	raw               []byte
	dest              dest
}

func (c *call) close() {
	for _, fd := range []int{c.sock, c.cwd, c.target} {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
}

// openSelf opens, for thread tid, a unix path through /proc/self or
// /proc/thread-self, which mean the caller and not fence: fence opens it
// through /proc/TID, from this unconfined thread (a confined one could
// not look into the sandbox's processes). It returns -1 for any other
// path.
func openSelf(tid int, p string) (int, error) {
	for _, self := range []string{"/proc/self/", "/proc/thread-self/"} {
		if rest, ok := strings.CutPrefix(p, self); ok {
			return unix.Open("/proc/"+strconv.Itoa(tid)+"/"+rest, unix.O_PATH|unix.O_CLOEXEC, 0)
		}
	}
	return -1, nil
}

// take reads the notified call into fence's hands: c is nil when the
// call is to fail with errno at once, and ok false when the notification
// is no longer valid (then nothing is to be answered).
func (j *connectJudge) take(fd uintptr, n *seccompNotif) (c *call, errno unix.Errno, ok bool) {
	addrlen := int32(n.Data.Args[2])
	if addrlen < 0 || addrlen > sizeofSockaddrStorage {
		return nil, unix.EINVAL, notifValid(fd, n.ID)
	}
	raw := make([]byte, addrlen)
	if err := readMemory(int(n.Pid), n.Data.Args[1], raw); err != nil {
		if !notifValid(fd, n.ID) {
			return nil, 0, false
		}
		if errors.Is(err, unix.EFAULT) {
			return nil, unix.EFAULT, true
		}
		j.refuse("an address fence could not read", verdict{unix.EACCES, "network", err.Error()})
		return nil, unix.EACCES, true
	}
	d, err := parseSockaddr(raw)
	if err != nil {
		return nil, errnoOf(err), notifValid(fd, n.ID)
	}
	sock, err := pidGetFD(int(n.Pid), int(int32(n.Data.Args[0])))
	if err != nil {
		return nil, errnoOf(err), notifValid(fd, n.ID)
	}
	c = &call{sock: sock, cwd: -1, target: -1, raw: raw, dest: d}
	if d.Family == unix.AF_UNIX && !d.Abstract && !strings.HasPrefix(d.Path, "/") {
		if c.cwd, err = unix.Open(fmt.Sprintf("/proc/%d/cwd", n.Pid), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err != nil {
			c.close()
			return nil, unix.EACCES, notifValid(fd, n.ID)
		}
	}
	if d.Family == unix.AF_UNIX && !d.Abstract {
		if c.target, err = openSelf(int(n.Pid), d.Path); err != nil {
			c.target = -1
			c.close()
			return nil, errnoOf(err), notifValid(fd, n.ID)
		}
	}
	// The address and the socket are the caller's only if it still waits.
	if !notifValid(fd, n.ID) {
		c.close()
		return nil, 0, false
	}
	return c, 0, true
}

// connect performs the notified connect for the caller; ok is false
// when the notification is no longer valid.
func (j *connectJudge) connect(fd uintptr, n *seccompNotif) (errno unix.Errno, val int64, ok bool) {
	c, errno, ok := j.take(fd, n)
	if c == nil {
		return errno, -1, ok
	}
	defer c.close()
	d := c.dest
	if v := j.rules.judge(d); v.Errno != 0 {
		j.refuse(d.String(), v)
		return v.Errno, -1, true
	}
	if d.Abstract {
		if v := j.unlisted(listener{d.String(), d.String()}); v.Errno != 0 {
			j.refuse(d.String(), v)
			return v.Errno, -1, true
		}
		_, _, errno = unix.Syscall(unix.SYS_CONNECT, uintptr(c.sock), uintptr(unsafe.Pointer(&c.raw[0])), uintptr(len(c.raw)))
	} else {
		errno = j.dialConfined(c)
	}
	if errno != 0 {
		return errno, -1, true
	}
	return 0, 0, true
}

// dialConfined runs dial on a confined thread and returns its result.
func (j *connectJudge) dialConfined(c *call) unix.Errno {
	done := make(chan unix.Errno, 1)
	j.run(func(confined error) {
		if confined != nil {
			j.refuse(c.dest.String(), verdict{unix.EACCES, "network", confined.Error()})
			done <- unix.EACCES
			return
		}
		done <- j.dial(c)
	})
	return <-done
}

// listener is a unix socket connected to that the policy does not list:
// its name (a canonical path, or "@" and an abstract name) and its
// identity (listenKey).
type listener struct{ name, key string }

// listenKey identifies a socket's file, or names an abstract one.
func listenKey(k fileKey) string { return fmt.Sprintf("%d:%d", k.Dev, k.Ino) }

// unlisted judges a connection to the unix socket l, which the policy
// does not list: it stands only if fence put the socket to listen for
// the sandbox (handleListen), and is refused before any connection is
// made otherwise. Every listen() of the sandbox goes through fence, so
// what fence did not record is not the sandbox's: the host's sockets,
// those bound since the start among them, are never connected to at
// all (no byte reaches them, none comes back, and no pid that a
// process could take over stands for the sandbox).
func (j *connectJudge) unlisted(l listener) verdict {
	if j.listenedFor(l.key) {
		return verdict{}
	}
	if strings.HasPrefix(l.name, "@") {
		return verdict{unix.EACCES, "network", "the abstract unix socket, which no process of the sandbox listens on"}
	}
	return verdict{unix.EACCES, "network.allowUnixSockets", fmt.Sprintf("the unix socket %q, which no process of the sandbox listens on and network.allowUnixSockets does not list", l.name)}
}

// dial makes c's connection, on a confined thread. A unix path is
// opened first (relative to the caller's working directory, unless
// openSelf has) and judged by the file it is, before any connection.
func (j *connectJudge) dial(c *call) unix.Errno {
	d, raw := c.dest, c.raw
	if d.Family == unix.AF_UNIX && !d.Abstract {
		f := c.target
		if f < 0 {
			dir := unix.AT_FDCWD
			if c.cwd >= 0 {
				dir = c.cwd
			}
			var err error
			if f, err = unix.Openat(dir, d.Path, unix.O_PATH|unix.O_CLOEXEC, 0); err != nil {
				return errnoOf(err)
			}
			defer unix.Close(f)
		}
		var st unix.Stat_t
		if err := unix.Fstat(f, &st); err != nil {
			return errnoOf(err)
		}
		if st.Mode&unix.S_IFMT != unix.S_IFSOCK {
			return unix.ECONNREFUSED // as connect() says of a file that is not a socket
		}
		if v := j.rules.judgeSocket(keyOf(&st)); v.Errno != 0 {
			j.refuse(d.String(), v)
			return v.Errno
		}
		fdPath := "/proc/self/fd/" + strconv.Itoa(f)
		if real, err := os.Readlink(fdPath); err != nil || !j.rules.listed(real) {
			if v := j.unlisted(listener{cmp.Or(real, d.Path), listenKey(keyOf(&st))}); v.Errno != 0 {
				j.refuse(d.String(), v)
				return v.Errno
			}
		}
		raw = make([]byte, 2, unix.SizeofSockaddrUnix)
		binary.NativeEndian.PutUint16(raw, unix.AF_UNIX)
		raw = append(raw, fdPath+"\x00"...)
	}
	_, _, e := unix.Syscall(unix.SYS_CONNECT, uintptr(c.sock), uintptr(unsafe.Pointer(&raw[0])), uintptr(len(raw)))
	runtime.KeepAlive(raw)
	return e
}

// run runs job on a confined thread: an idle one, or a new one while
// fewer than maxConnectThreads exist; otherwise it waits for one.
func (j *connectJudge) run(job func(confined error)) {
	select {
	case j.work <- job:
		return
	case <-j.idle:
		go j.worker()
	}
	j.work <- job
}

// worker is a thread that connects for the sandbox: it drops every
// capability and enters the sandbox's Landlock rules, and so is never
// given back to the Go runtime (the thread ends with the goroutine).
func (j *connectJudge) worker() {
	runtime.LockOSThread()
	err := j.confineThread()
	for job := range j.work {
		job(err)
	}
}

func (j *connectJudge) confineThread() error {
	j.rulesetOnce.Do(func() { j.ruleset, j.flags, j.rulesetErr = landlockRulesetFD(j.landlock) })
	if j.rulesetErr != nil {
		return j.rulesetErr
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	if j.ruleset >= 0 {
		if err := ll.LandlockRestrictSelf(j.ruleset, j.flags); err != nil {
			return fmt.Errorf("landlock_restrict_self: %w", err)
		}
	}
	return nil
}

// stop ends the worker threads.
func (j *connectJudge) stop() {
	close(j.work)
	if j.ruleset >= 0 {
		unix.Close(j.ruleset)
	}
}

// refuse says once per destination why fence refused a connect to it:
// the program sees only EACCES.
func (j *connectJudge) refuse(target string, v verdict) {
	j.refuseCall("connect", target, "connect to "+target, v)
}

// refuseCall records a refused call (proto) of target and says once
// per what why fence refused it.
// Every refusal is recorded; the line on stderr comes once per what, for
// the first maxTold of them (a port scan would fill the map otherwise).
func (j *connectJudge) refuseCall(proto, target, what string, v verdict) {
	j.recorder.Network(proto, target, policy.NetDecision{Host: target, Rule: v.Rule, Reason: v.Why})
	j.mu.Lock()
	first := !j.told[what] && len(j.told) < maxTold
	if first {
		j.told[what] = true
	}
	j.mu.Unlock()
	if first {
		fmt.Fprintf(j.stderr, "fence: refused %s: %s\n", what, v.Why)
	}
}

// maxTold bounds the refusals fence names on stderr.
const maxTold = 256

// readMemory reads len(buf) bytes at addr of process pid.
func readMemory(pid int, addr uint64, buf []byte) error {
	if len(buf) == 0 {
		return nil
	}
	local := []unix.Iovec{{Base: &buf[0], Len: uint64(len(buf))}}
	remote := []unix.RemoteIovec{{Base: uintptr(addr), Len: len(buf)}}
	n, err := unix.ProcessVMReadv(pid, local, remote, 0)
	if errors.Is(err, unix.EPERM) && readProcMem(pid, addr, buf) == nil {
		// Refused by the filter of a fence sandbox this one runs in
		// (see nested_linux.go): /proc/PID/mem takes the same ptrace
		// access check, which a non-dumpable caller fails as well.
		return nil
	}
	if err != nil {
		return fmt.Errorf("process_vm_readv: %w", err)
	}
	if n != len(buf) {
		return fmt.Errorf("process_vm_readv: %w", unix.EFAULT)
	}
	return nil
}

// noThreadPidfd is set once pidfd_open has refused PIDFD_THREAD (before
// Linux 6.9), so that later calls do not try it again.
var noThreadPidfd atomic.Bool

// pidGetFD duplicates descriptor fd of thread tid into this process.
func pidGetFD(tid, fd int) (int, error) {
	pidfd, err := -1, error(unix.EINVAL)
	if !noThreadPidfd.Load() {
		if pidfd, err = unix.PidfdOpen(tid, unix.PIDFD_THREAD); errors.Is(err, unix.EINVAL) {
			noThreadPidfd.Store(true)
		}
	}
	if errors.Is(err, unix.EINVAL) { // the thread group's leader, or its leader's
		if pidfd, err = unix.PidfdOpen(tid, 0); errors.Is(err, unix.EINVAL) {
			var tgid int
			if tgid, err = threadGroup(tid); err == nil {
				pidfd, err = unix.PidfdOpen(tgid, 0)
			}
		}
	}
	if err != nil {
		return -1, err
	}
	defer unix.Close(pidfd)
	return unix.PidfdGetfd(pidfd, fd, 0)
}

// threadGroup reads the process id of thread tid.
func threadGroup(tid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", tid))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "Tgid:"); ok {
			return strconv.Atoi(strings.TrimSpace(v))
		}
	}
	return 0, unix.ESRCH
}

func errnoOf(err error) unix.Errno {
	var e unix.Errno
	if errors.As(err, &e) {
		return e
	}
	return unix.EACCES
}

// notified says which calls the filter hands to the supervisor: execve
// and execveat, connect, listen and bind (listen brings bind, for the
// message a refused TCP bind gets).
type notified struct{ exec, connect, listen bool }

// notifyProgram is the filter that hands the calls of c to the
// supervisor, and refuses the sandbox a listener of its own (see
// listenerRefusal).
func notifyProgram(c notified) ([]bpf.RawInstruction, error) {
	var nrs []uint32
	if c.exec {
		nrs = append(nrs, unix.SYS_EXECVE, unix.SYS_EXECVEAT)
	}
	if c.connect {
		nrs = append(nrs, unix.SYS_CONNECT)
	}
	if c.listen {
		nrs = append(nrs, unix.SYS_LISTEN, unix.SYS_BIND)
	}
	prog := []bpf.Instruction{
		bpf.LoadAbsolute{Off: offArch, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: auditArch, SkipTrue: 1},
		bpf.RetConstant{Val: retKill},
		bpf.LoadAbsolute{Off: offNr, Size: 4},
	}
	prog = append(prog, listenerRefusal()...)
	for i, nr := range nrs {
		prog = append(prog, bpf.JumpIf{Cond: bpf.JumpEqual, Val: nr, SkipTrue: uint8(len(nrs) - i)})
	}
	prog = append(prog, bpf.RetConstant{Val: retAllow}, bpf.RetConstant{Val: unix.SECCOMP_RET_USER_NOTIF})
	return bpf.Assemble(prog)
}

// serveNotify answers the sandbox's notifications until the sandbox is
// gone: execs are judged in turn, connects each on a goroutine of its
// own (conn is nil when fence does not judge them). The plan's exec rules
// are compiled once, here; rec hears about refusals.
func serveNotify(notify *os.File, plan *sandbox.Plan, rec *sandbox.Recorder, conn *connectJudge, stderr io.Writer) {
	defer notify.Close()
	var rules *policy.Policy
	if plan.ExecRules != nil {
		rules = plan.ExecRules.Compile()
	}
	if conn != nil {
		defer conn.stop()
	}
	fd := notify.Fd()
	told := execReports{}
	var pending sync.WaitGroup
	defer pending.Wait()
	for {
		n := new(seccompNotif)
		if _, _, e := unix.Syscall(unix.SYS_IOCTL, fd, unix.SECCOMP_IOCTL_NOTIF_RECV, uintptr(unsafe.Pointer(n))); e != 0 {
			if e == unix.EINTR || e == unix.ENOENT {
				continue // interrupted, or the caller died before fence took it
			}
			return // the sandbox is gone
		}
		switch {
		case n.Data.Nr == unix.SYS_CONNECT && conn != nil:
			pending.Go(func() { conn.handle(fd, n) })
			continue
		case n.Data.Nr == unix.SYS_LISTEN && conn != nil:
			pending.Go(func() { conn.handleListen(fd, n) })
			continue
		case n.Data.Nr == unix.SYS_BIND && conn != nil:
			conn.handleBind(fd, n) // bind does not block
			continue
		}
		judgeExec(fd, n, rules, rec, told, stderr)
	}
}
