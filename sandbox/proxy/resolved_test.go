package proxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"

	xproxy "golang.org/x/net/proxy"

	"github.com/fence-sandbox/fence/policy"
)

// resolvedNames map allowed names to every kind of address: the host's
// own, metadata, private, and one made-up private address (10.20.0.5)
// that the policy opens and the rig dials at the target on loopback.
var resolvedNames = map[string][]string{
	"loop.test":     {"127.0.0.1"},
	"loop6.test":    {"::1"},
	"mapped.test":   {"::ffff:127.0.0.1"},
	"compat.test":   {"::127.0.0.1"},
	"nat64.test":    {"64:ff9b::7f00:1"},
	"zero.test":     {"0.0.0.0"},
	"meta.test":     {"169.254.169.254"},
	"ecs.test":      {"169.254.170.2"},
	"eks6.test":     {"fd00:ec2::23"},
	"ll.test":       {"169.254.3.3"},
	"reg.corp.test": {"10.1.2.3"},
	"cgnat.test":    {"100.64.1.1"},
	"ula.test":      {"fd00::1"},
	"bench.test":    {"198.18.0.1"},
	"ok.corp.test":  {"10.20.0.5"},
	"two.test":      {"169.254.169.254", "10.1.2.3", "10.20.0.5"},
	"lit.test":      {"169.254.3.4"},
}

// resolvedRig allows every name above, the address 169.254.3.4 itself
// (dialled at the target on loopback too),
// and 10.20.0.0/16 among the private ranges; local outbound is off.
func resolvedRig(t *testing.T, localPort bool) *rig {
	return newRigWith(t, rigOptions{
		names: resolvedNames,
		fakes: []string{"10.20.0.5", "169.254.3.4"},
		network: func(port int) policy.Network {
			n := policy.Network{AllowedDomains: []string{"*.test", "169.254.3.4"}, AllowPrivateAddresses: []string{"10.20.0.0/16"}}
			if localPort {
				on := true
				n.AllowLocalOutbound, n.AllowLocalOutboundPorts = &on, []int{port}
			}
			return n
		},
	})
}

// TestResolvedAddresses: an allowed name that resolves to the host, the
// metadata service or a private range the policy does not open is
// refused before anything is dialled, with the reason naming the key to
// set; each address of a name is judged, and only an allowed one dialled.
func TestResolvedAddresses(t *testing.T) {
	r := resolvedRig(t, false)
	tests := []struct {
		host, reason, dial string // dial: the one address dialled, if any
	}{
		{"loop.test", "resolves to 127.0.0.1, the host's loopback (127.0.0.0/8), which the proxies reach only at a port network.allowLocalOutboundPorts lists: set network.allowLocalOutboundPorts: [" + r.target + "]", ""},
		{"loop6.test", "resolves to ::1, the host's loopback", ""},
		{"mapped.test", "resolves to 127.0.0.1, the host's loopback", ""},
		{"compat.test", "resolves to ::7f00:1, an IPv4-compatible spelling of 127.0.0.1, the host's loopback", ""},
		{"nat64.test", "resolves to 64:ff9b::7f00:1, an NAT64 spelling of 127.0.0.1", ""},
		{"zero.test", "resolves to 0.0.0.0, a “this network”", ""},
		{"meta.test", "resolves to 169.254.169.254, the cloud metadata address", ""},
		{"ecs.test", "resolves to 169.254.170.2, the cloud metadata address", ""},
		{"eks6.test", "resolves to fd00:ec2::23, the cloud metadata address", ""},
		{"ll.test", "resolves to 169.254.3.3, a link-local (169.254.0.0/16) address", ""},
		{"reg.corp.test", `resolves to 10.1.2.3, a private, RFC 1918 (10.0.0.0/8) address, which only network.allowPrivateAddresses allows: set network.allowPrivateAddresses: ["10.0.0.0/8"]`, ""},
		{"cgnat.test", `set network.allowPrivateAddresses: ["100.64.0.0/10"]`, ""},
		{"ula.test", `set network.allowPrivateAddresses: ["fc00::/7"]`, ""},
		{"bench.test", `set network.allowPrivateAddresses: ["198.18.0.0/15"]`, ""},
		{"ok.corp.test", "", "10.20.0.5"},
		{"two.test", "", "10.20.0.5"},
		{"lit.test", "", "169.254.3.4"},
	}
	client := r.proxyClient()
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			resp, err := client.Get("http://" + net.JoinHostPort(tt.host, r.target) + "/")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			dialed, events := r.takeDialed(), r.takeEvents()
			if tt.reason == "" {
				if resp.StatusCode != 200 || !slices.Equal(dialed, []string{net.JoinHostPort(tt.dial, r.target)}) {
					t.Errorf("GET %s: %d %q, dialled %v, want 200 from %s only", tt.host, resp.StatusCode, body, dialed, tt.dial)
				}
				if n := r.lookups(tt.host); n != 1 {
					t.Errorf("GET %s: looked the name up %d times, want once (the dial is by address)", tt.host, n)
				}
				return
			}
			if resp.StatusCode != 403 || !strings.Contains(resp.Header.Get("X-Fence-Reason"), tt.reason) {
				t.Errorf("GET %s: %d %q, want 403 with %q", tt.host, resp.StatusCode, resp.Header.Get("X-Fence-Reason"), tt.reason)
			}
			if len(dialed) > 0 {
				t.Errorf("GET %s: dialled %v before refusing", tt.host, dialed)
			}
			if len(events) != 1 || !strings.Contains(events[0].Decision.Reason, tt.reason) || !strings.HasPrefix(events[0].Decision.Rule, "sandbox.") {
				t.Errorf("GET %s: events %v, want one with %q", tt.host, events, tt.reason)
			}
			if !strings.Contains(string(body), "fence: hint: ") || strings.Contains(string(body), "add the host to network.allowedDomains") {
				t.Errorf("GET %s: the hint does not name what to set: %q", tt.host, body)
			}
		})
	}
}

// TestResolvedAddressesSOCKSAndConnect refuses the same names through
// CONNECT and SOCKS5, and records why.
func TestResolvedAddressesSOCKSAndConnect(t *testing.T) {
	r := resolvedRig(t, false)
	dialer, err := xproxy.SOCKS5("tcp", r.socksProxy, nil, xproxy.Direct)
	if err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"loop.test", "mapped.test", "meta.test", "reg.corp.test", "ula.test", "zero.test"} {
		target := net.JoinHostPort(host, r.target)
		if c, err := dialer.Dial("tcp", target); err == nil || !strings.Contains(err.Error(), "connection not allowed by ruleset") {
			t.Errorf("SOCKS5 %s: %v, want the ruleset refusal", host, err)
			if c != nil {
				c.Close()
			}
		}
		if line := connectLine(t, r.httpProxy, target); line != "HTTP/1.1 403 Forbidden" {
			t.Errorf("CONNECT %s: %q, want 403", host, line)
		}
		events := r.takeEvents()
		if len(events) != 2 || events[0].Proto != "SOCKS5" || events[1].Proto != "CONNECT" || !strings.HasPrefix(events[0].Decision.Reason, "resolves to ") {
			t.Errorf("%s: events %v, want a SOCKS5 and a CONNECT refusal naming the address", host, events)
		}
		if d := r.takeDialed(); len(d) > 0 {
			t.Errorf("%s: dialled %v", host, d)
		}
	}
	if c, err := dialer.Dial("tcp", net.JoinHostPort("ok.corp.test", r.target)); err != nil {
		t.Errorf("SOCKS5 to an allowed private address: %v", err)
	} else {
		c.Close()
	}
	if d, n := r.takeDialed(), r.lookups("ok.corp.test"); !slices.Equal(d, []string{"10.20.0.5:" + r.target}) || n != 1 {
		t.Errorf("SOCKS5 to ok.corp.test: dialled %v after %d lookups, want 10.20.0.5 after one", d, n)
	}
}

// lookups counts the times the proxies looked host up.
func (r *rig) lookups(host string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, h := range r.lookedUp {
		if h == host {
			n++
		}
	}
	return n
}

// TestLocalPortThroughProxy: a loopback address is reached through the
// proxies at a port network.allowLocalOutboundPorts lists.
func TestLocalPortThroughProxy(t *testing.T) {
	r := resolvedRig(t, true)
	resp, err := r.proxyClient().Get("http://" + net.JoinHostPort("loop.test", r.target) + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("GET loop.test at an allowed local port: %d %q", resp.StatusCode, resp.Header.Get("X-Fence-Reason"))
	}
}

// TestLegacyIPv4Hosts: the spellings of 127.0.0.1 a client can send as
// the host are that address, judged as the literal: allowed where the
// policy lists 127.0.0.1, and dialled as 127.0.0.1, never resolved.
func TestLegacyIPv4Hosts(t *testing.T) {
	listed, unlisted := newRig(t), resolvedRig(t, false)
	for _, host := range []string{"2130706433", "0177.0.0.1", "0x7f.1", "127.1", "0x7f000001"} {
		for _, tt := range []struct {
			r      *rig
			status int
		}{{listed, 200}, {unlisted, 403}} {
			resp, err := tt.r.proxyClient().Get("http://" + net.JoinHostPort(host, tt.r.target) + "/")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Errorf("GET %s: %d %q, want %d", host, resp.StatusCode, resp.Header.Get("X-Fence-Reason"), tt.status)
			}
			if line := connectLine(t, tt.r.httpProxy, net.JoinHostPort(host, tt.r.target)); !strings.Contains(line, fmt.Sprint(tt.status)) {
				t.Errorf("CONNECT %s: %q, want %d", host, line, tt.status)
			}
			if d := tt.r.takeDialed(); tt.status == 200 && (len(d) != 2 || d[0] != "127.0.0.1:"+tt.r.target) || tt.status == 403 && len(d) > 0 {
				t.Errorf("%s: dialled %v", host, d)
			}
		}
	}
	for _, r := range []*rig{listed, unlisted} {
		r.mu.Lock()
		if len(r.lookedUp) > 0 {
			t.Errorf("the proxy looked up %v", r.lookedUp)
		}
		r.mu.Unlock()
	}
}

// connectLine sends CONNECT target to the HTTP proxy and returns the
// status line of the answer.
func connectLine(t *testing.T, proxyAddr, target string) string {
	t.Helper()
	c, err := net.Dial("tcp", proxyAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return err.Error()
	}
	resp.Body.Close()
	return resp.Proto + " " + resp.Status
}
