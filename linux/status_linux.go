package linux

import (
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/fence-sandbox/fence/policy"
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
// setting up went, handing over files.
func sendStatus(fd int, status byte, files []*os.File) error {
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
	unix.Close(fd)
	if err != nil {
		return fmt.Errorf("report to supervisor: %w", err)
	}
	return nil
}

// readStatus waits for the init's status byte (0 when the init died
// first) and the descriptors sent with it.
func readStatus(f *os.File) (byte, []*os.File) {
	buf := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(4*4))
	n, oobn, _, _, err := unix.Recvmsg(int(f.Fd()), buf, oob, unix.MSG_CMSG_CLOEXEC)
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
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("listen on %s in the sandbox: %w", addr, err)
		}
		f, err := l.(*net.TCPListener).File()
		l.Close()
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

// serveProxies serves the listeners the init sent, with the plan's
// domain rules, until the returned stop is called.
func serveProxies(plan *sandbox.Plan, files []*os.File, stderr io.Writer) (stop func()) {
	var listeners []net.Listener
	for _, f := range files {
		l, err := net.FileListener(f)
		f.Close()
		if err == nil {
			listeners = append(listeners, l)
		}
	}
	closeAll := func() {
		for _, l := range listeners {
			l.Close()
		}
	}
	if plan.Proxy == nil || len(listeners) != len(listenAddrs(plan.Proxy)) {
		closeAll()
		return func() {}
	}
	srv := &proxy.Server{Policy: &policy.Policy{AllowedDomains: plan.Proxy.AllowedDomains, DeniedDomains: plan.Proxy.DeniedDomains}}
	var blocked atomic.Int64
	if plan.Monitor {
		srv.Log = func(e proxy.Event) {
			blocked.Add(1)
			fmt.Fprintf(stderr, "fence: %s\n", e)
		}
	}
	go srv.ServeHTTP(listeners[0])
	go srv.ServeSOCKS(listeners[1])
	for i, addr := range listenAddrs(plan.Proxy)[2:] {
		go proxy.Relay(listeners[2+i], func() (net.Conn, error) { return net.Dial("tcp", addr) })
	}
	return func() {
		closeAll()
		if plan.Monitor {
			fmt.Fprintf(stderr, "fence: monitor: %d connections blocked\n", blocked.Load())
		}
	}
}
