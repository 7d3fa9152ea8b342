package proxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
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
				var one [1]byte
				if _, err := c.Read(one[:]); err != nil {
					return
				}
				if one[0] == 'p' { // ping: answer one byte
					c.Write(one[:])
					return
				}
				for sent := 0; sent < bulkSize; sent += len(chunk) {
					if _, err := c.Write(chunk); err != nil {
						return
					}
				}
			}()
		}
	}()
	return l.Addr().String()
}

func proxyFor(b *testing.B) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	s := &Server{Policy: policy.Compile(policy.Config{Network: policy.Network{AllowedDomains: []string{"127.0.0.1"}}}, policy.Env{})}
	go s.ServeHTTP(l)
	return l.Addr().String()
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
