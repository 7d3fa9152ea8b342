package policy

import (
	"encoding/base64"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseUpstreamProxy(t *testing.T) {
	basic := func(s string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte(s)) }
	tests := []struct {
		raw      string
		addr     string
		auth     string
		problem  string // a part of the error; "" when it parses
		password string // must not appear in the error
	}{
		{raw: "http://127.0.0.1:8080", addr: "127.0.0.1:8080"},
		{raw: "http://127.0.0.1:8080/", addr: "127.0.0.1:8080"},
		{raw: "http://[::1]:3128", addr: "[::1]:3128"},
		{raw: "http://Proxy.Corp.Example:3128", addr: "proxy.corp.example:3128"},
		{raw: "http://alice:s3cret@proxy.example:3128", addr: "proxy.example:3128", auth: basic("alice:s3cret")},
		{raw: "http://alice@proxy.example:3128", addr: "proxy.example:3128", auth: basic("alice:")},
		{raw: "http://al%40ice:p%3Ass@proxy.example:3128", addr: "proxy.example:3128", auth: basic("al@ice:p:ss")},
		{raw: "", problem: "is empty"},
		{raw: "https://proxy.example:3128", problem: "https:// proxy, which fence does not speak"},
		{raw: "https://alice:hunter2@proxy.example:3128", problem: `"https://***@proxy.example:3128" is an https://`, password: "hunter2"},
		{raw: "socks5://127.0.0.1:1080", problem: `has the scheme "socks5"`},
		{raw: "127.0.0.1:8080", problem: "is not a URL"},
		{raw: "proxy.example", problem: "is not a URL"},
		{raw: "http://proxy.example", problem: "has no port"},
		{raw: "http://alice:hunter2@proxy.example", problem: "has no port", password: "hunter2"},
		{raw: "http://:8080", problem: "has no host"},
		{raw: "http://proxy.example:0", problem: "port out of range"},
		{raw: "http://proxy.example:70000", problem: "port out of range"},
		{raw: "http://proxy.example:80a", problem: "is not a URL"},
		{raw: "http://proxy.example:3128/path", problem: "has a path"},
		{raw: "http://proxy.example:3128/?q=1", problem: "has a path, query"},
		{raw: "http://proxy.example:3128#x", problem: "fragment"},
		{raw: "http://bad_host!.example:3128", problem: "not a host name"},
		{raw: "http://*.example:3128", problem: "not a host name"},
		{raw: "http://proxy example:3128", problem: "space"},
		{raw: "http://alice:pw\r\nX: y@proxy.example:3128", problem: "control character", password: "pw"},
		{raw: "http://a%3Ab:pw@proxy.example:3128", problem: `user name with a ":"`, password: "pw"},
	}
	for _, tt := range tests {
		u, err := ParseUpstreamProxy(tt.raw)
		if tt.problem != "" {
			if err == nil || !strings.Contains(err.Error(), tt.problem) {
				t.Errorf("ParseUpstreamProxy(%q) = %v, want an error with %q", tt.raw, err, tt.problem)
			}
			if err != nil && tt.password != "" && strings.Contains(err.Error(), tt.password) {
				t.Errorf("ParseUpstreamProxy(%q): the error %q shows the password", tt.raw, err)
			}
			continue
		}
		if err != nil || u.Addr != tt.addr || u.Authorization != tt.auth {
			t.Errorf("ParseUpstreamProxy(%q) = %+v, %v, want addr %q auth %q", tt.raw, u, err, tt.addr, tt.auth)
		}
	}
}

func TestRedactProxyURL(t *testing.T) {
	for raw, want := range map[string]string{
		"http://127.0.0.1:8080":              "http://127.0.0.1:8080",
		"http://alice:pw@proxy.example:3128": "http://***@proxy.example:3128",
		"http://a@b:pw@proxy.example:3128":   "http://***@proxy.example:3128",
		"alice:pw@proxy.example:3128":        "***@proxy.example:3128",
		"":                                   "",
	} {
		if got := RedactProxyURL(raw); got != want {
			t.Errorf("RedactProxyURL(%q) = %q, want %q", raw, got, want)
		}
	}
}

// TestDecideForwarded: under defaultAction "proxy" what no domain rule
// names is allowed through the upstream; what one names is decided as
// before; --no-network forwards nothing.
func TestDecideForwarded(t *testing.T) {
	net := Network{
		AllowedDomains: []string{"allowed.test", "*.wild.test"},
		DeniedDomains:  []string{"denied.test", "bad.wild.test", "10.1.2.3"},
		DefaultAction:  "proxy",
		UpstreamProxy:  "http://u:pw@127.0.0.1:8080",
	}
	pol := Compile(Config{Network: net, SSH: SSH{AllowedHosts: []string{"git.test"}, DeniedHosts: []string{"ssh-denied.test"}}}, Env{})
	tests := []struct {
		host, port string
		allowed    bool
		rule       string
		upstream   string
	}{
		{"allowed.test", "443", true, `network.allowedDomains "allowed.test"`, ""},
		{"a.wild.test", "443", true, `network.allowedDomains "*.wild.test"`, ""},
		{"denied.test", "443", false, `network.deniedDomains "denied.test"`, ""},
		{"bad.wild.test", "80", false, `network.deniedDomains "bad.wild.test"`, ""},
		{"10.1.2.3", "80", false, `network.deniedDomains "10.1.2.3"`, ""},
		{"other.test", "443", true, `network.defaultAction "proxy"`, "127.0.0.1:8080"},
		{"Other.Test.", "80", true, `network.defaultAction "proxy"`, "127.0.0.1:8080"},
		{"192.0.2.7", "80", true, `network.defaultAction "proxy"`, "127.0.0.1:8080"},
		{"git.test", "22", true, "ssh.allowedHosts", ""},
		{"ssh-denied.test", "22", false, `ssh.deniedHosts "ssh-denied.test"`, ""},
		{"ssh-denied.test", "443", true, `network.defaultAction "proxy"`, "127.0.0.1:8080"},
		{"not.an.address.1", "80", false, "", ""},
	}
	for _, tt := range tests {
		d := pol.DecideHostPort(tt.host, tt.port)
		if d.Allowed != tt.allowed || d.Rule != tt.rule || d.Upstream != tt.upstream {
			t.Errorf("DecideHostPort(%q, %q) = %v %q via %q, want %v %q via %q", tt.host, tt.port, d.Allowed, d.Rule, d.Upstream, tt.allowed, tt.rule, tt.upstream)
		}
		if strings.Contains(d.Reason, "pw") {
			t.Errorf("DecideHostPort(%q): reason %q shows the password", tt.host, d.Reason)
		}
	}
	if pol.Upstream.Authorization == "" {
		t.Error("the compiled upstream lost its credentials")
	}
	for name, p := range map[string]*Policy{
		"--no-network":        Compile(Config{Network: net}, Env{NoNetwork: true}),
		"defaultAction deny":  Compile(Config{Network: Network{DefaultAction: "deny", UpstreamProxy: net.UpstreamProxy}}, Env{}),
		"upstreamProxy alone": Compile(Config{Network: Network{UpstreamProxy: net.UpstreamProxy}}, Env{}),
		"bad upstreamProxy":   Compile(Config{Network: Network{DefaultAction: "proxy", UpstreamProxy: "https://x:1"}}, Env{}),
	} {
		if d := p.DecideHostPort("other.test", "443"); d.Allowed || d.Upstream != "" {
			t.Errorf("%s: DecideHostPort(other.test) = %+v, want refused", name, d)
		}
	}
}

// TestNetworkDecisionForwarded: `fence check url` says where a forwarded
// host goes, with the rule's source.
func TestNetworkDecisionForwarded(t *testing.T) {
	pol := Compile(Config{Network: Network{DefaultAction: "proxy", UpstreamProxy: "http://u:pw@proxy.corp.test:3128"}},
		Env{Origin: func(key, value string) string { return "test: " + key + "=" + value }})
	d := pol.NetworkDecision("url", "https://x.test/", "x.test:443", pol.DecideHostPort("x.test", "443"))
	if !d.Allowed || d.Rule != "network.defaultAction" || d.Pattern == nil || *d.Pattern != "proxy" || d.Source != "test: network.defaultAction=proxy" {
		t.Errorf("NetworkDecision = %+v, want allowed by network.defaultAction \"proxy\" with its source", d)
	}
	if !strings.Contains(d.Note, "forwarded to the upstream proxy http://proxy.corp.test:3128") || strings.Contains(d.Note, "pw") {
		t.Errorf("NetworkDecision note = %q, want the upstream named without credentials", d.Note)
	}
}

// TestLoadUpstream: the keys are checked at load, with the file, line and
// column, and defaultAction "proxy" needs an upstreamProxy somewhere in
// the chain.
func TestLoadUpstream(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  string // the error, "" for none; R is the root
	}{
		{
			name:  "proxy without upstream",
			files: map[string]string{"work/fence.jsonc": "{\n  \"network\": {\"defaultAction\": \"proxy\"}\n}"},
			want:  `R/work/fence.jsonc:2:32: network.defaultAction: is "proxy", but no network.upstreamProxy is set`,
		},
		{
			name: "proxy without upstream, in the file extended",
			files: map[string]string{
				"work/fence.jsonc": `{"extends": "./base.jsonc"}`,
				"work/base.jsonc":  "{\"network\": {\n\"defaultAction\": \"proxy\"}}",
			},
			want: `R/work/base.jsonc:2:18: network.defaultAction: is "proxy"`,
		},
		{
			name: "upstream in the child, defaultAction in the parent",
			files: map[string]string{
				"work/fence.jsonc": `{"extends": "./base.jsonc", "network": {"upstreamProxy": "http://127.0.0.1:8080"}}`,
				"work/base.jsonc":  `{"network": {"defaultAction": "proxy"}}`,
			},
		},
		{
			name: "the child sets deny over the parent's proxy",
			files: map[string]string{
				"work/fence.jsonc": `{"extends": "./base.jsonc", "network": {"defaultAction": "deny"}}`,
				"work/base.jsonc":  `{"network": {"defaultAction": "proxy"}}`,
			},
		},
		{
			name:  "unknown action",
			files: map[string]string{"work/fence.jsonc": `{"network": {"defaultAction": "allow"}}`},
			want:  `R/work/fence.jsonc:1:31: network.defaultAction: "allow" is not an action`,
		},
		{
			name:  "https upstream, credentials hidden",
			files: map[string]string{"work/fence.jsonc": `{"network": {"defaultAction": "proxy", "upstreamProxy": "https://bob:hunter2@p.test:443"}}`},
			want:  `R/work/fence.jsonc:1:57: network.upstreamProxy: "https://***@p.test:443" is an https:// proxy`,
		},
		{
			name:  "no port",
			files: map[string]string{"work/fence.jsonc": `{"network": {"upstreamProxy": "http://p.test"}}`},
			want:  `R/work/fence.jsonc:1:31: network.upstreamProxy: "http://p.test" has no port`,
		},
		{
			name:  "not a string",
			files: map[string]string{"work/fence.jsonc": `{"network": {"upstreamProxy": 8080}}`},
			want:  `R/work/fence.jsonc:1:31: network.upstreamProxy:`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tree(t, tt.files)
			_, err := Load(o)
			got := ""
			if err != nil {
				got = strings.ReplaceAll(err.Error(), filepath.Dir(o.Dir), "R")
			}
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Load: %v, want no error", err)
			case tt.want != "" && !strings.HasPrefix(got, tt.want):
				t.Fatalf("Load: %q, want it to begin %q", got, tt.want)
			case strings.Contains(got, "hunter2"):
				t.Fatalf("Load: %q shows the password", got)
			}
		})
	}
}

// TestConfigJSONHidesCredentials: config show prints the upstream proxy
// without its user name and password.
func TestConfigJSONHidesCredentials(t *testing.T) {
	c := Config{Network: Network{DefaultAction: "proxy", UpstreamProxy: "http://alice:hunter2@p.test:3128"}}
	out := string(c.JSON())
	if strings.Contains(out, "hunter2") || strings.Contains(out, "alice") || !strings.Contains(out, `"upstreamProxy": "http://***@p.test:3128"`) {
		t.Errorf("Config.JSON() =\n%s\nwant the upstream proxy without credentials", out)
	}
	if c.Network.UpstreamProxy != "http://alice:hunter2@p.test:3128" {
		t.Error("Config.JSON changed the config it printed")
	}
	eff := string(Compile(c, Env{}).Effective().JSON(true))
	if strings.Contains(eff, "hunter2") || !strings.Contains(eff, "http://p.test:3128") {
		t.Errorf("Effective().JSON() shows %q, want the upstream without credentials", eff)
	}
}

// TestLintUpstreamUnused: an upstreamProxy nothing is forwarded to is
// worth a warning, without its credentials.
func TestLintUpstreamUnused(t *testing.T) {
	for _, tt := range []struct {
		n    Network
		warn bool
	}{
		{Network{UpstreamProxy: "http://u:hunter2@p.test:1"}, true},
		{Network{UpstreamProxy: "http://p.test:1", DefaultAction: "deny"}, true},
		{Network{UpstreamProxy: "http://p.test:1", DefaultAction: "proxy"}, false},
		{Network{}, false},
	} {
		r := &Resolved{Config: Config{Network: tt.n}, origins: map[string]Origin{}}
		var got []string
		for _, w := range Lint(r, "/home/u/proj", "/home/u") {
			if w.Check == "upstream-proxy-unused" {
				got = append(got, w.String())
			}
		}
		if len(got) == 1 != tt.warn || strings.Contains(strings.Join(got, ""), "hunter2") {
			t.Errorf("Lint(%+v) = %q, want the warning: %v, without the password", tt.n, got, tt.warn)
		}
	}
}

// TestProxyURLHasCredentials: a URL naming a user counts, with or without
// a password, and one that does not parse but holds an "@" too.
func TestProxyURLHasCredentials(t *testing.T) {
	for _, tt := range []struct {
		raw  string
		want bool
	}{
		{"http://127.0.0.1:8080", false},
		{"http://alice:s3cret@127.0.0.1:8080", true},
		{"http://alice@127.0.0.1:8080", true},
		{"http://a%zz:x@127.0.0.1:8080", true},
		{"", false},
	} {
		if got := proxyURLHasCredentials(tt.raw); got != tt.want {
			t.Errorf("proxyURLHasCredentials(%q) = %v, want %v", tt.raw, got, tt.want)
		}
	}
}
