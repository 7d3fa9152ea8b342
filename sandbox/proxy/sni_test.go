package proxy

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	xproxy "golang.org/x/net/proxy"
)

// sink is a loopback server that records what each connection sends
// until the other side closes it.
type sink struct {
	port string
	got  chan string
}

func newSink(t *testing.T) *sink {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	_, port, _ := net.SplitHostPort(l.Addr().String())
	s := &sink{port: port, got: make(chan string, 100)}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				b, _ := io.ReadAll(c)
				s.got <- string(b)
			}()
		}
	}()
	return s
}

// received waits for n connections to end and returns what each sent.
func (s *sink) received(t *testing.T, n int) []string {
	var out []string
	for range n {
		select {
		case g := <-s.got:
			out = append(out, g)
		case <-time.After(10 * time.Second):
			t.Fatalf("upstream saw %d connections end, want %d", len(out), n)
		}
	}
	return out
}

// bufConn is a connection whose first bytes were read into r.
type bufConn struct {
	net.Conn
	r *bufio.Reader
}

func (c bufConn) Read(p []byte) (int, error) { return c.r.Read(p) }
func (c bufConn) CloseWrite() error          { return c.Conn.(*net.TCPConn).CloseWrite() }

// openTunnel makes a CONNECT tunnel to target through the rig.
func openTunnel(t *testing.T, r *rig, target string) bufConn {
	t.Helper()
	c, err := net.Dial("tcp", r.httpProxy)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT %s: %v %v", target, resp, err)
	}
	return bufConn{c, br}
}

// choppy writes its first write (the ClientHello) in pieces: as records
// of recSize bytes, sent segSize bytes at a time with a pause between.
type choppy struct {
	net.Conn
	recSize, segSize int
	once             sync.Once
}

func (c *choppy) Write(p []byte) (int, error) {
	first := false
	c.once.Do(func() { first = true })
	if !first {
		return c.Conn.Write(p)
	}
	out := p
	if c.recSize > 0 {
		out = reframe(p, c.recSize)
	}
	for len(out) > 0 {
		n := min(c.segSize, len(out))
		if _, err := c.Conn.Write(out[:n]); err != nil {
			return 0, err
		}
		out = out[n:]
		time.Sleep(time.Millisecond)
	}
	return len(p), nil
}

// TestTunnelSNI: a TLS tunnel to an allowed name whose ClientHello asks
// for a name the policy refuses is ended before the hello reaches
// upstream, and the refusal is logged with the rule; an allowed or
// absent SNI, in one piece or in many, passes unchanged.
func TestTunnelSNI(t *testing.T) {
	r := newRig(t)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) { io.WriteString(w, "secret "+req.TLS.ServerName) }))
	defer srv.Close()
	_, tlsPort, _ := net.SplitHostPort(srv.Listener.Addr().String())
	const whole = 1 << 20
	tests := []struct {
		name, sni string
		rec, seg  int
		allowed   bool
		rule      string
	}{
		{"the tunnel's own host", "allowed.test", 0, whole, true, ""},
		{"the tunnel's host, other case and a dot", "ALLOWED.Test.", 0, whole, true, ""},
		{"another allowed name", "a.wild.test", 0, whole, true, ""},
		{"no SNI", "", 0, whole, true, ""},
		{"allowed, split into records and segments", "a.wild.test", 60, 50, true, ""},
		{"allowed, in segments of 10 bytes", "a.wild.test", 0, 10, true, ""},
		{"refused name", "denied.test", 0, whole, false, ""},
		{"denied name", "bad.wild.test", 0, whole, false, `network.deniedDomains "bad.wild.test"`},
		{"refused, split into records and segments", "denied.test", 60, 50, false, ""},
		{"refused, in segments of 10 bytes", "denied.test", 0, 10, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			target := net.JoinHostPort("allowed.test", tlsPort)
			c := openTunnel(t, r, target)
			defer c.Close()
			tc := tls.Client(&choppy{Conn: c, recSize: tt.rec, segSize: tt.seg}, &tls.Config{ServerName: tt.sni, InsecureSkipVerify: true})
			err := tc.Handshake()
			events := r.takeEvents()
			if tt.allowed {
				if err != nil {
					t.Fatalf("handshake through the tunnel: %v (events %v)", err, events)
				}
				fmt.Fprintf(tc, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
				if got, _ := io.ReadAll(tc); !strings.HasSuffix(string(got), "secret "+strings.TrimSuffix(tt.sni, ".")) {
					t.Errorf("through the tunnel: %q", got)
				}
				if len(events) > 0 {
					t.Errorf("events %v for an allowed tunnel", events)
				}
				return
			}
			if err == nil || tt.seg == whole && !strings.Contains(err.Error(), "access denied") {
				t.Errorf("handshake with SNI %s: %v, want the access denied alert", tt.sni, err)
			}
			if len(events) != 1 || events[0].Proto != "CONNECT" || events[0].Target != target || events[0].Decision.Rule != tt.rule || !strings.Contains(events[0].Decision.Reason, fmt.Sprintf("asks for %q (SNI)", tt.sni)) {
				t.Errorf("events %v, want one CONNECT refusal by %s naming %s", events, tt.rule, tt.sni)
			}
		})
	}
}

// TestTunnelSNIHoldsBack: a refused ClientHello never reaches upstream,
// whole or in part; a non-TLS stream and a hello without SNI reach it
// unchanged.
func TestTunnelSNIHoldsBack(t *testing.T) {
	r := newRig(t)
	s := newSink(t)
	target := net.JoinHostPort("allowed.test", s.port)
	denied, plain, noSNI := clientHello(t, "denied.test"), "GET / HTTP/1.1\r\n\r\n", clientHello(t, "")
	for _, stream := range [][]byte{denied, reframe(denied, 100), []byte(plain), noSNI, append(reframe(noSNI, 30), "more"...)} {
		c := openTunnel(t, r, target)
		c.Write(stream)
		c.CloseWrite()
		io.ReadAll(c)
		c.Close()
	}
	want := []string{"", "", plain, string(noSNI), string(reframe(noSNI, 30)) + "more"}
	got := s.received(t, len(want))
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || g == w
		}
		if !found {
			t.Errorf("upstream did not receive %q unchanged; it got %q", w, got)
		}
	}
	if e := r.takeEvents(); len(e) != 2 {
		t.Errorf("events %v, want two refusals", e)
	}
}

// TestTunnelSNIMalformed: a stream that starts as a TLS handshake fence
// cannot read, or does not finish its ClientHello in time, is ended.
func TestTunnelSNIMalformed(t *testing.T) {
	defer func(d time.Duration) { testOnlyHelloWait = d }(testOnlyHelloWait)
	testOnlyHelloWait = 100 * time.Millisecond
	r := newRig(t)
	s := newSink(t)
	hello := clientHello(t, "allowed.test")
	for name, stream := range map[string][]byte{
		"not a ClientHello":                {0x16, 3, 1, 0, 4, 2, 0, 0, 0},
		"bad record":                       {0x16, 3, 1, 0x40, 1},
		"half a ClientHello, then nothing": hello[:len(hello)/2],
	} {
		c := openTunnel(t, r, net.JoinHostPort("allowed.test", s.port))
		c.Write(stream)
		start := time.Now()
		got, _ := io.ReadAll(c) // the proxy ends the tunnel
		c.Close()
		if string(got) != string(tlsAccessDenied) || time.Since(start) > 2*time.Second {
			t.Errorf("%s: read %q, want the alert and the end", name, got)
		}
		if e := r.takeEvents(); len(e) != 1 || e[0].Decision.Rule != "sandbox.tlsClientHello" {
			t.Errorf("%s: events %v, want one sandbox.tlsClientHello refusal", name, e)
		}
	}
	for _, g := range s.received(t, 3) {
		if g != "" {
			t.Errorf("upstream got %q", g)
		}
	}
}

// TestTunnelServerSpeaksFirst: the gate holds only the client's side, so
// a protocol whose server speaks first goes through.
func TestTunnelServerSpeaksFirst(t *testing.T) {
	r := newRig(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		io.WriteString(c, "SSH-2.0-test\r\n")
		io.Copy(c, c)
	}()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	c := openTunnel(t, r, net.JoinHostPort("allowed.test", port))
	defer c.Close()
	br := bufio.NewReader(c)
	if line, err := br.ReadString('\n'); line != "SSH-2.0-test\r\n" {
		t.Fatalf("banner %q, %v", line, err)
	}
	io.WriteString(c, "SSH-2.0-client\r\n")
	if line, err := br.ReadString('\n'); line != "SSH-2.0-client\r\n" {
		t.Errorf("echo %q, %v", line, err)
	}
}

// TestSOCKSSNI: the SOCKS5 proxy ends a connection whose ClientHello
// asks for a refused name, and passes an allowed one.
func TestSOCKSSNI(t *testing.T) {
	r := newRig(t)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	_, tlsPort, _ := net.SplitHostPort(srv.Listener.Addr().String())
	dialer, err := xproxy.SOCKS5("tcp", r.socksProxy, nil, xproxy.Direct)
	if err != nil {
		t.Fatal(err)
	}
	for sni, allowed := range map[string]bool{"allowed.test": true, "a.wild.test": true, "denied.test": false, "bad.wild.test": false} {
		c, err := dialer.Dial("tcp", net.JoinHostPort("allowed.test", tlsPort))
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		err = tls.Client(c, &tls.Config{ServerName: sni, InsecureSkipVerify: true}).Handshake()
		c.Close()
		events := r.takeEvents()
		if allowed != (err == nil) || !allowed && (len(events) != 1 || events[0].Proto != "SOCKS5" || !strings.Contains(events[0].Decision.Reason, sni)) {
			t.Errorf("SOCKS5 with SNI %s: %v, events %v, want allowed %v", sni, err, events, allowed)
		}
	}
}

// TestTunnelSNIPipelined: a ClientHello sent with the CONNECT request,
// before the 200, is judged all the same.
func TestTunnelSNIPipelined(t *testing.T) {
	r := newRig(t)
	s := newSink(t)
	for sni, want := range map[string]string{"denied.test": "", "allowed.test": "ok"} {
		c, err := net.Dial("tcp", r.httpProxy)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		target := net.JoinHostPort("allowed.test", s.port)
		hello := clientHello(t, sni)
		fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n%sok", target, target, hello)
		br := bufio.NewReader(c)
		line, _ := br.ReadString('\n')
		if line != "HTTP/1.1 200 Connection established\r\n" {
			t.Errorf("SNI %s: %q", sni, line)
		}
		if want == "" {
			if rest, _ := io.ReadAll(br); string(rest) != "\r\n"+string(tlsAccessDenied) {
				t.Errorf("SNI %s: then %q, want the alert and the end", sni, rest)
			}
		}
		c.Close()
		if g := s.received(t, 1)[0]; want == "" && g != "" || want != "" && g != string(hello)+want {
			t.Errorf("SNI %s: upstream got %q", sni, g)
		}
	}
	if e := r.takeEvents(); len(e) != 1 || !strings.Contains(e[0].Decision.Reason, `"denied.test"`) {
		t.Errorf("events %v, want the refusal of denied.test", e)
	}
}

// TestTunnelSNIAfterAlert sends a TLS warning alert before a ClientHello
// whose SNI the policy refuses: a Go server skips the alert and would
// finish the handshake, so the tunnel must end before the hello passes.
func TestTunnelSNIAfterAlert(t *testing.T) {
	r := newRig(t)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) { io.WriteString(w, "secret "+req.TLS.ServerName) }))
	defer srv.Close()
	_, tlsPort, _ := net.SplitHostPort(srv.Listener.Addr().String())
	c := openTunnel(t, r, net.JoinHostPort("allowed.test", tlsPort))
	defer c.Close()
	if _, err := c.Write([]byte{0x15, 3, 1, 0, 2, 1, 0x5a}); err != nil {
		t.Fatal(err)
	}
	tc := tls.Client(c, &tls.Config{ServerName: "denied.test", InsecureSkipVerify: true})
	if err := tc.Handshake(); err == nil {
		fmt.Fprintf(tc, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
		got, _ := io.ReadAll(tc)
		t.Fatalf("a hello behind an alert reached the server: %q", got)
	}
}
