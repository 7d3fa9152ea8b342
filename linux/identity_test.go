//go:build linux

package linux_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestIdentitySymlink: a symlink to git under another name is git, in
// preflight (argv and -c) and at exec in argv mode, with the rule named.
func TestIdentitySymlink(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not found")
	}
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{"command": {"deny": ["git push"]}}`)
			must(t, os.Symlink(git, filepath.Join(w.ws, "g")))
			r := w.fence(t, "", nil, "--", "./g", "push", "origin")
			check(t, r, 125, "", `^fence: blocked "./g push origin": matches command.deny "git push"`)
			r = w.fence(t, "", nil, "-c", "true && ./g push")
			check(t, r, 125, "", `^fence: blocked "./g push": matches command.deny "git push"`)
			r = w.fence(t, "", nil, "--", "./g", "status")
			check(t, r, 128, "", `not a git repository`)

			w = newWorld(t, u.uid, `{"command": {"deny": ["git push"], "runtimeExecPolicy": "argv"}}`)
			must(t, os.Symlink(git, filepath.Join(w.ws, "g")))
			r = w.fence(t, "", nil, "--", "./netprobe", "exec", "./g", "push", "origin")
			check(t, r, 0, `^error: operation not permitted\n$`, `(?m)^fence: blocked ".* push origin": matches command.deny "git push" \(settings file: .*\) \(at exec\)$`)
		})
	}
}

// TestIdentityLinkAndCopy: another hard link and a copy of a denied
// program, on the PATH under names no rule has, are that program. The
// hard link (found at start by its inode) is masked in path mode, the
// plan naming the rule, and refused in preflight by its name; the copy
// is refused in preflight by its path, and both are refused at exec in
// argv mode, where fence judges the file the kernel runs.
func TestIdentityLinkAndCopy(t *testing.T) {
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			world := func(mode string) (*world, string, []string) {
				w := newWorld(t, u.uid, `{"command": {"deny": ["mytool"], "runtimeExecPolicy": "`+mode+`"}}`)
				binDir := filepath.Join(w.ws, "bin")
				must(t, os.MkdirAll(binDir, 0o755))
				tool, err := os.ReadFile("/bin/true")
				must(t, err)
				must(t, os.WriteFile(filepath.Join(binDir, "mytool"), tool, 0o755))
				must(t, os.Link(filepath.Join(binDir, "mytool"), filepath.Join(binDir, "mylink")))
				must(t, os.WriteFile(filepath.Join(binDir, "mycopy"), tool, 0o755))
				must(t, os.Chown(binDir, u.uid, u.uid))
				return w, binDir, []string{"PATH=" + binDir + ":/usr/bin:/bin"}
			}

			w, binDir, env := world("path")
			r := w.fence(t, "", env, "plan", "--", "true")
			for _, name := range []string{"mytool", "mylink"} {
				want := `"path": "` + filepath.Join(binDir, name) + `",`
				if i := strings.Index(r.stdout, want); i < 0 || !strings.Contains(r.stdout[i:min(i+200, len(r.stdout))], `"why": "command.deny \"mytool\", at run time"`) {
					t.Errorf("the plan does not mask %s for command.deny \"mytool\":\n%s", name, r.stdout)
				}
			}
			r = w.fence(t, "", env, "--", "./netprobe", "exec", filepath.Join(binDir, "mylink"))
			check(t, r, 0, `permission denied\n$`, "")
			for _, name := range []string{"mylink", filepath.Join(binDir, "mycopy"), "bin/mycopy"} {
				r = w.fence(t, "", env, "--", name)
				check(t, r, 125, "", `^fence: blocked "`+name+`": matches command.deny "mytool"`)
			}

			w, binDir, env = world("argv")
			for _, name := range []string{"mylink", "mycopy"} {
				r = w.fence(t, "", env, "--", "./netprobe", "exec", name)
				check(t, r, 0, `^error: operation not permitted\n$`, `(?m)^fence: blocked "(`+name+`|mytool)[^"]*": matches command.deny "mytool" \(settings file: .*\) \(at exec\)$`) // a copy is judged as the program it is
			}
		})
	}
}
