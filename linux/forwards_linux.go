package linux

import (
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"github.com/fence-sandbox/fence/sandbox"
	"github.com/fence-sandbox/fence/sandbox/proxy"
)

// dialer asks pid 1, over the sync socket, for connections to ports of
// the sandbox's loopback: it sends msgDial with the port, and pid 1
// answers msgDialed with the connected socket attached, or without one
// when the port is not forwarded or nothing listens (see pid1_linux.go).
// One request is answered at a time.
type dialer struct {
	mu   sync.Mutex
	sock *os.File
}

func (d *dialer) dial(port int) (net.Conn, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := sendSync(d.sock, syncMsg{Kind: msgDial, Arg: uint32(port)}); err != nil {
		return nil, err
	}
	m, files, ok := readSync(int(d.sock.Fd()), 1)
	defer closeFiles(files)
	if !ok || m.Kind != msgDialed || m.Arg != 1 || len(files) != 1 {
		return nil, fmt.Errorf("nothing listens on port %d in the sandbox", port)
	}
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
