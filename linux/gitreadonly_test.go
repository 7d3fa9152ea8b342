//go:build linux

package linux_test

import (
	"os/exec"
	"testing"
)

// TestGitReadonlyAtExec: git-readonly judges every exec, so a child
// process's destructive command (preflight sees only "netprobe exec
// ...", as it sees only an agent) is refused at exec by the rule that
// names it, and in a real repository the work it would destroy stays;
// everyday git in the same run works.
func TestGitReadonlyAtExec(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not found")
	}
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{"extends": "git-readonly"}`)
			const setup = `git init -q repo && cd repo && git config user.email t@e && git config user.name t && echo one >f && git add f && git commit -qm one && echo work >f`
			r := w.fence(t, "", nil, "-c", setup)
			check(t, r, 0, "", "")
			for _, tt := range []struct{ argv, rule string }{
				{"git -C repo reset --hard", `git reset --hard`},
				{"git -C repo checkout -- f", `git checkout --`},
				{"git -C repo clean -fdx", `git clean`},
				{"rm -rf repo", `rm -\[rR\]\*`},
			} {
				r := w.fence(t, "", nil, "-c", "./netprobe exec "+tt.argv+"; cat repo/f")
				check(t, r, 0, "^error: operation not permitted\nwork\n$", `(?m)^fence: blocked "`+tt.argv[:4]+`.*": matches command.deny "`+tt.rule+`" \(builtin template: git-readonly\) \(at exec\)$`)
			}
			r = w.fence(t, "", nil, "-c", "./netprobe exec git -C repo commit -qam two; git -C repo log --format=%s")
			check(t, r, 0, "^two\none\n$", "")
		})
	}
}
