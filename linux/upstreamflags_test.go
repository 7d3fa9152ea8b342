//go:build linux

package linux_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestShellUser runs -c through $SHELL (dash as /bin/sh here, or bash)
// and as a login shell, which reads the home's profile inside the
// sandbox, where the profile stays read-only though the home is
// writable; and preflight judges the line as that shell runs it.
func TestShellUser(t *testing.T) {
	const policy = `{"filesystem": {"allowWrite": [".", "~"], "denyWrite": ["~/.ssh"]}, "command": {"deny": ["git push"], "dynamic": "deny"}}`
	tests := []struct {
		name, shell string
		flags       []string
		script      string
		code        int
		stdout, err string
	}{
		{"sh runs the line", "/bin/sh", []string{"--shell", "user"}, `cat /proc/$$/cmdline | tr '\0' ' '; echo "[$FROM_PROFILE]"`, 0, `^/bin/sh -c cat /proc/.* \[\]\n$`, ""},
		{"login reads the profile", "/bin/sh", []string{"--shell", "user", "--shell-login"}, `cat /proc/$$/cmdline | tr '\0' ' '; echo "[$FROM_PROFILE]"`, 0, `^/bin/sh -l -c cat /proc/.* \[yes\]\n$`, ""},
		{"default login is bash -l", "/bin/sh", []string{"--shell-login"}, `echo "$0 [$FROM_PROFILE]"`, 0, `^/(usr/)?bin/bash \[yes\]\n$`, ""},
		{"the profile is read-only", "/bin/bash", []string{"--shell", "user", "--shell-login"}, `echo 'export PWNED=1' >> ~/.profile; touch ~/other && echo home-writable`, 0, `^home-writable\n$`, `\.profile: Read-only file system`},
		{"an alias is judged", "/bin/sh", []string{"--shell", "user"}, "alias p='git push'\np origin", 125, "", `blocked "git push": matches command.deny "git push"`},
		{"an alias's name is unseen", "/bin/sh", []string{"--shell", "user"}, "alias p=git\np push", 125, "", `preflight cannot see what it runs \(an alias defined on the line, which (sh|dash|ash|bash) expands in a -c string\)`},
		{"a relative SHELL is refused", "sh", []string{"--shell", "user"}, `true`, 125, "", `\$SHELL "sh" is not an absolute path`},
	}
	for _, u := range users(t) {
		for _, tt := range tests {
			t.Run(u.name+"/"+tt.name, func(t *testing.T) {
				w := newWorld(t, u.uid, policy)
				profile := filepath.Join(w.home, ".profile")
				must(t, os.WriteFile(profile, []byte("export FROM_PROFILE=yes\n"), 0o644))
				must(t, os.Chown(profile, u.uid, u.uid))
				r := w.fence(t, "", []string{"SHELL=" + tt.shell}, append(tt.flags, "-c", tt.script)...)
				check(t, r, tt.code, tt.stdout, tt.err)
				if data, _ := os.ReadFile(profile); string(data) != "export FROM_PROFILE=yes\n" {
					t.Errorf("the profile was changed: %q", data)
				}
			})
		}
	}
}

// tmpDir is a fresh directory below the host's /tmp owned by uid, with a
// file in it.
func tmpDir(t *testing.T, uid int) string {
	t.Helper()
	dir, err := os.MkdirTemp("/tmp", "fence-expose-")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	must(t, os.WriteFile(filepath.Join(dir, "file"), []byte("HOST\n"), 0o644))
	must(t, os.Chmod(dir, 0o755))
	must(t, os.Chown(dir, uid, uid))
	must(t, os.Chown(filepath.Join(dir, "file"), uid, uid))
	return dir
}

// TestExposeHostPath binds a host directory below /tmp into the private
// /tmp, read-only or writable, and refuses what would widen the policy:
// a link planted at the path, a path a deny covers. A link the command
// finds inside a writable exposed directory leads to the sandbox's own
// view of its target, which stays read-only.
func TestExposeHostPath(t *testing.T) {
	const policy = `{"filesystem": {"allowWrite": ["."]}}`
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, policy)
			dir := tmpDir(t, u.uid)
			r := w.fence(t, "", nil, "-c", "cat "+dir+"/file")
			check(t, r, 1, "", `No such file or directory`)

			r = w.fence(t, "", nil, "--expose-host-path", dir, "-c", "cat "+dir+"/file; echo x > "+dir+"/file")
			check(t, r, 1, `^HOST\n$`, dir+`/file: Read-only file system`)

			must(t, os.Symlink(w.outside+"/data.txt", dir+"/out"))
			r = w.fence(t, "", nil, "--expose-host-path-rw", dir, "-c", "echo new > "+dir+"/new && cat "+dir+"/out && echo x >> "+dir+"/out")
			check(t, r, 1, `^OUTSIDE\n$`, `/out: Read-only file system`)
			if data, _ := os.ReadFile(dir + "/new"); string(data) != "new\n" {
				t.Errorf("the writable exposed directory holds %q, want the command's file", data)
			}
			if data, _ := os.ReadFile(w.outside + "/data.txt"); string(data) != "OUTSIDE\n" {
				t.Errorf("written through the link: %q", data)
			}

			// A link at the exposed path, planted before the run.
			link := tmpLink(t, w.outside, otherUser(u))
			r = w.fence(t, "", nil, "--expose-host-path-rw", link, "-c", "echo x > "+link+"/data.txt")
			check(t, r, 125, "", `refused: the path is a symbolic link or lies below one \(it leads to "`+w.outside+`"\)`)
			if data, _ := os.ReadFile(w.outside + "/data.txt"); string(data) != "OUTSIDE\n" {
				t.Errorf("written through the planted link: %q", data)
			}

			r = w.fence(t, "", nil, "--deny-read", dir, "--expose-host-path", dir, "-c", "cat "+dir+"/file")
			check(t, r, 125, "", `--expose-host-path "`+dir+`": refused: filesystem.denyRead "`+dir+`"`)
			must(t, os.WriteFile(dir+"/.bashrc", []byte("# rc\n"), 0o644))
			r = w.fence(t, "", []string{"HOME=" + dir}, "--expose-host-path-rw", dir+"/.bashrc", "-c", "true")
			check(t, r, 125, "", `refused: mandatory.shellStartup "`+dir+`/.bashrc"`)
		})
	}
}

// TestExposeHostPathLandlockOnly runs the exposed paths without user
// namespaces: there is no private /tmp, so the host's path is where it
// is, and Landlock gives it the access the flag asks for.
func TestExposeHostPathLandlockOnly(t *testing.T) {
	w := newWorld(t, os.Getuid(), `{"filesystem": {"allowWrite": ["."]}}`)
	ro, rw := tmpDir(t, os.Getuid()), tmpDir(t, os.Getuid())
	r := w.withoutUserNS(t, "--expose-host-path", ro, "--expose-host-path-rw", rw, "-c", "cat "+ro+"/file; echo x > "+ro+"/file; echo y > "+rw+"/file && cat "+rw+"/file")
	check(t, r, 0, `^HOST\ny\n$`, ro+`/file: Permission denied`)
	if data, _ := os.ReadFile(ro + "/file"); string(data) != "HOST\n" {
		t.Errorf("the read-only path was written: %q", data)
	}
}

// TestFenceLogFile sends -d and -m lines to the log, fence's warnings,
// refusals (also logged under -m) and the command's output to stderr,
// so a command refused before it starts exits 125 with its reason on
// stderr; and keeps the log out of the
// command's reach although it lies in the writable workspace: not
// inherited, read-only inside, and never opened through a link a
// command planted there before.
func TestFenceLogFile(t *testing.T) {
	const policy = `{"filesystem": {"allowWrite": ["."]}, "command": {"deny": ["git push"]}}`
	connect := `exec 3<>/dev/tcp/127.0.0.1/3128 && printf 'CONNECT blocked.example:443 HTTP/1.1\r\nHost: blocked.example:443\r\n\r\n' >&3 && head -1 <&3;`
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, policy)
			log := filepath.Join(w.ws, "fence.log")
			script := connect + ` echo to-stderr >&2; ls -l /proc/self/fd/ | grep -c fence.log; echo pwned >> fence.log; rm -f fence.log; mv fence.log x`
			r := w.fence(t, "", nil, "-d", "-m", "--fence-log-file", "fence.log", "-c", script)
			check(t, r, 1, `^HTTP/1.1 403 .*\n0\n$`, `(?s)to-stderr.*fence.log: Read-only file system`)
			if strings.Contains(r.stderr, "fence: debug:") || strings.Contains(r.stderr, "fence: monitor: ") {
				t.Errorf("debug or monitor summary lines on stderr:\n%s", r.stderr)
			}
			if !strings.Contains(r.stderr, "fence: blocked CONNECT blocked.example:443") {
				t.Errorf("the refusal is missing from stderr:\n%s", r.stderr)
			}
			data, err := os.ReadFile(log)
			must(t, err)
			text := string(data)
			for _, want := range []string{"fence: debug: config: ", "fence: debug: plan: argv", "fence: blocked CONNECT blocked.example:443", "fence: monitor: 1 connections blocked"} {
				if !strings.Contains(text, want) {
					t.Errorf("log lacks %q:\n%s", want, text)
				}
			}
			if strings.Contains(text, "\npwned\n") || strings.Contains(text, "\nto-stderr\n") {
				t.Errorf("the command reached the log:\n%s", text)
			}
			if fi, err := os.Stat(log); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("log mode %v (%v), want 0600", fi.Mode(), err)
			}

			// A command refused before it starts: 125, the reason on stderr.
			r = w.fence(t, "", nil, "-m", "--fence-log-file", "fence.log", "-c", "git push")
			check(t, r, 125, "", `fence: blocked "git push": matches command\.deny "git push"`)

			// A second run appends.
			w.fence(t, "", nil, "-d", "--fence-log-file", "fence.log", "-c", "true")
			if again, _ := os.ReadFile(log); !strings.HasPrefix(string(again), text) || len(again) <= len(data) {
				t.Errorf("the second run did not append")
			}

			// A link left where the log goes is refused, not followed.
			must(t, os.Symlink("../home/.bashrc", filepath.Join(w.ws, "planted.log")))
			r = w.fence(t, "", nil, "-d", "--fence-log-file", "planted.log", "-c", "true")
			check(t, r, 125, "", `--fence-log-file "planted.log": refused: it is a symbolic link`)
			if rc, _ := os.ReadFile(filepath.Join(w.home, ".bashrc")); string(rc) != "# rc\n" {
				t.Errorf(".bashrc was written through the link: %q", rc)
			}
		})
	}
}

// TestFenceLogFileLandlockOnly keeps the log read-only without user
// namespaces too, where Landlock alone enforces the write rules.
func TestFenceLogFileLandlockOnly(t *testing.T) {
	w := newWorld(t, os.Getuid(), `{"filesystem": {"allowWrite": ["."]}}`)
	r := w.withoutUserNS(t, "-d", "--fence-log-file", "fence.log", "-c", "echo pwned >> fence.log; echo done")
	check(t, r, 0, `^done\n$`, `fence.log: Permission denied`)
	data, err := os.ReadFile(filepath.Join(w.ws, "fence.log"))
	must(t, err)
	if !strings.Contains(string(data), "fence: debug: plan: argv") || strings.Contains(string(data), "\npwned\n") {
		t.Errorf("log:\n%s", data)
	}
}
