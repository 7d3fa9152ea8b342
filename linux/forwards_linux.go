package linux

import (
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fence-sandbox/fence/sandbox"
	"github.com/fence-sandbox/fence/sandbox/proxy"
)

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
