package linux

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
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

// connectRules is what the supervisor lets the sandbox connect to.
type connectRules struct {
	// Filtered is a network of proxies: inet only to ProxyPorts on
	// 127.0.0.1 and LocalPorts on 127.0.0.1 and ::1.
	Filtered               bool
	ProxyPorts, LocalPorts []int
	// HostSockets are the host's sockets bound at start that the policy
	// does not list, by file identity.
	HostSockets map[fileKey]string
	// Listed are the paths below which the policy lets the command
	// connect to any unix socket (its "unix" Landlock rules).
	Listed []string
	// Init is the sandbox's init, whose descendants are the sandbox's
	// processes; Supervisor is fence's own process.
	Init, Supervisor int
}

// unixRules are the paths of plan's "unix" Landlock rules, each also by
// its canonical path.
func unixRules(plan *sandbox.Plan) []string {
	var out []string
	for _, r := range plan.Landlock.Rules {
		if r.Access == "unix" {
			out = append(out, r.Path)
			if real, err := filepath.EvalSymlinks(r.Path); err == nil && real != r.Path {
				out = append(out, real)
			}
		}
	}
	return out
}

// listed reports whether the policy lets the command connect to the
// socket at p, a canonical path.
func (r *connectRules) listed(p string) bool {
	return slices.ContainsFunc(r.Listed, func(l string) bool {
		return p == l || l == "/" || strings.HasPrefix(p, l+"/")
	})
}

// inSandbox reports whether process pid descends from the sandbox's
// init. A process of another pid namespace is pid 0 here.
func (r *connectRules) inSandbox(pid int) bool {
	for range 128 {
		switch {
		case pid == r.Init:
			return true
		case pid <= 1 || pid == r.Supervisor:
			return false
		}
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		i := bytes.LastIndexByte(b, ')')
		if err != nil || i < 0 {
			return false
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 2 {
			return false
		}
		if pid, err = strconv.Atoi(f[1]); err != nil {
			return false
		}
	}
	return false
}

// fileKey identifies a file whatever the path to it.
type fileKey struct{ Dev, Ino uint64 }

func keyOf(st *unix.Stat_t) fileKey { return fileKey{uint64(st.Dev), st.Ino} }

// hostSocketKeys stats the sockets among paths (the plan's masks).
func hostSocketKeys(paths []string) map[fileKey]string {
	keys := map[fileKey]string{}
	for _, p := range paths {
		var st unix.Stat_t
		if unix.Stat(p, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFSOCK {
			keys[keyOf(&st)] = p
		}
	}
	return keys
}

// dest is a connect() address as the kernel will read it.
type dest struct {
	Family uint16
	Addr   netip.AddrPort // AF_INET, AF_INET6
	Path   string         // AF_UNIX pathname
	// Abstract is an AF_UNIX name in the abstract namespace.
	Abstract bool
}

func (d dest) String() string {
	switch {
	case d.Family == unix.AF_INET || d.Family == unix.AF_INET6:
		return d.Addr.String()
	case d.Abstract:
		return "@" + d.Path
	case d.Family == unix.AF_UNIX:
		return strconv.Quote(d.Path)
	}
	return fmt.Sprintf("address family %d", d.Family)
}

// parseSockaddr reads a struct sockaddr of len(b) bytes the way the
// kernel does. An address too short for its family is an error (the
// kernel's EINVAL).
func parseSockaddr(b []byte) (dest, error) {
	if len(b) < 2 {
		return dest{}, unix.EINVAL
	}
	d := dest{Family: binary.NativeEndian.Uint16(b)}
	switch d.Family {
	case unix.AF_INET:
		if len(b) < unix.SizeofSockaddrInet4 {
			return d, unix.EINVAL
		}
		d.Addr = netip.AddrPortFrom(netip.AddrFrom4([4]byte(b[4:8])), binary.BigEndian.Uint16(b[2:]))
	case unix.AF_INET6:
		if len(b) < 24 { // SIN6_LEN_RFC2133: no scope id
			return d, unix.EINVAL
		}
		d.Addr = netip.AddrPortFrom(netip.AddrFrom16([16]byte(b[8:24])), binary.BigEndian.Uint16(b[2:]))
	case unix.AF_UNIX:
		p := b[2:]
		if len(p) == 0 {
			return d, unix.EINVAL // unnamed: nothing to connect to
		}
		if p[0] == 0 {
			d.Abstract, p = true, p[1:]
		} else if i := slices.Index(p, 0); i >= 0 {
			p = p[:i]
		}
		d.Path = string(p)
	}
	return d, nil
}

// verdict is a judgement: Errno 0 lets the connection be made.
type verdict struct {
	Errno unix.Errno
	Rule  string // the key of the policy that decides
	Why   string
}

// judge decides d by address; a unix pathname is judged again by the
// file it names (judgeSocket).
func (r *connectRules) judge(d dest) verdict {
	switch d.Family {
	case unix.AF_UNSPEC, unix.AF_NETLINK:
		return verdict{} // a disconnect; the kernel's own sockets
	case unix.AF_INET, unix.AF_INET6:
		if !r.Filtered {
			return verdict{}
		}
		a, port := d.Addr.Addr().Unmap(), int(d.Addr.Port())
		v4 := a == netip.AddrFrom4([4]byte{127, 0, 0, 1})
		if v4 && slices.Contains(r.ProxyPorts, port) || (v4 || a == netip.IPv6Loopback()) && slices.Contains(r.LocalPorts, port) {
			return verdict{}
		}
		return verdict{unix.EACCES, "network.allowedDomains", "only fence's proxies on 127.0.0.1, and the ports of network.allowLocalOutboundPorts on 127.0.0.1 and ::1, are reachable (network.allowedDomains decides names)"}
	case unix.AF_UNIX:
		return verdict{} // judged by the socket (judgeSocket, checkPeer)
	}
	return verdict{unix.EACCES, "network", "the sandbox may connect only to inet and unix addresses"}
}

// judgeSocket decides a unix path by the file it opened.
func (r *connectRules) judgeSocket(k fileKey) verdict {
	if p, ok := r.HostSockets[k]; ok {
		return verdict{unix.EACCES, "network.allowUnixSockets", fmt.Sprintf("the host's unix socket %q, which network.allowUnixSockets does not list", p)}
	}
	return verdict{}
}

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
}

// sizeofSockaddrStorage is the longest address connect() takes.
const sizeofSockaddrStorage = 128

// maxConnectThreads bounds the supervisor's threads that connect for
// the sandbox; a blocking connect holds one until it completes.
const maxConnectThreads = 32

func newConnectJudge(rules connectRules, plan *sandbox.Plan, stderr io.Writer) *connectJudge {
	j := &connectJudge{rules: rules, landlock: plan.Landlock, stderr: stderr, recorder: plan.Recorder,
		ruleset: -1, work: make(chan func(error)), idle: make(chan struct{}, maxConnectThreads), told: map[string]bool{}}
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

// connect performs the notified connect for the caller; ok is false
// when the notification is no longer valid.
func (j *connectJudge) connect(fd uintptr, n *seccompNotif) (errno unix.Errno, val int64, ok bool) {
	addrlen := int32(n.Data.Args[2])
	if addrlen < 0 || addrlen > sizeofSockaddrStorage {
		return unix.EINVAL, -1, notifValid(fd, n.ID)
	}
	buf := make([]byte, addrlen)
	if err := readMemory(int(n.Pid), n.Data.Args[1], buf); err != nil {
		if !notifValid(fd, n.ID) {
			return 0, 0, false
		}
		if errors.Is(err, unix.EFAULT) {
			return unix.EFAULT, -1, true
		}
		j.refuse("an address fence could not read", verdict{unix.EACCES, "network", err.Error()})
		return unix.EACCES, -1, true
	}
	sock, err := pidGetFD(int(n.Pid), int(int32(n.Data.Args[0])))
	if err != nil {
		return errnoOf(err), -1, notifValid(fd, n.ID)
	}
	defer unix.Close(sock)
	d, err := parseSockaddr(buf)
	if err != nil {
		return errnoOf(err), -1, notifValid(fd, n.ID)
	}
	cwd := -1
	if d.Family == unix.AF_UNIX && !d.Abstract && !strings.HasPrefix(d.Path, "/") {
		if cwd, err = unix.Open(fmt.Sprintf("/proc/%d/cwd", n.Pid), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err != nil {
			return unix.EACCES, -1, notifValid(fd, n.ID)
		}
		defer unix.Close(cwd)
	}
	// The address and the socket are the caller's only if it still waits.
	if !notifValid(fd, n.ID) {
		return 0, 0, false
	}
	if v := j.rules.judge(d); v.Errno != 0 {
		j.refuse(d.String(), v)
		return v.Errno, -1, true
	}
	if d.Abstract {
		_, _, e := unix.Syscall(unix.SYS_CONNECT, uintptr(sock), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
		if e == 0 {
			if v := j.checkPeer(sock, d.String()); v.Errno != 0 {
				j.refuse(d.String(), v)
				return v.Errno, -1, true
			}
		}
		if e != 0 {
			return e, -1, true
		}
		return 0, 0, true
	}
	type dialed struct {
		errno unix.Errno
		peer  string // a unix socket whose listener must be the sandbox's
	}
	done := make(chan dialed, 1)
	j.run(func(confined error) {
		if confined != nil {
			j.refuse(d.String(), verdict{unix.EACCES, "network", confined.Error()})
			done <- dialed{errno: unix.EACCES}
			return
		}
		e, peer := j.dial(sock, cwd, d, buf)
		done <- dialed{e, peer}
	})
	r := <-done
	if r.errno == 0 && r.peer != "" {
		if v := j.checkPeer(sock, r.peer); v.Errno != 0 {
			j.refuse(d.String(), v)
			return v.Errno, -1, true
		}
	}
	if r.errno != 0 {
		return r.errno, -1, true
	}
	return 0, 0, true
}

// checkPeer lets a connection to the unix socket at p (a canonical path
// the policy does not list, or "@" and an abstract name) stand only if a
// process of the sandbox listens on it; otherwise it shuts the
// connection down, before the command can send anything on it.
func (j *connectJudge) checkPeer(sock int, p string) verdict {
	cred, err := unix.GetsockoptUcred(sock, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err == nil && j.rules.inSandbox(int(cred.Pid)) {
		return verdict{}
	}
	unix.Shutdown(sock, unix.SHUT_RDWR)
	who := "a process outside the sandbox"
	if err == nil && cred.Pid > 0 {
		who += fmt.Sprintf(" (pid %d)", cred.Pid)
	}
	if strings.HasPrefix(p, "@") {
		return verdict{unix.EACCES, "network", fmt.Sprintf("the abstract unix socket, which %s listens on", who)}
	}
	return verdict{unix.EACCES, "network.allowUnixSockets", fmt.Sprintf("the unix socket %q, which %s listens on and network.allowUnixSockets does not list", p, who)}
}

// dial connects sock to d (whose raw form is raw), on a confined
// thread. A unix path is opened first, relative to the caller's
// working directory cwd, and judged by the file it is; peer is its
// canonical path when the policy does not list it, for checkPeer.
func (j *connectJudge) dial(sock, cwd int, d dest, raw []byte) (errno unix.Errno, peer string) {
	if d.Family == unix.AF_UNIX && !d.Abstract {
		dir := unix.AT_FDCWD
		if cwd >= 0 {
			dir = cwd
		}
		f, err := unix.Openat(dir, d.Path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return errnoOf(err), ""
		}
		defer unix.Close(f)
		var st unix.Stat_t
		if err := unix.Fstat(f, &st); err != nil {
			return errnoOf(err), ""
		}
		if st.Mode&unix.S_IFMT != unix.S_IFSOCK {
			return unix.ECONNREFUSED, "" // as connect() says of a file that is not a socket
		}
		if v := j.rules.judgeSocket(keyOf(&st)); v.Errno != 0 {
			j.refuse(d.String(), v)
			return v.Errno, ""
		}
		fdPath := "/proc/self/fd/" + strconv.Itoa(f)
		if real, err := os.Readlink(fdPath); err != nil || !j.rules.listed(real) {
			peer = cmp.Or(real, d.Path)
		}
		raw = make([]byte, 2, unix.SizeofSockaddrUnix)
		binary.NativeEndian.PutUint16(raw, unix.AF_UNIX)
		raw = append(raw, fdPath+"\x00"...)
	}
	_, _, e := unix.Syscall(unix.SYS_CONNECT, uintptr(sock), uintptr(unsafe.Pointer(&raw[0])), uintptr(len(raw)))
	runtime.KeepAlive(raw)
	return e, peer
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

// refuse says once per destination why fence refused it: the program
// sees only EACCES.
func (j *connectJudge) refuse(target string, v verdict) {
	j.mu.Lock()
	first := !j.told[target]
	j.told[target] = true
	j.mu.Unlock()
	if first {
		j.recorder.Network("connect", target, policy.NetDecision{Host: target, Rule: v.Rule, Reason: v.Why})
		fmt.Fprintf(j.stderr, "fence: refused connect to %s: %s\n", target, v.Why)
	}
}

// readMemory reads len(buf) bytes at addr of process pid.
func readMemory(pid int, addr uint64, buf []byte) error {
	if len(buf) == 0 {
		return nil
	}
	local := []unix.Iovec{{Base: &buf[0], Len: uint64(len(buf))}}
	remote := []unix.RemoteIovec{{Base: uintptr(addr), Len: len(buf)}}
	n, err := unix.ProcessVMReadv(pid, local, remote, 0)
	if err != nil {
		return fmt.Errorf("process_vm_readv: %w", err)
	}
	if n != len(buf) {
		return fmt.Errorf("process_vm_readv: %w", unix.EFAULT)
	}
	return nil
}

// pidGetFD duplicates descriptor fd of thread tid into this process.
func pidGetFD(tid, fd int) (int, error) {
	pidfd, err := unix.PidfdOpen(tid, unix.PIDFD_THREAD)
	if errors.Is(err, unix.EINVAL) { // before Linux 6.9: the thread group's leader
		var tgid int
		if tgid, err = threadGroup(tid); err == nil {
			pidfd, err = unix.PidfdOpen(tgid, 0)
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

// notifyProgram is the filter that hands calls to the supervisor:
// execve and execveat when exec is set, connect when connect is.
func notifyProgram(exec, connect bool) ([]bpf.RawInstruction, error) {
	var nrs []uint32
	if exec {
		nrs = append(nrs, unix.SYS_EXECVE, unix.SYS_EXECVEAT)
	}
	if connect {
		nrs = append(nrs, unix.SYS_CONNECT)
	}
	prog := []bpf.Instruction{
		bpf.LoadAbsolute{Off: offArch, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: auditArch, SkipTrue: 1},
		bpf.RetConstant{Val: retKill},
		bpf.LoadAbsolute{Off: offNr, Size: 4},
	}
	for i, nr := range nrs {
		prog = append(prog, bpf.JumpIf{Cond: bpf.JumpEqual, Val: nr, SkipTrue: uint8(len(nrs) - i)})
	}
	prog = append(prog, bpf.RetConstant{Val: retAllow}, bpf.RetConstant{Val: unix.SECCOMP_RET_USER_NOTIF})
	return bpf.Assemble(prog)
}

// installNotify installs the notification filter and returns its
// listener. A task has one listener at most, so exec judging and
// connect judging share it. A signal still interrupts a call fence is
// answering (no SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV), so that Ctrl-C
// ends a blocking connect as it would without fence; a restarted
// connect finds the socket connecting or connected, as after an
// interrupted connect of its own.
func installNotify(exec, connect bool) (*os.File, error) {
	raw, err := notifyProgram(exec, connect)
	if err != nil {
		return nil, err
	}
	filter := make([]unix.SockFilter, len(raw))
	for i, ins := range raw {
		filter[i] = unix.SockFilter{Code: ins.Op, Jt: ins.Jt, Jf: ins.Jf, K: ins.K}
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	flags := uintptr(unix.SECCOMP_FILTER_FLAG_NEW_LISTENER | unix.SECCOMP_FILTER_FLAG_TSYNC | unix.SECCOMP_FILTER_FLAG_TSYNC_ESRCH)
	fd, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&prog)))
	if e != 0 {
		what := "runtimeExecPolicy \"argv\""
		if connect {
			what = "the Landlock-only engine, which judges connect(),"
		}
		return nil, fmt.Errorf("%s needs seccomp user notification (Linux 5.9 or later): seccomp: %w", what, e)
	}
	unix.CloseOnExec(int(fd))
	return os.NewFile(fd, "seccomp-notify"), nil
}

// serveNotify answers the sandbox's notifications until the sandbox is
// gone: execs are judged in turn, connects each on a goroutine of its
// own (conn is nil when fence does not judge them).
func serveNotify(notify *os.File, plan *sandbox.Plan, conn *connectJudge, stderr io.Writer) {
	defer notify.Close()
	if conn != nil {
		defer conn.stop()
	}
	fd := notify.Fd()
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
		if n.Data.Nr == unix.SYS_CONNECT && conn != nil {
			pending.Go(func() { conn.handle(fd, n) })
			continue
		}
		judgeExec(fd, n, plan, stderr)
	}
}
