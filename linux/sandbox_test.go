//go:build linux

package linux_test

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The integration tests run the real fence binary, built once, against the
// real kernel, as root and (when the tests run as root) as an unprivileged
// uid through setpriv.

var bin string // directory holding the built fence and escape binaries

var readSources sync.Once

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "fence-bin-")
	if err == nil {
		err = os.Chmod(dir, 0o755)
	}
	for _, b := range [][]string{{"fence", ".."}, {"escape", "./testdata/escape"}, {"netprobe", "./testdata/netprobe"}, {"floor", "./testdata/floor"}} {
		if err != nil {
			break
		}
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, b[0]), b[1])
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, berr := cmd.CombinedOutput(); berr != nil {
			err = fmt.Errorf("build %s: %v\n%s", b[0], berr, out)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// readAllSources reads every Go source and module file of the
// repository. The binaries these tests build hold code this test binary
// does not (cmd, main, the test helpers); go test caches a result by the
// files the tests read, so reading them all makes a change to any of
// them run the tests again instead of replaying an old result. It must
// run inside a test: go test notes only what tests read.
func readAllSources() {
	filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return nil
		case d.IsDir() && strings.HasPrefix(d.Name(), ".") && p != "..":
			return filepath.SkipDir
		case strings.HasSuffix(p, ".go") || d.Name() == "go.mod" || d.Name() == "go.sum":
			os.ReadFile(p)
		}
		return nil
	})
}

type user struct {
	name string
	uid  int
}

// users are the identities each test runs as: this one, and an
// unprivileged one when this is root.
func users(t *testing.T) []user {
	us := []user{{"self", os.Getuid()}}
	if os.Getuid() == 0 {
		if _, err := exec.LookPath("setpriv"); err == nil {
			us = append(us, user{"uid65534", 65534})
		} else {
			t.Log("setpriv not found: not running as an unprivileged uid")
		}
	}
	return us
}

// world is a home, a workspace and a directory outside both, owned by the
// user the sandbox runs as.
type world struct {
	base, home, ws, outside, settings string
	uid                               int
}

func newWorld(t *testing.T, uid int, policy string) *world {
	t.Helper()
	return newWorldIn(t, "/var/tmp", uid, policy)
}

// newWorldIn makes a world below parent. /tmp is special: the sandbox
// replaces it with its own and binds only what the policy names.
func newWorldIn(t *testing.T, parent string, uid int, policy string) *world {
	t.Helper()
	readSources.Do(readAllSources)
	base, err := os.MkdirTemp(parent, "fence-world-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	w := &world{base: base, home: base + "/home", ws: base + "/ws", outside: base + "/outside", settings: base + "/policy.jsonc", uid: uid}
	files := map[string]string{
		"home/.bashrc":             "# rc\n",
		"home/.ssh/id_rsa":         "SECRET-KEY\n",
		"home/.aws/credentials":    "AWS-SECRET\n",
		"ws/README":                "readme\n",
		"ws/secret.txt":            "TOPSECRET\n",
		"ws/secrets/inner.txt":     "INNER-SECRET\n",
		"ws/sub/SERVER.PEM":        "PEM-SECRET\n",
		"ws/.bashrc":               "# ws rc\n",
		"ws/.git/hooks/pre-commit": "#!/bin/sh\n",
		"ws/.git/config":           "[core]\n",
		"outside/data.txt":         "OUTSIDE\n",
		"policy.jsonc":             policy,
	}
	for name, content := range files {
		p := filepath.Join(base, name)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(content), 0o644))
	}
	must(t, os.Symlink("../outside/data.txt", w.ws+"/link-out"))
	for _, helper := range []string{"escape", "netprobe"} {
		b, err := os.ReadFile(filepath.Join(bin, helper))
		must(t, err)
		must(t, os.WriteFile(filepath.Join(w.ws, helper), b, 0o755))
	}
	must(t, os.Chmod(base, 0o755))
	must(t, filepath.Walk(base, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, uid)
	}))
	return w
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

type result struct {
	stdout, stderr string
	code           int
}

// asUser is argv to run as w's user: through setpriv when that is not
// this process's.
func (w *world) asUser(argv ...string) []string {
	if w.uid != os.Getuid() {
		argv = append([]string{"setpriv", fmt.Sprintf("--reuid=%d", w.uid), fmt.Sprintf("--regid=%d", w.uid), "--clear-groups"}, argv...)
	}
	return argv
}

// commandIn is argv as w's user in dir, with w's home, a plain PATH and
// env.
func (w *world) commandIn(ctx context.Context, dir string, env []string, argv ...string) *exec.Cmd {
	argv = w.asUser(argv...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append([]string{"HOME=" + w.home, "PATH=/usr/local/bin:/usr/bin:/bin"}, env...)
	return cmd
}

// command is fence with args, in w.ws, as w's user, with the world's
// policy and a small environment plus env.
func (w *world) command(ctx context.Context, env []string, args ...string) *exec.Cmd {
	return w.commandIn(ctx, w.ws, env, append([]string{filepath.Join(bin, "fence"), "-s", w.settings}, args...)...)
}

// fence runs fence with args and stdin, and returns what it did.
func (w *world) fence(t *testing.T, stdin string, env []string, args ...string) result {
	t.Helper()
	// The timeout only keeps a hung sandbox from hanging the suite.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := w.command(ctx, env, args...)
	cmd.Stdin = strings.NewReader(stdin)
	return runResult(t, cmd)
}

// runIn runs argv as w's user in dir (see commandIn) and returns what it
// did.
func (w *world) runIn(t *testing.T, dir string, env []string, argv ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return runResult(t, w.commandIn(ctx, dir, env, argv...))
}

func runResult(t *testing.T, cmd *exec.Cmd) result {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run %s: %v", cmd.Args[0], err)
	}
	return result{out.String(), errb.String(), code}
}

// TestFilesystemPolicy is the filesystem matrix: each case runs a shell
// line under a policy and checks what it could and could not do, and why.
func TestFilesystemPolicy(t *testing.T) {
	tests := []struct {
		name, policy, script string
		code                 int
		stdout, stderr       string // regexps; "" means no check
		notOut               string // must not appear on stdout
	}{
		{"read inside workspace", `{}`, `cat README`, 0, `^readme\n$`, "", ""},
		{"write denied without allowWrite", `{}`, `echo x > new.txt`, 1, "", `new.txt: Read-only file system`, ""},
		{"write inside allowWrite", `{"filesystem": {"allowWrite": ["."]}}`, `echo x > new.txt && cat new.txt`, 0, `^x\n$`, "", ""},
		{"write outside allowWrite", `{"filesystem": {"allowWrite": ["."]}}`, `echo x > ../outside/new`, 1, "", `Read-only file system`, ""},
		{"write to home denied", `{"filesystem": {"allowWrite": ["."]}}`, `echo x > ~/new`, 1, "", `Read-only file system`, ""},
		{"write to system denied", `{"filesystem": {"allowWrite": ["."]}}`, `echo x > /etc/fence-test`, 1, "", `Read-only file system`, ""},
		{"denyRead file", `{"filesystem": {"denyRead": ["secret.txt"]}}`, `cat secret.txt`, 1, "", `secret.txt: Permission denied`, "TOPSECRET"},
		{"denyRead directory", `{"filesystem": {"denyRead": ["secrets"]}}`, `cat secrets/inner.txt; ls secrets`, 2, "", `secrets/inner.txt: Permission denied`, "INNER"},
		{"denyRead glob, other case", `{"filesystem": {"denyRead": ["**/*.pem"]}}`, `cat sub/SERVER.PEM`, 1, "", `Permission denied`, "PEM-SECRET"},
		{"denyRead in home", `{"filesystem": {"denyRead": ["~/.ssh/id_*", "~/.aws"]}}`, `cat ~/.ssh/id_rsa; cat ~/.aws/credentials`, 1, "", `id_rsa: Permission denied`, "SECRET"},
		{"denyRead beats allowWrite", `{"filesystem": {"allowWrite": ["."], "denyRead": ["secret.txt"]}}`, `echo x >> secret.txt`, 1, "", `Read-only file system|Permission denied`, ""},
		{"denyWrite inside allowWrite", `{"filesystem": {"allowWrite": ["."], "denyWrite": ["README"]}}`, `cat README; echo x >> README`, 1, `^readme\n$`, `README: Read-only file system`, ""},
		{"symlink out of the workspace, reading", `{"filesystem": {"defaultDenyRead": true}}`, `cat link-out`, 1, "", `Permission denied`, "OUTSIDE"},
		{"symlink out of the workspace, writing", `{"filesystem": {"allowWrite": ["."]}}`, `echo x > link-out`, 1, "", `Read-only file system`, ""},
		{"dot-dot out of the workspace", `{"filesystem": {"defaultDenyRead": true}}`, `cat ../outside/data.txt; cat sub/../../outside/data.txt`, 1, "", `Permission denied`, "OUTSIDE"},
		{"defaultDenyRead keeps system paths", `{"filesystem": {"defaultDenyRead": true}}`, `cat /etc/hostname >/dev/null && cat README`, 0, `^readme\n$`, "", ""},
		{"defaultDenyRead hides home", `{"filesystem": {"defaultDenyRead": true}}`, `cat ~/.bashrc`, 1, "", `Permission denied`, ""},
		{"allowRead under defaultDenyRead", `{"filesystem": {"defaultDenyRead": true, "allowRead": ["../outside"]}}`, `cat ../outside/data.txt`, 0, `^OUTSIDE\n$`, "", ""},
		{"dangerous files stay read-only", `{"filesystem": {"allowWrite": [".", "~"]}}`,
			`for f in .bashrc .git/hooks/pre-commit .git/config ~/.bashrc ../policy.jsonc; do echo x >> $f || echo "denied $f"; done`, 0,
			`(?s)denied .bashrc.*denied .git/hooks/pre-commit.*denied .git/config.*denied .*/home/.bashrc.*denied ../policy.jsonc`, "", ""},
		{"allowGitConfig lifts .git/config", `{"filesystem": {"allowWrite": ["."], "allowGitConfig": true}}`, `echo "# x" >> .git/config && echo ok`, 0, `^ok\n$`, "", ""},
		{"private /tmp", `{"filesystem": {"allowWrite": ["."]}}`, `echo x > /tmp/scratch && cat /tmp/scratch && ls -A /tmp`, 0, `^x\n(fence-bin-\w+\n)?scratch\n$`, "", ""}, // and fence's own binary when it lies in /tmp
	}
	for _, u := range users(t) {
		for _, tt := range tests {
			t.Run(u.name+"/"+tt.name, func(t *testing.T) {
				w := newWorld(t, u.uid, tt.policy)
				r := w.fence(t, "", nil, "-c", tt.script)
				check(t, r, tt.code, tt.stdout, tt.stderr)
				if tt.notOut != "" && strings.Contains(r.stdout, tt.notOut) {
					t.Errorf("stdout leaks %q:\n%s", tt.notOut, r.stdout)
				}
			})
		}
	}
}

// TestRepositoryAroundWorkingDir runs in a subdirectory of a repository
// with the whole repository writable: its hooks and .git/config must stay
// read-only, since git runs them outside any sandbox.
func TestRepositoryAroundWorkingDir(t *testing.T) {
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{"filesystem": {"allowWrite": [".."]}}`)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := w.command(ctx, nil, "-c", `for f in ../.git/hooks/pre-commit ../.git/config; do echo x >> $f || echo "denied $f"; done; echo ok > ../fine && cat ../fine`)
			cmd.Dir = w.ws + "/sub"
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			want := `(?s)hooks/pre-commit: Read-only file system.*denied ../.git/hooks/pre-commit.*config: Read-only file system.*denied ../.git/config.*ok`
			if !regexp.MustCompile(want).Match(out) {
				t.Errorf("output does not match %q:\n%s", want, out)
			}
		})
	}
}

func check(t *testing.T, r result, code int, stdout, stderr string) {
	t.Helper()
	if r.code != code {
		t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
	}
	if stdout != "" && !regexp.MustCompile(stdout).MatchString(r.stdout) {
		t.Errorf("stdout does not match %q:\n%s\nstderr:\n%s", stdout, r.stdout, r.stderr)
	}
	if stderr != "" && !regexp.MustCompile(stderr).MatchString(r.stderr) {
		t.Errorf("stderr does not match %q:\n%s", stderr, r.stderr)
	}
}

// TestWorkspaceUnderTmp checks that a workspace below /tmp is bound into
// the private /tmp, writable as the policy says, and that nothing else of
// the host's /tmp shows.
func TestWorkspaceUnderTmp(t *testing.T) {
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorldIn(t, "/tmp", u.uid, `{"filesystem": {"allowWrite": ["."], "denyRead": ["secret.txt"]}}`)
			r := w.fence(t, "", nil, "-c", `echo x > new && cat new && ls -A /tmp && ls -A $(dirname $PWD) && cat secret.txt`)
			// The home below /tmp is bound as well (reads are open), and
			// the fence binary when it lies below /tmp.
			check(t, r, 1, `^x\n(fence-bin-\w+\n)?fence-world-\w+\nhome\nws\n$`, `secret.txt: Permission denied`)
		})
	}
}

// TestProcessIsolation checks what the command sees of processes,
// capabilities, the environment and the network.
func TestProcessIsolation(t *testing.T) {
	ln := serve(t, "tcp", "127.0.0.1:0", nil)
	port := ln.Addr().(*net.TCPAddr).Port
	tests := []struct {
		name, policy, script string
		env                  []string
		code                 int
		stdout, stderr       string
	}{
		{"only sandbox processes in /proc", `{}`, fmt.Sprintf(`test ! -e /proc/%d && tr '\0' ' ' < /proc/1/cmdline && ls /proc | grep -c '^[0-9]'`, os.Getpid()), nil, 0, `^fence-init [1-5]\n$`, ""},
		{"no capabilities", `{}`, `grep ^Cap /proc/self/status`, nil, 0, `^CapInh:\t0+\nCapPrm:\t0+\nCapEff:\t0+\nCapBnd:\t0+\nCapAmb:\t0+\n$`, ""},
		{"id unchanged", `{}`, `id -u`, nil, 0, "", ""},
		{"environment sanitised", `{"env": {"deny": ["*_TOKEN", "AWS_*"], "allow": ["KEEP_TOKEN"]}}`, `env | sort`,
			[]string{"LD_PRELOAD=/nonexistent.so", "LD_LIBRARY_PATH=/x", "AWS_SECRET_ACCESS_KEY=a", "MY_TOKEN=b", "KEEP_TOKEN=c"}, 0,
			`(?s)\nFENCE_SANDBOX=1\n.*HOME=.*KEEP_TOKEN=c\n`, ""},
		{"no network", `{}`, fmt.Sprintf(`echo > /dev/tcp/127.0.0.1/%d`, port), nil, 1, "", `Connection refused`},
		{"no network, Landlock's TCP rules without local binding", `{"network": {"allowLocalBinding": false}}`, fmt.Sprintf(`echo > /dev/tcp/127.0.0.1/%d`, port), nil, 1, "", `connect: Permission denied`},
		{"no network, even with local binding", `{"network": {"allowLocalBinding": true}}`, fmt.Sprintf(`echo > /dev/tcp/127.0.0.1/%d`, port), nil, 1, "", `Connection refused`},
		{"host network with *", `{"network": {"allowedDomains": ["*"]}}`, fmt.Sprintf(`echo > /dev/tcp/127.0.0.1/%d && echo connected`, port), nil, 0, `^connected\n$`, ""},
		{"stdin passes through", `{}`, `cat`, nil, 0, `^piped input\n$`, ""},
	}
	for _, u := range users(t) {
		for _, tt := range tests {
			t.Run(u.name+"/"+tt.name, func(t *testing.T) {
				w := newWorld(t, u.uid, tt.policy)
				r := w.fence(t, "piped input\n", tt.env, "-c", tt.script)
				check(t, r, tt.code, tt.stdout, tt.stderr)
				if tt.name == "id unchanged" && strings.TrimSpace(r.stdout) != fmt.Sprint(u.uid) {
					t.Errorf("id -u = %q, want %d", r.stdout, u.uid)
				}
				if strings.Contains(r.stdout, "AWS_SECRET") || strings.Contains(r.stdout, "MY_TOKEN") || strings.Contains(r.stdout, "LD_") {
					t.Errorf("environment leaks a removed variable:\n%s", r.stdout)
				}
			})
		}
	}
}

func TestExitCodesAndSignals(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"success", []string{"--", "true"}, 0},
		{"own status", []string{"-c", "exit 7"}, 7},
		{"killed by a signal", []string{"-c", "kill -KILL $$"}, 128 + 9},
		{"not found", []string{"--", "no-such-command"}, 127},
		{"not executable", []string{"--", "./README"}, 126},
		{"bad flag", []string{"--no-such-flag", "--", "true"}, 125},
	}
	for _, u := range users(t) {
		for _, tt := range tests {
			t.Run(u.name+"/"+tt.name, func(t *testing.T) {
				w := newWorld(t, u.uid, `{}`)
				r := w.fence(t, "", nil, tt.args...)
				check(t, r, tt.code, "", "")
			})
		}
	}
}

// TestNoHelperBinaries runs fence with a PATH that holds no program at
// all (so no bwrap, no socat): fence needs nothing but itself.
func TestNoHelperBinaries(t *testing.T) {
	w := newWorld(t, os.Getuid(), `{"filesystem": {"allowWrite": ["."]}}`)
	empty := t.TempDir()
	cmd := exec.Command(filepath.Join(bin, "fence"), "-s", w.settings, "--", "/bin/sh", "-c", "echo ok > f && /bin/cat f")
	cmd.Dir, cmd.Env = w.ws, []string{"HOME=" + w.home, "PATH=" + empty}
	out, err := cmd.CombinedOutput()
	if err != nil || string(out) != "ok\n" {
		t.Fatalf("fence with an empty PATH: %v\n%s", err, out)
	}
}

// TestInheritedDescriptors gives fence an open directory it did not ask
// for: the command must not get it, or it could read past the masks.
func TestInheritedDescriptors(t *testing.T) {
	w := newWorld(t, os.Getuid(), `{"filesystem": {"denyRead": ["secrets"]}}`)
	dir, err := os.Open(w.ws + "/secrets")
	must(t, err)
	defer dir.Close()
	cmd := w.command(context.Background(), nil, "-c", "cat <&3 /dev/fd/3/inner.txt; ls /proc/self/fd")
	cmd.ExtraFiles = []*os.File{dir}
	out, _ := cmd.CombinedOutput()
	if strings.Contains(string(out), "INNER-SECRET") {
		t.Fatalf("the command read through an inherited descriptor:\n%s", out)
	}
	if !regexp.MustCompile(`(?m)^0\n1\n2\n3\n$`).Match(out) { // 3 is ls's own directory
		t.Errorf("the command holds descriptors it should not:\n%s", out)
	}
}

// TestSupervisorDeath kills fence with SIGKILL, which it cannot forward:
// the init dies with it (Pdeathsig), and with the init the whole pid
// namespace.
func TestSupervisorDeath(t *testing.T) {
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{}`)
			cmd := w.startSleeper(t, "765432")
			must(t, cmd.Process.Kill())
			cmd.Wait()
			assertNoProcess(t, "765432")
		})
	}
}

// TestSignalForwarding sends SIGTERM to fence and expects the command to
// receive it: fence exits 143 and no process of the sandbox is left.
func TestSignalForwarding(t *testing.T) {
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{}`)
			cmd := w.startSleeper(t, "987654")
			must(t, cmd.Process.Signal(syscall.SIGTERM))
			err := cmd.Wait()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 143 {
				t.Errorf("fence after SIGTERM: %v, want exit 143", err)
			}
			assertNoProcess(t, "987654")
		})
	}
}

// startSleeper starts fence running `sleep SECONDS` in the background of
// a shell that waits for it, and returns once the shell is running.
func (w *world) startSleeper(t *testing.T, seconds string) *exec.Cmd {
	t.Helper()
	cmd := w.command(context.Background(), nil, "-c", "sleep "+seconds+" & echo started; wait")
	out, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	buf := make([]byte, 8)
	if n, _ := out.Read(buf); string(buf[:n]) != "started\n" {
		cmd.Process.Kill()
		t.Fatalf("read %q, want started", buf[:n])
	}
	return cmd
}

// TestNoOrphans checks that a daemon the command leaves behind dies with
// the sandbox.
func TestNoOrphans(t *testing.T) {
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{}`)
			r := w.fence(t, "", nil, "-c", "setsid sleep 876543 </dev/null >/dev/null 2>&1 & echo spawned")
			check(t, r, 0, `^spawned\n$`, "")
			assertNoProcess(t, "876543")
		})
	}
}

func assertNoProcess(t *testing.T, marker string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second) // the kernel reaps asynchronously
	for {
		found := ""
		procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, p := range procs {
			if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), marker) {
				found = p
			}
		}
		if found == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a sandboxed process outlived fence: %s", found)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// withoutUserNS runs fence where user namespaces cannot be created, with
// --degraded=warn, which the Landlock-only engine needs: the limit is per
// user namespace, so it is set to 0 inside one of the test's own.
func (w *world) withoutUserNS(t *testing.T, args ...string) result {
	t.Helper()
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("unshare not found: cannot make a user namespace without nested ones")
	}
	argv := append([]string{"-Ur", "sh", "-c", `echo 0 > /proc/sys/user/max_user_namespaces && exec "$@"`, "sh",
		filepath.Join(bin, "fence"), "-s", w.settings, "--degraded=warn"}, args...)
	cmd := exec.Command("unshare", argv...)
	cmd.Dir, cmd.Env = w.ws, []string{"HOME=" + w.home, "PATH=/usr/bin:/bin"}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	code := 0
	if err := cmd.Run(); err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatal(err)
		}
		code = ee.ExitCode()
	}
	return result{out.String(), errb.String(), code}
}

// TestLandlockOnlyFallback checks that without user namespaces fence
// falls back to Landlock alone, says so, and still enforces the policy.
func TestLandlockOnlyFallback(t *testing.T) {
	w := newWorld(t, os.Getuid(), `{"filesystem": {"allowWrite": ["."], "denyRead": ["secret.txt"], "denyWrite": ["README"]}}`)
	script := `cat secret.txt; cat sub/SERVER.PEM; echo x >> secrets/inner.txt && echo wrote-existing; echo x >> README; echo x > ../outside/new; echo > /dev/tcp/127.0.0.1/9; echo t > $TMPDIR/t && cat $TMPDIR/t; grep CapEff /proc/self/status`
	r := w.withoutUserNS(t, "-c", script)
	check(t, r, 0,
		`^PEM-SECRET\nwrote-existing\nt\nCapEff:\t0+\n$`,
		`(?s)enforcing the policy with Landlock alone.*secret.txt: Permission denied.*README: Permission denied.*outside/new: Permission denied.*127.0.0.1/9: Permission denied`)
	if strings.Contains(r.stdout, "TOPSECRET") {
		t.Error("the denied file was readable")
	}
}
