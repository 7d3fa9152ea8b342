package linux

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/fence-sandbox/fence/sandbox"
)

// IsInit reports whether this process was started by the supervisor as
// the sandbox init. It is checked before anything else in main.
func IsInit() bool { return len(os.Args) == 1 && os.Args[0] == initArg0 }

// InitMain runs the sandbox init and exits with the command's status.
func InitMain() {
	// Signals forwarded while the sandbox is being built wait in
	// initSignals and go to the command once it runs. The supervisor
	// forwards none before the init reports, so the handlers are set up
	// while the plan is read, and are in place before it reports.
	notified := make(chan struct{})
	go func() {
		signal.Notify(initSignals, forwarded...)
		close(notified)
	}()
	code, err := initRun(notified)
	if errors.Is(err, errNoPlan) {
		os.Exit(sandbox.ExitFenceError) // fence decided not to run: nothing to say
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "fence: error: %v\n", err)
		os.Exit(sandbox.ExitFenceError)
	}
	answering.Lock() // a -p connection being handed over is not cut off
	os.Exit(code)
}

func initRun(notified <-chan struct{}) (int, error) {
	// Landlock before ABI 8 gives each thread its own domain, and scoped
	// signals only reach processes of the sender's domain or below: the
	// thread that starts the command must be the one that signals it.
	// Everything from here on stays on this thread.
	runtime.LockOSThread()
	// The command must not inherit the supervisor's channels.
	unix.CloseOnExec(planFD)
	unix.CloseOnExec(statusFD)
	w, err := readWire()
	if err != nil {
		return 0, err
	}
	<-notified // before confining, so no thread is being started meanwhile
	for i := range w.Plan.KeepFDs {
		unix.CloseOnExec(keptFD + i) // the command gets them at their own numbers
	}
	listeners, err := confine(w)
	if err != nil {
		if errors.Is(err, unix.EPERM) && w.Namespaces && isFirstMount(err) {
			sendStatus(statusFD, statusNoNS, nil, false)
			return sandbox.ExitFenceError, nil
		}
		return 0, err
	}
	forwards := w.Plan.Proxy != nil && len(w.Plan.Proxy.Forwards) > 0
	jobs, jobsForSupervisor, err := jobPair()
	if err != nil {
		return 0, fmt.Errorf("socketpair for job control: %w", err)
	}
	defer jobs.Close()
	// The job socket goes first: the supervisor takes it from the start.
	if err := sendStatus(statusFD, statusOK, append([]*os.File{jobsForSupervisor}, listeners...), forwards); err != nil {
		return 0, err
	}
	if forwards {
		go serveDials(statusFD, w.Plan.Proxy.Forwards)
	}
	return runCommand(w, jobs)
}

func readWire() (*wire, error) {
	f := os.NewFile(planFD, "plan")
	defer f.Close()
	var w wire
	err := json.NewDecoder(f).Decode(&w)
	if errors.Is(err, io.EOF) {
		return nil, errNoPlan
	}
	if err != nil {
		return nil, fmt.Errorf("read plan from supervisor: %w", err)
	}
	return &w, nil
}

// errNoPlan is the end of the plan pipe before any plan: the supervisor
// started this init ahead of its plan and then did not run a command.
var errNoPlan = errors.New("no plan")

func isFirstMount(err error) bool {
	var me *MountError
	return errors.As(err, &me) && me.Op == "make-rprivate"
}

// confine builds the sandbox around this process: mounts (impossible once
// Landlock is on), loopback and the proxies' listening sockets, then the
// restrictions. It returns the listeners, for the supervisor to serve.
func confine(w *wire) (listeners []*os.File, err error) {
	plan := w.Plan
	if w.Namespaces {
		if err := buildRoot(plan); err != nil {
			return nil, err
		}
		if plan.Network == "none" {
			if err := loopbackUp(); err != nil {
				return nil, err
			}
			if listeners, err = proxyListeners(plan.Proxy); err != nil {
				return nil, err
			}
		}
		if err := unix.Sethostname([]byte("fence")); err != nil {
			return nil, fmt.Errorf("sethostname: %w", err)
		}
	}
	notify, err := restrict(w)
	if notify != nil {
		listeners = append(listeners, notify) // last: the supervisor takes it from the end
	}
	return listeners, err
}

// restrict applies the process restrictions, in the order the kernel
// requires: no core dumps or ptrace of the init, Landlock (which sets
// no_new_privs), capabilities, and seccomp last.
func restrict(w *wire) (execNotify *os.File, err error) {
	plan := w.Plan
	if err := os.Chdir(plan.Dir); err != nil {
		return nil, fmt.Errorf("enter working directory: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return nil, fmt.Errorf("prctl(PR_SET_DUMPABLE): %w", err)
	}
	if err := applyLandlock(plan.Landlock); err != nil {
		return nil, err
	}
	if err := dropCapabilities(); err != nil && (w.Namespaces || hasCapabilities()) {
		return nil, err
	}
	if err := installSeccomp(seccompOptions{
		denySockets: w.Plan.Network == "none" && !w.Namespaces && w.Plan.Landlock.TCP == nil,
		denyMPTCP:   w.Plan.Landlock.TCP != nil,
		netGuard:    !w.Namespaces,
		filtered:    w.Plan.Network == "none",
		guardModes:  !w.Namespaces,
		root:        unix.Geteuid() == 0,
	}); err != nil {
		return nil, err
	}
	if listen := !w.Namespaces || plan.Landlock.TCP.RefusesListen(); (plan.ExecArgv || listen) && !w.NoListener {
		// Without namespaces the supervisor judges connect() too, and
		// on the host's network listen().
		return installNotify(notified{exec: plan.ExecArgv, connect: !w.Namespaces, listen: listen})
	}
	return nil, nil
}

// runCommand starts the command in a process group of its own (the
// terminal's foreground when fence's is; a session of its own with
// forceNewSession, see commandSession), forwards signals to it, reports
// its stops on the job socket and stops or continues it when the
// supervisor says so, reaps every child (as pid 1 must), and returns the
// command's exit status.
func runCommand(w *wire, jobSock *os.File) (int, error) {
	plan := w.Plan
	path, code, err := lookPath(plan.Argv[0], w.Env)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fence: %v\n", err)
		return code, nil
	}
	sigs := initSignals
	cmd := &exec.Cmd{
		Path: path, Args: plan.Argv, Env: w.Env, Dir: plan.Dir,
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		SysProcAttr: commandSession(plan.NewSession, w.Foreground),
		ExtraFiles:  keptForCommand(plan.KeepFDs),
	}
	if w.Namespaces {
		useConsole(cmd)
	}
	limitAddressSpace(cmd, plan.Limits.AddressSpaceMB)
	if err := setInheritedLimits(plan.Limits); err != nil {
		return 0, err
	}
	if !w.Namespaces {
		// No pid namespace ends the command's daemons with it: orphans
		// come to the init, which reaps them while the command runs, and
		// after it to the supervisor, which kills what is left.
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			return 0, fmt.Errorf("prctl(PR_SET_CHILD_SUBREAPER): %w", err)
		}
	}
	if err := startCommand(cmd, plan.ExecArgv || w.NoListener); err != nil {
		return startError(plan.Argv[0], path, err), nil
	}
	jobs := &commandJobs{pgrp: cmd.Process.Pid, namespaces: w.Namespaces, sock: jobSock}
	done, stops, requests := make(chan int, 1), make(chan unix.Signal), make(chan jobRequest)
	go func() { done <- reap(cmd.Process.Pid, stops) }()
	go jobs.readRequests(requests)
	for {
		select {
		case s := <-sigs:
			jobs.forward(cmd.Process, s)
		case sig := <-stops:
			jobs.reportStop(sig)
		case r := <-requests:
			jobs.answer(r)
		case code := <-done:
			return code, nil
		}
	}
}

// startCommand starts the command. With exec judging on, the init is
// dumpable while it forks, or the supervisor could not read the argv of
// the command's first exec (a child of a non-dumpable process is itself
// non-dumpable until it executes); no other process of the sandbox exists
// yet to take advantage of it. A nested run without a listener of its
// own (NoListener) forks so too: the outer sandbox's supervisor may judge
// the exec.
func startCommand(cmd *exec.Cmd, execArgv bool) error {
	if !execArgv {
		return cmd.Start()
	}
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_DUMPABLE): %w", err)
	}
	err := cmd.Start()
	if derr := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); derr != nil {
		cmd.Process.Kill()
		return fmt.Errorf("prctl(PR_SET_DUMPABLE): %w", derr)
	}
	return err
}

// reap waits for every child until pid exits and returns its status as an
// exit code. pid's stops go to stops.
func reap(pid int, stops chan<- unix.Signal) int {
	for {
		var ws unix.WaitStatus
		got, err := unix.Wait4(-1, &ws, unix.WUNTRACED, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return sandbox.ExitFenceError
		}
		if got != pid {
			continue
		}
		switch {
		case ws.Stopped():
			stops <- ws.StopSignal()
		case ws.Signaled():
			return 128 + int(ws.Signal())
		case ws.Exited():
			return ws.ExitStatus()
		}
	}
}

// lookPath finds the command the way a shell would, with the command's
// own PATH, inside the sandbox's view.
func lookPath(name string, env []string) (string, int, error) {
	if strings.Contains(name, "/") {
		return name, 0, nil
	}
	pathVar := "/usr/local/bin:/usr/bin:/bin"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathVar = v
		}
	}
	for _, dir := range filepath.SplitList(pathVar) {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, 0, nil
		}
	}
	return "", sandbox.ExitNotFound, fmt.Errorf("command not found: %q (PATH=%s)", name, pathVar)
}

// startError says why the command could not start, and returns fence's
// exit code for it. name is the command as given, path where it was
// found.
func startError(name, path string, err error) int {
	switch {
	case errors.Is(err, unix.ENOENT):
		fmt.Fprintf(os.Stderr, "fence: command not found: %q\n", name)
		return sandbox.ExitNotFound
	case errors.Is(err, unix.EACCES):
		fmt.Fprintf(os.Stderr, "fence: cannot execute %q: permission denied (%s)\n", name, whyNotExecutable(path))
	default:
		fmt.Fprintf(os.Stderr, "fence: cannot execute %q: %v\n", name, err)
	}
	return sandbox.ExitNotExecutable
}

// whyNotExecutable tells what refused to execute path: the file itself
// (a directory, no execute bit, a mode that leaves this user out), a
// filesystem mounted noexec, or, when none of these, the policy (the
// kernel's access check does not see Landlock).
func whyNotExecutable(path string) string {
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return fmt.Sprintf("stat: %v", err)
	case fi.IsDir():
		return "it is a directory"
	case fi.Mode().IsRegular() && fi.Mode()&0o111 == 0:
		return fmt.Sprintf("it lacks the execute bit, mode %v: chmod +x it, or run it through its interpreter", fi.Mode().Perm())
	}
	if err := unix.Faccessat(unix.AT_FDCWD, path, unix.X_OK, unix.AT_EACCESS); err != nil {
		var st unix.Statfs_t
		if unix.Statfs(path, &st) == nil && st.Flags&unix.ST_NOEXEC != 0 {
			return "its filesystem is mounted noexec"
		}
		return fmt.Sprintf("its mode %v does not let this user execute it", fi.Mode().Perm())
	}
	return "the policy does not allow executing it, or its interpreter: see filesystem.allowExecute"
}

// keptForCommand places the --keep-fd descriptors, which the init holds
// from keptFD on, at the numbers the command is to find them.
func keptForCommand(fds []int) []*os.File {
	if len(fds) == 0 {
		return nil
	}
	keep := map[int]*os.File{}
	for i, n := range fds {
		keep[n] = os.NewFile(uintptr(keptFD+i), fmt.Sprintf("kept fd %d", n))
	}
	return sandbox.ExtraFiles(keep)
}

// initSignals holds the signals forwarded to the init, from its start.
var initSignals = make(chan os.Signal, 16)
