//go:build linux

package linux_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRuntimeExecDeny runs, from inside the sandbox, a program that a
// one-word deny rule names, the way a child process would (preflight sees
// only "netprobe exec ..."): the kernel refuses to execute it.
func TestRuntimeExecDeny(t *testing.T) {
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{"command": {"deny": ["mytool", "alias"]}}`)
			binDir := filepath.Join(w.ws, "bin")
			must(t, os.MkdirAll(binDir, 0o755))
			probe, err := os.ReadFile(filepath.Join(bin, "netprobe"))
			must(t, err)
			for _, name := range []string{"mytool", "multi", "other"} {
				// Each its own program: a copy of mytool would be mytool.
				must(t, os.WriteFile(filepath.Join(binDir, name), append(slices.Clip(probe), name...), 0o755))
			}
			must(t, os.Symlink("multi", filepath.Join(binDir, "alias")))
			must(t, os.Chown(binDir, u.uid, u.uid))
			env := []string{"PATH=" + binDir + ":/usr/bin:/bin"}

			r := w.fence(t, "", env, "--", "./netprobe", "exec", "mytool")
			check(t, r, 0, `^error: exec: "mytool": executable file not found in \$PATH\n$`, "") // masked: not executable
			r = w.fence(t, "", env, "--", "./netprobe", "exec", filepath.Join(binDir, "mytool"))
			check(t, r, 0, `permission denied\n$`, "")
			r = w.fence(t, "", env, "--", "./netprobe", "exec", "other")
			check(t, r, 0, `^error: dial unix /nonexistent`, "")
			// alias is multi: blocking it blocks multi too, and fence says so.
			r = w.fence(t, "", env, "--", "./netprobe", "exec", filepath.Join(binDir, "multi"))
			check(t, r, 0, `permission denied\n$`, `fence: warning: command.deny "alias", at run time: alias is .*/bin/multi, which also runs multi; all of them are blocked`)
		})
	}
}

// TestRuntimeExecDenyDefaults: a child process cannot execute chroot (a
// builtin default), whatever preflight saw.
func TestRuntimeExecDenyDefaults(t *testing.T) {
	if _, err := exec.LookPath("chroot"); err != nil {
		t.Skip("chroot not found")
	}
	w := newWorld(t, os.Getuid(), `{}`)
	r := w.fence(t, "", nil, "--", "./netprobe", "exec", "chroot", "/", "true")
	check(t, r, 0, `^error: exec: "chroot": executable file not found in \$PATH\n$`, "") // masked: not executable
}

// TestSharedBinaryAccepted lets a policy accept that a shared binary
// cannot be denied at run time: no warning, and only preflight blocks.
func TestSharedBinaryAccepted(t *testing.T) {
	w := newWorld(t, os.Getuid(), `{"command": {"deny": ["alias"], "acceptSharedBinaryCannotRuntimeDeny": ["multi"]}}`)
	binDir := filepath.Join(w.ws, "bin")
	must(t, os.MkdirAll(binDir, 0o755))
	probe, err := os.ReadFile(filepath.Join(bin, "netprobe"))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(binDir, "multi"), append(probe, "multi"...), 0o755)) // not a copy of ./netprobe
	must(t, os.Symlink("multi", filepath.Join(binDir, "alias")))
	env := []string{"PATH=" + binDir + ":/usr/bin:/bin"}
	r := w.fence(t, "", env, "--", "./netprobe", "exec", "alias")
	check(t, r, 0, `^error: dial unix /nonexistent`, "")
	if strings.Contains(r.stderr, "warning") {
		t.Errorf("warned although the policy accepts the shared binary:\n%s", r.stderr)
	}
	r = w.fence(t, "", env, "--", "alias")
	check(t, r, 125, "", `^fence: blocked "alias": matches command.deny "alias"`)
}

// TestRuntimeExecArgv checks runtimeExecPolicy "argv": a child process's
// `git push` is refused at exec, with the rule named, while `git status`
// runs; a renamed argv[0] does not hide the program.
func TestRuntimeExecArgv(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not found")
	}
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{"command": {"deny": ["git push"], "runtimeExecPolicy": "argv"}}`)
			r := w.fence(t, "", nil, "--", "./netprobe", "exec", "git", "push", "origin")
			check(t, r, 0, `^error: operation not permitted\n$`, `(?m)^fence: blocked "git push origin": matches command.deny "git push" \(settings file: .*\) \(at exec\)$`)
			r = w.fence(t, "", nil, "--", "./netprobe", "exec", "git", "status")
			check(t, r, 128, "", `not a git repository`)
			r = w.fence(t, "", nil, "-c", `x=git; $x push`) // preflight cannot see it; the exec is judged
			check(t, r, 126, "", `fence: blocked "git push": matches command.deny "git push" .* \(at exec\)`)
			// The init is dumpable only while it starts the command.
			r = w.fence(t, "", nil, "--", "./escape")
			check(t, r, 0, `(?m)^open-init-mem: EACCES$`, "")
		})
	}
}

// TestRuntimeExecGitForms: in argv mode a child's exec of git's dashed
// program, of the plumbing that does push's job, or of an alias set on
// the command line is refused as git push, with the rule named.
func TestRuntimeExecGitForms(t *testing.T) {
	if _, err := os.Stat("/usr/lib/git-core/git-send-pack"); err != nil {
		t.Skip("git's exec-path is not /usr/lib/git-core here")
	}
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{"command": {"deny": ["git push"], "runtimeExecPolicy": "argv"}}`)
			for _, argv := range [][]string{
				{"/usr/lib/git-core/git-push", "origin"},
				{"/usr/lib/git-core/git-send-pack", "origin"},
				{"git", "-c", "alias.x=push", "x"},
			} {
				r := w.fence(t, "", nil, append([]string{"--", "./netprobe", "exec"}, argv...)...)
				check(t, r, 0, `^error: operation not permitted\n$`, `(?m)^fence: blocked ".*": matches command.deny "git push" \(settings file: .*\) \(at exec\)$`)
			}
		})
	}
}

// TestRuntimeExecOneLine: a process that tries one refused command again
// and again (execvp walks every directory of PATH) is told once; another
// process trying it (here the shell refused at exec for the command in
// its -c string) is told again.
func TestRuntimeExecOneLine(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not found")
	}
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{"command": {"deny": ["git push"], "runtimeExecPolicy": "argv"}}`)
			script := `x=git; shopt -s execfail; for d in /a /b /c /usr/local/bin /usr/bin; do exec $d/$x push; done; echo after; bash -c "exec /usr/bin/$x push"; true`
			r := w.fence(t, "", nil, "--", "bash", "-c", script)
			if n := strings.Count(r.stderr, `matches command.deny "git push"`); n != 2 || !strings.Contains(r.stdout, "after") {
				t.Errorf("%d refusal lines for two processes, want 2 (stdout %q):\n%s", n, r.stdout, r.stderr)
			}
		})
	}
}

// TestRuntimeExecGitArgv0: git runs the subcommand its argv[0] names, so
// an exec of git with argv[0] git-push is refused as git push in argv
// mode, and exec -a git-push git at preflight.
func TestRuntimeExecGitArgv0(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not found")
	}
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{"command": {"deny": ["git push"], "runtimeExecPolicy": "argv"}}`)
			r := w.fence(t, "", nil, "--", "bash", "-c", `x=git; exec -a $x-push $x origin`)
			check(t, r, 126, "", `(?m)^fence: blocked "git push origin": matches command.deny "git push" .*\(at exec\)$`)
			r = w.fence(t, "", nil, "--", "bash", "-c", `exec -a git-push git origin`)
			check(t, r, 125, "", `^fence: blocked .*matches command.deny "git push"`)
		})
	}
}

// TestRuntimeExecLoaderOperand: the program the dynamic loader runs is
// judged as the file it is in the sandbox: a link in the sandbox's own
// /dev/shm, and an fd of the caller's, to git are git.
func TestRuntimeExecLoaderOperand(t *testing.T) {
	loader := "/lib64/ld-linux-x86-64.so.2"
	if _, err := os.Stat(loader); err != nil {
		t.Skip("no x86-64 glibc loader here")
	}
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{"command": {"deny": ["git push"], "runtimeExecPolicy": "argv"}}`)
			for _, script := range []string{
				"ln -s /usr/bin/git /dev/shm/g && " + loader + " /dev/shm/g push",
				loader + " /proc/self/fd/3 push 3</usr/bin/git",
			} {
				r := w.fence(t, "", nil, "-c", script)
				if !strings.Contains(r.stderr, `matches command.deny "git push"`) || !strings.Contains(r.stderr, "(at exec)") {
					t.Errorf("%s: not refused at exec:\n%s", script, r.stderr)
				}
			}
		})
	}
}

// TestGitAutocorrectOff: with help.autocorrect on in the user's git
// config, a typo would run the guessed subcommand inside git, where no
// exec shows it; under a git rule the sandbox's git sees it off.
func TestGitAutocorrectOff(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not found")
	}
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{"command": {"deny": ["git push"]}}`)
			must(t, os.WriteFile(w.home+"/.gitconfig", []byte("[help]\n\tautocorrect = immediate\n"), 0o644))
			r := w.fence(t, "", []string{"HOME=" + w.home}, "--", "git", "config", "--get", "help.autocorrect")
			check(t, r, 0, `^0\n$`, "")
		})
	}
}
