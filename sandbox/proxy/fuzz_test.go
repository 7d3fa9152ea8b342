package proxy

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fence-sandbox/fence/policy"
)

// pipeListener hands the server the far ends of local socket pairs.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error   { l.once.Do(func() { close(l.done) }); return nil }
func (l *pipeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }

// exchange sends raw bytes to the server, ends its side of the
// connection, and reads what comes back until the server closes (or,
// briefly, until a deadline). The end of input makes the server give up
// on a request at once instead of waiting for more of it.
func (l *pipeListener) exchange(raw []byte) []byte {
	client, server, err := socketPair()
	if err != nil {
		panic(err)
	}
	defer client.Close()
	l.conns <- server
	client.SetDeadline(time.Now().Add(50 * time.Millisecond))
	client.Write(raw)
	client.CloseWrite()
	out, _ := io.ReadAll(client)
	return out
}

// socketPair returns the two ends of a connected unix stream socket pair.
func socketPair() (client *net.UnixConn, server net.Conn, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		return nil, nil, err
	}
	var conns [2]net.Conn
	for i, fd := range fds {
		f := os.NewFile(uintptr(fd), "socketpair")
		conns[i], err = net.FileConn(f)
		f.Close()
		if err != nil {
			return nil, nil, err
		}
	}
	return conns[0].(*net.UnixConn), conns[1], nil
}

// fuzzRig is both proxies on in-memory listeners, with a resolver that
// maps names to made-up addresses and a dialler that records every
// address the proxies try and connects to nothing.
type fuzzRig struct {
	http, socks *pipeListener
	mu          sync.Mutex
	dialed      []string
}

// The policy allows allowed.test (127.0.0.1), the literal 127.0.0.1 and
// *.wild.test; it denies bad.wild.test. meta.test resolves to the
// metadata address and evil.test to an address no rule allows.
var fuzzNames = map[string]string{
	"allowed.test": "127.0.0.1", "a.wild.test": "127.0.0.1", "bad.wild.test": "127.0.0.2",
	"meta.test": "169.254.169.254", "evil.test": "10.9.9.9",
}

func newFuzzRig(tb testing.TB) *fuzzRig {
	r := &fuzzRig{http: newPipeListener(), socks: newPipeListener()}
	s := &Server{
		Policy: policy.Compile(policy.Config{Network: policy.Network{
			AllowedDomains: []string{"allowed.test", "*.wild.test", "127.0.0.1", "meta.test"},
			DeniedDomains:  []string{"bad.wild.test"},
		}}, policy.Env{}),
		Resolve: func(_ context.Context, host string) ([]netip.Addr, error) {
			if a, ok := fuzzNames[host]; ok {
				return []netip.Addr{netip.MustParseAddr(a)}, nil
			}
			return nil, errors.New("no such host")
		},
		Dial: func(_ context.Context, _, addr string) (net.Conn, error) {
			r.mu.Lock()
			r.dialed = append(r.dialed, addr)
			r.mu.Unlock()
			return nil, errors.New("fuzz: no network")
		},
	}
	go s.ServeHTTP(r.http)
	go s.ServeSOCKS(r.socks)
	tb.Cleanup(func() { r.http.Close(); r.socks.Close() })
	return r
}

// checkDialed fails the test for any host but 127.0.0.1: every other one
// came from a name or literal the policy refuses. (The port is the
// client's to choose, an empty one included; a dial can also belong to
// the input before, whose connection the proxy was still serving.)
func (r *fuzzRig) checkDialed(t *testing.T, input []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer func() { r.dialed = r.dialed[:0] }() // also when the input fails
	for _, addr := range r.dialed {
		host, _, err := net.SplitHostPort(addr)
		ip, perr := netip.ParseAddr(host)
		if err != nil || perr != nil || ip != netip.MustParseAddr("127.0.0.1") {
			t.Fatalf("input %q made the proxy dial %s", input, addr)
		}
	}
}

// FuzzHTTPProxy sends arbitrary bytes to the HTTP proxy: it must not
// panic, and must dial nothing the policy refuses.
func FuzzHTTPProxy(f *testing.F) {
	for _, seed := range []string{
		"CONNECT allowed.test:443 HTTP/1.1\r\nHost: allowed.test:443\r\n\r\n",
		"CONNECT bad.wild.test:443 HTTP/1.1\r\n\r\n",
		"CONNECT meta.test:80 HTTP/1.1\r\n\r\n",
		"CONNECT 169.254.169.254:80 HTTP/1.1\r\n\r\n",
		"CONNECT [::ffff:127.0.0.1]:80 HTTP/1.1\r\n\r\n",
		"GET http://allowed.test/x HTTP/1.1\r\nHost: evil.test\r\n\r\n",
		"GET http://evil.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
		"GET http://ALLOWED.TEST./ HTTP/1.1\r\n\r\n",
		"GET http://a.wild.test:8080/ HTTP/1.1\r\n\r\n",
		"GET http://user@evil.test@allowed.test/ HTTP/1.1\r\n\r\n",
		"GET /relative HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
		"CONNECT allowed.test:443 HTTP/1.0\r\n\r\nGET http://evil.test/ HTTP/1.1\r\n\r\n",
		"CONNECT 2130706433:80 HTTP/1.1\r\n\r\n",
		"CONNECT 0x7f.1:80 HTTP/1.1\r\n\r\n",
		"GET http://0251.0376.0251.0376/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
		"CONNECT allowed.test:443 HTTP/1.1\r\n\r\n" + string(clientHello(f, "evil.test")),
	} {
		f.Add([]byte(seed))
	}
	r := newFuzzRig(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		r.http.exchange(raw)
		r.checkDialed(t, raw)
	})
}

// FuzzSOCKSProxy does the same for the SOCKS5 proxy.
func FuzzSOCKSProxy(f *testing.F) {
	name := func(host string, port byte) []byte {
		return append(append([]byte{5, 1, 0, 5, 1, 0, 3, byte(len(host))}, host...), 0, port)
	}
	for _, seed := range [][]byte{
		name("allowed.test", 80), name("bad.wild.test", 80), name("meta.test", 80), name("evil.test", 80),
		{5, 1, 0, 5, 1, 0, 1, 127, 0, 0, 1, 0, 80},
		{5, 1, 0, 5, 1, 0, 1, 169, 254, 169, 254, 0, 80},
		{5, 1, 0, 5, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1, 0, 80},
		{5, 1, 0, 5, 2, 0, 1, 127, 0, 0, 1, 0, 80}, // BIND
		{5, 1, 0, 5, 3, 0, 1, 127, 0, 0, 1, 0, 80}, // UDP ASSOCIATE
		{4, 1, 0, 80, 127, 0, 0, 1, 0},             // SOCKS4
	} {
		f.Add(seed)
	}
	r := newFuzzRig(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		r.socks.exchange(raw)
		r.checkDialed(t, raw)
	})
}

// TestFuzzRigDials makes sure the fuzz rig sees the dials it judges: an
// allowed CONNECT and an allowed SOCKS request reach the dialler.
func TestFuzzRigDials(t *testing.T) {
	r := newFuzzRig(t)
	r.http.exchange([]byte("CONNECT allowed.test:443 HTTP/1.1\r\n\r\n"))
	r.socks.exchange(append([]byte{5, 1, 0, 5, 1, 0, 3, 12}, append([]byte("allowed.test"), 0, 80)...))
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.dialed) != 2 || r.dialed[0] != "127.0.0.1:443" || r.dialed[1] != "127.0.0.1:80" {
		t.Errorf("dialled %q, want 127.0.0.1:443 and 127.0.0.1:80", r.dialed)
	}
}

// FuzzHelloReader feeds arbitrary streams to the ClientHello reader, whole
// and cut at two points the input chooses: it must not panic, must come
// to the same verdict however the stream is cut, and must name only
// server names the stream holds.
func FuzzHelloReader(f *testing.F) {
	real := clientHello(f, "api.example.com")
	for _, seed := range [][]byte{
		real, reframe(real, 64), clientHello(f, ""), buildHello([]string{"a.test", "b.test"}, nil),
		buildHello(nil, nil), []byte("GET / HTTP/1.1\r\n\r\n"), {0x16, 3, 1, 0, 4, 1, 0, 0, 0},
	} {
		f.Add(seed, uint16(1), uint16(len(seed)/2))
	}
	f.Fuzz(func(t *testing.T, stream []byte, cut1, cut2 uint16) {
		whole, wholeNames, wholeErr := feedAll(stream, 0)
		a, b := min(int(cut1), len(stream)), min(int(cut2), len(stream))
		a, b = min(a, b), max(a, b)
		var h helloReader
		state, err := helloMore, error(nil)
		for _, piece := range [][]byte{stream[:a], stream[a:b], stream[b:]} {
			if state, err = h.feed(piece); state != helloMore || err != nil {
				break
			}
		}
		if state != whole || (err == nil) != (wholeErr == nil) || !slices.Equal(h.names, wholeNames) {
			t.Fatalf("cut at %d and %d: %v %q %v; whole: %v %q %v", a, b, state, h.names, err, whole, wholeNames, wholeErr)
		}
		for _, n := range h.names {
			if !bytes.Contains(stream, []byte(n)) {
				t.Fatalf("name %q is not in the stream", n)
			}
		}
	})
}
