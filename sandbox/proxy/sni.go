package proxy

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/fence-sandbox/fence/policy"
)

// helloTimeout bounds how long a client that has begun a TLS ClientHello
// may take to send the rest of it.
const helloTimeout = 3 * time.Second

// testOnlyHelloWait is helloTimeout, shortened by tests.
var testOnlyHelloWait = helloTimeout

// testOnlySkipSNI turns the inspection off, for benchmarks that compare
// tunnels with and without it.
var testOnlySkipSNI bool

// errTunnelEnded is what the client's copy meets once the gate has
// ended the tunnel.
var errTunnelEnded = errors.New("fence: tunnel ended by the policy")

// tlsAccessDenied is a fatal TLS alert (access_denied), sent to a CONNECT
// client whose server name is refused, so that its TLS library says why
// the tunnel ended rather than reporting an unexpected EOF.
var tlsAccessDenied = []byte{0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 49}

// sniGate stands for the upstream connection of an allowed tunnel on the
// way from the client: when the client's first bytes are a TLS
// ClientHello it holds them back until it has read the server names
// (SNI) they ask for, and ends the tunnel if the policy refuses one; then
// it passes on what it held and everything after, unchanged. A stream
// that does not begin with a TLS handshake record, and a ClientHello
// without SNI, pass at once. What upstream sends passes untouched, so
// protocols where the server speaks first are not held up.
type sniGate struct {
	net.Conn                  // upstream
	s                         *Server
	proto, target, host, port string
	end                       func() // ends the tunnel, both ways
	// forwarded says the tunnel goes through the upstream proxy
	// (network.defaultAction "proxy"), which then carries names no
	// domain rule names; a direct tunnel may not.
	forwarded bool

	passing bool // only the client's copy reads or sets it
	mu      sync.Mutex
	decided bool
	err     error
	held    []byte
	hello   helloReader
	timer   *time.Timer
}

// gate wraps upstream for a tunnel to host:port (target as the client
// asked), unless inspection is off.
func (s *Server) gate(proto, target, host, port string, upstream net.Conn, end func()) net.Conn {
	if testOnlySkipSNI {
		return upstream
	}
	forwarded := s.forwarded(s.Policy.DecideHostPort(host, port))
	return &sniGate{Conn: upstream, s: s, proto: proto, target: target, host: host, port: port, end: end, forwarded: forwarded}
}

func (g *sniGate) Write(p []byte) (int, error) {
	if g.passing {
		return g.Conn.Write(p)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.err != nil {
		return 0, g.err
	}
	state, err := g.hello.feed(p)
	if err == nil && state == helloDone {
		err = g.judge()
	}
	if err != nil {
		g.fail(err)
		return 0, g.err
	}
	if state == helloMore {
		g.held = append(g.held, p...)
		if g.timer == nil {
			g.timer = time.AfterFunc(testOnlyHelloWait, g.expire)
		}
		return len(p), nil
	}
	g.decided, g.passing = true, true
	if g.timer != nil {
		g.timer.Stop()
	}
	out := p
	if len(g.held) > 0 {
		out, g.held = append(g.held, p...), nil
	}
	if _, err := g.Conn.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// judge refuses a server name the policy does not allow at the tunnel's
// port; a name that is the tunnel's host is allowed without asking.
func (g *sniGate) judge() error {
	for _, name := range g.hello.names {
		if sameHost(name, g.host) {
			continue
		}
		d := g.s.Policy.DecideHostPort(name, g.port)
		if !d.Allowed {
			d.Reason = fmt.Sprintf("the TLS ClientHello asks for %q (SNI), which the policy refuses: %s", name, d.Reason)
			return &refused{d}
		}
		if g.s.forwarded(d) && !g.forwarded {
			d.Allowed, d.Upstream = false, ""
			d.Reason = fmt.Sprintf("the TLS ClientHello asks for %q (SNI), which only the upstream proxy may carry (network.defaultAction \"proxy\"), not a direct tunnel to %s", name, g.host)
			d.Fix = fmt.Sprintf("add %s to network.allowedDomains if the command needs it through %s", name, g.host)
			return &refused{d}
		}
	}
	return nil
}

// sameHost compares host names as DNS does: without case, and with or
// without the trailing dot.
func sameHost(a, b string) bool {
	return strings.EqualFold(strings.TrimSuffix(a, "."), strings.TrimSuffix(b, "."))
}

// fail records why the tunnel is refused and ends it. g.mu is held.
func (g *sniGate) fail(err error) {
	g.decided = true
	if g.timer != nil {
		g.timer.Stop()
	}
	var ref *refused
	if !errors.As(err, &ref) {
		ref = &refused{policy.NetDecision{Host: g.host, Rule: "sandbox.tlsClientHello", Reason: fmt.Sprintf("the tunnel %v, so fence cannot check the server name it asks for", err)}}
	}
	g.err = errTunnelEnded
	g.held = nil
	g.s.refuse(g.proto, g.target, ref.d)
	g.end()
}

// expire ends a tunnel whose ClientHello did not arrive in time.
func (g *sniGate) expire() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.decided {
		g.fail(fmt.Errorf("began a TLS ClientHello but did not finish it within %v", testOnlyHelloWait))
	}
}

// ReadFrom copies from the client: through Write until the gate has
// decided, then straight to upstream (which may splice in the kernel).
func (g *sniGate) ReadFrom(r io.Reader) (int64, error) {
	var total int64
	var buf []byte
	for !g.passing {
		if buf == nil {
			buf = make([]byte, 16<<10)
		}
		n, err := r.Read(buf)
		if n > 0 {
			if _, werr := g.Write(buf[:n]); werr != nil {
				return total, werr
			}
			total += int64(n)
		}
		if errors.Is(err, io.EOF) {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
	n, err := io.Copy(g.Conn, r)
	return total + n, err
}

// WriteTo copies what upstream sends, as upstream would.
func (g *sniGate) WriteTo(w io.Writer) (int64, error) {
	if wt, ok := g.Conn.(io.WriterTo); ok {
		return wt.WriteTo(w)
	}
	return io.Copy(w, struct{ io.Reader }{g.Conn})
}

// Close closes upstream; a ClientHello not yet judged is dropped.
func (g *sniGate) Close() error {
	g.mu.Lock()
	g.decided, g.held = true, nil
	if g.timer != nil {
		g.timer.Stop()
	}
	g.mu.Unlock()
	return g.Conn.Close()
}

// CloseWrite passes the end of the client's stream on. A ClientHello cut
// short is dropped: there is no server name to judge in it.
func (g *sniGate) CloseWrite() error {
	g.mu.Lock()
	g.decided, g.held = true, nil
	if g.timer != nil {
		g.timer.Stop()
	}
	g.mu.Unlock()
	if cw, ok := g.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
