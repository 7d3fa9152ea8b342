//go:build linux

package linux_test

import (
	"regexp"
	"strings"
	"testing"
)

// TestRefusalSummary: when the proxies refused connections, fence says
// so at exit in one line, naming the first host, the rule and what would
// allow it; a flag and a config key silence it, and -m lists each
// refusal instead.
func TestRefusalSummary(t *testing.T) {
	script := "./netprobe connect 127.0.0.1:9; ./netprobe http http://blocked.test/"
	summary := `fence: the proxies refused 2 connections, the first to 127.0.0.1:9 (network.allowedDomains): `
	tests := []struct {
		name, policy string
		args         []string
		want         string // the summary line, or "" for none
		blocked      int    // per-connection lines
	}{
		{"summary", `{"network": {"allowedDomains": ["example.com"]}}`, nil,
			summary + `add the host to network.allowedDomains: fence config allow domain 127.0.0.1; -m names each, --no-refusal-summary or network.refusalSummary: false silences this line`, 0},
		{"silenced by the flag", `{"network": {"allowedDomains": ["example.com"]}}`, []string{"--no-refusal-summary"}, "", 0},
		{"silenced by the key", `{"network": {"allowedDomains": ["example.com"], "refusalSummary": false}}`, nil, "", 0},
		{"monitor lists each", `{"network": {"allowedDomains": ["example.com"]}}`, []string{"-m"}, "", 2},
		{"no-network names the flag", `{"network": {"allowedDomains": ["example.com"]}}`, []string{"--no-network"},
			summary + `--no-network refuses every connection: run without it if the command needs the network; -m names each, --no-refusal-summary or network.refusalSummary: false silences this line`, 0},
	}
	for _, u := range users(t) {
		for _, tt := range tests {
			t.Run(u.name+"/"+tt.name, func(t *testing.T) {
				w := newWorld(t, u.uid, tt.policy)
				r := w.fence(t, "", nil, append(tt.args, "-c", script)...)
				check(t, r, 0, `^HTTP/1.1 403 Forbidden\n403 `, "")
				lines := regexp.MustCompile(`(?m)^fence: the proxies refused .*$`).FindAllString(r.stderr, -1)
				switch {
				case tt.want == "" && len(lines) > 0:
					t.Errorf("a summary was printed: %q", lines)
				case tt.want != "" && (len(lines) != 1 || lines[0] != tt.want):
					t.Errorf("summary lines %q, want exactly\n%s\nstderr:\n%s", lines, tt.want, r.stderr)
				}
				if n := strings.Count(r.stderr, "fence: blocked "); n != tt.blocked {
					t.Errorf("%d per-connection lines, want %d:\n%s", n, tt.blocked, r.stderr)
				}
				if strings.Contains(tt.name, "no-network") && strings.Contains(r.stderr, "fence config allow domain") {
					t.Errorf("--no-network suggests allowing a domain:\n%s", r.stderr)
				}
			})
		}
	}
}
