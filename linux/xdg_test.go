//go:build linux

package linux_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// probeDirs is what the command sees of its XDG_RUNTIME_DIR and TMPDIR:
// each's value, owner, mode and type, whether it can write there, and
// what it found there before writing.
const probeDirs = `for v in XDG_RUNTIME_DIR TMPDIR; do
  eval d=\$$v
  echo "$v=$d $(stat -c '%u %a %F' "$d" 2>&1)"
  [ -L "$d" ] && echo "$v is a link"
  echo "$v holds [$(ls -A "$d" 2>&1 | tr '\n' ' ')]"
done
for v in XDG_RUNTIME_DIR TMPDIR; do
  eval d=\$$v
  echo "left by a run" 2>/dev/null > "$d/probe-$v" && echo "$v writable"
done
true`

// TestRuntimeDirs runs with an inherited XDG_RUNTIME_DIR and TMPDIR the
// command could not use inside, and with ones it can, in both engines,
// as root and as uid 65534: unusable ones are replaced by private
// directories (the user's, 0700, fresh at every run, gone after it),
// usable ones are left alone. The attacks are what an earlier run, or
// another user, could leave where the variables point: a link, a
// directory of another user's, a directory open to others, and the
// private directory's own path planted in the host's /tmp.
func TestRuntimeDirs(t *testing.T) {
	type setup struct {
		name    string
		env     func(t *testing.T, w *world) []string
		keepXDG bool // the inherited XDG_RUNTIME_DIR stays
		keepTMP bool // the inherited TMPDIR stays (the namespace engine)
	}
	mkdir := func(t *testing.T, p string, uid int, mode os.FileMode) string {
		must(t, os.Mkdir(p, mode))
		must(t, os.Chmod(p, mode))
		must(t, os.Lchown(p, uid, uid))
		return p
	}
	setups := []setup{
		{"missing", func(t *testing.T, w *world) []string {
			return []string{"XDG_RUNTIME_DIR=/run/user/fence-missing", "TMPDIR=" + w.outside}
		}, false, false},
		{"usable", func(t *testing.T, w *world) []string {
			rt := mkdir(t, w.ws+"/rt", w.uid, 0o700)
			return []string{"XDG_RUNTIME_DIR=" + rt, "TMPDIR=" + w.ws}
		}, true, true},
		{"planted link", func(t *testing.T, w *world) []string {
			target := mkdir(t, w.outside+"/target", w.uid, 0o700)
			must(t, os.Symlink(target, w.ws+"/rt"))
			must(t, os.Lchown(w.ws+"/rt", w.uid, w.uid))
			return []string{"XDG_RUNTIME_DIR=" + w.ws + "/rt", "TMPDIR=" + w.ws + "/rt"}
		}, false, false},
		{"another user's", func(t *testing.T, w *world) []string {
			other := mkdir(t, w.ws+"/other", w.uid+1, 0o700)
			return []string{"XDG_RUNTIME_DIR=" + other}
		}, false, false},
		{"open to others", func(t *testing.T, w *world) []string {
			return []string{"XDG_RUNTIME_DIR=" + mkdir(t, w.ws+"/open", w.uid, 0o777)}
		}, false, false},
	}
	for _, engine := range []string{"namespaces", "landlock-only"} {
		us := users(t)
		if engine == "landlock-only" {
			us = landlockOnlyUsers(t)
		}
		for _, u := range us {
			for _, s := range setups {
				t.Run(engine+"/"+u.name+"/"+s.name, func(t *testing.T) {
					w := newWorld(t, hostUID(u, engine), `{"filesystem": {"allowWrite": ["."]}}`)
					env := s.env(t, w)
					run := func() result {
						if engine == "landlock-only" {
							return w.landlockOnlyEnv(t, u, env, "--degraded=warn", "-c", probeDirs)
						}
						return w.fence(t, "", env, "-c", probeDirs)
					}
					r := run()
					vals := checkRuntimeDirs(t, r, u, s.keepXDG, s.keepTMP && engine == "namespaces", env)
					if engine == "landlock-only" && vals["XDG_RUNTIME_DIR"] != vals["TMPDIR"] && !s.keepXDG {
						t.Errorf("the Landlock-only engine's private XDG_RUNTIME_DIR %s is not its private TMPDIR %s", vals["XDG_RUNTIME_DIR"], vals["TMPDIR"])
					}
					if !s.keepXDG {
						// A fresh directory at every run: the second finds
						// nothing of the first, and nothing is left on the host.
						again := run()
						checkRuntimeDirs(t, again, u, false, false, env)
						if engine == "landlock-only" {
							if _, err := os.Lstat(vals["XDG_RUNTIME_DIR"]); err == nil {
								t.Errorf("the private directory %s outlived the run", vals["XDG_RUNTIME_DIR"])
							}
						}
					}
					if entries, _ := os.ReadDir(w.outside + "/target"); len(entries) > 0 {
						t.Errorf("the command wrote %s through the planted link", entries[0].Name())
					}
				})
			}
		}
	}
}

// TestRuntimeDirPlantedInHostTmp plants the private directory's own
// path in the host's /tmp, as a link to a directory the attacker reads:
// the namespace engine makes the directory in its private /tmp, so the
// command never sees the host's entry.
func TestRuntimeDirPlantedInHostTmp(t *testing.T) {
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{"filesystem": {"allowWrite": ["."]}}`)
			target := w.outside + "/target"
			must(t, os.Mkdir(target, 0o777))
			planted := fmt.Sprintf("/tmp/fence-runtime-%d", u.uid)
			if _, err := os.Lstat(planted); err == nil {
				t.Skipf("%s exists on this host", planted)
			}
			must(t, os.Symlink(target, planted))
			t.Cleanup(func() { os.Remove(planted) })
			r := w.fence(t, "", []string{"XDG_RUNTIME_DIR=/run/user/fence-missing"}, "-d", "-c", probeDirs)
			checkRuntimeDirs(t, r, u, false, false, nil)
			if want := fmt.Sprintf(`fence: debug: env: XDG_RUNTIME_DIR=%s, since the inherited "/run/user/fence-missing" is not usable inside`, planted); !strings.Contains(r.stderr, want) {
				t.Errorf("-d does not say %q:\n%s", want, r.stderr)
			}
			if entries, _ := os.ReadDir(target); len(entries) > 0 {
				t.Errorf("the command wrote %s through the planted link", entries[0].Name())
			}
		})
	}
}

// hostUID is the uid that owns u's world on the host: in the
// Landlock-only tests root is the caller mapped to 0.
func hostUID(u user, engine string) int {
	if engine == "landlock-only" && u.uid == 0 {
		return os.Getuid()
	}
	return u.uid
}

// checkRuntimeDirs checks what probeDirs printed: a private directory,
// the user's, 0700, empty and writable, wherever the inherited variable
// is not kept; the inherited value where it is. It returns the values.
func checkRuntimeDirs(t *testing.T, r result, u user, keepXDG, keepTMP bool, env []string) map[string]string {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	inherited := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		inherited[k] = v
	}
	vals := map[string]string{}
	for _, v := range []string{"XDG_RUNTIME_DIR", "TMPDIR"} {
		m := regexp.MustCompile(`(?m)^` + v + `=(\S*) (.*)$`).FindStringSubmatch(r.stdout)
		if m == nil {
			t.Fatalf("no %s in:\n%s", v, r.stdout)
		}
		vals[v] = m[1]
		keep := keepXDG
		if v == "TMPDIR" {
			keep = keepTMP
		}
		if keep {
			if m[1] != inherited[v] {
				t.Errorf("%s = %q inside, want the inherited %q", v, m[1], inherited[v])
			}
			continue
		}
		if _, set := inherited[v]; !set && v == "TMPDIR" {
			continue // nothing to replace: the namespace engine leaves it unset
		}
		if m[1] == inherited[v] {
			t.Errorf("%s kept the inherited %q, which the command cannot use inside", v, m[1])
		}
		if v == "XDG_RUNTIME_DIR" && m[2] != fmt.Sprintf("%d 700 directory", u.uid) {
			t.Errorf("%s %s is %q, want a directory of uid %d, mode 700", v, m[1], m[2], u.uid)
		}
		holds := regexp.MustCompile(`(?m)^` + v + ` holds \[(.*)\]$`).FindStringSubmatch(r.stdout)
		if strings.Contains(r.stdout, v+" is a link") || holds == nil || strings.Contains(holds[1], "probe-") || !strings.Contains(r.stdout, v+" writable") {
			t.Errorf("%s is not a writable directory of its own, fresh at this run:\n%s\n%s", v, r.stdout, r.stderr)
		}
		if v == "XDG_RUNTIME_DIR" && holds != nil && holds[1] != "" {
			t.Errorf("the private XDG_RUNTIME_DIR holds %q at start", holds[1])
		}
	}
	return vals
}

// landlockOnlyEnv is landlockOnlyRun with env added to fence's small
// environment.
func (w *world) landlockOnlyEnv(t *testing.T, u user, env []string, args ...string) result {
	t.Helper()
	script := `echo 0 > /proc/sys/user/max_user_namespaces && exec "$@"`
	attr := &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
	}
	if u.uid != 0 {
		script = fmt.Sprintf(`echo 0 > /proc/sys/user/max_user_namespaces && exec setpriv --reuid=%d --regid=%d --clear-groups "$@"`, u.uid, u.uid)
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 65536}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 65536}}
		attr.GidMappingsEnableSetgroups = true
	}
	cmd := exec.Command("/bin/sh", append([]string{"-c", script, "sh", filepath.Join(bin, "fence"), "-s", w.settings}, args...)...)
	cmd.SysProcAttr = attr
	cmd.Dir, cmd.Env = w.ws, append([]string{"HOME=" + w.home, "PATH=/usr/bin:/bin"}, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	code := 0
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Skipf("cannot make a user namespace to run fence without nested ones: %v", err)
		}
		code = ee.ExitCode()
	}
	if !strings.Contains(errb.String(), "enforcing the policy with Landlock alone") {
		t.Fatalf("fence did not fall back to Landlock alone (exit %d):\n%s", code, errb.String())
	}
	return result{out.String(), errb.String(), code}
}

// TestRuntimeDirSharedTmp: with a rule that shares the host's /tmp,
// there is no private /tmp to make the directory in; fence makes one in
// the host's, under a name no one could have planted, and removes it
// when the run ends, in both engines.
func TestRuntimeDirSharedTmp(t *testing.T) {
	for _, engine := range []string{"namespaces", "landlock-only"} {
		us := users(t)
		if engine == "landlock-only" {
			us = landlockOnlyUsers(t)
		}
		for _, u := range us {
			t.Run(engine+"/"+u.name, func(t *testing.T) {
				w := newWorld(t, hostUID(u, engine), `{"filesystem": {"allowWrite": [".", "/tmp"]}}`)
				env := []string{"XDG_RUNTIME_DIR=/run/user/fence-missing"}
				var r result
				if engine == "landlock-only" {
					r = w.landlockOnlyEnv(t, u, env, "--degraded=warn", "-c", probeDirs)
				} else {
					r = w.fence(t, "", env, "-c", probeDirs)
				}
				dir := checkRuntimeDirs(t, r, u, false, false, env)["XDG_RUNTIME_DIR"]
				if engine == "namespaces" && !strings.HasPrefix(dir, "/tmp/fence-runtime-") {
					t.Errorf("XDG_RUNTIME_DIR = %q, want a directory fence made in the shared /tmp", dir)
				}
				if _, err := os.Lstat(dir); err == nil {
					t.Errorf("%s outlived the run", dir)
				}
			})
		}
	}
}
