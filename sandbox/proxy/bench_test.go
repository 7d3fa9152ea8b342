package proxy

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/fence-sandbox/fence/policy"
)

// The proxy benchmarks compare a tunnel through the CONNECT proxy with a
// direct loopback connection: bulk throughput (MB/s) and the cost of a
// new connection. All traffic stays on loopback.

const bulkSize = 64 << 20

// bulkServer serves bulkSize bytes to each connection that writes a byte.
func bulkServer(b *testing.B) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	chunk := make([]byte, 256<<10)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				one, err := skipHello(br)
				if err != nil {
					return
				}
				switch one {
				case 'p': // ping: answer one byte
					c.Write([]byte{one})
				case 'u': // upload: take everything, then answer one byte
					io.Copy(io.Discard, br)
					c.Write([]byte{one})
				default:
					for sent := 0; sent < bulkSize; sent += len(chunk) {
						if _, err := c.Write(chunk); err != nil {
							return
						}
					}
				}
			}()
		}
	}()
	return l.Addr().String()
}

// skipHello reads past a TLS record the client may send first (the
// ClientHello of the SNI benchmarks) and returns the command byte.
func skipHello(br *bufio.Reader) (byte, error) {
	one, err := br.ReadByte()
	if err != nil || one != recordTypeHello {
		return one, err
	}
	hdr := make([]byte, recordHeaderLen-1)
	if _, err := io.ReadFull(br, hdr); err != nil {
		return 0, err
	}
	if _, err := br.Discard(int(hdr[2])<<8 | int(hdr[3])); err != nil {
		return 0, err
	}
	return br.ReadByte()
}

// proxyFor serves the HTTP proxy, allowing 127.0.0.1 and bench.test
// (which resolves to it) and its subdomains.
func proxyFor(b *testing.B) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	s := &Server{
		Policy: policy.Compile(policy.Config{Network: policy.Network{AllowedDomains: []string{"127.0.0.1", "bench.test", "*.bench.test"}}}, policy.Env{}),
		Resolve: func(context.Context, string) ([]netip.Addr, error) {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		},
	}
	go s.ServeHTTP(l)
	return l.Addr().String()
}

// sniCases are the ways a tunnel's first bytes meet the SNI check: off
// (the code before it), on with a non-TLS stream, on with a ClientHello
// naming the tunnel's host (the fast path), and on with one naming
// another allowed host (a policy decision).
var sniCases = []struct {
	name, host, sni string
	skip, tls       bool
}{
	{"sni=off", "bench.test", "bench.test", true, true},
	{"sni=on-plain", "bench.test", "", false, false},
	{"sni=on-same", "bench.test", "bench.test", false, true},
	{"sni=on-other", "bench.test", "api.bench.test", false, true},
}

// benchSNI runs fn for each of sniCases, with the bytes the client sends
// first: a ClientHello (or nothing) and then cmd.
func benchSNI(b *testing.B, cmd byte, fn func(b *testing.B, host string, first []byte)) {
	for _, c := range sniCases {
		b.Run(c.name, func(b *testing.B) {
			defer func(skip bool) { testOnlySkipSNI = skip }(testOnlySkipSNI)
			testOnlySkipSNI = c.skip
			first := []byte{cmd}
			if c.tls {
				first = append(clientHello(b, c.sni), cmd)
			}
			fn(b, c.host, first)
		})
	}
}

// tunnel opens a CONNECT tunnel to target through the proxy.
func tunnel(b *testing.B, proxyAddr, target string) net.Conn {
	c, err := net.Dial("tcp", proxyAddr)
	if err != nil {
		b.Fatal(err)
	}
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	br := bufio.NewReader(c)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			b.Fatal(err)
		}
		if strings.TrimSpace(line) == "" {
			break
		}
	}
	return c
}

func BenchmarkBulkDirect(b *testing.B) {
	target := bulkServer(b)
	b.SetBytes(bulkSize)
	for b.Loop() {
		c, err := net.Dial("tcp", target)
		if err != nil {
			b.Fatal(err)
		}
		c.Write([]byte{'g'})
		io.Copy(io.Discard, c)
		c.Close()
	}
}

func BenchmarkBulkConnectTunnel(b *testing.B) {
	target, proxyAddr := bulkServer(b), proxyFor(b)
	b.SetBytes(bulkSize)
	for b.Loop() {
		c := tunnel(b, proxyAddr, target)
		c.Write([]byte{'g'})
		io.Copy(io.Discard, c)
		c.Close()
	}
}

func BenchmarkNewConnectionDirect(b *testing.B) {
	target := bulkServer(b)
	for b.Loop() {
		c, err := net.Dial("tcp", target)
		if err != nil {
			b.Fatal(err)
		}
		ping(b, c)
	}
}

func BenchmarkNewConnectionTunnel(b *testing.B) {
	target, proxyAddr := bulkServer(b), proxyFor(b)
	for b.Loop() {
		ping(b, tunnel(b, proxyAddr, target))
	}
}

func ping(b *testing.B, c net.Conn) {
	defer c.Close()
	var one [1]byte
	c.Write([]byte{'p'})
	if _, err := io.ReadFull(c, one[:]); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkBulkTunnelSNI is BenchmarkBulkConnectTunnel through the SNI
// check: the server's side, which the check never holds.
func BenchmarkBulkTunnelSNI(b *testing.B) {
	target, proxyAddr := bulkServer(b), proxyFor(b)
	_, port, _ := net.SplitHostPort(target)
	benchSNI(b, 'g', func(b *testing.B, host string, first []byte) {
		b.SetBytes(bulkSize)
		for b.Loop() {
			c := tunnel(b, proxyAddr, net.JoinHostPort(host, port))
			c.Write(first)
			io.Copy(io.Discard, c)
			c.Close()
		}
	})
}

// BenchmarkUploadTunnelSNI sends bulkSize bytes up a tunnel after its
// first bytes: the client's side, which the check reads first.
func BenchmarkUploadTunnelSNI(b *testing.B) {
	target, proxyAddr := bulkServer(b), proxyFor(b)
	_, port, _ := net.SplitHostPort(target)
	chunk := make([]byte, 256<<10)
	benchSNI(b, 'u', func(b *testing.B, host string, first []byte) {
		b.SetBytes(bulkSize)
		for b.Loop() {
			c := tunnel(b, proxyAddr, net.JoinHostPort(host, port))
			c.Write(first)
			for sent := 0; sent < bulkSize; sent += len(chunk) {
				if _, err := c.Write(chunk); err != nil {
					b.Fatal(err)
				}
			}
			c.(*net.TCPConn).CloseWrite()
			io.Copy(io.Discard, c)
			c.Close()
		}
	})
}

// BenchmarkNewConnectionTunnelSNI is BenchmarkNewConnectionTunnel with a
// ClientHello first: what the check adds to each connection.
func BenchmarkNewConnectionTunnelSNI(b *testing.B) {
	target, proxyAddr := bulkServer(b), proxyFor(b)
	_, port, _ := net.SplitHostPort(target)
	benchSNI(b, 'p', func(b *testing.B, host string, first []byte) {
		for b.Loop() {
			c := tunnel(b, proxyAddr, net.JoinHostPort(host, port))
			c.Write(first)
			var one [1]byte
			if _, err := io.ReadFull(c, one[:]); err != nil {
				b.Fatal(err)
			}
			c.Close()
		}
	})
}

// BenchmarkHelloReader is the ClientHello reader alone, on a hello of
// today's size (post-quantum key share included).
func BenchmarkHelloReader(b *testing.B) {
	hello := clientHello(b, "api.example.com")
	b.SetBytes(int64(len(hello)))
	for b.Loop() {
		var h helloReader
		if state, err := h.feed(hello); state != helloDone || err != nil {
			b.Fatal(state, err)
		}
	}
}

// discardConn is a connection that takes every write and reads nothing.
type discardConn struct{ net.Conn }

func (discardConn) Write(p []byte) (int, error) { return len(p), nil }

// BenchmarkSNIGate is the whole check of one connection in process: the
// gate reads a ClientHello of today's size, judges its name (the
// tunnel's own, or another the policy decides) and passes it on.
func BenchmarkSNIGate(b *testing.B) {
	s := &Server{Policy: policy.Compile(policy.Config{Network: policy.Network{AllowedDomains: []string{"bench.test", "*.bench.test"}}}, policy.Env{})}
	for _, sni := range []string{"bench.test", "api.bench.test"} {
		hello := clientHello(b, sni)
		b.Run(sni, func(b *testing.B) {
			for b.Loop() {
				g := s.gate("CONNECT", "bench.test:443", "bench.test", "443", discardConn{}, func() {})
				if _, err := g.Write(hello); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSNIGatePassing is what the gate costs each write once it has
// let a tunnel's ClientHello through, against writing to upstream
// directly (sni=off): 32 KB writes, io.Copy's size.
func BenchmarkSNIGatePassing(b *testing.B) {
	s := &Server{Policy: policy.Compile(policy.Config{Network: policy.Network{AllowedDomains: []string{"bench.test"}}}, policy.Env{})}
	chunk := make([]byte, 32<<10)
	for _, skip := range []bool{true, false} {
		b.Run(map[bool]string{true: "sni=off", false: "sni=on"}[skip], func(b *testing.B) {
			defer func(s bool) { testOnlySkipSNI = s }(testOnlySkipSNI)
			testOnlySkipSNI = skip
			g := s.gate("CONNECT", "bench.test:443", "bench.test", "443", discardConn{}, func() {})
			g.Write(clientHello(b, "bench.test"))
			b.SetBytes(int64(len(chunk)))
			for b.Loop() {
				g.Write(chunk)
			}
		})
	}
}
