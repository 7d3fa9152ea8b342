//go:build linux

package linux_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// TestInteractiveShell runs `fence -- bash -i` on a pseudo-terminal, as a
// person would: the shell gets job control (Ctrl-Z stops a job, fg brings
// it back), sees terminal resizes, and fence gives the terminal back.
func TestInteractiveShell(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not found")
	}
	w := newWorld(t, os.Getuid(), `{}`)
	cmd := exec.Command(filepath.Join(bin, "fence"), "-s", w.settings, "--", "bash", "--norc", "--noprofile", "-i")
	cmd.Dir, cmd.Env = w.ws, []string{"HOME=" + w.home, "PATH=/usr/bin:/bin", "TERM=dumb", "PS1=$ "}
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 24, Cols: 80})
	must(t, err)
	defer tty.Close()
	var mu sync.Mutex
	var out bytes.Buffer
	go io.Copy(lockedWriter{&mu, &out}, tty)
	expect := func(want string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second) // only a guard against a hung shell
		for {
			mu.Lock()
			ok := strings.Contains(out.String(), want)
			mu.Unlock()
			if ok {
				return
			}
			if time.Now().After(deadline) {
				mu.Lock()
				defer mu.Unlock()
				t.Fatalf("terminal never showed %q; it shows:\n%s", want, out.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	send := func(s string) { tty.WriteString(s) }

	send("echo ready-$FENCE_SANDBOX\n")
	expect("ready-1")
	send("stty size\n")
	expect("24 80")
	must(t, pty.Setsize(tty, &pty.Winsize{Rows: 40, Cols: 100}))
	send("stty size\n")
	expect("40 100")
	send("sh -c 'echo sleeping; exec sleep 1000'\n")
	expect("sleeping\r\n")
	send("\x1a") // Ctrl-Z
	expect("Stopped")
	send("jobs\n")
	expect("sleep 1000")
	send("kill %1; fg\n")
	expect("Terminated")
	send("exit 3\n")
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 {
		t.Errorf("fence -- bash -i: %v, want exit 3", err)
	}
}

// shell is an interactive bash on a pseudo-terminal, the user's shell,
// with $F the fence command line to run: what a test types goes to the
// terminal, and expect waits for what it shows.
type shell struct {
	t   *testing.T
	tty *os.File
	cmd *exec.Cmd
	mu  sync.Mutex
	out bytes.Buffer
	pos int // how far expect has read
}

// engines are the two ways fence runs: with namespaces, and Landlock alone
// (in a user namespace of the test's own where no other can be made).
var engines = []string{"namespaces", "landlock-only"}

// startShell starts the user's shell as w's user, with $F running fence
// on w's policy in the engine named.
func startShell(t *testing.T, w *world, engine string) *shell {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not found")
	}
	sh := startTerminal(t, w, engine, "bash", "--norc", "--noprofile", "-i")
	sh.send("echo ready\n")
	sh.expect("ready\r\n")
	return sh
}

// startTerminal starts argv as w's user on a terminal of its own, whose
// session it leads, with $F running fence on w's policy in the engine
// named.
func startTerminal(t *testing.T, w *world, engine string, argv ...string) *shell {
	t.Helper()
	f := filepath.Join(bin, "fence") + " -s " + w.settings
	if engine == "landlock-only" {
		if _, err := exec.LookPath("unshare"); err != nil {
			t.Skip("unshare not found: cannot make a user namespace without nested ones")
		}
		f += " --degraded=warn"
		argv = append([]string{"unshare", "-Ur", "sh", "-c", `echo 0 > /proc/sys/user/max_user_namespaces && exec "$@"`, "sh"}, argv...)
	}
	argv = w.asUser(argv...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = w.ws, []string{"HOME=" + w.home, "PATH=/usr/bin:/bin", "TERM=dumb", "PS1=$ ", "F=" + f}
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 24, Cols: 200})
	must(t, err)
	sh := &shell{t: t, tty: tty, cmd: cmd}
	go io.Copy(lockedWriter{&sh.mu, &sh.out}, tty)
	t.Cleanup(func() {
		cmd.Process.Kill() // a fence left stopped gets SIGHUP and SIGCONT from the kernel
		cmd.Wait()
		tty.Close()
	})
	return sh
}

func (sh *shell) send(s string) { sh.tty.WriteString(s) }

// expect waits for want to show after what the last expect read.
func (sh *shell) expect(want string) {
	sh.t.Helper()
	sh.expectResending(want, "")
}

// expectResending waits for want, typing again every so often, which
// makes the shell report the state of its jobs anew.
func (sh *shell) expectResending(want, again string) {
	sh.t.Helper()
	deadline := time.Now().Add(30 * time.Second) // only a guard against a hung terminal
	for tick := 0; ; tick++ {
		sh.mu.Lock()
		i := strings.Index(sh.out.String()[sh.pos:], want)
		if i >= 0 {
			sh.pos += i + len(want)
		}
		seen := sh.out.String()
		sh.mu.Unlock()
		if i >= 0 {
			return
		}
		if time.Now().After(deadline) {
			ps, _ := exec.Command("ps", "-eo", "pid,ppid,pgid,tpgid,stat,wchan:20,args").CombinedOutput()
			sh.t.Fatalf("terminal never showed %q; it shows:\n%s\n%s", want, seen, ps)
		}
		if again != "" && tick%20 == 19 {
			sh.send(again)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestJobControl runs fence from an interactive shell on a terminal, as a
// person does, and suspends it: Ctrl-Z stops the whole run, fg gives the
// command the terminal again, a run in the background that reads the
// terminal stops for it and reads on fg, Ctrl-C ends the run, and so does
// kill of a stopped run.
func TestJobControl(t *testing.T) {
	for _, engine := range engines {
		for _, u := range users(t) {
			t.Run(engine+"/"+u.name, func(t *testing.T) {
				w := newWorld(t, u.uid, `{}`)
				sh := startShell(t, w, engine)

				// Ctrl-Z while the command reads the terminal; fg; it reads.
				sh.send("$F -- sh -c 'echo waiting; read l; echo got-$l'\n")
				sh.expect("waiting\r\n")
				sh.send("\x1a")
				sh.expect("Stopped")
				sh.send("echo prompt-back\n")
				sh.expect("prompt-back\r\n")
				sh.send("fg\n")
				sh.expect("read l")
				sh.send("one\n")
				sh.expect("got-one")
				sh.send("echo rc=$?\n")
				sh.expect("rc=0")

				// Ctrl-Z, fg, Ctrl-C.
				sh.send("$F -- sh -c 'echo waiting; exec sleep 1000001'\n")
				sh.expect("waiting\r\n")
				sh.send("\x1a")
				sh.expect("Stopped")
				sh.send("fg\n")
				sh.expect("fg\r\n")
				sh.expect("sleep 1000001'\r\n") // the shell names the job it continues
				// bash names the job before it gives it the terminal and
				// continues it: a Ctrl-C before then is bash's own.
				waitRunning(t, "sleep\x001000001\x00")
				sh.send("\x03")
				sh.expectResending("rc=130", "echo rc=$?\n")
				assertNoProcess(t, "1000001")

				// A run in the background stops when it reads the
				// terminal, and reads it once brought to the foreground.
				sh.send("$F -- sh -c 'read l; echo got-$l' &\n")
				sh.expectResending("Stopped", "jobs\n")
				sh.send("fg\n")
				sh.expect("read l")
				sh.send("two\n")
				sh.expect("got-two")

				// The command stopping itself stops the run; fg continues it.
				sh.send("$F -- sh -c 'kill -STOP $$; echo resumed'\n")
				sh.expect("Stopped")
				sh.send("fg\n")
				sh.expect("resumed")

				// kill of a stopped run (SIGTERM, then SIGCONT, as the
				// shell sends them) ends it.
				sh.send("$F -- sh -c 'echo waiting; exec sleep 1000002'\n")
				sh.expect("waiting\r\n")
				sh.send("\x1a")
				sh.expect("Stopped")
				sh.send("kill %1\n")
				sh.expectResending("Exit 143", "jobs\n") // how the shell reports a job's exit status
				assertNoProcess(t, "1000002")

				// A run put in the background after it had the terminal
				// leaves the terminal with the shell when it ends.
				// (exec: a Ctrl-Z between a shell's vfork and exec stops
				// the child with the shell stuck, fence or not)
				sh.send("$F -- sh -c 'echo waiting; exec sleep 1'\n")
				sh.expect("waiting\r\n")
				sh.send("\x1a")
				sh.expect("Stopped")
				sh.send("bg\n")
				sh.expect("bg\r\n")
				sh.send("wait; echo still-here\n")
				sh.expect("still-here\r\n")
				sh.send("echo again\n")
				sh.expect("again\r\n")

				// A command that stops over and over, continued by a child
				// of its own, stops the run again after each fg at most,
				// never for stops that piled up while fence was stopped:
				// a few fg end it.
				sh.send("$F -- sh -c '(while kill -CONT $$ 2>/dev/null; do sleep 0.01; done) & for i in $(seq 50); do kill -STOP $$; done; echo looped'\n")
				sh.expect("Stopped")
				sh.expectResending("rc=0", "fg >/dev/null; echo rc=$?\n")
				sh.expect("$ ")
				sh.send("jobs; echo no-jobs\n")
				sh.expect("jobs; echo no-jobs\r\nno-jobs\r\n")

				// A stop for the terminal while the run has it does not
				// stop fence: the command gets the terminal and goes on.
				sh.send("$F -- sh -c 'kill -TTIN $$; echo after-ttin'\n")
				sh.expect("after-ttin\r\n")

				sh.send("exit 3\n")
				if err := sh.cmd.Wait(); err == nil || sh.cmd.ProcessState.ExitCode() != 3 {
					t.Errorf("the shell: %v, want exit 3", err)
				}
			})
		}
	}
}

// TestStopWithoutTerminal stops the command of a run that has no
// terminal: fence does not stop (no shell could continue it), SIGCONT to
// fence continues the command, and SIGTERM to fence ends it.
func TestStopWithoutTerminal(t *testing.T) {
	for _, engine := range engines {
		for _, u := range users(t) {
			for _, sig := range []syscall.Signal{syscall.SIGCONT, syscall.SIGTERM} {
				t.Run(engine+"/"+u.name+"/"+sig.String(), func(t *testing.T) {
					w := newWorld(t, u.uid, `{}`)
					marker := fmt.Sprintf("stopper-%d-%d", u.uid, sig)
					cmd := fenceCommand(t, w, engine, "--", "sh", "-c", "kill -STOP $$; echo after", marker)
					var out bytes.Buffer
					cmd.Stdout, cmd.Stderr = &out, io.Discard
					must(t, cmd.Start())
					defer time.AfterFunc(time.Minute, func() { cmd.Process.Kill() }).Stop() // a hung fence fails the test
					waitStopped(t, marker)
					must(t, cmd.Process.Signal(sig))
					err := cmd.Wait()
					want, wantOut := 0, "after\n"
					if sig == syscall.SIGTERM {
						want, wantOut = 143, ""
					}
					if cmd.ProcessState.ExitCode() != want || out.String() != wantOut {
						t.Errorf("fence after %v to it: %v, stdout %q; want exit %d, stdout %q", sig, err, out.String(), want, wantOut)
					}
					assertNoProcess(t, marker)
				})
			}
		}
	}
}

// TestStopWithStdinNotTerminal suspends a run whose standard input is not
// the terminal (a file, a pipe), from an interactive shell: the command
// does not get the terminal then, so Ctrl-Z reaches fence's group, not
// the command's, and fence passes the stop on. The command stops with
// fence (it does not go on running and writing while the shell shows
// the job stopped), fg continues both, and Ctrl-C ends the run. (The
// sleeps' arguments are computed, so that only their command lines hold
// the marker, not fence's.)
func TestStopWithStdinNotTerminal(t *testing.T) {
	for _, engine := range engines {
		for _, u := range users(t) {
			t.Run(engine+"/"+u.name, func(t *testing.T) {
				w := newWorld(t, u.uid, `{}`)
				sh := startShell(t, w, engine)
				for i, line := range []string{
					"$F -- sh -c 'echo waiting; exec sleep $((2000000+%d))' </dev/null\n",
					"echo in | $F -- sh -c 'read l; echo waiting-$l; exec sleep $((2000000+%d))'\n",
				} {
					marker := fmt.Sprint(2000000 + 10*u.uid + i)
					// The sleep's own argv: fence's command line holds
					// the number too when the sum is the first term.
					sleep := "sleep\x00" + marker + "\x00"
					sh.send(fmt.Sprintf(line, 10*u.uid+i))
					sh.expect("waiting")
					waitRunning(t, sleep) // a stop before the exec would stop sh
					sh.send("\x1a")
					sh.expect("Stopped")
					waitStopped(t, sleep)
					sh.send("fg\n")
					sh.expect("fg\r\n")
					waitRunning(t, sleep)
					sh.send("\x03")
					sh.expectResending("rc=130", "echo rc=$?\n")
					assertNoProcess(t, marker)
				}
			})
		}
	}
}

// waitRunning waits until the process whose command line holds marker
// is not stopped.
func waitRunning(t *testing.T, marker string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second) // only a guard against a hung test
	for time.Now().Before(deadline) {
		procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, p := range procs {
			b, err := os.ReadFile(p)
			if err != nil || !strings.Contains(string(b), marker) {
				continue
			}
			if state, _ := procState(filepath.Dir(p)); state != "T" && state != "" {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no process with %q in its command line went on", marker)
}

// TestTerminalAfterDaemon runs fence from a script on a terminal (no job
// control, so nothing else takes the terminal back) with a command that
// leaves a daemon behind, in a process group of its own that it made the
// terminal's foreground, stopped: fence ends it and gives the terminal
// back to the script, whose next read works. In the Landlock-only engine
// the daemon outlives the init, and fence kills it only after the run.
func TestTerminalAfterDaemon(t *testing.T) {
	if _, err := exec.LookPath("perl"); err != nil {
		t.Skip("perl not found")
	}
	const daemon = `pipe(R, W) or die; if (fork) { close W; <R>; exit 0 } close R; $SIG{TTOU} = "IGNORE"; ` +
		`POSIX::setpgid(0, 0) or die "setpgid: $!"; POSIX::tcsetpgrp(0, getpgrp()) or die "tcsetpgrp: $!"; ` +
		`print W "held\n"; close W; kill "STOP", $$; sleep 100`
	for _, engine := range engines {
		for _, u := range users(t) {
			t.Run(engine+"/"+u.name, func(t *testing.T) {
				w := newWorld(t, u.uid, `{}`)
				sh := startTerminal(t, w, engine, "sh", "-c", `$F -- perl -MPOSIX -e '`+daemon+`'; echo fence-rc=$?; read x; echo got-$x`)
				sh.expect("fence-rc=0")
				sh.send("hello\n")
				sh.expect("got-hello")
				if err := sh.cmd.Wait(); err != nil {
					t.Errorf("the script: %v", err)
				}
			})
		}
	}
}

// TestStoppedInit has the command stop its parent, which is the init in
// the Landlock-only engine (no pid namespace, the same uid; the namespace
// engine's init is pid 1 there, which the kernel keeps from stopping),
// and stop itself: a terminating signal to fence still ends the run,
// SIGCONT to fence continues it, and the timeout ends it, each leaving no
// process behind.
func TestStoppedInit(t *testing.T) {
	for _, engine := range engines {
		for _, u := range users(t) {
			for _, c := range []struct {
				name   string
				sig    syscall.Signal // 0: the timeout ends it
				code   int
				stdout string
			}{
				{"SIGTERM", syscall.SIGTERM, 143, ""},
				{"SIGINT", syscall.SIGINT, 130, ""},
				{"SIGCONT", syscall.SIGCONT, 0, "after\n"},
				{"timeout", 0, 124, ""},
			} {
				t.Run(engine+"/"+u.name+"/"+c.name, func(t *testing.T) {
					w := newWorld(t, u.uid, `{}`)
					marker := fmt.Sprintf("initstopper-%d-%s", u.uid, c.name)
					args := []string{"--", "sh", "-c", "kill -STOP $PPID; kill -STOP $$; echo after", marker}
					if c.sig == 0 {
						args = append([]string{"--timeout", "2s"}, args...)
					}
					cmd := fenceCommand(t, w, engine, args...)
					var out bytes.Buffer
					cmd.Stdout, cmd.Stderr = &out, io.Discard
					must(t, cmd.Start())
					defer time.AfterFunc(time.Minute, func() { cmd.Process.Kill() }).Stop() // a hung fence fails the test
					init := waitStopped(t, marker)
					if engine == "landlock-only" {
						waitPidStopped(t, init)
					}
					if c.sig != 0 {
						must(t, cmd.Process.Signal(c.sig))
					}
					err := cmd.Wait()
					if cmd.ProcessState.ExitCode() != c.code || out.String() != c.stdout {
						t.Errorf("fence after its init was stopped: %v, stdout %q; want exit %d, stdout %q", err, out.String(), c.code, c.stdout)
					}
					assertNoProcess(t, marker)
				})
			}
		}
	}
}

// fenceCommand is fence with args as w's user in w's workspace, in the
// engine named, with stdin not a terminal.
func fenceCommand(t *testing.T, w *world, engine string, args ...string) *exec.Cmd {
	t.Helper()
	argv := append([]string{filepath.Join(bin, "fence"), "-s", w.settings}, args...)
	if engine == "landlock-only" {
		if _, err := exec.LookPath("unshare"); err != nil {
			t.Skip("unshare not found: cannot make a user namespace without nested ones")
		}
		argv = append([]string{"unshare", "-Ur", "sh", "-c", `echo 0 > /proc/sys/user/max_user_namespaces && exec "$@"`, "sh",
			argv[0], "-s", w.settings, "--degraded=warn"}, args...)
	}
	argv = w.asUser(argv...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = w.ws, []string{"HOME=" + w.home, "PATH=/usr/bin:/bin"}
	// No controlling terminal either, which a test run from one would
	// give it, for fence to stop the test's process group on.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	return cmd
}

// waitStopped waits until a process whose command line holds marker is
// stopped, and returns its parent.
func waitStopped(t *testing.T, marker string) (ppid int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second) // only a guard against a hung test
	for time.Now().Before(deadline) {
		procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, p := range procs {
			b, err := os.ReadFile(p)
			if err != nil || !strings.Contains(string(b), marker) {
				continue
			}
			if state, ppid := procState(filepath.Dir(p)); state == "T" {
				return ppid
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no process with %q in its command line stopped", marker)
	return 0
}

// waitPidStopped waits until the process pid is stopped.
func waitPidStopped(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second) // only a guard against a hung test
	for time.Now().Before(deadline) {
		if state, _ := procState(fmt.Sprintf("/proc/%d", pid)); state == "T" {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("process %d never stopped", pid)
}

// procState reads the state and the parent of the process whose /proc
// directory is dir.
func procState(dir string) (state string, ppid int) {
	stat, err := os.ReadFile(filepath.Join(dir, "stat"))
	i := bytes.LastIndexByte(stat, ')')
	if err != nil || i < 0 {
		return "", 0
	}
	var s string
	fmt.Sscanf(string(stat[i+1:]), " %s %d", &s, &ppid)
	return s, ppid
}

// TestTerminalName runs fence on a terminal and asks the command for its
// terminal's name: tty names it, test -t sees it, script opens a new
// pseudo-terminal of the sandbox's own, and the sandbox's /dev/pts shows
// none of the host's terminals, the caller's among them. Without
// namespaces the terminal keeps its host name.
func TestTerminalName(t *testing.T) {
	for _, name := range []string{"tty", "script"} {
		if _, err := exec.LookPath(name); err != nil {
			t.Skipf("%s not found", name)
		}
	}
	const line = `tty; readlink /proc/self/fd/1; test -t 0 && test -t 1 && echo is-a-terminal; script -qc tty /dev/null </dev/null; echo pts: $(ls /dev/pts)`
	for _, engine := range engines {
		for _, u := range users(t) {
			t.Run(engine+"/"+u.name, func(t *testing.T) {
				w := newWorld(t, u.uid, `{}`)
				cmd := fenceCommand(t, w, engine, "-c", line)
				ptmx, tty := ownTerminal(t, u.uid)
				cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
				cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
				must(t, cmd.Start())
				tty.Close()
				defer time.AfterFunc(time.Minute, func() { cmd.Process.Kill() }).Stop() // a hung fence fails the test
				var out bytes.Buffer
				io.Copy(&out, ptmx) // until the terminal closes: EIO once fence is gone
				cmd.Wait()
				got := strings.TrimSpace(strings.ReplaceAll(out.String(), "\r", ""))
				want := "/dev/console\n/dev/console\nis-a-terminal\n/dev/pts/0\npts: ptmx"
				ok := strings.HasSuffix(got, want)
				if engine == "landlock-only" {
					// The host's name, and the host's /dev/pts, where
					// script cannot open a new terminal (see the
					// fallback's warnings).
					want = hostName(t, ptmx) + "\n" + hostName(t, ptmx) + "\nis-a-terminal\n"
					ok = strings.Contains(got, want)
				}
				if !ok {
					t.Errorf("fence -c %q on a terminal shows:\n%s\nwant:\n%s", line, got, want)
				}
			})
		}
	}
}

// ownTerminal opens a pseudo-terminal that belongs to uid, as a user's
// login terminal does.
func ownTerminal(t *testing.T, uid int) (ptmx, tty *os.File) {
	t.Helper()
	ptmx, tty, err := pty.Open()
	must(t, err)
	t.Cleanup(func() { ptmx.Close() })
	must(t, tty.Chown(uid, uid))
	return ptmx, tty
}

// hostName is the name of the terminal whose other end is ptmx.
func hostName(t *testing.T, ptmx *os.File) string {
	t.Helper()
	n, err := unix.IoctlGetUint32(int(ptmx.Fd()), unix.TIOCGPTN)
	must(t, err)
	return fmt.Sprintf("/dev/pts/%d", n)
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
