package proxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/base64"
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

	"github.com/fence-sandbox/fence/policy"
)

// upstreamProxy is the user's proxy in these tests, on loopback: it
// records what it is asked, answers absolute-URI requests itself, and
// tunnels every CONNECT to dialTo, whatever the name asked for. With
// status set it refuses every request with that status.
type upstreamProxy struct {
	addr   string
	dialTo string
	status int
	mu     sync.Mutex
	seen   []string // "CONNECT host:port" or "GET http://host/path host=…", with " auth=…"
}

func newUpstreamProxy(t *testing.T, dialTo string, status int) *upstreamProxy {
	t.Helper()
	u := &upstreamProxy{dialTo: dialTo, status: status}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(u.serve))
	srv.Listener = &recordingListener{srv.Listener}
	srv.Config.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		return context.WithValue(ctx, recordedKey{}, c)
	}
	srv.Start()
	t.Cleanup(srv.Close)
	u.addr = srv.Listener.Addr().String()
	return u
}

func (u *upstreamProxy) serve(w http.ResponseWriter, r *http.Request) {
	what := r.Method + " " + r.RequestURI
	if r.Method != http.MethodConnect {
		what += " host=" + sentHost(r)
	}
	if auth := r.Header.Get("Proxy-Authorization"); auth != "" {
		what += " auth=" + auth
	}
	u.mu.Lock()
	u.seen = append(u.seen, what)
	u.mu.Unlock()
	switch {
	case u.status != 0:
		http.Error(w, "upstream says no", u.status)
	case r.Method != http.MethodConnect:
		fmt.Fprintf(w, "from upstream for %s", sentHost(r))
	default:
		target, err := net.Dial("tcp", u.dialTo)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer target.Close()
		client, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer client.Close()
		io.WriteString(client, "HTTP/1.1 200 OK\r\n\r\n")
		splice(client, target)
	}
}

// recordingListener keeps what its connections read, so the upstream
// can tell the Host header a client sent: net/http replaces it with an
// absolute URI's host.
type recordingListener struct{ net.Listener }

type recordedKey struct{}

type recordingConn struct {
	net.Conn
	mu   sync.Mutex
	read []byte
}

func (l *recordingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &recordingConn{Conn: c}, nil
}

func (c *recordingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.mu.Lock()
	c.read = append(c.read, p[:n]...)
	c.mu.Unlock()
	return n, err
}

// CloseWrite passes a half close on, as splice needs.
func (c *recordingConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Conn.Close()
}

// sentHost is the last Host header the client sent on r's connection.
func sentHost(r *http.Request) string {
	c, _ := r.Context().Value(recordedKey{}).(*recordingConn)
	if c == nil {
		return "?"
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	host := "none"
	for _, line := range strings.Split(string(c.read), "\r\n") {
		if v, ok := strings.CutPrefix(line, "Host: "); ok {
			host = v
		}
	}
	return host
}

// take returns what the upstream was asked so far and forgets it.
func (u *upstreamProxy) take() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	s := u.seen
	u.seen = nil
	return s
}

// forwardRig is a rig whose policy forwards what no domain rule names to
// an upstream proxy at upstreamAddr, with credentials.
func forwardRig(t *testing.T, upstreamAddr func(target string) string) *rig {
	return newRigWith(t, rigOptions{
		network: func(port int) policy.Network {
			n := defaultNetwork(port)
			n.DefaultAction = "proxy"
			n.UpstreamProxy = "http://alice:s3cret@" + upstreamAddr(fmt.Sprint(port))
			return n
		},
		names: map[string][]string{
			"other.test":   {"8.8.8.8"},
			"twopub.test":  {"8.8.8.8", "8.8.4.4"},
			"private.test": {"10.0.0.5"},
			"mixed.test":   {"8.8.8.8", "10.0.0.5"},
			"metaunk.test": {"169.254.169.254"},
			"local.test":   {"127.0.0.2"},
			"v6.test":      {"2001:4860:4860::8888"},
		},
		sequences: map[string][][]string{
			"rebind-http.test":    {{"8.8.8.8"}, {"127.0.0.1"}},
			"rebind-connect.test": {{"8.8.8.8"}, {"127.0.0.1"}},
			"rebind-socks.test":   {{"8.8.8.8"}, {"169.254.169.254"}},
		},
	})
}

var aliceAuth = "auth=Basic " + base64.StdEncoding.EncodeToString([]byte("alice:s3cret"))

// TestForwardToUpstream: under defaultAction "proxy" a host no domain rule
// names reaches the upstream as the address fence checked, with the
// credentials (HTTP as an absolute-URI request keeping the Host header,
// CONNECT and SOCKS5 as a CONNECT); an allowed host
// goes direct; a denied one, or one whose addresses the address rules
// refuse, never reaches the upstream.
func TestForwardToUpstream(t *testing.T) {
	var up *upstreamProxy
	r := forwardRig(t, func(target string) string {
		up = newUpstreamProxy(t, net.JoinHostPort("127.0.0.1", target), 0)
		return up.addr
	})
	client := r.proxyClient()
	tests := []struct {
		host   string
		status int
		body   string // a part of the body, or of X-Fence-Reason when refused
		seen   []string
	}{
		{"other.test", 200, "from upstream for other.test:" + r.target, []string{"GET http://8.8.8.8:" + r.target + "/ host=other.test:" + r.target + " " + aliceAuth}},
		{"OTHER.test.", 200, "from upstream for OTHER.test.:" + r.target, []string{"GET http://8.8.8.8:" + r.target + "/ host=OTHER.test.:" + r.target + " " + aliceAuth}},
		{"twopub.test", 200, "from upstream", []string{"GET http://8.8.8.8:" + r.target + "/ host=twopub.test:" + r.target + " " + aliceAuth}},
		{"v6.test", 200, "from upstream for v6.test:" + r.target, []string{"GET http://[2001:4860:4860::8888]:" + r.target + "/ host=v6.test:" + r.target + " " + aliceAuth}},
		{"allowed.test", 200, "hello", nil},
		{"bad.wild.test", 403, `denied by network.deniedDomains`, nil},
		{"private.test", 403, "resolves to 10.0.0.5, a private", nil},
		{"mixed.test", 403, "resolves to 10.0.0.5", nil},
		{"metaunk.test", 403, "the cloud metadata address", nil},
		{"local.test", 403, "resolves to 127.0.0.2", nil},
		{"10.0.0.9", 403, "resolves to 10.0.0.9, a private", nil},
		{"nosuch.test", 403, "fence could not resolve nosuch.test", nil},
	}
	for _, tt := range tests {
		resp, err := client.Get("http://" + net.JoinHostPort(tt.host, r.target) + "/")
		if err != nil {
			t.Errorf("GET %s: %v", tt.host, err)
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got := string(body)
		if tt.status != 200 {
			got = resp.Header.Get("X-Fence-Reason")
		}
		if resp.StatusCode != tt.status || !strings.Contains(got, tt.body) {
			t.Errorf("GET %s: %d %q, want %d %q", tt.host, resp.StatusCode, got, tt.status, tt.body)
		}
		if seen := up.take(); fmt.Sprint(seen) != fmt.Sprint(tt.seen) {
			t.Errorf("GET %s: the upstream saw %q, want %q", tt.host, seen, tt.seen)
		}
	}
	if dialed := r.takeDialed(); fmt.Sprint(dialed) != fmt.Sprintf("[%s %s %s %s 127.0.0.1:%s]", up.addr, up.addr, up.addr, up.addr, r.target) {
		t.Errorf("the proxy dialled %v, want the target once (allowed.test) and the upstream four times", dialed)
	}

	t.Run("CONNECT", func(t *testing.T) {
		target := net.JoinHostPort("other.test", r.target)
		c := openTunnel(t, r, target)
		defer c.Close()
		fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: other.test\r\nConnection: close\r\n\r\n")
		if got, _ := io.ReadAll(c); !strings.HasSuffix(string(got), "hello") {
			t.Errorf("through the forwarded tunnel: %q", got)
		}
		if seen := up.take(); fmt.Sprint(seen) != fmt.Sprint([]string{"CONNECT 8.8.8.8:" + r.target + " " + aliceAuth}) {
			t.Errorf("the upstream saw %q", seen)
		}
		for _, host := range []string{"bad.wild.test", "private.test"} {
			if line := connectLine(t, r.httpProxy, net.JoinHostPort(host, r.target)); !strings.Contains(line, "403") {
				t.Errorf("CONNECT %s: %s, want 403", host, line)
			}
		}
		if seen := up.take(); len(seen) > 0 {
			t.Errorf("the upstream saw %q for refused hosts", seen)
		}
	})

	t.Run("SOCKS5", func(t *testing.T) {
		d, err := xproxy.SOCKS5("tcp", r.socksProxy, nil, xproxy.Direct)
		if err != nil {
			t.Fatal(err)
		}
		c, err := d.Dial("tcp", net.JoinHostPort("other.test", r.target))
		if err != nil {
			t.Fatalf("SOCKS5 to other.test: %v", err)
		}
		fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: other.test\r\nConnection: close\r\n\r\n")
		got, _ := io.ReadAll(c)
		c.Close()
		if !strings.HasSuffix(string(got), "hello") {
			t.Errorf("through SOCKS5 and the upstream: %q", got)
		}
		if _, err := d.Dial("tcp", net.JoinHostPort("metaunk.test", r.target)); err == nil {
			t.Error("SOCKS5 to metaunk.test went through")
		}
		if seen := up.take(); fmt.Sprint(seen) != fmt.Sprint([]string{"CONNECT 8.8.8.8:" + r.target + " " + aliceAuth}) {
			t.Errorf("the upstream saw %q", seen)
		}
	})
}

// TestForwardRebinding: a name whose first answer is public and whose
// next is loopback or the metadata address reaches the upstream as the
// address fence checked, by HTTP, CONNECT and SOCKS5: the upstream is
// never given the name to resolve again.
func TestForwardRebinding(t *testing.T) {
	var up *upstreamProxy
	r := forwardRig(t, func(target string) string {
		up = newUpstreamProxy(t, net.JoinHostPort("127.0.0.1", target), 0)
		return up.addr
	})
	resp, err := r.proxyClient().Get("http://" + net.JoinHostPort("rebind-http.test", r.target) + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	want := []string{"GET http://8.8.8.8:" + r.target + "/ host=rebind-http.test:" + r.target + " " + aliceAuth}
	if seen := up.take(); resp.StatusCode != 200 || fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Errorf("HTTP: %d, the upstream saw %q, want 200 and %q", resp.StatusCode, seen, want)
	}
	c := openTunnel(t, r, net.JoinHostPort("rebind-connect.test", r.target))
	c.Close()
	d, err := xproxy.SOCKS5("tcp", r.socksProxy, nil, xproxy.Direct)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := d.Dial("tcp", net.JoinHostPort("rebind-socks.test", r.target))
	if err != nil {
		t.Fatalf("SOCKS5 to rebind-socks.test: %v", err)
	}
	sc.Close()
	want = []string{"CONNECT 8.8.8.8:" + r.target + " " + aliceAuth, "CONNECT 8.8.8.8:" + r.target + " " + aliceAuth}
	if seen := up.take(); fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Errorf("CONNECT and SOCKS5: the upstream saw %q, want %q", seen, want)
	}
}

// TestForwardSNI: a direct tunnel may not carry a name only the upstream
// may (domain fronting past it); a forwarded tunnel carries an allowed
// name, and never a denied one.
func TestForwardSNI(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) { io.WriteString(w, "secret "+req.TLS.ServerName) }))
	defer srv.Close()
	var up *upstreamProxy
	r := forwardRig(t, func(string) string {
		up = newUpstreamProxy(t, srv.Listener.Addr().String(), 0)
		return up.addr
	})
	_, tlsPort, _ := net.SplitHostPort(srv.Listener.Addr().String())
	tests := []struct {
		tunnel, sni string
		allowed     bool
		reason      string
	}{
		{"allowed.test", "allowed.test", true, ""},
		{"allowed.test", "other.test", false, "which only the upstream proxy may carry"},
		{"other.test", "other.test", true, ""},
		{"other.test", "allowed.test", true, ""},
		{"other.test", "twopub.test", true, ""},
		{"other.test", "bad.wild.test", false, "denied by network.deniedDomains"},
	}
	for _, tt := range tests {
		target := net.JoinHostPort(tt.tunnel, tlsPort)
		c := openTunnel(t, r, target)
		tc := tls.Client(c, &tls.Config{ServerName: tt.sni, InsecureSkipVerify: true})
		err := tc.Handshake()
		c.Close()
		events := r.takeEvents()
		switch {
		case tt.allowed && err != nil:
			t.Errorf("tunnel to %s with SNI %s: %v (events %v)", tt.tunnel, tt.sni, err, events)
		case !tt.allowed && (err == nil || len(events) != 1 || !strings.Contains(events[0].Decision.Reason, tt.reason)):
			t.Errorf("tunnel to %s with SNI %s: %v, events %v, want a refusal saying %q", tt.tunnel, tt.sni, err, events, tt.reason)
		}
	}
	up.take()
}

// TestForwardUpstreamFails: an upstream that cannot be reached, or that
// refuses, fails the connection (502) with a reason naming it, and the
// failure is counted with the refusals; nothing goes around it.
func TestForwardUpstreamFails(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := closed.Addr().String()
	closed.Close()
	var refusing *upstreamProxy
	for _, tt := range []struct {
		name     string
		upstream func(target string) string
		reason   string
	}{
		{"unreachable", func(string) string { return deadAddr }, "the upstream proxy http://" + deadAddr + " (network.upstreamProxy) could not be reached"},
		{"refusing", func(target string) string {
			refusing = newUpstreamProxy(t, net.JoinHostPort("127.0.0.1", target), http.StatusForbidden)
			return refusing.addr
		}, `answered "403 Forbidden" to CONNECT 8.8.8.8:`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := forwardRig(t, tt.upstream)
			line := connectLine(t, r.httpProxy, net.JoinHostPort("other.test", r.target))
			if !strings.Contains(line, "502") {
				t.Errorf("CONNECT other.test: %s, want 502", line)
			}
			resp, err := r.proxyClient().Get("http://" + net.JoinHostPort("other.test", r.target) + "/")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			wantHTTP := 502
			if tt.name == "refusing" {
				wantHTTP = 403 // the upstream's own answer to a request, passed on
			}
			if resp.StatusCode != wantHTTP {
				t.Errorf("GET other.test: %d, want %d", resp.StatusCode, wantHTTP)
			}
			events := r.takeEvents()
			if len(events) == 0 || events[0].Decision.Key != "network.upstreamProxy" || !strings.Contains(events[0].Decision.Reason, tt.reason) || strings.Contains(fmt.Sprint(events), "s3cret") {
				t.Fatalf("events %v, want the CONNECT's failure naming the upstream, without its password", events)
			}
			var sum sumRefusals
			for _, e := range events {
				sum.add(r.s.Policy.NetworkDecision(e.Proto, e.Target, e.Target, e.Decision))
			}
			if !strings.Contains(sum.first, `network.upstreamProxy "http://`) {
				t.Errorf("the refusal summary's rule is %q, want the upstream named", sum.first)
			}
			if dialed := r.takeDialed(); strings.Contains(fmt.Sprint(dialed), "8.8.8.8") {
				t.Errorf("the proxy went around the upstream: dialled %v", dialed)
			}
		})
	}
}

// sumRefusals keeps the rule and pattern of the first decision, as the
// refusal summary prints them.
type sumRefusals struct{ first string }

func (s *sumRefusals) add(d policy.Decision) {
	if s.first == "" && d.Pattern != nil {
		s.first = fmt.Sprintf("%s %q", d.Rule, *d.Pattern)
	}
}

// TestForwardNested: in a fence run nested in a fence sandbox, forwarded
// hosts go to the outer sandbox's proxy as allowed ones do, by name.
func TestForwardNested(t *testing.T) {
	outer := newRigWith(t, rigOptions{network: func(int) policy.Network {
		return policy.Network{AllowedDomains: []string{"other.test", "127.0.0.1"}}
	}, names: map[string][]string{"other.test": {"127.0.0.1"}}})
	inner := nestedRig(t, outer, policy.Network{DefaultAction: "proxy", UpstreamProxy: "http://127.0.0.1:1"})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+net.JoinHostPort("other.test", outer.target)+"/", nil)
	resp, err := (&rig{httpProxy: inner}).proxyClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(bufio.NewReader(resp.Body))
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "hello" {
		t.Errorf("GET other.test nested: %d %q, want 200 hello through the outer proxy", resp.StatusCode, body)
	}
}
