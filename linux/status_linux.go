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

// proxyListeners opens the proxies' ports on the sandbox's loopback, in
// the sandbox's network namespace: HTTP first, then SOCKS5.
func proxyListeners(p *sandbox.Proxy) ([]*os.File, error) {
	if p == nil {
		return nil, nil
	}
	var files []*os.File
	for _, port := range []int{p.HTTPPort, p.SOCKSPort} {
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			return nil, fmt.Errorf("listen for the proxy in the sandbox: %w", err)
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
	if plan.Proxy == nil || len(files) != 2 {
		for _, f := range files {
			f.Close()
		}
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
	var listeners []net.Listener
	for i, f := range files {
		l, err := net.FileListener(f)
		f.Close()
		if err != nil {
			continue
		}
		listeners = append(listeners, l)
		if i == 0 {
			go srv.ServeHTTP(l)
		} else {
			go srv.ServeSOCKS(l)
		}
	}
	return func() {
		for _, l := range listeners {
			l.Close()
		}
		if plan.Monitor {
			fmt.Fprintf(stderr, "fence: monitor: %d connections blocked\n", blocked.Load())
		}
	}
}
