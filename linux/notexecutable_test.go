//go:build linux

package linux_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNotExecutable runs files that cannot be executed, and expects fence
// to name the reason: the file's own mode, a directory, or the policy,
// which it blames only when the file itself would run.
func TestNotExecutable(t *testing.T) {
	tests := []struct {
		name, policy, run, stderr string
		unprivileged              bool // a case only an unprivileged user meets
	}{
		{"no execute bit", `{}`, "./script.sh",
			`^fence: cannot execute "./script.sh": permission denied \(it lacks the execute bit, mode -rw-r--r--: chmod \+x it, or run it through its interpreter\)\n$`, false},
		{"a directory", `{}`, "./sub",
			`^fence: cannot execute "./sub": permission denied \(it is a directory\)\n$`, false},
		{"mode for another user", `{}`, "./owners-only",
			`^fence: cannot execute "./owners-only": permission denied \(its mode -rwx------ does not let this user execute it\)\n$`, true},
		{"denied by the policy", `{"filesystem": {"defaultDenyRead": true}}`, "../outside/prog",
			`^fence: cannot execute "../outside/prog": permission denied \(the policy does not allow executing it, or its interpreter: see filesystem.allowExecute\)\n$`, false},
	}
	for _, u := range users(t) {
		for _, tt := range tests {
			if tt.unprivileged && u.uid == 0 {
				continue
			}
			t.Run(u.name+"/"+tt.name, func(t *testing.T) {
				w := newWorld(t, u.uid, tt.policy)
				script := "#!/bin/sh\necho ran\n"
				must(t, os.WriteFile(filepath.Join(w.ws, "script.sh"), []byte(script), 0o644))
				must(t, os.Chown(filepath.Join(w.ws, "script.sh"), u.uid, u.uid))
				must(t, os.WriteFile(filepath.Join(w.ws, "owners-only"), []byte(script), 0o700)) // owned by the test, not the user
				must(t, os.WriteFile(filepath.Join(w.outside, "prog"), []byte(script), 0o755))
				r := w.fence(t, "", nil, "--", tt.run)
				check(t, r, 126, `^$`, tt.stderr)
				if u.uid == os.Getuid() {
					// The Landlock-only engine says the same, after its warnings.
					r := w.withoutUserNS(t, "--", tt.run)
					check(t, r, 126, `^$`, `(?m)`+strings.TrimPrefix(tt.stderr, "^"))
				}
			})
		}
	}
}
