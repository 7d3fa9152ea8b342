package proxy

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"net"
	"net/textproto"
	"strconv"
	"strings"
	"time"

	"github.com/fence-sandbox/fence/policy"
)

// A fence run inside another fence's sandbox has no route out of that
// sandbox's network namespace: its proxies reach what its own rules
// allow through the outer sandbox's HTTP proxy, by name, with a CONNECT
// tunnel. The outer proxy then decides by the outer rules (and resolves
// the name), so a connection goes through only when both allow it.

// upstreamTimeout bounds the CONNECT exchange with the outer proxy.
const upstreamTimeout = 30 * time.Second

// ConnectVia returns a Server.Upstream that opens a CONNECT tunnel to
// host:port through the HTTP proxy at addr. A refusal of the outer
// proxy is a refusal of this one, with the outer's reason.
func ConnectVia(addr string) func(ctx context.Context, host, port string) (net.Conn, error) {
	return func(ctx context.Context, host, port string) (net.Conn, error) {
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("reach the outer sandbox's proxy: %w", err)
		}
		tunnel, err := connectTunnel(conn, net.JoinHostPort(host, port))
		if err != nil {
			conn.Close()
			return nil, err
		}
		return tunnel, nil
	}
}

// connectTunnel asks the proxy on conn for a tunnel to target and
// returns the tunnel, with whatever the server sent right behind the
// proxy's answer.
func connectTunnel(conn net.Conn, target string) (net.Conn, error) {
	conn.SetDeadline(time.Now().Add(upstreamTimeout))
	if _, err := fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target); err != nil {
		return nil, fmt.Errorf("ask the outer sandbox's proxy for %s: %w", target, err)
	}
	br := bufio.NewReader(conn)
	tp := textproto.NewReader(br)
	line, err := tp.ReadLine()
	if err != nil {
		return nil, fmt.Errorf("read the outer sandbox's proxy's answer for %s: %w", target, err)
	}
	header, err := tp.ReadMIMEHeader()
	if err != nil {
		return nil, fmt.Errorf("read the outer sandbox's proxy's answer for %s: %w", target, err)
	}
	code := statusCode(line)
	switch {
	case code == 403:
		reason := cmp.Or(header.Get("X-Fence-Reason"), strings.TrimSpace(line))
		return nil, &refused{policy.NetDecision{Host: target, Rule: "the outer fence sandbox", Reason: "refused by the outer fence sandbox's proxy: " + reason, Fix: "the outer fence sandbox's policy decides this host: allow it there (its network.allowedDomains) as well as here"}}
	case code < 200 || code > 299:
		return nil, fmt.Errorf("the outer sandbox's proxy answered %q for %s", line, target)
	}
	conn.SetDeadline(time.Time{})
	if n := br.Buffered(); n > 0 {
		early, _ := br.Peek(n)
		return &earlyConn{Conn: conn, r: io.MultiReader(bytes.NewReader(bytes.Clone(early)), conn)}, nil
	}
	return conn, nil
}

// statusCode is the code of an HTTP status line, 0 when it has none.
func statusCode(line string) int {
	_, rest, _ := strings.Cut(line, " ")
	code, _, _ := strings.Cut(rest, " ")
	n, _ := strconv.Atoi(code)
	return n
}

// earlyConn is a tunnel whose first bytes were read with the proxy's
// answer.
type earlyConn struct {
	net.Conn
	r io.Reader
}

func (c *earlyConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// CloseWrite passes a half-close on, as splice expects of a TCP
// connection.
func (c *earlyConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
