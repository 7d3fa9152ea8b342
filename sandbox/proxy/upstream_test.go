package proxy

import (
	"context"
	"io"
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/fence-sandbox/fence/policy"
)

// nestedRig is an inner proxy whose Upstream is the rig's HTTP proxy, as
// in a fence run nested in a fence sandbox: the inner one never resolves
// nor dials by itself.
func nestedRig(t *testing.T, outer *rig, inner policy.Network) string {
	t.Helper()
	s := &Server{
		Policy:   policy.Compile(policy.Config{Network: inner}, policy.Env{}),
		Upstream: ConnectVia(outer.httpProxy),
		Resolve: func(context.Context, string) ([]netip.Addr, error) {
			t.Error("the nested proxy resolved a name itself")
			return nil, net.UnknownNetworkError("none")
		},
		Dial: func(context.Context, string, string) (net.Conn, error) {
			t.Error("the nested proxy dialled by itself")
			return nil, net.UnknownNetworkError("none")
		},
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go s.ServeHTTP(l)
	return l.Addr().String()
}

// TestUpstream: through a nested proxy a host goes through only when both
// the inner and the outer rules allow it, and a refusal names the side
// that refused.
func TestUpstream(t *testing.T) {
	outer := newRig(t) // allows allowed.test, *.wild.test, 127.0.0.1
	inner := nestedRig(t, outer, policy.Network{AllowedDomains: []string{"allowed.test", "other.test", "bad.wild.test"}})
	client := (&rig{httpProxy: inner}).proxyClient()
	tests := []struct {
		host   string
		status int
		reason string
	}{
		{"allowed.test", 200, ""},
		{"a.wild.test", 403, "not in network.allowedDomains"},                     // the inner refuses
		{"other.test", 403, "refused by the outer fence sandbox's proxy: not in"}, // the outer refuses
		{"bad.wild.test", 403, "refused by the outer fence sandbox's proxy: denied by network.deniedDomains"},
		{"127.0.0.1", 403, "not in network.allowedDomains"},
	}
	for _, tt := range tests {
		resp, err := client.Get("http://" + net.JoinHostPort(tt.host, outer.target) + "/")
		if err != nil {
			t.Errorf("GET %s via the nested proxy: %v", tt.host, err)
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.status || !strings.HasPrefix(resp.Header.Get("X-Fence-Reason"), tt.reason) {
			t.Errorf("GET %s: %d %q %q, want %d %q", tt.host, resp.StatusCode, resp.Header.Get("X-Fence-Reason"), body, tt.status, tt.reason)
		}
		if tt.status == 200 && string(body) != "hello" {
			t.Errorf("GET %s: body %q", tt.host, body)
		}
	}
}

// TestUpstreamEarlyBytes: what the server sends right behind the outer
// proxy's answer reaches the client (a server that speaks first).
func TestUpstreamEarlyBytes(t *testing.T) {
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
		buf := make([]byte, 512)
		c.Read(buf)
		io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\nSSH-2.0-early\r\n")
	}()
	conn, err := ConnectVia(l.Addr().String())(context.Background(), "example.test", "22")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	got, _ := io.ReadAll(conn)
	if string(got) != "SSH-2.0-early\r\n" {
		t.Errorf("tunnel read %q, want the server's first line", got)
	}
}
