//go:build linux

package linux

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fence-sandbox/fence/sandbox"
)

// These tests run pid 1's duties alone, in a child this test process
// clones as the supervisor does (without namespaces or a sandbox around
// it, as in the Landlock-only engine without Landlock), and play the
// supervisor's side of the sync and job sockets themselves.

// pid1Run is a pid 1 under test: the process, and the supervisor's ends
// of its sockets.
type pid1Run struct {
	prog       *pid1Prog
	pid        int
	sync, jobs *os.File
}

// startPid1 starts pid 1's duties for plan's command with env in a child
// of this process.
func startPid1(t *testing.T, plan *sandbox.Plan, env []string) *pid1Run {
	t.Helper()
	p, err := newPid1Prog(plan, env, false, false, false)
	if err != nil {
		t.Fatal(err)
	}
	return startPid1WithProg(t, p)
}

// forkPid1ForTest clones a child that runs p, the way forkChild does.
//
//go:noinline
//go:norace
func forkPid1ForTest(p *pid1Prog, fds *childFDs) (uintptr, syscall.Errno) {
	runtimeBeforeFork()
	pid, _, errno := syscall.RawSyscall6(unix.SYS_CLONE, uintptr(unix.SIGCHLD), 0, 0, 0, 0, 0)
	if errno != 0 || pid != 0 {
		runtimeAfterFork()
		return pid, errno
	}
	pid1ChildForTest(p, fds)
	return 0, 0
}

//go:nosplit
//go:norace
func pid1ChildForTest(p *pid1Prog, fds *childFDs) {
	resetSignals(&testSigOld, &testSigDfl) // every signal stays blocked, as in forkChild's child
	p.run(fds)
}

// testSigOld and testSigDfl are resetSignals' buffers in the test's
// child.
var testSigOld, testSigDfl sigaction

// wait waits for pid 1 and returns its exit code (-1 when it was
// already reaped).
func (r *pid1Run) wait() int {
	var ws unix.WaitStatus
	for {
		_, err := unix.Wait4(r.pid, &ws, 0, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return -1
		}
		return ws.ExitStatus()
	}
}

// jobMsg reads the next message of the job socket.
func (r *pid1Run) jobMsg(t *testing.T) (syncMsg, bool) {
	t.Helper()
	m, files, ok := readSync(int(r.jobs.Fd()), 0)
	closeFiles(files)
	return m, ok
}

func TestPid1ExitStatus(t *testing.T) {
	for _, tc := range []struct {
		script string
		code   int
	}{
		{"exit 0", 0},
		{"exit 3", 3},
		{"kill -TERM $$", 128 + 15},
		{"kill -KILL $$", 128 + 9},
		{"sleep 60 & exit 7", 7}, // a child left running does not hold pid 1 up
	} {
		r := startPid1(t, &sandbox.Plan{Argv: []string{"sh", "-c", tc.script}}, []string{"PATH=/usr/bin:/bin"})
		if got := r.wait(); got != tc.code {
			t.Errorf("sh -c %q: pid 1 exited %d, want %d", tc.script, got, tc.code)
		}
	}
}

func TestPid1StartFailures(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain")
	must(t, os.WriteFile(plain, []byte("#!/bin/sh\n"), 0o644))
	must(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	noInterp := filepath.Join(dir, "nointerp")
	must(t, os.WriteFile(noInterp, []byte("#!/nonexistent/interp\n"), 0o755))
	garbage := filepath.Join(dir, "garbage")
	must(t, os.WriteFile(garbage, []byte{0x7f, 'E', 'L', 'F', 0, 0, 0, 0}, 0o755))
	for _, tc := range []struct {
		argv0, path string
		code        int
		want        string
	}{
		{"no-such-command-anywhere", "/usr/bin:/bin", 127, `command not found: "no-such-command-anywhere" (PATH=/usr/bin:/bin)`},
		{"plain", dir, 127, `command not found: "plain" (PATH=` + dir + `)`}, // no execute bit: not a candidate
		{"sub", dir + ":/usr/bin:/bin", 127, `command not found: "sub" (PATH=` + dir + `:/usr/bin:/bin)`},
		{plain, "", 126, `cannot execute "` + plain + `": permission denied (it lacks the execute bit, mode -rw-r--r--: chmod +x it, or run it through its interpreter)`},
		{filepath.Join(dir, "sub"), "", 126, `cannot execute "` + filepath.Join(dir, "sub") + `": permission denied (it is a directory)`},
		{filepath.Join(dir, "missing"), "", 127, `command not found: "` + filepath.Join(dir, "missing") + `"`},
		{"nointerp", dir, 127, `command not found: "nointerp"`},
		{garbage, "", 126, `cannot execute "` + garbage + `": fork/exec ` + garbage + `: exec format error`},
	} {
		env := []string{"PATH=" + tc.path}
		r := startPid1(t, &sandbox.Plan{Argv: []string{tc.argv0}}, env)
		m, ok := r.jobMsg(t)
		code := r.wait()
		if !ok || m.Kind != msgExecFailed {
			t.Errorf("%s: no exec failure reported (%v, %+v)", tc.argv0, ok, m)
			continue
		}
		if got := r.prog.startFailure(m); got != tc.want || code != tc.code {
			t.Errorf("%s: %d %q\nwant %d %q", tc.argv0, code, got, tc.code, tc.want)
		}
	}
}

func TestPid1FindsCommandInPath(t *testing.T) {
	dir := t.TempDir()
	must(t, os.Mkdir(filepath.Join(dir, "true"), 0o755)) // a directory named like the command is skipped
	r := startPid1(t, &sandbox.Plan{Argv: []string{"true"}}, []string{"PATH=" + dir + ":/usr/bin:/bin"})
	if code := r.wait(); code != 0 {
		t.Errorf("true: exit %d", code)
	}
}

func TestPid1ForwardsSignals(t *testing.T) {
	r := startPid1(t, &sandbox.Plan{Argv: []string{"sleep", "60"}}, []string{"PATH=/usr/bin:/bin"})
	waitForChild(t, r.pid)
	must(t, unix.Kill(r.pid, unix.SIGTERM))
	if code := r.wait(); code != 128+15 {
		t.Errorf("pid 1 exited %d after SIGTERM, want 143", code)
	}
}

func TestPid1ReportsStops(t *testing.T) {
	r := startPid1(t, &sandbox.Plan{Argv: []string{"sh", "-c", "kill -STOP $$; exit 5"}}, []string{"PATH=/usr/bin:/bin"})
	m, ok := r.jobMsg(t)
	if !ok || m.Kind != msgJobStopped || m.Arg != uint32(unix.SIGSTOP) {
		t.Fatalf("job socket: %v %+v, want msgJobStopped SIGSTOP", ok, m)
	}
	must(t, sendSync(r.jobs, syncMsg{Kind: msgJobContinue}))
	if code := r.wait(); code != 5 {
		t.Errorf("pid 1 exited %d after the continue, want 5", code)
	}
}

func TestPid1Dials(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort := closed.Addr().(*net.TCPAddr).Port
	closed.Close()
	plan := &sandbox.Plan{Argv: []string{"sleep", "60"}, Proxy: &sandbox.Proxy{Forwards: []sandbox.Forward{{Port: port}, {Port: closedPort}}}}
	p, err := newPid1Prog(plan, []string{"PATH=/usr/bin:/bin"}, true, false, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.ports) != 2 {
		t.Fatalf("ports %v, want the two -p ports", p.ports)
	}
	r := startPid1WithProg(t, p)
	d := &dialer{sock: r.sync}
	c, err := d.dial(port)
	if err != nil {
		t.Fatalf("dial %d: %v", port, err)
	}
	accepted, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	accepted.Write([]byte("hi"))
	buf := make([]byte, 2)
	if _, err := c.Read(buf); err != nil || string(buf) != "hi" {
		t.Errorf("read through the handed-over socket: %q %v", buf, err)
	}
	c.Close()
	accepted.Close()
	if _, err := d.dial(closedPort); err == nil {
		t.Errorf("dial of a port nothing listens on succeeded")
	}
	if _, err := d.dial(1); err == nil {
		t.Errorf("dial of a port not forwarded succeeded")
	}
	unix.Kill(r.pid, unix.SIGTERM)
	if code := r.wait(); code != 143 {
		t.Errorf("exit %d", code)
	}
}

// startPid1WithProg is startPid1 for a prepared program.
func startPid1WithProg(t *testing.T, p *pid1Prog) *pid1Run {
	t.Helper()
	syncSup, syncChild, err := seqpacketPair("sync")
	if err != nil {
		t.Fatal(err)
	}
	jobsChild, jobsSup, err := jobPair()
	if err != nil {
		t.Fatal(err)
	}
	fds := &childFDs{sync: int32(syncChild.Fd()), jobs: int32(jobsChild.Fd())}
	syscall.ForkLock.Lock()
	runtime.LockOSThread()
	pid, errno := forkPid1ForTest(p, fds)
	runtime.UnlockOSThread()
	syscall.ForkLock.Unlock()
	syncChild.Close()
	jobsChild.Close()
	if errno != 0 {
		t.Fatalf("clone: %v", errno)
	}
	r := &pid1Run{prog: p, pid: int(pid), sync: syncSup, jobs: jobsSup}
	t.Cleanup(func() {
		unix.Kill(r.pid, unix.SIGKILL)
		r.wait()
		syncSup.Close()
		jobsSup.Close()
	})
	return r
}

// waitForChild waits until pid has a child (the command runs).
func waitForChild(t *testing.T, pid int) {
	t.Helper()
	for range 5000 {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(pid) + "/children")
		if len(b) > 0 {
			return
		}
		unix.Nanosleep(&unix.Timespec{Nsec: 1_000_000}, nil)
	}
	t.Fatalf("pid %d started no command", pid)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestPid1StopsOnRequest(t *testing.T) {
	r := startPid1(t, &sandbox.Plan{Argv: []string{"sleep", "60"}}, []string{"PATH=/usr/bin:/bin"})
	waitForChild(t, r.pid)
	must(t, sendSync(r.jobs, syncMsg{Kind: msgJobStop, Arg: uint32(unix.SIGTSTP)}))
	m, ok := r.jobMsg(t)
	if !ok || m.Kind != msgJobStopped || m.Arg != uint32(unix.SIGTSTP) {
		t.Fatalf("job socket: %v %+v, want msgJobStopped SIGTSTP", ok, m)
	}
	must(t, unix.Kill(r.pid, unix.SIGINT)) // ends a stopped command too: SIGCONT follows it
	if code := r.wait(); code != 128+2 {
		t.Errorf("pid 1 exited %d after SIGINT to the stopped command, want 130", code)
	}
}

// TestPid1HandsOverDialInProgress: a connection pid 1 is still setting up
// when the command ends is handed over before pid 1 exits. The listener's
// accept queue is full, so the kernel drops the connect's SYN until the
// test makes room.
func TestPid1HandsOverDialInProgress(t *testing.T) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	must(t, err)
	defer unix.Close(fd)
	must(t, unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}))
	must(t, unix.Listen(fd, 0))
	sa, err := unix.Getsockname(fd)
	must(t, err)
	port := sa.(*unix.SockaddrInet4).Port
	var fillers []net.Conn
	defer func() {
		for _, c := range fillers {
			c.Close()
		}
	}()
	for len(fillers) < 1 { // a backlog of 0 queues one connection
		c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		must(t, err)
		fillers = append(fillers, c)
	}
	plan := &sandbox.Plan{Argv: []string{"sleep", "60"}, Proxy: &sandbox.Proxy{Forwards: []sandbox.Forward{{Port: port}}}}
	p, err := newPid1Prog(plan, []string{"PATH=/usr/bin:/bin"}, true, false, false)
	must(t, err)
	r := startPid1WithProg(t, p)
	waitForChild(t, r.pid)
	must(t, sendSync(r.sync, syncMsg{Kind: msgDial, Arg: uint32(port)}))
	waitForSynSent(t, port)
	must(t, unix.Kill(r.pid, unix.SIGTERM)) // the command ends with the connect in progress
	waitNoChild(t, r.pid)
	var ws unix.WaitStatus
	if got, _ := unix.Wait4(r.pid, &ws, unix.WNOHANG, nil); got == r.pid {
		t.Fatalf("pid 1 exited (%v) with a dial in progress", ws)
	}
	// Room in the queue: the SYN's retransmission connects.
	nfd, _, err := unix.Accept4(fd, unix.SOCK_CLOEXEC)
	must(t, err)
	unix.Close(nfd)
	m, files, ok := readSync(int(r.sync.Fd()), 1)
	defer closeFiles(files)
	if !ok || m.Kind != msgDialed || m.Arg != 1 || len(files) != 1 {
		t.Fatalf("dial answer %v %+v with %d files, want a connected socket", ok, m, len(files))
	}
	if code := r.wait(); code != 143 {
		t.Errorf("pid 1 exited %d, want 143", code)
	}
}

// waitForSynSent waits until a socket of this network namespace is
// connecting to port on the loopback (/proc/net/tcp, state 02).
func waitForSynSent(t *testing.T, port int) {
	t.Helper()
	want := fmt.Sprintf("0100007F:%04X 02", port)
	for range 5000 {
		b, _ := os.ReadFile("/proc/net/tcp")
		if strings.Contains(string(b), want) {
			return
		}
		unix.Nanosleep(&unix.Timespec{Nsec: 1_000_000}, nil)
	}
	t.Fatalf("no connect to port %d in progress", port)
}

// waitNoChild waits until pid has no child left (the command was reaped).
func waitNoChild(t *testing.T, pid int) {
	t.Helper()
	for range 5000 {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(pid) + "/children")
		if err == nil && len(strings.TrimSpace(string(b))) == 0 {
			return
		}
		unix.Nanosleep(&unix.Timespec{Nsec: 1_000_000}, nil)
	}
	t.Fatalf("pid %d still has a child", pid)
}
