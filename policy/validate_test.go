package policy

import (
	"testing"
)

// TestParseErrors pins every kind of config error to its message and to
// the line and column it points at.
func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"unknown top key", `{"filesytem": {}}`,
			`f:1:2: unknown key "filesytem" at the top level (did you mean "filesystem"?); known keys: $schema, allowPty, audit, command, devices, env, extends, filesystem, forceNewSession, limits, macos, network, ssh`},
		{"unknown nested key", "{\"network\": {\n  \"allowedDomain\": []}}",
			`f:2:3: unknown key "allowedDomain" in network (did you mean "allowedDomains"?); known keys: allowAllUnixSockets, allowLocalBinding, allowLocalOutbound, allowLocalOutboundPorts, allowPrivateAddresses, allowUnixSockets, allowedDomains, defaultAction, deniedDomains, httpProxyPort, refusalSummary, socksProxyPort, upstreamProxy`},
		{"unknown key no suggestion", `{"macos": {"mach": {"zzzzzz": 1}}}`,
			`f:1:21: unknown key "zzzzzz" in macos.mach; known keys: lookup, register`},
		{"duplicate key", `{"allowPty": true, "allowPty": false}`, `f:1:20: allowPty: duplicate key: each key may appear once`},
		{"top-level array", `[]`, `f:1:1: want an object, got an array`},
		{"top-level null", `null`, `f:1:1: want an object at the top level, got null`},
		{"string for bool", `{"allowPty": "yes"}`, `f:1:14: allowPty: want true or false, got the string "yes"`},
		{"bool for list", `{"filesystem": {"denyRead": true}}`, `f:1:29: filesystem.denyRead: want an array of strings, got true`},
		{"number in string list", `{"filesystem": {"denyRead": ["a", 3]}}`, `f:1:35: filesystem.denyRead[1]: want a string, got the number 3`},
		{"null in list", `{"filesystem": {"denyRead": [null]}}`, `f:1:30: filesystem.denyRead[0]: want a string, got null`},
		{"object for string", `{"extends": {}}`, `f:1:13: extends: want a string, got an object`},
		{"fraction for int", `{"network": {"socksProxyPort": 10.5}}`, `f:1:32: network.socksProxyPort: want a whole number, got 10.5`},
		{"string for nullable bool", `{"command": {"useDefaults": "no"}}`, `f:1:29: command.useDefaults: want true or false or null, got the string "no"`},
		{"port too high", `{"network": {"httpProxyPort": 65536}}`, `f:1:31: network.httpProxyPort: port 65536 is out of range: want 1 to 65535`},
		{"glob budget zero", `{"filesystem": {"globBudgetMs": 0}}`, `f:1:33: filesystem.globBudgetMs: 0 is out of range: want 1 to 60000 milliseconds`},
		{"port zero", `{"network": {"socksProxyPort": 0}}`, `f:1:32: network.socksProxyPort: port 0 is out of range: want 1 to 65535`},
		{"negative port in list", `{"network": {"allowLocalOutboundPorts": [22, -1]}}`, `f:1:46: network.allowLocalOutboundPorts[1]: port -1 is out of range: want 1 to 65535`},
		{"huge number", `{"network": {"httpProxyPort": 99999999999}}`, `f:1:31: network.httpProxyPort: want a whole number, got 99999999999`},
		{"empty pattern", `{"filesystem": {"allowWrite": [""]}}`, `f:1:32: filesystem.allowWrite[0]: "" is an empty pattern: remove it, or use "." for the working directory`},
		{"blank pattern", `{"filesystem": {"denyWrite": ["  "]}}`, `f:1:31: filesystem.denyWrite[0]: "  " is an empty pattern: remove it, or use "." for the working directory`},
		{"tilde user", `{"filesystem": {"denyRead": ["~root/.ssh"]}}`, `f:1:30: filesystem.denyRead[0]: "~root/.ssh" uses ~user, which is not supported: write the absolute path`},
		{"bad glob", `{"filesystem": {"allowRead": ["src/[a-"]}}`, `f:1:31: filesystem.allowRead[0]: "src/[a-" is not a valid glob: check its brackets and escapes`},
		{"empty extends", `{"extends": ""}`, `f:1:13: extends: is empty: name a template, "@base", or a file path`},
		{"device mode", `{"devices": {"mode": "all"}}`, `f:1:22: devices.mode: "all" is not a device mode: want one of auto, minimal, host`},
		{"device outside dev", `{"devices": {"allow": ["/etc/passwd"]}}`, `f:1:24: devices.allow[0]: "/etc/passwd" is not a device path: want a clean path under /dev/, such as "/dev/kvm"`},
		{"device dotdot", `{"devices": {"allow": ["/dev/../etc"]}}`, `f:1:24: devices.allow[0]: "/dev/../etc" is not a device path: want a clean path under /dev/, such as "/dev/kvm"`},
		{"relative socket", `{"network": {"allowUnixSockets": ["docker.sock"]}}`, `f:1:35: network.allowUnixSockets[0]: "docker.sock" is not an absolute socket path: want "/run/..." or "~/..."`},
		{"empty command", `{"command": {"deny": [""]}}`, `f:1:23: command.deny[0]: "" is an empty rule: remove it`},
		{"command glob", `{"command": {"deny": ["rm -[^-]*r*"]}}`, `f:1:23: command.deny[0]: "rm -[^-]*r*" has "-[^-]*r*", which is not a valid glob and would match nothing: check its brackets (a '-' first in one needs a backslash before it)`},
		{"ssh host space", `{"ssh": {"allowedHosts": ["a b"]}}`, `f:1:27: ssh.allowedHosts[0]: "a b" contains white space: write one host pattern per entry`},
		{"mach star inside", `{"macos": {"mach": {"lookup": ["com.*.x"]}}}`, `f:1:32: macos.mach.lookup[0]: "com.*.x" has a "*" before its end: want an exact name, a prefix ending in "*", or "*"`},
		{"env glob", `{"env": {"deny": ["A=B"]}}`, `f:1:19: env.deny[0]: "A=B" is not a variable name pattern: want a name or a glob such as "*_TOKEN"`},
		{"env bad glob", `{"env": {"allow": ["A[B"]}}`, `f:1:20: env.allow[0]: "A[B" is not a valid glob: check its brackets`},
		{"limits timeout", `{"limits": {"timeout": "soon"}}`, `f:1:24: limits.timeout: "soon" is not a positive duration such as "30s" or "10m"`},
		{"limits negative", `{"limits": {"cpuSeconds": -1}}`, `f:1:27: limits.cpuSeconds: -1 is negative: want a positive number, or leave it out for no limit`},
		{"limits few files", `{"limits": {"openFiles": 3}}`, `f:1:26: limits.openFiles: 3 is too few: want at least 16`},
		{"backward range", `{"filesystem": {"denyRead": ["/w/[z-a]"]}}`, `f:1:30: filesystem.denyRead[0]: "/w/[z-a]" has a character range that runs backwards (such as [z-a]), or does once lowered for a deny rule's case-blind match`},
		{"audit glob", `{"audit": {"file": "~/logs/*.jsonl"}}`, `f:1:20: audit.file: "~/logs/*.jsonl" is a glob: name one file`},
		{"audit empty", `{"audit": {"file": " "}}`, `f:1:20: audit.file: " " is empty: name a file, such as "~/.local/state/fence/audit.jsonl"`},
		{"syntax", "{\n  \"allowPty\": true\n  \"network\": {},\n}", `f:3:3: invalid JSONC: invalid character '"' after object value (expecting ',' or '}')`},
		{"unterminated", `{"allowPty": true`, `f:1:18: invalid JSONC: parsing object after value: unexpected EOF`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseValid("f", []byte(tt.src))
			if err == nil || err.Error() != tt.want {
				t.Errorf("parse(%s) error =\n  %v\nwant\n  %s", tt.src, err, tt.want)
			}
		})
	}
}

func TestCheckDomain(t *testing.T) {
	tests := []struct {
		domain string
		ok     bool
		want   string // start of the problem, when not ok
	}{
		{"example.com", true, ""},
		{"*.example.com", true, ""},
		{"*", true, ""},
		{"localhost", true, ""},
		{"EXAMPLE.com.", true, ""},
		{"127.0.0.1", true, ""},
		{"::1", true, ""},
		{"fd00:ec2::254", true, ""},
		{"xn--bcher-kva.example", true, ""},
		{"bücher.example", true, ""},
		{"under_score.example.com", true, ""},
		{"", false, "is an empty domain pattern"},
		{"https://example.com", false, "has a scheme"},
		{"example.com/path", false, "has a path"},
		{"example.com:443", false, "has a port"},
		{"[::1]", false, "is a bracketed address"},
		{"[::1]:443", false, "is a bracketed address"},
		{"user@example.com", false, "has a user name"},
		{"*.com", false, "would match a whole top-level domain"},
		{"*.", false, "would match a whole top-level domain"},
		{"*example.com", false, "has a \"*\" that is not a leading \"*.\""},
		{"foo.*.com", false, "has a \"*\" that is not a leading \"*.\""},
		{"**.example.com", false, "has a \"*\" that is not a leading \"*.\""},
		{"example..com", false, "has an empty label"},
		{".example.com", false, "has an empty label"},
		{"-bad.example.com", false, "has a label that starts or ends with \"-\""},
		{"exa mple.com", false, "has the character ' '"},
		{"fe80::1%eth0", false, "has an IPv6 zone"},
	}
	for _, tt := range tests {
		got := checkDomain(tt.domain)
		if (got == "") != tt.ok || (!tt.ok && !hasPrefix(got, tt.want)) {
			t.Errorf("checkDomain(%q) = %q, want ok=%v %q", tt.domain, got, tt.ok, tt.want)
		}
	}
}

func hasPrefix(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }

// TestParseAccepts checks the JSONC that must load: comments, trailing
// commas, nulls for "not set", an empty or comment-only file.
func TestParseAccepts(t *testing.T) {
	tests := []struct {
		name, src string
		empty     bool
	}{
		{"empty", "", true},
		{"whitespace", " \n\t", true},
		{"line comment", "// nothing\n", true},
		{"line comment no newline", "// nothing", true},
		{"block comment", "/* a\nb */", true},
		{"empty object", "{}", false},
		{"comments and trailing commas", "{\n // c\n \"allowPty\": true, /* x */\n \"network\": {\"allowedDomains\": [\"a.com\",],},\n}", false},
		{"nulls", `{"network": null, "command": {"useDefaults": null, "deny": null}}`, false},
		{"schema key", `{"$schema": "https://example.com/fence.schema.json"}`, false},
	}
	for _, tt := range tests {
		p, err := parseValid("f", []byte(tt.src))
		if err != nil {
			t.Errorf("%s: parse(%q): %v", tt.name, tt.src, err)
			continue
		}
		if p.empty != tt.empty {
			t.Errorf("%s: parse(%q).empty = %v, want %v", tt.name, tt.src, p.empty, tt.empty)
		}
	}
}
