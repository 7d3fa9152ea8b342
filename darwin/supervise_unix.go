//go:build darwin || linux

package darwin

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fence-sandbox/fence/sandbox"
)

// run is fence's side of a running command (see jobs.go for the model).
type run struct {
	// pid is the command's process (sandbox-exec's until it executes the
	// command), which leads the command's process group.
	pid        int
	term       *terminal
	newSession bool
	// gave is whether the terminal may have passed to the command's
	// group, so that fence takes it back at the end.
	gave  bool
	watch *execWatch
	// reaped is set once the command's process is reaped: no signal goes
	// to its pid after that.
	reaped atomic.Bool
}

// runCommand runs the plan's command under the profile with env: it
// starts sandbox-exec, supervises the command to its end and returns
// fence's exit code (see runEnd.exitCode).
func runCommand(plan *sandbox.Plan, profile string, env []string, stderr io.Writer) (int, error) {
	r := &run{term: openTerminal(), newSession: plan.NewSession}
	defer r.term.close()
	r.gave = !plan.NewSession && stdinForeground()
	sigs := catchSignals()
	defer sigs.stop()
	if err := r.start(plan, profile, env); err != nil {
		return sandbox.ExitFenceError, err
	}
	defer r.reclaim()
	end := r.supervise(sigs, plan.Limits.Timeout)
	if end.timedOut {
		fmt.Fprintf(stderr, "fence: timed out after %s (limits.timeout or --timeout): the command's process group was killed\n", plan.Limits.Timeout)
	}
	return end.exitCode()
}

// testOnlySandboxExec, when set, is run in sandbox-exec's place.
var testOnlySandboxExec string

// start starts sandbox-exec with the profile and the command, in a
// process group of its own that takes the terminal when fence's holds it
// (or, with NewSession, in a session of its own), and begins to watch
// for its exec of the command.
func (r *run) start(plan *sandbox.Plan, profile string, env []string) error {
	attr := &syscall.SysProcAttr{Setpgid: true, Foreground: r.gave, Ctty: 0}
	if r.newSession {
		attr = &syscall.SysProcAttr{Setsid: true}
	}
	files := append([]*os.File{os.Stdin, os.Stdout, os.Stderr}, keptFiles(plan.KeepFDs)...)
	path := sandboxExec
	if testOnlySandboxExec != "" {
		path = testOnlySandboxExec
	}
	argv := append([]string{sandboxExec, "-p", profile, "--"}, plan.Argv...)
	proc, err := os.StartProcess(path, argv, &os.ProcAttr{Dir: plan.Dir, Env: env, Files: files, Sys: attr})
	if err != nil {
		return fmt.Errorf("start %s: %w", sandboxExec, err)
	}
	r.pid = proc.Pid
	r.watch = watchExec(r.pid)
	return nil
}

// keptFiles are the --keep-fd descriptors at their own numbers, nil for
// the numbers between them, which the command does not get.
func keptFiles(fds []int) []*os.File {
	keep := map[int]*os.File{}
	for _, n := range fds {
		keep[n] = os.NewFile(uintptr(n), fmt.Sprintf("kept fd %d", n))
	}
	return sandbox.ExtraFiles(keep)
}

// caught are the signals fence catches while the command runs.
type caught struct {
	forward, cont chan os.Signal
	tstp          chan os.Signal // nil where the caller had SIGTSTP ignored
}

// catchSignals begins to catch the signals fence passes on or answers,
// before the command starts, so that none that comes while it starts
// ends fence and leaves the command running. One the caller had ignored
// (a job started in the background of a shell without job control) stays
// ignored, and the command inherits that. Release with stop.
func catchSignals() *caught {
	c := &caught{forward: make(chan os.Signal, 16), cont: make(chan os.Signal, 1)}
	for _, s := range forwarded {
		if !signal.Ignored(s) {
			signal.Notify(c.forward, s)
		}
	}
	signal.Notify(c.cont, unix.SIGCONT)
	if !signal.Ignored(unix.SIGTSTP) {
		c.tstp = make(chan os.Signal, 1)
		signal.Notify(c.tstp, unix.SIGTSTP)
	}
	return c
}

func (c *caught) stop() {
	signal.Stop(c.forward)
	signal.Stop(c.cont)
	if c.tstp != nil {
		signal.Stop(c.tstp)
	}
}

// supervise passes signals on, follows the command's stops and fence's
// own stops and continues, kills the command's process group when the
// timeout (if any) passes, and returns how the command ended.
func (r *run) supervise(sigs *caught, timeout time.Duration) runEnd {
	stops, ended := make(chan syscall.Signal), make(chan runEnd, 1)
	go func() {
		ws, err := r.wait(stops)
		ended <- runEnd{status: ws, waitErr: err}
	}()
	var expired <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expired = t.C
	}
	var timedOut bool
	for {
		select {
		case s := <-sigs.forward:
			r.forward(s.(syscall.Signal))
		case <-sigs.cont:
			r.onContinue()
		case s := <-sigs.tstp:
			r.signal(-r.pid, s.(syscall.Signal))
		case sig := <-stops:
			r.onStop(sig)
		case <-expired:
			timedOut = true
			r.signal(-r.pid, unix.SIGKILL)
		case end := <-ended:
			end.execd, end.timedOut = r.watch.execd(), timedOut
			killLeft(r.pid)
			return end
		}
	}
}

// killLeft kills what is left of the command's process group once the
// command has ended, as the end of a pid namespace does on Linux: nothing
// of the run goes on after fence returns, to change what the run left
// after fence has checked it, or to hold the terminal. (A group's id is
// not reused while it has members, so the leader's being reaped does not
// matter.) Processes that left the group are not reached.
func killLeft(pgrp int) {
	unix.Kill(-pgrp, unix.SIGKILL)
}

// wait waits for the command's process to end, passing on each stop of
// it, and reaps it.
func (r *run) wait(stops chan<- syscall.Signal) (syscall.WaitStatus, error) {
	for {
		var ws unix.WaitStatus
		_, err := unix.Wait4(r.pid, &ws, unix.WUNTRACED, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err == nil && ws.Stopped() {
			stops <- syscall.Signal(ws.StopSignal())
			continue
		}
		r.reaped.Store(true)
		if err != nil {
			return 0, fmt.Errorf("wait4: %w", err)
		}
		return syscall.WaitStatus(ws), nil
	}
}

// signal sends sig to target (a pid, or a negated process group), while
// the command's process is not reaped: its pid could be another's then.
func (r *run) signal(target int, sig syscall.Signal) {
	if !r.reaped.Load() {
		unix.Kill(target, sig)
	}
}

// forward passes on a signal fence caught (see forwarding).
func (r *run) forward(sig syscall.Signal) {
	f := forwarding(sig, r.term.foreground())
	target := r.pid
	if f.group {
		target = -r.pid
	}
	r.signal(target, sig)
	if f.cont {
		r.signal(-r.pid, unix.SIGCONT)
	}
}

// onStop answers a stop of the command (see answerStop).
func (r *run) onStop(sig syscall.Signal) {
	fg, haveTTY := sandbox.TerminalGroup(r.term.fd)
	held := haveTTY && sandboxHolds(fg, r.pid, r.pid, parentOf)
	fenceFG := haveTTY && fg == unix.Getpgrp()
	answer, groupSig := answerStop(sig, held, fenceFG, r.stdinTTY(), haveTTY)
	switch answer {
	case resume:
		r.resume(!held)
	case stopRun:
		if held {
			sandbox.GiveTerminal(r.term.fd, unix.Getpgrp())
		}
		stopOwnGroup(groupSig)
	}
}

// onContinue answers fence being continued: the command's group is
// continued too, with the terminal when fence's group has it.
func (r *run) onContinue() {
	r.resume(r.term.foreground() && r.stdinTTY())
}

// resume continues the command's group, after giving it the terminal
// when withTerminal.
func (r *run) resume(withTerminal bool) {
	if withTerminal && !r.reaped.Load() {
		sandbox.GiveTerminal(r.term.fd, r.pid)
		r.gave = true
	}
	r.signal(-r.pid, unix.SIGCONT)
}

// stdinTTY is whether the command's group can be given the terminal:
// standard input is it, and the command is in fence's session.
func (r *run) stdinTTY() bool { return r.term.stdinTTY && !r.newSession }

// reclaim makes fence's group the terminal's foreground again after the
// command's group may have held it: when the group holding it is the
// command's (its processes that are left have ended with it, for fence)
// or has no process left, not when the user's shell or another job has it.
func (r *run) reclaim() {
	if !r.gave {
		return
	}
	fg, ok := sandbox.TerminalGroup(r.term.fd)
	if !ok || fg == unix.Getpgrp() {
		return
	}
	if fg == r.pid || groupGone(fg) {
		sandbox.GiveTerminal(r.term.fd, unix.Getpgrp())
	}
}
