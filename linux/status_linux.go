package linux

import (
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fence-sandbox/fence/sandbox"
	"github.com/fence-sandbox/fence/sandbox/proxy"
)

// The status channel is a socket pair: the init sends one status byte,
// with the proxies' listening sockets attached when it made them.

func statusPair() (supervisor, init *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("socketpair: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "status"), os.NewFile(uintptr(fds[1]), "status"), nil
}

// sendStatus tells the supervisor, over the status socket fd, how
// setting up went, handing over files. Unless keep, it closes fd.
func sendStatus(fd int, status byte, files []*os.File, keep bool) error {
	var rights []byte
	if len(files) > 0 {
		fds := make([]int, len(files))
		for i, f := range files {
			fds[i] = int(f.Fd())
		}
		rights = unix.UnixRights(fds...)
	}
	err := unix.Sendmsg(fd, []byte{status}, rights, nil, 0)
	for _, f := range files {
		f.Close()
	}
	if !keep {
		unix.Close(fd)
	}
	if err != nil {
		return fmt.Errorf("report to supervisor: %w", err)
	}
	return nil
}

// readStatus waits for the init's status byte (0 when the init died
// first) and the descriptors sent with it.
func readStatus(f *os.File) (byte, []*os.File) {
	return readStatusFD(int(f.Fd()))
}

func readStatusFD(fd int) (byte, []*os.File) {
	buf := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(4*(maxListeners+2))) // and the job and notify sockets
	n, oobn, _, _, err := unix.Recvmsg(fd, buf, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil || n == 0 {
		return 0, nil
	}
	var files []*os.File
	msgs, _ := unix.ParseSocketControlMessage(oob[:oobn])
	for _, m := range msgs {
		fds, _ := unix.ParseUnixRights(&m)
		for _, fd := range fds {
			files = append(files, os.NewFile(uintptr(fd), "listener"))
		}
	}
	return buf[0], files
}

// maxListeners bounds the descriptors one status message can carry: the
// two proxies and two per local port.
const maxListeners = 2 + 2*64

// listenAddrs are the addresses the init listens on inside the sandbox,
// in the order the supervisor expects them: HTTP proxy, SOCKS5 proxy,
// then each local port on 127.0.0.1 and on ::1.
func listenAddrs(p *sandbox.Proxy) []string {
	addrs := []string{net.JoinHostPort("127.0.0.1", strconv.Itoa(p.HTTPPort)), net.JoinHostPort("127.0.0.1", strconv.Itoa(p.SOCKSPort))}
	for _, port := range p.LocalPorts {
		addrs = append(addrs, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), net.JoinHostPort("::1", strconv.Itoa(port)))
	}
	return addrs
}

// proxyListeners opens listenAddrs in the sandbox's network namespace.
func proxyListeners(p *sandbox.Proxy) ([]*os.File, error) {
	if p == nil {
		return nil, nil
	}
	var files []*os.File
	for _, addr := range listenAddrs(p) {
		f, err := listenFile(addr)
		if err != nil {
			for _, f := range files {
				f.Close()
			}
			return nil, fmt.Errorf("listen on %s in the sandbox: %w", addr, err)
		}
		files = append(files, f)
	}
	return files, nil
}

// listenFile opens a listening TCP socket on addr for the supervisor to
// serve. The init never accepts on it, so it stays out of Go's poller.
func listenFile(addr string) (*os.File, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return nil, err
	}
	var sa unix.Sockaddr = &unix.SockaddrInet6{Port: int(ap.Port()), Addr: ap.Addr().As16()}
	domain := unix.AF_INET6
	if ap.Addr().Is4() {
		sa, domain = &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}, unix.AF_INET
	}
	fd, err := unix.Socket(domain, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("socket: %w", err)
	}
	f := os.NewFile(uintptr(fd), addr)
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err != nil {
		f.Close()
		return nil, fmt.Errorf("setsockopt(SO_REUSEADDR): %w", err)
	}
	if err := unix.Bind(fd, sa); err != nil {
		f.Close()
		return nil, fmt.Errorf("bind: %w", err)
	}
	if err := unix.Listen(fd, unix.SOMAXCONN); err != nil {
		f.Close()
		return nil, fmt.Errorf("listen: %w", err)
	}
	return f, nil
}

// serveProxies serves the proxies (and local port relays) on the
// listeners, with the plan's domain rules, until the returned stop is
// called.
func serveProxies(plan *sandbox.Plan, rec *sandbox.Recorder, listeners []net.Listener, stderr io.Writer) (stop func()) {
	if len(listeners) < 2 {
		closeListeners(listeners)
		return func() {}
	}
	srv := &proxy.Server{Policy: plan.ProxyPolicy()}
	if o := plan.Proxy.Outer; o != nil && !o.Reuse {
		srv.Upstream = proxy.ConnectVia(net.JoinHostPort("127.0.0.1", strconv.Itoa(o.HTTPPort)))
	}
	var blocked atomic.Int64
	var refused sandbox.Refusals
	srv.Log = func(e proxy.Event) {
		blocked.Add(1)
		rec.Network(e.Proto, e.Target, e.Decision)
		refused.Add(srv.Policy.NetworkDecision(e.Proto, e.Target, e.Target, e.Decision))
		if plan.Monitor {
			fmt.Fprintf(stderr, "fence: %s\n", e)
		}
	}
	go srv.ServeHTTP(listeners[0])
	go srv.ServeSOCKS(listeners[1])
	// The local ports are relayed only from the sandbox's own network
	// namespace; on the host's loopback there are just the two proxies.
	for i, addr := range listenAddrs(plan.Proxy)[2:] {
		if 2+i >= len(listeners) {
			break
		}
		go proxy.Relay(listeners[2+i], func() (net.Conn, error) { return net.Dial("tcp", addr) }, nil)
	}
	return func() {
		closeListeners(listeners)
		switch {
		case plan.Monitor:
			fmt.Fprintf(stderr, "fence: monitor: %d connections blocked\n", blocked.Load())
		case plan.Proxy.RefusalSummary:
			if line := refused.Summary(); line != "" {
				fmt.Fprintf(stderr, "fence: %s\n", line)
			}
		}
	}
}

// fileListeners turns the descriptors the init sent into listeners; it
// returns none unless they are all there.
func fileListeners(p *sandbox.Proxy, files []*os.File) []net.Listener {
	if p == nil {
		for _, f := range files {
			f.Close()
		}
		return nil
	}
	var listeners []net.Listener
	for _, f := range files {
		if l, err := net.FileListener(f); err == nil {
			listeners = append(listeners, l)
		}
		f.Close()
	}
	if len(listeners) != len(listenAddrs(p)) {
		closeListeners(listeners)
		return nil
	}
	return listeners
}

// hostProxyListeners listens for the proxies on the host's loopback, for
// a sandbox that shares the host's network, and points w's environment
// at them (or at the outer sandbox's, in a nested run that may not
// listen). Without namespaces (the Landlock-only fallback), Landlock's
// TCP rules then limit connections to those ports and the local ports
// the policy allows.
func hostProxyListeners(w *wire) ([]net.Listener, error) {
	if o := w.Plan.Proxy.Outer; o != nil && o.Reuse {
		useOuterProxies(w, o)
		return nil, nil
	}
	var listeners []net.Listener
	for range 2 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			closeListeners(listeners)
			return nil, fmt.Errorf("listen for the proxies: %w", err)
		}
		listeners = append(listeners, l)
	}
	// The run's plan with the proxies where they listen: the command's
	// environment, and without namespaces the ports the supervisor
	// judges and Landlock's TCP rules (see sandbox.Runtime.Plan).
	w.Runtime.Proxies = &sandbox.HostProxies{HTTPPort: listeners[0].Addr().(*net.TCPAddr).Port, SOCKSPort: listeners[1].Addr().(*net.TCPAddr).Port}
	w.Plan = w.Runtime.Plan(w.Source)
	w.Env = w.Plan.Env
	return listeners, nil
}

// landlockOnlyRules are what the supervisor lets the Landlock-only
// sandbox of plan connect to: the proxies hostProxyListeners opened, the
// local ports, and no host socket of the plan's masks.
func landlockOnlyRules(plan *sandbox.Plan) connectRules {
	r := connectRules{Filtered: plan.Network == "none"}
	if p := plan.Proxy; p != nil {
		r.ProxyPorts = []int{p.HTTPPort, p.SOCKSPort}
		r.LocalPorts = p.LocalPorts
	}
	var socks []string
	for _, m := range plan.Mounts.Masks {
		socks = append(socks, m.Path)
	}
	r.HostSockets = hostSocketKeys(socks)
	return r
}

// The status socket then carries -p connections: the supervisor sends a
// port (two bytes), the init dials it on the sandbox's loopback and sends
// back one byte (1 for success) with the connected socket.

// answering is held while the init answers a dial request: the init must
// not exit between connecting to a server that has already answered and
// exited, and handing the connection over, or the answer is lost.
var answering sync.Mutex

// serveDials answers dial requests on fd for the ports of forwards, until
// the supervisor goes away.
func serveDials(fd int, forwards []sandbox.Forward) {
	buf := make([]byte, 2)
	for {
		n, _, _, _, err := unix.Recvmsg(fd, buf, nil, 0)
		if err != nil || n != 2 {
			return
		}
		answering.Lock()
		answerDial(fd, int(buf[0])<<8|int(buf[1]), forwards)
		answering.Unlock()
	}
}

// answerDial connects to port on the sandbox's loopback and sends the
// socket back, or a 0 when the port is not forwarded or nothing listens.
func answerDial(fd, port int, forwards []sandbox.Forward) {
	if !slices.ContainsFunc(forwards, func(f sandbox.Forward) bool { return f.Port == port }) {
		unix.Sendmsg(fd, []byte{0}, nil, nil, 0)
		return
	}
	conn, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), 5*time.Second)
	if err != nil {
		unix.Sendmsg(fd, []byte{0}, nil, nil, 0)
		return
	}
	f, err := conn.(*net.TCPConn).File()
	conn.Close()
	if err != nil {
		unix.Sendmsg(fd, []byte{0}, nil, nil, 0)
		return
	}
	unix.Sendmsg(fd, []byte{1}, unix.UnixRights(int(f.Fd())), nil, 0)
	f.Close()
}

// dialer asks the init, over the status socket, for connections to ports
// of the sandbox's loopback.
type dialer struct {
	mu   sync.Mutex
	sock *os.File
}

func (d *dialer) dial(port int) (net.Conn, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	fd := int(d.sock.Fd())
	if err := unix.Sendmsg(fd, []byte{byte(port >> 8), byte(port)}, nil, nil, 0); err != nil {
		return nil, err
	}
	_, files := readStatusFD(fd)
	if len(files) != 1 {
		return nil, fmt.Errorf("nothing listens on port %d in the sandbox", port)
	}
	defer files[0].Close()
	return net.FileConn(files[0])
}

// listenForwards listens on the host for each -p port, before the
// sandbox starts, so that a port in use is an error before anything runs
// and a client never finds the port closed while the command runs.
func listenForwards(p *sandbox.Proxy) ([]net.Listener, error) {
	if p == nil {
		return nil, nil
	}
	var listeners []net.Listener
	for _, f := range p.Forwards {
		l, err := net.Listen("tcp", f.HostAddr)
		if err != nil {
			closeListeners(listeners)
			return nil, fmt.Errorf("-p %s: %w", f.HostAddr, err)
		}
		listeners = append(listeners, l)
	}
	return listeners, nil
}

// relayForwards relays each -p listener's connections into the sandbox.
func relayForwards(p *sandbox.Proxy, listeners []net.Listener, d *dialer, pending *sync.WaitGroup) (loops *sync.WaitGroup) {
	loops = &sync.WaitGroup{}
	for i, l := range listeners {
		port := p.Forwards[i].Port
		loops.Go(func() { proxy.Relay(l, func() (net.Conn, error) { return d.dial(port) }, pending) })
	}
	return loops
}

// drainTimeout bounds how long fence waits, after the command, for -p
// connections to pass on what the sandbox's servers sent.
const drainTimeout = 2 * time.Second

// waitDrained waits for pending, at most drainTimeout.
func waitDrained(pending *sync.WaitGroup) {
	done := make(chan struct{})
	go func() {
		pending.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(drainTimeout):
	}
}

func closeListeners(listeners []net.Listener) {
	for _, l := range listeners {
		l.Close()
	}
}
