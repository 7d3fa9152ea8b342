//go:build linux

package linux_test

import (
	"strings"
	"testing"
)

// TestPolicyFlags runs the policy flags against a project config that
// allows more: each flag must take effect in the real sandbox, as root and
// as an unprivileged uid, and deny flags must beat the config's allows.
func TestPolicyFlags(t *testing.T) {
	const policy = `{"filesystem": {"allowWrite": ["."]}, "command": {"allow": ["git push origin"]}}`
	tests := []struct {
		name           string
		flags          []string
		script         string
		code           int
		stdout, stderr string
		notOut         string
	}{
		{"read-only takes the workspace back", []string{"--mode", "read-only"}, `echo x > new.txt`, 1, "", `new.txt: Read-only file system`, ""},
		{"read-only keeps the private /tmp", []string{"--mode", "read-only"}, `echo x > /tmp/s && cat /tmp/s`, 0, `^x\n$`, "", ""},
		{"workspace-write opens only the workspace", []string{"--mode", "workspace-write"}, `echo x > new.txt && echo x > ../outside/new`, 1, "", `outside/new: Read-only file system`, ""},
		{"full writes outside the workspace", []string{"--mode", "full"}, `echo x > ../outside/new && cat ../outside/new`, 0, `^x\n$`, "", ""},
		{"full keeps the protections", []string{"--mode", "full"}, `echo x >> .bashrc`, 1, "", `.bashrc: Read-only file system`, ""},
		{"deny-write beats allowWrite", []string{"--deny-write", "README"}, `cat README; echo x >> README`, 1, `^readme\n$`, `README: Read-only file system`, ""},
		{"deny-read hides a readable file", []string{"--deny-read", "secret.txt"}, `cat secret.txt`, 1, "", `secret.txt: Permission denied`, "TOPSECRET"},
		{"allow-write does not beat a protection", []string{"--allow-write", ".git"}, `echo x >> .git/config`, 1, "", `Read-only file system`, ""},
		{"deny-command beats command.allow", []string{"--deny-command", "git push"}, `git push origin main`, 125, "", `command.deny "git push" \(command line\)`, ""},
	}
	for _, u := range users(t) {
		for _, tt := range tests {
			t.Run(u.name+"/"+tt.name, func(t *testing.T) {
				w := newWorld(t, u.uid, policy)
				r := w.fence(t, "", nil, append(tt.flags, "-c", tt.script)...)
				check(t, r, tt.code, tt.stdout, tt.stderr)
				if tt.notOut != "" && strings.Contains(r.stdout, tt.notOut) {
					t.Errorf("stdout leaks %q:\n%s", tt.notOut, r.stdout)
				}
			})
		}
	}
}
