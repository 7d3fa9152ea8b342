package linux

import (
	"fmt"
	"net/netip"
	"slices"
	"unsafe"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"

	"github.com/fence-sandbox/fence/sandbox"
)

// lowerPlan lowers the run w describes into the sandbox program, for a
// child that inherits fds (and keeps only those, the standard streams,
// the --keep-fd descriptors and the Landlock ruleset's). The ruleset is
// made here (see lowerLandlock); the caller closes it after the clone
// (ruleset, -1 for none).
func lowerPlan(w *wire, fds childFDs) (p *program, ruleset int, err error) {
	p = &program{}
	ll, err := newLandlockLowering(w.Plan.Landlock)
	if err != nil {
		return nil, -1, err
	}
	p.mark("descriptors")
	p.closeOthers(append([]int{int(fds.sync), int(fds.jobs), ll.ruleset}, w.Plan.KeepFDs...), w.Plan.KeepFDs)
	plan := w.Plan
	if w.Namespaces {
		p.mark("mounts")
		p.lowerRoot(plan)
		p.mark("loopback, listeners, hostname")
		if plan.Network == "none" {
			p.loopbackUp()
			p.proxyListeners(plan.Proxy)
		}
		p.sys(errorf("sethostname: %w"), unix.SYS_SETHOSTNAME, p.cstr("fence"), 5)
	}
	p.restrict(w, ll)
	p.mark("limits, ready")
	p.limits(plan)
	p.add(step{op: opSendReady, a: [6]uintptr{uintptr(fds.sync)}}, errorf("report to supervisor: %w"))
	if p.err != nil {
		unixClose(ll.ruleset)
		return nil, -1, p.err
	}
	return p, ll.ruleset, nil
}

func unixClose(fd int) {
	if fd >= 0 {
		unix.Close(fd)
	}
}

// closeOthers closes every descriptor the child inherited but the
// standard streams and keep, and clears close-on-exec on the --keep-fd
// descriptors: the command gets them at their own numbers.
func (p *program) closeOthers(keep, kept []int) {
	keep = append([]int{0, 1, 2}, keep...)
	slices.Sort(keep)
	keep = slices.Compact(keep)
	from := 0
	for _, fd := range keep {
		if fd < 0 {
			continue
		}
		if fd > from {
			p.sys(errorf("close_range: %w"), unix.SYS_CLOSE_RANGE, uintptr(from), uintptr(fd-1), 0)
		}
		from = fd + 1
	}
	p.sys(errorf("close_range: %w"), unix.SYS_CLOSE_RANGE, uintptr(from), ^uintptr(0)>>32, 0)
	for _, fd := range kept {
		p.sys(errorf("keep fd %d: fcntl: %w", fd), unix.SYS_FCNTL, uintptr(fd), unix.F_SETFD, 0)
	}
}

// loopbackUp brings up lo in the sandbox's new network namespace, where
// it starts down.
func (p *program) loopbackUp() {
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		p.fail(err)
		return
	}
	ifr.SetUint16(unix.IFF_UP | unix.IFF_RUNNING)
	fd := p.slot()
	i := p.sys(errorf("socket for loopback: %w"), unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	p.steps[i].out = fd
	i = p.sys(errorf("ioctl(SIOCSIFFLAGS, lo): %w"), unix.SYS_IOCTL, 0, unix.SIOCSIFFLAGS, p.mem(ifr, unsafe.Pointer(ifr)))
	p.steps[i].in[0] = fd
	p.closeSlot(fd)
}

// proxyListeners opens listenAddrs in the sandbox's network namespace,
// for the supervisor to serve: they go with the ready message.
func (p *program) proxyListeners(px *sandbox.Proxy) {
	if px == nil {
		return
	}
	for _, addr := range listenAddrs(px) {
		p.sendSlots = append(p.sendSlots, p.listen(addr))
		p.listeners++
	}
}

// listen appends the steps that open a listening TCP socket on addr, and
// returns its slot.
func (p *program) listen(addr string) int16 {
	fd := p.slot()
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		p.fail(err)
		return fd
	}
	one := new(int32)
	*one = 1
	domain, sa, salen := sockaddrOf(p, ap)
	why := func(what string) func(unix.Errno) error {
		return errorf("listen on %s in the sandbox: %s: %w", addr, what)
	}
	i := p.sys(why("socket"), unix.SYS_SOCKET, domain, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	p.steps[i].out = fd
	i = p.sys(why("setsockopt(SO_REUSEADDR)"), unix.SYS_SETSOCKOPT, 0, unix.SOL_SOCKET, unix.SO_REUSEADDR, p.mem(one, unsafe.Pointer(one)), 4)
	p.steps[i].in[0] = fd
	i = p.sys(why("bind"), unix.SYS_BIND, 0, sa, salen)
	p.steps[i].in[0] = fd
	i = p.sys(why("listen"), unix.SYS_LISTEN, 0, unix.SOMAXCONN)
	p.steps[i].in[0] = fd
	return fd
}

// sockaddrOf is ap as a raw socket address in memory p keeps.
func sockaddrOf(p *program, ap netip.AddrPort) (domain, sa, salen uintptr) {
	port := ap.Port()
	be := [2]byte{byte(port >> 8), byte(port)}
	if ap.Addr().Is4() {
		raw := &unix.RawSockaddrInet4{Family: unix.AF_INET, Addr: ap.Addr().As4()}
		raw.Port = *(*uint16)(unsafe.Pointer(&be[0]))
		return unix.AF_INET, p.mem(raw, unsafe.Pointer(raw)), unsafe.Sizeof(*raw)
	}
	raw := &unix.RawSockaddrInet6{Family: unix.AF_INET6, Addr: ap.Addr().As16()}
	raw.Port = *(*uint16)(unsafe.Pointer(&be[0]))
	return unix.AF_INET6, p.mem(raw, unsafe.Pointer(raw)), unsafe.Sizeof(*raw)
}

// restrict appends the process restrictions, in the order the kernel
// requires: the working directory, no core dumps or ptrace of the child,
// Landlock (after no_new_privs), capabilities, and seccomp last.
func (p *program) restrict(w *wire, l *landlockLowering) {
	plan := w.Plan
	p.mark("chdir, dumpable, Landlock")
	p.sys(errorf("enter working directory: chdir %s: %w", plan.Dir), unix.SYS_CHDIR, p.cstr(plan.Dir))
	p.sys(errorf("prctl(PR_SET_DUMPABLE): %w"), unix.SYS_PRCTL, unix.PR_SET_DUMPABLE, 0)
	l.lower(p, plan.Landlock)
	p.mark("capabilities")
	p.dropCapabilities(w.Namespaces || hasCapabilities())
	p.mark("seccomp")
	raw, err := seccompProgram(seccompOptions{
		denySockets: plan.Network == "none" && !w.Namespaces && plan.Landlock.TCP == nil,
		denyMPTCP:   plan.Landlock.TCP != nil,
		netGuard:    !w.Namespaces,
		filtered:    plan.Network == "none",
		guardModes:  !w.Namespaces,
		root:        unix.Geteuid() == 0,
		// Without a pid namespace the supervisor is in sight.
		guardProcesses: !w.Namespaces,
	})
	if err != nil {
		p.fail(fmt.Errorf("assemble seccomp filter: %w", err))
		return
	}
	p.sys(errorf("seccomp(SECCOMP_SET_MODE_FILTER): %w"), unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, p.fprog(raw))
	if listen := !w.Namespaces || plan.Landlock.TCP.RefusesListen(); (plan.ExecArgv || listen) && !w.NoListener {
		// Without namespaces the supervisor judges connect() too, and
		// on the host's network listen().
		p.notify(notified{exec: plan.ExecArgv, connect: !w.Namespaces, listen: listen})
	}
}

// fprog is raw as a struct sock_fprog in memory p keeps.
func (p *program) fprog(raw []bpf.RawInstruction) uintptr {
	filter := make([]unix.SockFilter, len(raw))
	for i, ins := range raw {
		filter[i] = unix.SockFilter{Code: ins.Op, Jt: ins.Jt, Jf: ins.Jf, K: ins.K}
	}
	prog := &unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	p.keep = append(p.keep, filter)
	return p.mem(prog, unsafe.Pointer(prog))
}

// notify appends the notification filter, whose listener goes to the
// supervisor with the ready message.
func (p *program) notify(c notified) {
	raw, err := notifyProgram(c)
	if err != nil {
		p.fail(err)
		return
	}
	what := "runtimeExecPolicy \"argv\""
	if c.connect {
		what = "the Landlock-only engine, which judges connect(),"
	}
	why := errorf("%s needs seccomp user notification (Linux 5.9 or later): seccomp: %w", what)
	prog := p.fprog(raw)
	flags := uintptr(unix.SECCOMP_FILTER_FLAG_NEW_LISTENER | unix.SECCOMP_FILTER_FLAG_TSYNC | unix.SECCOMP_FILTER_FLAG_TSYNC_ESRCH)
	fd := p.slot()
	killable := p.sys(why, unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags|unix.SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, prog)
	p.steps[killable].out, p.steps[killable].skipOK = fd, 1
	p.steps[killable].tolerate = uintptr(unix.EINVAL) // before Linux 5.19: without it
	i := p.sys(why, unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, prog)
	p.steps[i].out = fd
	p.sendSlots = append(p.sendSlots, fd)
}

// dropCapabilities appends the steps that empty the bounding set, the
// ambient set, then (capset) the inheritable, permitted and effective
// sets, and lock the securebits so that executing a program as uid 0
// grants nothing back. Unless must (a caller without capabilities, in
// the Landlock-only engine, has none to drop), failures are tolerated.
func (p *program) dropCapabilities(must bool) {
	last, err := lastCap()
	if err != nil {
		p.fail(err)
		return
	}
	tolerate := func(i int) {
		if !must {
			p.steps[i].tolerate = errAny
		}
	}
	for c := 0; c <= last; c++ {
		tolerate(p.sys(errorf("prctl(PR_CAPBSET_DROP, %d): %w", c), unix.SYS_PRCTL, unix.PR_CAPBSET_DROP, uintptr(c)))
	}
	tolerate(p.sys(errorf("prctl(PR_CAP_AMBIENT_CLEAR_ALL): %w"), unix.SYS_PRCTL, unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL))
	tolerate(p.sys(errorf("prctl(PR_SET_SECUREBITS): %w"), unix.SYS_PRCTL, unix.PR_SET_SECUREBITS, secureBits))
	hdr := &unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	data := new([2]unix.CapUserData)
	tolerate(p.sys(errorf("capset: %w"), unix.SYS_CAPSET, p.mem(hdr, unsafe.Pointer(hdr)), p.mem(data, unsafe.Pointer(&data[0]))))
}

// limits appends the resource limits the command inherits from its first
// instruction (the address space's is pid 1's: see pid1_linux.go).
func (p *program) limits(plan *sandbox.Plan) {
	l := plan.Limits
	for _, r := range []struct {
		resource int
		value    uint64
		name     string
	}{
		{unix.RLIMIT_CPU, l.CPUSeconds, "cpu"},
		{unix.RLIMIT_FSIZE, l.FileSizeMB << 20, "file size"},
		{unix.RLIMIT_NOFILE, l.OpenFiles, "open files"},
		{unix.RLIMIT_NPROC, l.Processes, "processes"},
	} {
		if r.value == 0 {
			continue
		}
		lim := &unix.Rlimit{Cur: r.value, Max: r.value}
		if r.resource == unix.RLIMIT_CPU {
			lim.Max++ // SIGXCPU at the limit, which a program may catch to clean up; SIGKILL a second later
		}
		p.sys(errorf("set the %s limit: %w", r.name), unix.SYS_PRLIMIT64, 0, uintptr(r.resource), p.mem(lim, unsafe.Pointer(lim)), 0)
	}
}

// landlockLowering is the Landlock part of a program: the ruleset, which
// the supervisor makes (with the handled access rights downgraded to
// what the kernel has, and the TCP rules), and the path rules, which the
// child adds from inside the new root, where it opens their paths.
type landlockLowering struct {
	ruleset int
	flags   uint32
	handled landlock.AccessFSSet
}

func newLandlockLowering(plan sandbox.Landlock) (*landlockLowering, error) {
	cfg, rules, err := landlockNetConfig(plan)
	if err != nil {
		return nil, err
	}
	for _, r := range plan.Rules {
		if _, err := accessOf(r.Access); err != nil {
			return nil, err
		}
	}
	l := &landlockLowering{ruleset: -1, handled: landlock.V9.HandledAccessFS & kernelHandledFS()}
	if l.handled&landlock.AccessFSSet(ll.AccessFSRefer) == 0 {
		// Before ABI 2 a rule with the refer right cannot be had:
		// go-landlock's best effort then enforces nothing.
		return l, nil
	}
	fd, flags, err := cfg.BestEffort().NewRulesetFD(rules...)
	if err != nil {
		return nil, fmt.Errorf("landlock: %w", err)
	}
	l.ruleset, l.flags = fd, flags
	return l, nil
}

// kernelHandledFS are the filesystem rights the kernel's Landlock
// handles.
func kernelHandledFS() landlock.AccessFSSet {
	abis := []landlock.Config{{}, landlock.V1, landlock.V2, landlock.V3, landlock.V4, landlock.V5, landlock.V6, landlock.V7, landlock.V8, landlock.V9}
	abi := min(KernelLandlockABI(), len(abis)-1)
	return abis[max(abi, 0)].HandledAccessFS
}

// lower appends no_new_privs and, when there is a ruleset, its path
// rules (a missing path is left out) and its enforcement.
func (l *landlockLowering) lower(p *program, plan sandbox.Landlock) {
	p.sys(errorf("prctl(PR_SET_NO_NEW_PRIVS): %w"), unix.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1)
	if l.ruleset < 0 {
		return
	}
	for _, r := range plan.Rules {
		access, _ := accessOf(r.Access)
		access &= l.handled
		if access == 0 {
			continue // none of its rights is the kernel's: best effort leaves it out
		}
		i := p.add(step{op: opLandlockPath, a: [6]uintptr{p.cstr(r.Path), uintptr(access), uintptr(accessFile), uintptr(l.ruleset)}},
			errorf("landlock: the rule for %q (%s): %w", r.Path, r.Access))
		p.steps[i].tolerate = uintptr(unix.ENOENT)
	}
	p.sys(errorf("landlock: landlock_restrict_self: %w"), unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(l.ruleset), uintptr(l.flags))
	p.sys(errorf("landlock: close the ruleset: %w"), unix.SYS_CLOSE, uintptr(l.ruleset))
}
