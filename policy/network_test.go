package policy

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
)

func TestDecideHost(t *testing.T) {
	p := Compile(Config{Network: Network{
		AllowedDomains: []string{"example.com", "*.github.com", "127.0.0.1", "::1", "localhost", "BÜCHER.example", "169.254.169.254"},
		DeniedDomains:  []string{"evil.github.com", "10.0.0.1"},
	}}, Env{Dir: "/w", Home: "/h"})
	tests := []struct {
		host    string
		allowed bool
		rule    string
	}{
		{"example.com", true, `network.allowedDomains "example.com"`},
		{"EXAMPLE.COM.", true, `network.allowedDomains "example.com"`},
		{"www.example.com", false, ""},
		{"api.github.com", true, `network.allowedDomains "*.github.com"`},
		{"a.b.github.com", true, `network.allowedDomains "*.github.com"`},
		{"github.com", false, ""}, // a wildcard covers subdomains, not the apex
		{"evil.github.com", false, `network.deniedDomains "evil.github.com"`},
		{"EVIL.GitHub.com.", false, `network.deniedDomains "evil.github.com"`},
		{"127.0.0.1", true, `network.allowedDomains "127.0.0.1"`},
		{"::ffff:127.0.0.1", true, `network.allowedDomains "127.0.0.1"`},
		{"[::1]", true, `network.allowedDomains "::1"`},
		{"0:0:0:0:0:0:0:1", true, `network.allowedDomains "::1"`},
		{"10.0.0.1", false, `network.deniedDomains "10.0.0.1"`},
		{"localhost", true, `network.allowedDomains "localhost"`},
		{"bücher.example", true, `network.allowedDomains "xn--bcher-kva.example"`},
		{"xn--bcher-kva.example", true, `network.allowedDomains "xn--bcher-kva.example"`},
		{"127.0.0.1.github.com", true, `network.allowedDomains "*.github.com"`},
		{"", false, ""},
	}
	for _, tt := range tests {
		d := p.DecideHost(tt.host)
		if d.Allowed != tt.allowed || d.Rule != tt.rule {
			t.Errorf("DecideHost(%q) = %+v, want allowed %v by %q", tt.host, d, tt.allowed, tt.rule)
		}
	}
}

func TestDecideHostEverything(t *testing.T) {
	p := Compile(Config{Network: Network{AllowedDomains: []string{"*"}, DeniedDomains: []string{"*.internal"}}}, Env{})
	if d := p.DecideHost("anything.example"); !d.Allowed {
		t.Errorf("* does not allow anything.example: %+v", d)
	}
	if d := p.DecideHost("db.internal"); d.Allowed {
		t.Errorf("deniedDomains does not beat *: %+v", d)
	}
	if d := Compile(Config{}, Env{}).DecideHost("example.com"); d.Allowed || d.Reason != "not in network.allowedDomains" {
		t.Errorf("an empty policy allows example.com: %+v", d)
	}
}

// TestDecideAddr pins what an allowed name may resolve to, in every
// spelling of each address, tested without sending anything anywhere.
func TestDecideAddr(t *testing.T) {
	on := true
	p := Compile(Config{Network: Network{
		AllowedDomains:          []string{"*.example.com", "10.9.9.9", "fe80::7", "169.254.170.2"},
		DeniedDomains:           []string{"10.1.2.3"},
		AllowLocalOutbound:      &on,
		AllowLocalOutboundPorts: []int{5432},
		AllowPrivateAddresses:   []string{"10.20.0.0/16", "192.168.1.5", "fd12:3456::/32"},
	}}, Env{})
	tests := []struct {
		addr, port string
		allowed    bool
		rule       string
	}{
		{"93.184.215.14", "443", true, ""},
		{"2606:2800:21f:cb07:6820:80da:af6b:8b2c", "443", true, ""},
		{"::ffff:93.184.215.14", "443", true, ""},
		{"64:ff9b::93.184.215.14", "443", true, ""},
		{"10.1.2.3", "443", false, `network.deniedDomains "10.1.2.3"`},
		{"64:ff9b::10.1.2.3", "443", false, `network.deniedDomains "10.1.2.3"`},
		// loopback: only at an allowLocalOutboundPorts port
		{"127.0.0.1", "80", false, "sandbox.loopbackAddress"},
		{"127.1.2.3", "80", false, "sandbox.loopbackAddress"},
		{"127.0.0.1", "5432", true, ""},
		{"::1", "5432", true, ""},
		{"::1", "80", false, "sandbox.loopbackAddress"},
		{"::ffff:127.0.0.1", "80", false, "sandbox.loopbackAddress"},
		{"::127.0.0.1", "80", false, "sandbox.loopbackAddress"},
		{"::ffff:0:127.0.0.1", "80", false, "sandbox.loopbackAddress"},
		{"64:ff9b::127.0.0.1", "80", false, "sandbox.loopbackAddress"},
		{"2002:7f00:1::1", "80", false, "sandbox.loopbackAddress"},
		// unspecified: connects to the host itself
		{"0.0.0.0", "5432", false, "sandbox.unspecifiedAddress"},
		{"0.1.2.3", "80", false, "sandbox.unspecifiedAddress"},
		{"::", "5432", false, "sandbox.unspecifiedAddress"},
		{"::ffff:0.0.0.0", "80", false, "sandbox.unspecifiedAddress"},
		// link-local and metadata: only an allowedDomains entry naming the address
		{"169.254.1.1", "80", false, "sandbox.linkLocalAddress"},
		{"fe80::1", "80", false, "sandbox.linkLocalAddress"},
		{"fe80::1%eth0", "80", false, "sandbox.linkLocalAddress"},
		{"fe80::7", "80", true, ""},
		{"169.254.169.254", "80", false, "sandbox.metadataAddress"},
		{"::ffff:169.254.169.254", "80", false, "sandbox.metadataAddress"},
		{"::169.254.169.254", "80", false, "sandbox.metadataAddress"},
		{"fd00:ec2::254", "80", false, "sandbox.metadataAddress"},
		{"fd00:ec2::23", "80", false, "sandbox.metadataAddress"},
		{"169.254.170.23", "80", false, "sandbox.metadataAddress"},
		{"100.100.100.200", "80", false, "sandbox.metadataAddress"},
		{"168.63.129.16", "80", false, "sandbox.metadataAddress"},
		{"169.254.170.2", "80", true, ""},
		// private: only inside allowPrivateAddresses
		{"10.0.0.1", "443", false, "sandbox.privateAddress"},
		{"10.9.9.9", "443", true, ""}, // allowedDomains names it
		{"10.20.3.4", "443", true, ""},
		{"::ffff:10.20.3.4", "443", true, ""},
		{"64:ff9b::10.20.3.4", "443", true, ""},
		{"10.21.0.1", "443", false, "sandbox.privateAddress"},
		{"172.16.0.1", "443", false, "sandbox.privateAddress"},
		{"172.31.255.255", "443", false, "sandbox.privateAddress"},
		{"172.32.0.1", "443", true, ""},
		{"192.168.1.5", "443", true, ""},
		{"192.168.1.6", "443", false, "sandbox.privateAddress"},
		{"100.64.0.1", "443", false, "sandbox.privateAddress"},
		{"100.127.255.255", "443", false, "sandbox.privateAddress"},
		{"100.128.0.1", "443", true, ""},
		{"198.18.0.1", "443", false, "sandbox.privateAddress"},
		{"198.19.255.255", "443", false, "sandbox.privateAddress"},
		{"192.0.0.170", "443", false, "sandbox.privateAddress"},
		{"203.0.113.9", "443", false, "sandbox.privateAddress"},
		{"fd00::1", "443", false, "sandbox.privateAddress"},
		{"fc00::1", "443", false, "sandbox.privateAddress"},
		{"fd12:3456::1", "443", true, ""},
		{"2001:db8::1", "443", false, "sandbox.privateAddress"},
		// reserved
		{"224.0.0.1", "443", false, "sandbox.reservedAddress"},
		{"255.255.255.255", "443", false, "sandbox.reservedAddress"},
		{"ff02::1", "443", false, "sandbox.reservedAddress"},
	}
	for _, tt := range tests {
		d := p.DecideAddr("x.example.com", tt.port, netip.MustParseAddr(tt.addr))
		if d.Allowed != tt.allowed || d.Rule != tt.rule {
			t.Errorf("DecideAddr(%s, %s) = %+v, want allowed %v by %q", tt.addr, tt.port, d, tt.allowed, tt.rule)
		}
		if strings.HasPrefix(d.Rule, "sandbox.") && (d.Fix == "" || !strings.Contains(d.Reason, "resolves to "+netip.MustParseAddr(tt.addr).WithZone("").Unmap().String())) {
			t.Errorf("DecideAddr(%s) = %+v: the refusal does not name the address and the fix", tt.addr, d)
		}
	}
}

// TestDecideAddrReasons pins the refusals' words: each names the key that
// would allow the address.
func TestDecideAddrReasons(t *testing.T) {
	p := Compile(Config{Network: Network{AllowedDomains: []string{"*.example.com"}}}, Env{})
	tests := []struct{ addr, want string }{
		{"10.1.2.3", `resolves to 10.1.2.3, a private, RFC 1918 (10.0.0.0/8) address, which only network.allowPrivateAddresses allows: set network.allowPrivateAddresses: ["10.0.0.0/8"] (or the address alone)`},
		{"fd00::5", `resolves to fd00::5, a unique local, RFC 4193 (fc00::/7) address, which only network.allowPrivateAddresses allows: set network.allowPrivateAddresses: ["fc00::/7"] (or the address alone)`},
		{"127.0.0.1", `resolves to 127.0.0.1, the host's loopback (127.0.0.0/8), which the proxies reach only at a port network.allowLocalOutboundPorts lists: set network.allowLocalOutboundPorts: [8080] and network.allowLocalOutbound: true`},
		{"::ffff:0:7f00:1", `resolves to ::ffff:0:7f00:1, an IPv4-translated spelling of 127.0.0.1, the host's loopback (127.0.0.0/8), which the proxies reach only at a port network.allowLocalOutboundPorts lists: set network.allowLocalOutboundPorts: [8080] and network.allowLocalOutbound: true`},
		{"169.254.169.254", `resolves to 169.254.169.254, the cloud metadata address, which only an allowedDomains entry naming the address itself can allow`},
		{"169.254.9.9", `resolves to 169.254.9.9, a link-local (169.254.0.0/16) address, which only an allowedDomains entry naming the address itself can allow`},
	}
	for _, tt := range tests {
		if d := p.DecideAddr("x.example.com", "8080", netip.MustParseAddr(tt.addr)); d.Reason != tt.want {
			t.Errorf("DecideAddr(%s).Reason =\n %q, want\n %q", tt.addr, d.Reason, tt.want)
		}
	}
}

// TestDecideAddrHostNetwork: with allowedDomains "*" the command has the
// host's network, so only the metadata addresses stay refused.
func TestDecideAddrHostNetwork(t *testing.T) {
	p := Compile(Config{Network: Network{AllowedDomains: []string{"*"}, DeniedDomains: []string{"10.1.2.3"}}}, Env{})
	for addr, allowed := range map[string]bool{"127.0.0.1": true, "10.0.0.1": true, "169.254.1.1": true, "169.254.169.254": false, "fd00:ec2::254": false, "10.1.2.3": false} {
		if d := p.DecideAddr("x.test", "80", netip.MustParseAddr(addr)); d.Allowed != allowed {
			t.Errorf("DecideAddr(%s) with the host network = %+v, want allowed %v", addr, d, allowed)
		}
	}
}

// TestDecideAddrLocalOutboundOff: allowLocalOutboundPorts opens nothing
// while local outbound is off.
func TestDecideAddrLocalOutboundOff(t *testing.T) {
	off := false
	p := Compile(Config{Network: Network{AllowedDomains: []string{"a.test"}, AllowLocalOutbound: &off, AllowLocalOutboundPorts: []int{5432}}}, Env{})
	if d := p.DecideAddr("a.test", "5432", netip.MustParseAddr("127.0.0.1")); d.Allowed {
		t.Errorf("a loopback port was allowed with allowLocalOutbound false: %+v", d)
	}
}

// TestNormalizeHostSpellings reads every spelling of an IPv4 address a
// client could send as a host, and refuses names that end in a number.
func TestNormalizeHostSpellings(t *testing.T) {
	tests := []struct{ host, want string }{
		{"2130706433", "127.0.0.1"},
		{"0177.0.0.1", "127.0.0.1"},
		{"0x7f.1", "127.0.0.1"},
		{"0X7F.0.0.1", "127.0.0.1"},
		{"127.1", "127.0.0.1"},
		{"127.0.1", "127.0.0.1"},
		{"0x7f000001", "127.0.0.1"},
		{"017700000001", "127.0.0.1"},
		{"127.000.000.001", "127.0.0.1"},
		{"010.0.0.1", "8.0.0.1"},
		{"0xa9.0xfe.0xa9.0xfe", "169.254.169.254"},
		{"2852039166", "169.254.169.254"},
		{"0", "0.0.0.0"},
		{"0x", "0.0.0.0"},
		{"127.0.0.1.", "127.0.0.1"},
		{"[::ffff:7f00:1]", "127.0.0.1"},
		{"4294967295", "255.255.255.255"},
		{"4294967296", ""},
		{"256.0.0.1", ""},
		{"1.2.3.4.5", ""},
		{"08.0.0.1", ""},
		{"0xg.1", ""},
		{"1.256.65536", ""},
		{"example.123", ""},
		{"example.0x1f", ""},
		{"1e100.net", "1e100.net"},
		{"0x.example", "0x.example"},
		{"123.example", "123.example"},
	}
	for _, tt := range tests {
		got, err := NormalizeHost(tt.host)
		if tt.want == "" && err == nil || tt.want != "" && got != tt.want {
			t.Errorf("NormalizeHost(%q) = %q, %v, want %q", tt.host, got, err, tt.want)
		}
	}
	p := Compile(Config{Network: Network{AllowedDomains: []string{"*.example.com", "10.0.0.1"}}}, Env{})
	for host, allowed := range map[string]bool{"2130706433": false, "0x7f.1": false, "167772161": true, "012.0.0.1": true, "0xa.1": true, "10.1": true, "10.0.0.2": false} {
		if d := p.DecideHostPort(host, "80"); d.Allowed != allowed {
			t.Errorf("DecideHostPort(%q) = %+v, want allowed %v", host, d, allowed)
		}
	}
}

// TestPrivateAddressesConfig checks network.allowPrivateAddresses from
// the file to the policy: bad entries are errors naming the key and
// index, good ones are masked, merged like other lists and shown with
// their source.
func TestPrivateAddressesConfig(t *testing.T) {
	errs := []struct{ src, want string }{
		{`{"network": {"allowPrivateAddresses": ["10.0.0.0/8", "10.0.0.0/33"]}}`, `network.allowPrivateAddresses[1]: "10.0.0.0/33" is not a CIDR or an address`},
		{`{"network": {"allowPrivateAddresses": ["intranet"]}}`, `network.allowPrivateAddresses[0]: "intranet" is not a CIDR or an address`},
		{`{"network": {"allowPrivateAddresses": ["10.1.2.3/8"]}}`, `network.allowPrivateAddresses[0]: "10.1.2.3/8" has bits set past its prefix length: write "10.0.0.0/8"`},
		{`{"network": {"allowPrivateAddresses": ["8.8.8.0/24"]}}`, `"8.8.8.0/24" holds no private address`},
		{`{"network": {"allowPrivateAddresses": ["127.0.0.0/8"]}}`, `"127.0.0.0/8" is the host's loopback, which network.allowLocalOutboundPorts opens`},
		{`{"network": {"allowPrivateAddresses": ["169.254.169.254"]}}`, `"169.254.169.254" is the cloud metadata address, which only an allowedDomains entry`},
		{`{"network": {"allowPrivateAddresses": ["fe80::/10"]}}`, `"fe80::/10" is link-local`},
		{`{"network": {"allowPrivateAddresses": ["fd00::1%eth0"]}}`, `has an IPv6 zone`},
		{`{"network": {"allowPrivateAddresses": ["::ffff:10.0.0.0/104"]}}`, `write it in IPv4, as "10.0.0.0/8"`},
		{`{"network": {"allowPrivateAddresses": ["::ffff:10.0.0.0/90"]}}`, `has bits set past its prefix length: write "::ffc0:0:0/90"`},
	}
	for _, tt := range errs {
		if _, err := parseValid("f", []byte(tt.src)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parse %s: %v, want an error with %q", tt.src, err, tt.want)
		}
	}
	for _, ok := range []string{"10.0.0.0/8", "10.20.0.5", "172.16.0.0/12", "fd00::/8", "0.0.0.0/0", "::/0", "100.64.0.0/10", "198.18.0.0/15"} {
		if _, err := parseValid("f", []byte(`{"network": {"allowPrivateAddresses": ["`+ok+`"]}}`)); err != nil {
			t.Errorf("parse allowPrivateAddresses %q: %v", ok, err)
		}
	}
	merged := Merge(Config{Network: Network{AllowPrivateAddresses: []string{"10.0.0.0/8"}}}, Config{Network: Network{AllowPrivateAddresses: []string{"10.0.0.0/8", "fd00::/8"}}})
	p := Compile(merged, Env{Origin: func(key, value string) string { return "test " + key + " " + value }})
	if got := fmt.Sprint(p.AllowPrivateAddresses); got != "[10.0.0.0/8 fd00::/8]" {
		t.Errorf("merged allowPrivateAddresses = %s, want [10.0.0.0/8 fd00::/8]", got)
	}
	e := p.Effective().Network.PrivateAddresses
	if len(e) != 2 || e[1].Value != "fd00::/8" || e[1].Rule != "network.allowPrivateAddresses" || e[1].Source != "test network.allowPrivateAddresses fd00::/8" {
		t.Errorf("effective allowPrivateAddresses = %+v", e)
	}
	single := Compile(Config{Network: Network{AllowPrivateAddresses: []string{"10.0.0.5"}}}, Env{})
	if got := fmt.Sprint(single.AllowPrivateAddresses); got != "[10.0.0.5/32]" {
		t.Errorf("a single address compiles to %s, want [10.0.0.5/32]", got)
	}
}

// TestDecideHostPortSSH lets ssh reach ssh.allowedHosts through the proxy,
// on port 22 only, and never a denied domain.
func TestDecideHostPortSSH(t *testing.T) {
	p := Compile(Config{
		Network: Network{DeniedDomains: []string{"bad.example.com"}},
		SSH:     SSH{AllowedHosts: []string{"*.example.com"}},
	}, Env{})
	tests := []struct {
		host, port string
		allowed    bool
	}{
		{"git.example.com", "22", true},
		{"git.example.com", "443", false},
		{"bad.example.com", "22", false},
		{"other.org", "22", false},
	}
	for _, tt := range tests {
		if d := p.DecideHostPort(tt.host, tt.port); d.Allowed != tt.allowed {
			t.Errorf("DecideHostPort(%s, %s) = %+v, want allowed %v", tt.host, tt.port, d, tt.allowed)
		}
	}
}
