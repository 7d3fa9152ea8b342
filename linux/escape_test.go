//go:build linux

package linux_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// escapeWant is what each attempt of the escape helper must end in, and
// the layer that stops it. An attempt the helper reports and this table
// lacks fails the test, and so does one the table has and the helper did
// not report.
var escapeWant = map[string]struct{ errno, why string }{
	"ptrace-init":       {"EPERM", "seccomp: ptrace"},
	"open-init-mem":     {"EACCES", "the init is not dumpable"},
	"mount-tmpfs":       {"EPERM", "seccomp: mount"},
	"umount-proc":       {"EPERM", "seccomp: umount2"},
	"unshare-user":      {"EPERM", "seccomp: namespace flags"},
	"unshare-mount":     {"EPERM", "seccomp: namespace flags"},
	"clone-newuser":     {"EPERM", "seccomp: namespace flags"},
	"clone3":            {"ENOSYS", "seccomp: clone3, so libc falls back to clone, which the filter reads"},
	"setns":             {"EPERM", "seccomp: setns"},
	"tiocsti":           {"EPERM", "seccomp: ioctl TIOCSTI"},
	"tioclinux":         {"EPERM", "seccomp: ioctl TIOCLINUX"},
	"personality":       {"EPERM", "seccomp: personality"},
	"keyctl":            {"EPERM", "seccomp: keyctl"},
	"keyctl-plan-cache": {"EPERM", "seccomp: keyctl (the plan cache's key)"},
	"bpf":               {"EPERM", "seccomp: bpf"},
	"chroot":            {"EPERM", "seccomp: chroot"},
	"sethostname":       {"EPERM", "no capabilities"},
	"remount-root-rw":   {"EPERM", "seccomp: mount"},
	"pivot-root":        {"EPERM", "seccomp: pivot_root"},
	"open-tree":         {"EPERM", "seccomp: open_tree"},
	"fsopen":            {"EPERM", "seccomp: fsopen"},
	"perf-event-open":   {"EPERM", "seccomp: perf_event_open"},
	"userfaultfd":       {"EPERM", "seccomp: userfaultfd"},
	"io-uring-setup":    {"EPERM", "seccomp: io_uring (its opens would run out of the filter's sight)"},
	"init-module":       {"EPERM", "seccomp: init_module"},
	"kexec-load":        {"EPERM", "seccomp: kexec_load"},
	"reboot":            {"EPERM", "seccomp: reboot"},
	"swapon":            {"EPERM", "seccomp: swapon"},
	"acct":              {"EPERM", "seccomp: acct"},
	"syslog":            {"EPERM", "seccomp: syslog"},
	"open-by-handle-at": {"EPERM", "seccomp: open_by_handle_at"},
	"packet-socket":     {"EPERM", "seccomp: only unix and inet sockets"},
	"mknod-disk":        {"EPERM", "no CAP_MKNOD"},
	"proc-self-root":    {"EACCES", "the denied file is masked, whatever the path"},
	"proc-init-root":    {"EACCES", "the init is not dumpable"},
	"hardlink-secret":   {"EXDEV", "the mask is a mount: no link across it"},
	"symlink-secret":    {"EACCES", "a link leads to the mask"},
	"inherited-fd":      {"EBADF", "fence closes every descriptor but 0-2"},
	"umount-mask":       {"EPERM", "seccomp: umount2"},
	"proc-init-fd":      {"EACCES", "the init is not dumpable"},
	"proc-init-environ": {"EACCES", "the init is not dumpable"},
	"write-sys":         {"EROFS|EACCES", "/sys is read-only (for a uid other than root, file modes refuse first)"},
	"write-cgroup":      {"ENOENT", "no cgroupfs inside"},
	"write-proc-sysrq":  {"ENOENT", "/proc/sysrq-trigger is masked"},
	"open-dev-mem":      {"ENOENT", "minimal /dev"},
	"open-dev-kmem":     {"ENOENT", "minimal /dev"},
	"open-dev-port":     {"ENOENT", "minimal /dev"},
	"open-dev-kmsg":     {"ENOENT", "minimal /dev"},
	"open-dev-sda":      {"ENOENT", "minimal /dev"},
	"open-dev-vda":      {"ENOENT", "minimal /dev"},
	"open-dev-nvme0n1":  {"ENOENT", "minimal /dev"},
	"kill-host":         {"ESRCH", "pid namespace: host processes do not exist"},
	"ptrace-host":       {"EPERM", "seccomp: ptrace"},
	"vm-read-host":      {"EPERM", "seccomp: process_vm_readv"},
	"vm-read-init":      {"EPERM", "seccomp: process_vm_readv"},
	"kill-init":         {"ok|EPERM", "refused by Landlock's signal scope, or sent and ignored: pid 1 takes no SIGKILL from its namespace ('finished' shows the sandbox lived on)"},
	"setuid-0":          {"EINVAL", "uid 0 does not exist in the sandbox's user namespace (as root: already uid 0, which gains nothing)"},
	"finished":          {"ok", ""},
}

// TestEscapeSuite runs the escape helper inside the sandbox, as root and
// as an unprivileged uid, with a denied file, a descriptor on it inherited
// from the caller and a host process to reach for: every attempt must
// fail with the errno of the layer that stops it.
func TestEscapeSuite(t *testing.T) {
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{"filesystem": {"allowWrite": ["."], "denyRead": ["secret.txt"]}}`)
			secret := w.ws + "/secret.txt"
			leak, err := os.Open(secret)
			must(t, err)
			defer leak.Close()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := w.command(ctx, nil, "--", "./escape", "-secret", secret, "-mask", secret, "-hostpid", fmt.Sprint(os.Getpid()))
			cmd.ExtraFiles = []*os.File{leak} // fd 3 in fence; it must not reach the command
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			got := map[string]string{}
			for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				name, errno, _ := strings.Cut(line, ": ")
				got[name] = errno
			}
			for name, want := range escapeWant {
				errno := want.errno
				if name == "setuid-0" && u.uid == 0 {
					errno = "ok"
				}
				if !slices.Contains(strings.Split(errno, "|"), got[name]) {
					t.Errorf("%s: got %q, want %q (%s)", name, got[name], errno, want.why)
				}
			}
			for name := range got {
				if _, ok := escapeWant[name]; !ok {
					t.Errorf("attempt %q has no expectation in escapeWant", name)
				}
			}
			if len(escapeWant) < 40 {
				t.Errorf("only %d attempts", len(escapeWant))
			}
		})
	}
}

// TestEscapeScripts tries ways out that take a shell: races, links,
// renames, privileged binaries, processes left behind.
func TestEscapeScripts(t *testing.T) {
	tests := []struct {
		name, script   string
		code           int
		stdout, stderr string
	}{
		{"symlink swapped during reads (TOCTOU)",
			`(for i in $(seq 400); do ln -sfn README lnk; ln -sfn secret.txt lnk; done) & for i in $(seq 400); do cat lnk 2>/dev/null; done | grep -c TOPSECRET; wait`,
			0, `^0\n$`, ""},
		{"hardlink to a protected file, then write it", `ln .bashrc rc2 && echo x >> rc2`, 1, "", `Invalid cross-device link|Operation not permitted`},
		{"rename the hooks away", `mv .git/hooks .git/old-hooks`, 1, "", `Device or resource busy|Read-only file system|Permission denied`},
		{"replace the policy file", `echo '{}' > ../policy.jsonc`, 1, "", `Read-only file system|Permission denied`},
		{"rename the policy file away", `mv ../policy.jsonc ../p2`, 1, "", `Read-only file system|Permission denied|Device or resource busy`},
		{"plant a config for the next run", `echo '{"filesystem":{"allowWrite":["/"]}}' > fence.jsonc; cat fence.jsonc`, 0, `allowWrite`, ""},
		{"git hook through core.hooksPath", `git config --file .git/config core.hooksPath /tmp/h`, 4, "", `could not write config file .git/config: Device or resource busy`},
		{"write through /proc/self/root", `echo x >> /proc/self/root` + "$PWD" + `/.bashrc`, 1, "", `Read-only file system|Permission denied`},
		{"read the denied file through /proc/self/cwd", `cat /proc/self/cwd/secret.txt`, 1, "", `Permission denied`},
		{"read the denied file through a bind of ..", `cd sub/.. && cat ./secret.txt`, 1, "", `Permission denied`},
	}
	for _, u := range users(t) {
		for _, tt := range tests {
			t.Run(u.name+"/"+tt.name, func(t *testing.T) {
				w := newWorld(t, u.uid, `{"filesystem": {"allowWrite": ["."], "denyRead": ["secret.txt"]}}`)
				r := w.fence(t, "", nil, "-c", tt.script)
				check(t, r, tt.code, tt.stdout, tt.stderr)
				if strings.Contains(r.stdout, "TOPSECRET") {
					t.Errorf("the secret leaked:\n%s", r.stdout)
				}
			})
		}
	}
}

// TestPlantedConfigQuarantined: a config file the command creates where
// discovery looks is moved aside after the run, so it never widens the
// next one.
func TestPlantedConfigQuarantined(t *testing.T) {
	w := newWorld(t, os.Getuid(), `{"filesystem": {"allowWrite": ["."]}}`)
	r := w.fence(t, "", nil, "-c", `echo '{"filesystem":{"allowWrite":["/"]}}' > fence.jsonc`)
	check(t, r, 0, "", `fence\.jsonc`)
	if _, err := os.Stat(filepath.Join(w.ws, "fence.jsonc")); err == nil {
		t.Errorf("the planted fence.jsonc is still where discovery finds it")
	}
}

// TestSetuidBinary runs a setuid-root copy of cat: no privilege is gained.
func TestSetuidBinary(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("making a setuid-root binary needs root")
	}
	cat, err := exec.LookPath("cat")
	must(t, err)
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{}`)
			b, err := os.ReadFile(cat)
			must(t, err)
			suid := filepath.Join(w.ws, "suidcat")
			must(t, os.WriteFile(suid, b, 0o755))
			must(t, os.Chown(suid, 0, 0))
			must(t, os.Chmod(suid, 0o4755))
			r := w.fence(t, "", nil, "-c", `./suidcat /proc/self/status | grep -E '^(Uid|CapEff)'`)
			want := fmt.Sprintf(`^Uid:\t%d\t%d\t%d\t%d\nCapEff:\t0+\n$`, u.uid, u.uid, u.uid, u.uid)
			check(t, r, 0, want, "")
		})
	}
}

// TestNothingOutlivesFence leaves a process behind in the background: it
// must be gone when fence returns.
func TestNothingOutlivesFence(t *testing.T) {
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{}`)
			marker := fmt.Sprintf("%d%d", os.Getpid(), time.Now().UnixNano()%100000)
			r := w.fence(t, "", nil, "-c", `setsid sleep `+marker+` </dev/null >/dev/null 2>&1 & nohup sleep `+marker+` >/dev/null 2>&1 & echo started`)
			check(t, r, 0, `^started\n$`, "")
			if pids := processesWith("sleep\x00" + marker); len(pids) > 0 {
				for _, pid := range pids {
					syscall.Kill(pid, syscall.SIGKILL)
				}
				t.Errorf("processes outlived fence: %v", pids)
			}
		})
	}
}

// processesWith lists the host processes whose command line holds s
// (arguments separated by NUL).
func processesWith(s string) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && strings.Contains(string(b), s) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestKeepFD passes one inherited descriptor on with --keep-fd, at its
// own number; without the flag it is closed, and a descriptor fence does
// not have is refused.
func TestKeepFD(t *testing.T) {
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{}`)
			kept := filepath.Join(w.base, "kept")
			must(t, os.WriteFile(kept, []byte("KEPT\n"), 0o644))
			run := func(args ...string) result {
				f, err := os.Open(kept)
				must(t, err)
				defer f.Close()
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				cmd := w.command(ctx, nil, args...)
				cmd.ExtraFiles = make([]*os.File, 7)
				cmd.ExtraFiles[6] = f // descriptor 9 in fence
				var out, errb strings.Builder
				cmd.Stdout, cmd.Stderr = &out, &errb
				err = cmd.Run()
				code := 0
				if ee, ok := err.(*exec.ExitError); ok {
					code = ee.ExitCode()
				}
				return result{out.String(), errb.String(), code}
			}
			check(t, run("--keep-fd", "9", "-c", "cat <&9"), 0, `^KEPT\n$`, "")
			check(t, run("-c", "cat <&9"), 1, "", `9: Bad file descriptor`)
			check(t, run("--keep-fd", "12", "--", "true"), 125, "", `--keep-fd 12: fence has no open descriptor 12 to pass on`)
			check(t, run("--keep-fd", "1", "--", "true"), 125, "", `--keep-fd 1: descriptors 0, 1 and 2 always reach the command`)
		})
	}
}
