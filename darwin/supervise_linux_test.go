package darwin

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/fence-sandbox/fence/sandbox"
)

// The runner on a real terminal. Linux has the same process groups,
// terminal foreground, job control and signals as macOS, so the
// runner's supervision runs here as it does there, with a stand-in for
// sandbox-exec (a script that executes the command), from an interactive
// bash on a pseudo-terminal, as a person runs fence. What is macOS's
// alone (the kqueue exec watch, sysctl) is not run here.

func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "-runner": // this binary as fence's runner
			os.Exit(runnerMain(os.Args[2:]))
		case "-count": // this binary as the command: counts signals
			os.Exit(countSignals())
		}
	}
	os.Exit(m.Run())
}

// runnerMain runs argv as fence's runner would, with the stand-in given
// in FENCE_TEST_SANDBOX_EXEC, the timeout in FENCE_TEST_TIMEOUT, and a
// session of its own for the command when FENCE_TEST_NEW_SESSION is 1.
func runnerMain(argv []string) int {
	testOnlySandboxExec = os.Getenv("FENCE_TEST_SANDBOX_EXEC")
	timeout, _ := time.ParseDuration(os.Getenv("FENCE_TEST_TIMEOUT"))
	dir, _ := os.Getwd()
	plan := &sandbox.Plan{Argv: argv, Dir: dir, NewSession: os.Getenv("FENCE_TEST_NEW_SESSION") == "1"}
	plan.Limits.Timeout = timeout
	code, err := runCommand(plan, "(version 1)", os.Environ(), os.Stderr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fence: error: %v\n", err)
	}
	return code
}

// countSignals is a command that counts the SIGINTs and SIGWINCHs it
// gets, says each, and at a line or the end of its input says the count
// of SIGINTs and exits with it.
func countSignals() int {
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGWINCH)
	lines := make(chan struct{})
	go func() {
		bufio.NewReader(os.Stdin).ReadString('\n')
		close(lines)
	}()
	fmt.Println("counting")
	n := map[os.Signal]int{}
	for {
		select {
		case s := <-sigs:
			n[s]++
			fmt.Printf("got-%s-%d\n", map[os.Signal]string{syscall.SIGINT: "int", syscall.SIGWINCH: "winch"}[s], n[s])
		case <-lines:
			fmt.Printf("ints=%d\n", n[syscall.SIGINT])
			return n[syscall.SIGINT]
		}
	}
}

// term is an interactive bash on a pseudo-terminal, with $F the runner
// and $C the counting command: what a test types goes to the terminal,
// and expect waits for what it shows.
type term struct {
	t   *testing.T
	tty *os.File
	cmd *exec.Cmd
	mu  sync.Mutex
	out bytes.Buffer
	pos int
}

func startTerm(t *testing.T) *term {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not found")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	stand := filepath.Join(t.TempDir(), "sandbox-exec")
	// sandbox-exec -p PROFILE -- cmd...: executes cmd, as sandbox-exec does.
	if err := os.WriteFile(stand, []byte("#!/bin/sh\nshift 3\nexec \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "--norc", "--noprofile", "-i")
	cmd.Dir = t.TempDir()
	cmd.Env = []string{"PATH=/usr/bin:/bin", "TERM=dumb", "PS1=$ ", "HOME=" + cmd.Dir,
		"F=" + self + " -runner", "C=" + self + " -count", "FENCE_TEST_SANDBOX_EXEC=" + stand}
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 24, Cols: 200})
	if err != nil {
		t.Fatal(err)
	}
	tm := &term{t: t, tty: tty, cmd: cmd}
	go io.Copy(lockedBuffer{&tm.mu, &tm.out}, tty)
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		tty.Close()
	})
	tm.send("echo ready\n")
	tm.expect("ready\r\n")
	return tm
}

type lockedBuffer struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (l lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (tm *term) send(s string) { tm.tty.WriteString(s) }

// expect waits for want to show after what the last expect read, typing
// again (when not "") every so often, which makes bash report its jobs.
func (tm *term) expect(want string, again ...string) {
	tm.t.Helper()
	deadline := time.Now().Add(30 * time.Second) // only a guard against a hung terminal
	for tick := 0; ; tick++ {
		tm.mu.Lock()
		seen := tm.out.String()
		i := strings.Index(seen[tm.pos:], want)
		if i >= 0 {
			tm.pos += i + len(want)
		}
		tm.mu.Unlock()
		if i >= 0 {
			return
		}
		if time.Now().After(deadline) {
			ps, _ := exec.Command("ps", "-eo", "pid,ppid,pgid,tpgid,stat,args").CombinedOutput()
			tm.t.Fatalf("terminal never showed %q; it shows:\n%s\n%s", want, seen, ps)
		}
		if len(again) > 0 && tick%20 == 19 {
			tm.send(again[0])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRunnerSignals: Ctrl-C and a resize reach the command once, from
// the terminal, when it has the terminal; and from fence, when fence's
// group keeps it (standard input not the terminal, or a session of the
// command's own).
func TestRunnerSignals(t *testing.T) {
	tm := startTerm(t)

	tm.send("$F $C; echo rc=$?\n")
	tm.expect("counting\r\n")
	tm.send("\x03")
	tm.expect("got-int-1\r\n")
	pty.Setsize(tm.tty, &pty.Winsize{Rows: 30, Cols: 100})
	tm.expect("got-winch-1\r\n")
	tm.send("done\n")
	tm.expect("ints=1\r\n")
	tm.expect("rc=1\r\n")

	// fence keeps the terminal (its standard input is a pipe): the
	// Ctrl-C reaches fence's group, and fence passes it on.
	tm.send("(trap '' INT; read l; echo $l) | $F $C; echo rc=$?\n")
	tm.expect("counting\r\n")
	tm.send("\x03")
	tm.expect("got-int-1\r\n")
	tm.send("done\n")
	tm.expect("ints=1\r\n")
	tm.expect("rc=1\r\n")

	tm.send("FENCE_TEST_NEW_SESSION=1 $F $C; echo rc=$?\n")
	tm.expect("counting\r\n")
	tm.send("\x03")
	tm.expect("got-int-1\r\n")
	pty.Setsize(tm.tty, &pty.Winsize{Rows: 24, Cols: 200})
	tm.expect("got-winch-1\r\n")
	tm.send("done\n")
	tm.expect("ints=1\r\n")
	tm.expect("rc=1\r\n")
}

// TestRunnerJobControl: Ctrl-Z stops the whole run and fg continues it
// with the terminal; a run in the background that reads the terminal
// stops until fg; Ctrl-C after fg ends the command; kill of a stopped
// run ends it.
func TestRunnerJobControl(t *testing.T) {
	tm := startTerm(t)

	tm.send("$F sh -c 'echo waiting; read l; echo got-$l'\n")
	tm.expect("waiting\r\n")
	tm.send("\x1a")
	tm.expect("Stopped")
	tm.send("echo prompt-back\n")
	tm.expect("prompt-back\r\n")
	tm.send("fg\n")
	tm.expect("read l")
	tm.send("one\n")
	tm.expect("got-one\r\n")
	tm.send("echo rc=$?\n")
	tm.expect("rc=0\r\n")

	tm.send("$F sh -c 'read l; echo got-$l' &\n")
	tm.expect("Stopped", "jobs\n")
	tm.send("fg\n")
	tm.expect("read l")
	tm.send("two\n")
	tm.expect("got-two\r\n")

	tm.send("$F sh -c 'echo waiting; exec sleep 1000002'\n")
	tm.expect("waiting\r\n")
	tm.send("\x1a")
	tm.expect("Stopped")
	tm.send("echo prompt-back\n")
	tm.expect("prompt-back\r\n")
	tm.send("fg\n")
	tm.expect("fg\r\n")
	tm.expect("sleep 1000002'\r\n")
	// bash names the job before it gives it the terminal and continues
	// it: a Ctrl-C before then is bash's own.
	continued(t, "sleep\x001000002\x00")
	tm.send("\x03")
	tm.expect("rc=130", "echo rc=$?\n")
	noProcess(t, "1000002")

	tm.send("$F sh -c 'echo waiting; exec sleep 1000003'\n")
	tm.expect("waiting\r\n")
	tm.send("\x1a")
	tm.expect("Stopped")
	tm.send("kill %1\n")
	tm.expect("Exit 143", "jobs\n")
	noProcess(t, "1000003")

	// A stop for the terminal while the run has it does not stop fence.
	tm.send("$F sh -c 'kill -TTIN $$; echo after-ttin'\n")
	tm.expect("after-ttin\r\n")
}

// TestRunnerTimeout: the timeout kills the command's process group, the
// command's background processes with it, and the exit is 124.
func TestRunnerTimeout(t *testing.T) {
	tm := startTerm(t)
	tm.send("FENCE_TEST_TIMEOUT=1s $F sh -c 'sleep 1000004 & echo started; exec sleep 1000005'; echo rc=$?\n")
	tm.expect("started\r\n")
	tm.expect("timed out after 1s")
	tm.expect("rc=124\r\n")
	noProcess(t, "1000004")
	noProcess(t, "1000005")
}

// TestRunnerKillsLeftovers: what the command left running in its group
// ends with the run.
func TestRunnerKillsLeftovers(t *testing.T) {
	tm := startTerm(t)
	tm.send("$F sh -c 'sleep 1000006 & echo started'; echo rc=$?\n")
	tm.expect("started\r\n")
	tm.expect("rc=0\r\n")
	noProcess(t, "1000006")
}

// noProcess fails when a process whose command line holds marker is
// still running (a zombie counts as ended) after a while: a killed
// process ends once the kernel schedules it.
func noProcess(t *testing.T, marker string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second) // only a guard
	for {
		left := running(marker)
		if left == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("still running: %s", left)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// running names a live process whose command line holds marker, or "".
func running(marker string) string {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(b, []byte(marker)) {
			continue
		}
		if _, _, zombie, ok := processInfo(pid); ok && !zombie {
			return fmt.Sprintf("%d (%s)", pid, bytes.ReplaceAll(b, []byte{0}, []byte{' '}))
		}
	}
	return ""
}

// TestRunnerStopWithoutTerminal: without a terminal, a stop of the
// command does not stop fence (no shell could continue it); SIGCONT to
// fence continues the command, and SIGTERM to fence ends a stopped one.
func TestRunnerStopWithoutTerminal(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	stand := filepath.Join(t.TempDir(), "sandbox-exec")
	if err := os.WriteFile(stand, []byte("#!/bin/sh\nshift 3\nexec \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	start := func(script string) (*exec.Cmd, *bytes.Buffer) {
		cmd := exec.Command(self, "-runner", "sh", "-c", script)
		cmd.Env = append(os.Environ(), "FENCE_TEST_SANDBOX_EXEC="+stand)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // no controlling terminal
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd, &out
	}

	cmd, out := start("kill -STOP $$; echo resumed-1000007")
	waitStopped(t, "resumed-1000007")
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil || !strings.Contains(out.String(), "resumed-1000007") {
		t.Errorf("fence continued: %v, output %q; want exit 0 and the command's output", err, out)
	}

	cmd, out = start("kill -STOP $$; echo resumed-1000008")
	waitStopped(t, "resumed-1000008")
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); cmd.ProcessState.ExitCode() != 128+int(syscall.SIGTERM) || strings.Contains(out.String(), "resumed") {
		t.Errorf("fence terminated: %v, output %q; want exit 143 and the command ended", err, out)
	}
	noProcess(t, "resumed-1000008")
}

// waitStopped waits until the process whose command line holds marker
// has stopped (a guard bounds the wait).
func waitStopped(t *testing.T, marker string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second) // only a guard
	for time.Now().Before(deadline) {
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			if err != nil || !bytes.Contains(b, []byte(marker)) || bytes.Contains(b, []byte("-runner")) {
				continue
			}
			st, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
			if i := bytes.LastIndexByte(st, ')'); i > 0 && len(st) > i+2 && st[i+2] == 'T' {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no stopped process of %q", marker)
}

// continued waits until a process whose command line holds marker runs
// (is not stopped).
func continued(t *testing.T, marker string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second) // only a guard
	for time.Now().Before(deadline) {
		procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, p := range procs {
			b, err := os.ReadFile(p)
			if err != nil || !bytes.Contains(b, []byte(marker)) {
				continue
			}
			stat, err := os.ReadFile(filepath.Join(filepath.Dir(p), "stat"))
			if i := bytes.LastIndexByte(stat, ')'); err == nil && i > 0 && i+2 < len(stat) && stat[i+2] != 'T' {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no process with %q in its command line went on", marker)
}
