package linux

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"

	"github.com/fence-sandbox/fence/sandbox"
)

// A fence run inside a fence sandbox (an agent under fence whose
// commands are wrapped again) cannot make namespaces: the outer seccomp
// filter refuses clone with namespace flags. It runs the Landlock-only
// engine instead, whose Landlock domain and seccomp filter stack on the
// outer ones: the outer sandbox's namespaces, Landlock domain and filter
// stay in force for the inner command, and the inner ones narrow them.
//
// The outer namespaces already give what the Landlock-only engine lacks
// against the host (a read-only host, masks, a private /tmp, pid, ipc and
// network namespaces), so a nested run needs no --degraded=warn: what is
// weaker is only how far the inner policy narrows the outer one, and that
// is named in a line or two. Nesting is known from facts no environment
// variable, file or configuration can produce:
//
//   - FENCE_SANDBOX=1 (the outer fence sets it) and clone with
//     CLONE_NEWUSER refused;
//   - no_new_privs set and a seccomp filter in force (/proc/self/status);
//   - for a sandbox of the namespace engine, pid 1 of this pid namespace
//     is a fence init (/proc/1/cmdline): a process that cannot make
//     namespaces cannot choose the first process of its pid namespace;
//   - the beacon: fence's own filter answers prctl(beaconOption) with an
//     errno that says which engine made it, where the kernel answers
//     EINVAL. Only a seccomp filter gives that answer, and whoever can
//     install one before fence starts could as well pass --degraded=warn.
//
// Outside a fence sandbox (FENCE_SANDBOX=1 set by hand, a container's
// filter) the beacon is missing and the --degraded policy applies as it
// would without the variable.

// beaconOption is a prctl option the kernel does not have ("fnce").
const beaconOption = 0x666e6365

// The beacon's answers: the errno of prctl(beaconOption) under a filter
// of the namespace engine, and of the Landlock-only engine.
const (
	beaconNamespaces   = unix.ENOANO
	beaconLandlockOnly = unix.EBADRQC
)

// beaconRules answer prctl(beaconOption) for the engine the filter is
// made for. The accumulator holds the syscall number on entry and on
// every way through.
func beaconRules(landlockOnly bool) []bpf.Instruction {
	errno := beaconNamespaces
	if landlockOnly {
		errno = beaconLandlockOnly
	}
	return syscallBlock(unix.SYS_PRCTL, []bpf.Instruction{
		bpf.LoadAbsolute{Off: offArg0, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: beaconOption, SkipFalse: 1},
		bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(errno)},
		bpf.LoadAbsolute{Off: offNr, Size: 4},
	})
}

// listenerRefusal refuses a new seccomp filter with a listener of its
// own, in a sandbox whose supervisor judges calls through the listener
// it holds. For filters that notify on the same call the newest decides
// alone, so the command's own listener could let through every exec and
// connect() fence's would refuse. The kernel refuses a second listener
// while fence's is open (EBUSY); the filter refuses it after that too, so
// that a process left behind by a supervisor killed with SIGKILL, whose
// notified calls then fail, cannot answer them itself. A filter without
// a listener can only refuse more.
func listenerRefusal() []bpf.Instruction {
	return syscallBlock(unix.SYS_SECCOMP, []bpf.Instruction{
		bpf.LoadAbsolute{Off: offArg1, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: unix.SECCOMP_FILTER_FLAG_NEW_LISTENER, SkipFalse: 1},
		bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(unix.EBUSY)},
		bpf.LoadAbsolute{Off: offNr, Size: 4},
	})
}

// nesting is what a run learns of the fence sandbox around it.
type nesting struct {
	// landlockOnly is an outer sandbox of the Landlock-only engine,
	// which has no namespaces either: then the --degraded policy applies.
	landlockOnly bool
	// listener is false when this run cannot have a seccomp listener:
	// the outer sandbox's supervisor holds one (it judges execs, listen()
	// on the host's network, or connect() in the Landlock-only engine).
	listener bool
	// httpPort and socksPort are the outer sandbox's proxies, from the
	// environment it gave its command (0 when it has none).
	httpPort, socksPort int
}

// detectNesting reports the fence sandbox this process runs in, or nil
// when the facts above do not all hold.
func detectNesting() *nesting {
	if os.Getenv("FENCE_SANDBOX") != "1" || !filteredNoNewPrivs() {
		return nil
	}
	_, _, e := unix.Syscall6(unix.SYS_PRCTL, beaconOption, 0, 0, 0, 0, 0)
	if e != beaconNamespaces && e != beaconLandlockOnly {
		return nil
	}
	if e == beaconNamespaces && !initIsFence() {
		return nil
	}
	n := &nesting{landlockOnly: e == beaconLandlockOnly, listener: listenerAllowed()}
	n.httpPort = proxyPort(os.Getenv("HTTP_PROXY"), "http")
	n.socksPort = proxyPort(os.Getenv("ALL_PROXY"), "socks5h")
	return n
}

// InFenceSandbox reports whether this process runs in a fence sandbox,
// by the facts detectNesting holds to.
func InFenceSandbox() bool { return detectNesting() != nil }

// initIsFence reports whether pid 1 of this process's pid namespace is
// a fence sandbox's init, as it is in the namespace engine: a process
// outside one that cannot make namespaces (the case a nested run is
// told from) cannot put itself in a pid namespace whose first process
// it chose.
func initIsFence() bool {
	b, err := os.ReadFile("/proc/1/cmdline")
	return err == nil && string(b) == initArg0+"\x00"
}

// filteredNoNewPrivs reports whether /proc/self/status says
// no_new_privs is set and a seccomp filter is in force.
func filteredNoNewPrivs() bool {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return false
	}
	s := string(b)
	return strings.Contains(s, "\nNoNewPrivs:\t1\n") && strings.Contains(s, "\nSeccomp:\t2\n")
}

// listenerAllowed asks whether a filter with a listener may be
// installed, without installing one: the kernel fails the call with
// EFAULT on the missing program, after the outer filter has had its say.
func listenerAllowed() bool {
	_, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER, uintptr(unsafe.Pointer(nil)))
	return e != unix.EBUSY
}

// proxyPort is the port of a proxy URL of scheme on 127.0.0.1, as the
// outer fence sets them, or 0.
func proxyPort(v, scheme string) int {
	u, err := url.Parse(v)
	if err != nil || u.Scheme != scheme || u.Hostname() != "127.0.0.1" {
		return 0
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil || port < 1 || port > 65535 {
		return 0
	}
	return port
}

// refusal is why the nested run cannot go on, or nil. Without a
// listener of its own (the outer supervisor holds the one a process may
// have) this run cannot judge execs, nor connect(): on the host's
// network Landlock's port rules would then admit any address.
func (n *nesting) refusal(plan *sandbox.Plan) error {
	if n.listener {
		return nil
	}
	const why = "this run is inside a fence sandbox whose supervisor judges calls through a seccomp listener (execs with runtimeExecPolicy \"argv\", listen() on the host's network, connect() in the Landlock-only engine), and a process may have only one"
	switch {
	case n.landlockOnly:
		return fmt.Errorf("%s, and the outer sandbox has no namespaces either (the Landlock-only engine): run the command without the inner fence, under the outer sandbox's policy", why)
	case plan.ExecArgv:
		return fmt.Errorf("%s, which this run would need to judge execs (runtimeExecPolicy \"argv\"): run it with runtimeExecPolicy \"path\", or the command without the inner fence", why)
	case plan.Network == "none" && !n.landlockOnly && hostNetwork():
		return fmt.Errorf("%s, which this run would need to judge connect() on the host's network the outer sandbox shares: run the command without the inner fence, under the outer sandbox's policy", why)
	}
	return nil
}

// unjudged is what a nested run without a listener could not narrow.
const unjudged = "unix sockets: the outer sandbox's supervisor holds the only seccomp listener, so this run judges no connect() or listen(), and every unix socket the outer sandbox leaves reachable is (network.allowUnixSockets does not narrow it)"

// joinNotNarrowed joins what a nested run could not narrow.
func joinNotNarrowed(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// hostNetwork reports whether this process sees a network interface
// other than loopback that is up: the host's network, shared by the
// outer sandbox, rather than a network namespace of its own.
func hostNetwork() bool {
	ifaces, err := net.Interfaces()
	if err != nil {
		return true
	}
	for _, i := range ifaces {
		if i.Flags&net.FlagUp != 0 && i.Flags&net.FlagLoopback == 0 {
			return true
		}
	}
	return false
}

// nestedProxies prepares the proxies of ll, the Landlock-only plan of a
// nested run, and says what of the network it could not narrow ("" for
// nothing). When this sandbox may listen, fence's own proxies listen and
// reach out through the outer sandbox's HTTP proxy, so that both rule
// sets apply; when it may not, the command uses the outer proxies
// directly and only the outer rules apply.
func nestedProxies(ll *sandbox.Plan, n *nesting, rt *sandbox.Runtime) (string, error) {
	if !n.listener && ll.Landlock.TCP.RefusesListen() {
		return unboundListen, nil
	}
	if ll.Proxy == nil {
		return "", nil
	}
	for _, port := range ll.Proxy.LocalPorts {
		if port != 0 && (port == n.httpPort || port == n.socksPort) {
			return "", fmt.Errorf("network.allowLocalOutboundPorts holds %d, the port of the outer fence sandbox's proxy: the command would reach out through it past this run's domain rules; leave the port out (the command reaches the network through this run's proxies)", port)
		}
	}
	if canListen() {
		if n.httpPort != 0 {
			rt.Outer = &sandbox.OuterProxy{HTTPPort: n.httpPort, SOCKSPort: n.socksPort}
			return outerResolves, nil
		}
		return "", nil
	}
	if n.httpPort == 0 || n.socksPort == 0 {
		rt.Outer = &sandbox.OuterProxy{Reuse: true}
		return "the network: the outer sandbox refuses to listen and offers no proxies, so the command has none (only the allowLocalOutboundPorts it relays)", nil
	}
	rt.Outer = &sandbox.OuterProxy{HTTPPort: n.httpPort, SOCKSPort: n.socksPort, Reuse: true}
	return "the network's domains: the outer sandbox refuses to listen (network.allowLocalBinding), so the command uses the outer sandbox's proxies, and the outer policy's domain rules apply, not this one's network.allowedDomains and deniedDomains", nil
}

// unboundListen is what a nested run without a listener on the host's
// network cannot narrow of network.allowLocalBinding: Landlock refuses
// bind(), but listen() on a socket never bound takes a port of the
// kernel's choosing without a bind Landlock sees.
const unboundListen = "TCP servers: Landlock refuses bind(), but without a seccomp listener of its own this run cannot refuse listen() on a socket never bound, which listens on the host's addresses at a port of the kernel's choosing (network.allowLocalBinding is narrowed for bind() only)"

// outerResolves is what a nested run whose proxies reach out through the
// outer one cannot narrow: it has no resolver of its own, so the outer
// proxy resolves the names both allow and judges their addresses alone.
const outerResolves = "the addresses allowed names resolve to: the outer sandbox's proxy resolves them, so its rules on loopback, private, link-local and metadata addresses and on the addresses in deniedDomains apply to names, not this run's (an address written as the host is judged by both)"

// canListen reports whether this process may listen on TCP on
// 127.0.0.1 (the outer sandbox's Landlock may refuse bind).
func canListen() bool {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return !errors.Is(err, unix.EACCES) && !errors.Is(err, unix.EPERM)
	}
	l.Close()
	return true
}

// useOuterProxies points w, a nested run's Landlock-only sandbox that may
// not listen, at the outer sandbox's proxies (or at none): its
// environment, the ports the supervisor lets it connect to, and
// Landlock's TCP rules (see sandbox.Runtime.Plan).
func useOuterProxies(w *wire, o *sandbox.OuterProxy) {
	w.Runtime.Proxies = &sandbox.HostProxies{HTTPPort: o.HTTPPort, SOCKSPort: o.SOCKSPort}
	w.Plan = w.Runtime.Plan(w.Source)
	w.Env = w.Plan.Env
}

// readProcMem reads len(buf) bytes at addr of process pid through
// /proc/PID/mem, for a supervisor whose process_vm_readv an outer
// sandbox's filter refuses.
func readProcMem(pid int, addr uint64, buf []byte) error {
	f, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
	if err != nil {
		return fmt.Errorf("read the caller's memory: %w", err)
	}
	defer f.Close()
	n, err := f.ReadAt(buf, int64(addr))
	if n != len(buf) {
		return fmt.Errorf("read the caller's memory at %#x: %w", addr, cmp.Or(err, error(unix.EFAULT)))
	}
	return nil
}
