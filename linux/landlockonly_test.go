//go:build linux

package linux_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fence-sandbox/fence/sandbox"
)

// The tests of this file attack the Landlock-only engine from inside:
// what the missing pid namespace and the missing read-only host would
// let a command do.

// landlockOnlyUsers are the identities fence runs as without user
// namespaces: root, and uid 65534 when the tests run as root.
func landlockOnlyUsers(t *testing.T) []user {
	us := []user{{"root", 0}}
	if os.Getuid() == 0 {
		if _, err := exec.LookPath("setpriv"); err == nil {
			us = append(us, user{"uid65534", 65534})
		}
	}
	return us
}

// landlockWorld is a world owned by u as the host sees it: the caller
// for root (who is root inside the test's user namespace), u otherwise.
func landlockWorld(t *testing.T, u user, policy string) *world {
	t.Helper()
	uid := u.uid
	if uid == 0 {
		uid = os.Getuid()
	}
	w := newWorld(t, uid, policy)
	b, err := os.ReadFile(modeprobe(t))
	must(t, err)
	must(t, os.WriteFile(w.ws+"/modeprobe", b, 0o755))
	must(t, os.Lchown(w.ws+"/modeprobe", uid, uid))
	return w
}

var (
	modeprobeOnce sync.Once
	modeprobeErr  error
)

// modeprobe builds testdata/modeprobe once and returns its path.
func modeprobe(t *testing.T) string {
	t.Helper()
	p := filepath.Join(bin, "modeprobe")
	modeprobeOnce.Do(func() {
		cmd := exec.Command("go", "build", "-o", p, "./testdata/modeprobe")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			modeprobeErr = fmt.Errorf("build modeprobe: %v\n%s", err, out)
		}
	})
	if modeprobeErr != nil {
		t.Fatal(modeprobeErr)
	}
	return p
}

// landlockOnly runs fence as u where user namespaces cannot be created,
// with --degraded=warn, which that engine needs: in a user namespace of
// the test's own whose limit of nested ones is 0.
// Root is the caller mapped to 0; uid 65534 runs through setpriv in a
// namespace that maps the host's first 65536 ids to themselves.
func (w *world) landlockOnly(t *testing.T, u user, args ...string) result {
	t.Helper()
	r := w.landlockOnlyRun(t, u, append([]string{"--degraded=warn"}, args...)...)
	if !strings.Contains(r.stderr, "enforcing the policy with Landlock alone") {
		t.Fatalf("fence did not fall back to Landlock alone (exit %d):\n%s", r.code, r.stderr)
	}
	return r
}

// landlockOnlyRun runs fence as u where user namespaces cannot be
// created, with args as they are.
func (w *world) landlockOnlyRun(t *testing.T, u user, args ...string) result {
	t.Helper()
	return w.landlockOnlyWith(t, u, nil, args...)
}

// landlockOnlyWith is landlockOnlyRun with stdin, when it is not nil.
func (w *world) landlockOnlyWith(t *testing.T, u user, stdin *os.File, args ...string) result {
	t.Helper()
	cmd := w.landlockOnlyCommand(u, nil, args...)
	if stdin != nil {
		cmd.Stdin = stdin
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	// A process that outlives fence would hold its output open: the
	// test then fails on what it finds, and does not hang.
	cmd.WaitDelay = 5 * time.Second
	code := 0
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			code = ee.ExitCode()
		case errors.Is(err, exec.ErrWaitDelay):
			code = cmd.ProcessState.ExitCode()
			t.Errorf("a process of the sandbox held fence's output open after fence exited")
		default:
			t.Skipf("cannot make a user namespace to run fence without nested ones: %v", err)
		}
	}
	return result{out.String(), errb.String(), code}
}

// landlockOnlyCommand is fence with args, run as u where user namespaces
// cannot be created (see landlockOnly), with env added to its
// environment; the shell that sets this up execs fence, so the process
// is fence's supervisor once it has started.
func (w *world) landlockOnlyCommand(u user, env []string, args ...string) *exec.Cmd {
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
	argv := append([]string{"-c", script, "sh", filepath.Join(bin, "fence"), "-s", w.settings}, args...)
	cmd := exec.Command("/bin/sh", argv...)
	cmd.SysProcAttr = attr
	cmd.Dir, cmd.Env = w.ws, append([]string{"HOME=" + w.home, "PATH=/usr/bin:/bin"}, env...)
	return cmd
}

// TestLandlockOnlyNeedsDegraded: what the Landlock-only engine cannot
// enforce lets a command reach what the policy never granted, so fence
// refuses to run with it unless --degraded=warn, names the flag, and
// lists every weakness first; the command never starts.
func TestLandlockOnlyNeedsDegraded(t *testing.T) {
	for _, u := range landlockOnlyUsers(t) {
		t.Run(u.name, func(t *testing.T) {
			w := landlockWorld(t, u, `{"filesystem": {"allowWrite": ["."]}}`)
			r := w.landlockOnlyRun(t, u, "-c", "echo ran > ran")
			if r.code != 125 || !strings.Contains(r.stderr, "refusing to run with weaker enforcement than the policy asks; pass --degraded=warn to run anyway") {
				t.Errorf("fence = %d, want 125 and a refusal naming --degraded=warn:\n%s", r.code, r.stderr)
			}
			if _, err := os.Stat(w.ws + "/ran"); err == nil {
				t.Errorf("the command ran")
			}
			plan := &sandbox.Plan{Network: "none", Mounts: sandbox.Mounts{Devices: "minimal"}}
			for _, line := range sandbox.WeakerFor(plan, u.uid == 0) {
				if !strings.Contains(r.stderr, "fence: warning:   "+line+"\n") {
					t.Errorf("the refusal does not list %q:\n%s", line, r.stderr)
				}
			}
		})
	}
}

// TestLandlockOnlyDaemonsDie: a daemon the command leaves behind waits
// for fence to exit and then plants .envrc, after the after-run step
// that moves planted files aside. fence kills it before it returns, so
// it is gone when fence exits and the file never appears; so is one
// held by a subreaper of the command's own, and one left running past
// the timeout.
func TestLandlockOnlyDaemonsDie(t *testing.T) {
	const marker = "876540"
	// fence's supervisor is the init's parent; the daemon waits for it to
	// be gone.
	const waitForFence = `read -r _ _ _ sup _ < /proc/$PPID/stat; `
	attacks := []struct {
		name, script string
		args         []string
		code         int
	}{
		{"setsid daemon", waitForFence + `setsid sh -c "while [ -e /proc/$sup ]; do sleep 0.01; done; echo planted > .envrc; sleep ` + marker + `" </dev/null >/dev/null 2>&1 & echo spawned`, nil, 0},
		{"daemon held by a subreaper of its own", waitForFence + `setsid ./modeprobe subreaper sh -c "setsid sh -c 'while [ -e /proc/$sup ]; do sleep 0.01; done; echo planted > .envrc; sleep ` + marker + `' &" </dev/null >/dev/null 2>&1 & echo spawned`, nil, 0},
		{"daemon past the timeout", waitForFence + `setsid sh -c "while [ -e /proc/$sup ]; do sleep 0.01; done; echo planted > .envrc; sleep ` + marker + `" </dev/null >/dev/null 2>&1 & echo spawned; sleep ` + marker, []string{"--timeout", "1s"}, 124},
	}
	for _, u := range landlockOnlyUsers(t) {
		for _, a := range attacks {
			t.Run(u.name+"/"+a.name, func(t *testing.T) {
				w := landlockWorld(t, u, `{"filesystem": {"allowWrite": ["."]}}`)
				r := w.landlockOnly(t, u, append(a.args, "-c", a.script)...)
				if r.code != a.code || r.stdout != "spawned\n" {
					t.Errorf("fence = %d, stdout %q; want %d, %q\n%s", r.code, r.stdout, a.code, "spawned\n", r.stderr)
				}
				if pids := processesWith(marker); len(pids) > 0 {
					t.Errorf("processes of the sandbox outlived fence: %v\n%s", pids, r.stderr)
				}
				if _, err := os.Lstat(w.ws + "/.envrc"); err == nil {
					t.Errorf("a daemon planted .envrc after the run")
				}
				if strings.Contains(r.stderr, "still running") {
					t.Errorf("fence reported survivors:\n%s", r.stderr)
				}
			})
		}
	}
}

// TestLandlockOnlyModes: Landlock does not cover chmod, chown or
// extended attributes, and without a mount namespace nothing on the
// host is read-only. From inside, as root (who owns every system file)
// and as uid 65534 (who owns its home), the command tries every call
// that sets a setuid bit, opens a file to others, grants an ACL or
// changes an owner, on a file outside the policy and in the workspace;
// each fails with the filter's errno, and the host's files keep their
// modes. A normal user can still chmod +x in the workspace; root cannot,
// and the warning says so.
func TestLandlockOnlyModes(t *testing.T) {
	const (
		eperm   = "operation not permitted"
		enosys  = "function not implemented"
		enotsup = "operation not supported"
	)
	for _, u := range landlockOnlyUsers(t) {
		t.Run(u.name, func(t *testing.T) {
			w := landlockWorld(t, u, `{"filesystem": {"allowWrite": ["."]}}`)
			owner := w.uid
			// New files go in a directory of their own: without a mount
			// namespace the workspace, which holds protected files, gets no
			// rule of its own, so nothing is created directly in it.
			must(t, os.Mkdir(w.ws+"/work", 0o755))
			for _, name := range []string{"script.sh", "tool.sh", "work/script.sh"} {
				must(t, os.WriteFile(w.ws+"/"+name, []byte("#!/bin/sh\n"), 0o644))
			}
			for _, name := range []string{"script.sh", "tool.sh", "work", "work/script.sh"} {
				must(t, os.Lchown(w.ws+"/"+name, owner, owner))
			}
			out := "../outside/data.txt"
			ssh := w.home + "/.ssh"
			script := strings.Join([]string{
				"./modeprobe chmod 4755 " + out + " script.sh",
				"./modeprobe chmod 2755 " + out,
				"./modeprobe chmod 0666 " + out,
				"./modeprobe chmod 0777 " + ssh,
				"./modeprobe chmod 0755 tool.sh",
				"./modeprobe create 4755 work/planted",
				"./modeprobe create 0644 work/plain",
				"./modeprobe chown " + out,
				"./modeprobe xattr " + out + " script.sh",
				"chmod +x work/script.sh && echo chmod+x: ok",
			}, "; ")
			r := w.landlockOnly(t, u, "-c", script)
			root := u.uid == 0
			want := map[string]string{}
			chmodCalls := []string{"fchmodat", "fchmodat2", "fchmod"}
			if runtime.GOARCH == "amd64" {
				chmodCalls = append(chmodCalls, "chmod")
			}
			for _, c := range chmodCalls {
				want[c+" "+out] = eperm // setuid, setgid, world-writable: refused for everyone
				want[c+" script.sh"] = eperm
				want[c+" "+ssh] = eperm
			}
			createCalls := []string{"openat", "mknodat"}
			if runtime.GOARCH == "amd64" {
				createCalls = append(createCalls, "open", "creat")
			}
			for _, c := range createCalls {
				want[c+" work/planted."+c] = eperm
				want[c+" work/plain."+c] = "ok"
			}
			want["openat2 work/planted.openat2"] = enosys
			want["openat2 work/plain.openat2"] = enosys
			for _, p := range []string{out, "script.sh"} {
				for _, c := range []string{"setxattr-user", "setxattr-acl", "fsetxattr", "removexattr"} {
					want[c+" "+p] = enotsup
				}
			}
			// A normal user may chmod and chown what it owns, but for the
			// bits above; root may do neither.
			want["chmod+x"] = "ok"
			want["fchownat "+out], want["fchown "+out] = "ok", "ok"
			for _, c := range chmodCalls {
				want[c+" tool.sh"] = "ok"
			}
			if root {
				want["fchownat "+out], want["fchown "+out] = eperm, eperm
				for _, c := range chmodCalls {
					want[c+" tool.sh"] = eperm
				}
				delete(want, "chmod+x")
			}
			got := map[string][]string{}
			for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
				if k, v, ok := strings.Cut(line, ": "); ok {
					got[k] = append(got[k], v)
				}
			}
			for k, v := range want {
				if len(got[k]) == 0 {
					t.Errorf("%s: no attempt reported, want %s", k, v)
				}
				for _, g := range got[k] {
					if g != v {
						t.Errorf("%s: %s, want %s", k, g, v)
					}
				}
			}
			if root && !strings.Contains(r.stderr, `as root: chmod and chown fail with "Operation not permitted"`) {
				t.Errorf("the fallback warning does not say root cannot chmod:\n%s", r.stderr)
			}
			if root && !strings.Contains(r.stderr, "chmod: changing permissions of 'work/script.sh': Operation not permitted") {
				t.Errorf("chmod +x as root was not refused with EPERM:\n%s", r.stderr)
			}
			for p, mode := range map[string]os.FileMode{w.outside + "/data.txt": 0o644, ssh: 0o755 | os.ModeDir} {
				if fi, err := os.Stat(p); err != nil || fi.Mode() != mode {
					t.Errorf("host %s: %v, %v; want mode %v", p, fi.Mode(), err, mode)
				}
			}
			matches, _ := filepath.Glob(w.ws + "/work/planted.*")
			for _, m := range matches {
				if fi, err := os.Stat(m); err == nil && fi.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0 {
					t.Errorf("the command created a setuid file: %s %v", m, fi.Mode())
				}
			}
		})
	}
}
