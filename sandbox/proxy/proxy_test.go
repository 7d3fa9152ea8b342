package proxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	xproxy "golang.org/x/net/proxy"

	"github.com/fence-sandbox/fence/policy"
)

// rig is a target server on loopback and both proxies in front of it,
// with a resolver hook that maps test names to addresses and a dial hook
// that refuses anything but loopback, so no test traffic leaves the host.
// A few made-up addresses (fakes) are dialled at the target on loopback
// instead, to show what is dialled once the policy allows them.
type rig struct {
	target     string // the target server's port
	httpProxy  string
	socksProxy string
	s          *Server
	mu         sync.Mutex
	lookedUp   []string
	dialed     []string
	events     []Event
}

// rigOptions change a rig: the policy's network (given the target's
// port), names beyond the default ones, made-up addresses to dial at the
// target, and the target itself.
type rigOptions struct {
	network func(port int) policy.Network
	names   map[string][]string
	// sequences are names whose answer changes: the nth lookup gets the
	// nth list, the last one from then on (a rebinding name).
	sequences map[string][][]string
	fakes     []string
	handler   http.Handler
}

// defaultNetwork allows allowed.test, *.wild.test, meta.test and the
// literal 127.0.0.1, and denies bad.wild.test.
func defaultNetwork(int) policy.Network {
	return policy.Network{
		AllowedDomains: []string{"allowed.test", "*.wild.test", "meta.test", "127.0.0.1"},
		DeniedDomains:  []string{"bad.wild.test"},
	}
}

func newRig(t *testing.T) *rig { return newRigWith(t, rigOptions{}) }

func newRigWith(t *testing.T, o rigOptions) *rig {
	t.Helper()
	if o.handler == nil {
		o.handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/host" {
				io.WriteString(w, r.Host)
				return
			}
			io.WriteString(w, "hello")
		})
	}
	if o.network == nil {
		o.network = defaultNetwork
	}
	srv := httptest.NewServer(o.handler)
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	r := &rig{target: port}
	names := map[string][]string{"allowed.test": {"127.0.0.1"}, "a.wild.test": {"127.0.0.1"}, "bad.wild.test": {"127.0.0.1"}, "meta.test": {"169.254.169.254"}, "twoaddr.test": {"169.254.169.254"}}
	maps.Copy(names, o.names)
	n, _ := strconv.Atoi(port)
	r.s = &Server{
		Policy: policy.Compile(policy.Config{Network: o.network(n)}, policy.Env{}),
		Resolve: func(_ context.Context, host string) ([]netip.Addr, error) {
			r.mu.Lock()
			r.lookedUp = append(r.lookedUp, host)
			r.mu.Unlock()
			addrs, ok := names[host]
			if seq := o.sequences[host]; len(seq) > 0 {
				addrs, ok = seq[0], true
				if len(seq) > 1 {
					o.sequences[host] = seq[1:]
				}
			}
			if !ok {
				return nil, fmt.Errorf("no such host %s", host)
			}
			var out []netip.Addr
			for _, a := range addrs {
				out = append(out, netip.MustParseAddr(a))
			}
			return out, nil
		},
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			r.mu.Lock()
			r.dialed = append(r.dialed, addr)
			r.mu.Unlock()
			ap, err := netip.ParseAddrPort(addr)
			switch {
			case err == nil && slices.Contains(o.fakes, ap.Addr().String()):
				addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(int(ap.Port())))
			case err != nil || !ap.Addr().IsLoopback():
				t.Errorf("the proxy dialled %s, which is not loopback", addr)
				return nil, fmt.Errorf("test dialer: %s is off limits", addr)
			}
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
		Log: func(e Event) {
			r.mu.Lock()
			r.events = append(r.events, e)
			r.mu.Unlock()
		},
	}
	for _, serve := range []struct {
		addr *string
		fn   func(net.Listener) error
	}{{&r.httpProxy, r.s.ServeHTTP}, {&r.socksProxy, r.s.ServeSOCKS}} {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		*serve.addr = l.Addr().String()
		go serve.fn(l)
	}
	return r
}

// takeEvents returns the refusals logged so far and forgets them.
func (r *rig) takeEvents() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.events
	r.events = nil
	return e
}

// takeDialed returns the addresses dialled so far and forgets them.
func (r *rig) takeDialed() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	d := r.dialed
	r.dialed = nil
	return d
}

// proxyClient is an HTTP client that sends everything through the rig's
// HTTP proxy.
func (r *rig) proxyClient() *http.Client {
	proxyURL, _ := url.Parse("http://" + r.httpProxy)
	return &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL), DisableKeepAlives: true}}
}

func TestHTTPProxy(t *testing.T) {
	r := newRig(t)
	client := r.proxyClient()
	tests := []struct {
		host   string
		status int
		reason string
	}{
		{"allowed.test", 200, ""},
		{"ALLOWED.test.", 200, ""},
		{"a.wild.test", 200, ""},
		{"127.0.0.1", 200, ""},
		{"denied.test", 403, "not in network.allowedDomains"},
		{"wild.test", 403, "not in network.allowedDomains"},
		{"bad.wild.test", 403, `denied by network.deniedDomains (network.deniedDomains "bad.wild.test")`},
		{"meta.test", 403, "resolves to 169.254.169.254, the cloud metadata address"},
	}
	for _, tt := range tests {
		resp, err := client.Get("http://" + net.JoinHostPort(tt.host, r.target) + "/")
		if err != nil {
			t.Errorf("GET via proxy %s: %v", tt.host, err)
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
		if tt.status == 403 && !strings.Contains(string(body), "fence: blocked HTTP "+net.JoinHostPort(tt.host, r.target)) {
			t.Errorf("GET %s: the refusal does not say what it blocked: %q", tt.host, body)
		}
		if tt.host == "bad.wild.test" && !strings.Contains(string(body), `fence: hint: remove "bad.wild.test" from network.deniedDomains`) {
			t.Errorf("GET %s: the hint does not point at the deny rule: %q", tt.host, body)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if slices.Contains(r.lookedUp, "denied.test") || slices.Contains(r.lookedUp, "bad.wild.test") {
		t.Errorf("the proxy looked up a denied name: %v", r.lookedUp)
	}
	if len(r.events) != 4 {
		t.Errorf("logged %d refusals, want 4: %v", len(r.events), r.events)
	}
}

func TestConnectTunnel(t *testing.T) {
	r := newRig(t)
	for _, tt := range []struct {
		host, want string
	}{{"allowed.test", "HTTP/1.1 200 Connection established"}, {"denied.test", "HTTP/1.1 403 Forbidden"}} {
		conn, err := net.Dial("tcp", r.httpProxy)
		if err != nil {
			t.Fatal(err)
		}
		target := net.JoinHostPort(tt.host, r.target)
		fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
		br := bufio.NewReader(conn)
		line, _ := br.ReadString('\n')
		if strings.TrimSpace(line) != tt.want {
			t.Errorf("CONNECT %s: %q, want %q", tt.host, line, tt.want)
		}
		if strings.Contains(tt.want, "200") {
			br.ReadString('\n') // the empty line
			fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
			rest, _ := io.ReadAll(br)
			if !strings.HasSuffix(string(rest), "hello") {
				t.Errorf("through the tunnel: %q", rest)
			}
		}
		conn.Close()
	}
}

func TestSOCKSProxy(t *testing.T) {
	r := newRig(t)
	dialer, err := xproxy.SOCKS5("tcp", r.socksProxy, nil, xproxy.Direct)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		host string
		ok   bool
	}{{"allowed.test", true}, {"127.0.0.1", true}, {"denied.test", false}, {"bad.wild.test", false}, {"meta.test", false}}
	for _, tt := range tests {
		conn, err := dialer.Dial("tcp", net.JoinHostPort(tt.host, r.target))
		if tt.ok != (err == nil) {
			t.Errorf("SOCKS5 %s: %v, want ok %v", tt.host, err, tt.ok)
		}
		if err == nil {
			conn.Close()
		} else if !strings.Contains(err.Error(), "connection not allowed by ruleset") {
			t.Errorf("SOCKS5 %s: %v, want the ruleset reply", tt.host, err)
		}
	}
}

// TestDialErrorNamesRefusedAddress resolves an allowed name to a public
// address that cannot be dialled and to the host's loopback, which the
// policy refuses: the error says both, and no refusal is logged (the
// connection was allowed, and failed).
func TestDialErrorNamesRefusedAddress(t *testing.T) {
	var events []Event
	s := &Server{
		Policy: policy.Compile(policy.Config{Network: policy.Network{AllowedDomains: []string{"two.test"}}}, policy.Env{}),
		Resolve: func(context.Context, string) ([]netip.Addr, error) {
			return []netip.Addr{netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("127.0.0.1")}, nil
		},
		Dial: func(_ context.Context, _, addr string) (net.Conn, error) {
			if addr != "93.184.216.34:443" {
				t.Errorf("dialled %s", addr)
			}
			return nil, errors.New("unreachable") // nothing leaves the machine
		},
		Log: func(e Event) { events = append(events, e) },
	}
	_, err := s.connect(context.Background(), "CONNECT", "two.test", "443")
	if err == nil || !strings.Contains(err.Error(), "unreachable; another address of two.test was refused: resolves to 127.0.0.1") {
		t.Errorf("connect: %v", err)
	}
	if len(events) != 0 {
		t.Errorf("events %v: the policy allowed the connection, which failed", events)
	}
}
