package policy

import (
	"net/netip"
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

// TestDecideAddr pins the refusal of metadata addresses reached through a
// name (no DNS rebinding route to the metadata service), tested without
// sending anything anywhere.
func TestDecideAddr(t *testing.T) {
	p := Compile(Config{Network: Network{AllowedDomains: []string{"*.example.com"}, DeniedDomains: []string{"10.1.2.3"}}}, Env{})
	tests := []struct {
		addr    string
		allowed bool
	}{
		{"127.0.0.1", true},
		{"169.254.169.254", false},
		{"::ffff:169.254.169.254", false},
		{"fd00:ec2::254", false},
		{"10.1.2.3", false},
	}
	for _, tt := range tests {
		if d := p.DecideAddr("x.example.com", netip.MustParseAddr(tt.addr)); d.Allowed != tt.allowed {
			t.Errorf("DecideAddr(%s) = %+v, want allowed %v", tt.addr, d, tt.allowed)
		}
	}
	literal := Compile(Config{Network: Network{AllowedDomains: []string{"169.254.169.254"}}}, Env{})
	if d := literal.DecideAddr("169.254.169.254", netip.MustParseAddr("169.254.169.254")); !d.Allowed {
		t.Errorf("the metadata address allowed literally is refused: %+v", d)
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
