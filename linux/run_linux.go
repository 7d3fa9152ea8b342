package linux

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/fence-sandbox/fence/internal/stagetime"
	"github.com/fence-sandbox/fence/sandbox"
)

// Run runs the plan's command in the sandbox and returns the exit code for
// fence: the command's status, 128+N for a signal, or 125 when the sandbox
// could not be built (then with an error). Warnings go to stderr.
//
// rt holds what the run chooses as it starts, and who hears its denials;
// plan is only read.
func Run(plan *sandbox.Plan, rt *sandbox.Runtime, stderr io.Writer) (int, error) {
	if err := checkLandlock(KernelLandlockABI(), plan.Landlock.MinABI, plan.Landlock.Reasons, plan.Degraded, stderr); err != nil {
		return sandbox.ExitFenceError, err
	}
	if rt == nil {
		rt = &sandbox.Runtime{}
	}
	run := rt.Plan(plan)
	w := &wire{Plan: run, Source: plan, Env: run.Env, Runtime: rt, Namespaces: true, Foreground: isForeground() && !plan.NewSession}
	code, err := supervise(w, stderr)
	if errors.Is(err, errNoUserNS) {
		code, err = runLandlockOnly(plan, rt, err, w.Foreground, detectNesting(), stderr)
	}
	if err != nil {
		return sandbox.ExitFenceError, err
	}
	warnCreated(plan.Watch, stderr)
	checkWorktrees(plan.Worktrees, stderr)
	checkGitlinks(plan.Gitlinks, stderr)
	return code, nil
}

// runLandlockOnly runs the plan without namespaces, when the system does
// not let this user create them, and says what is weaker. What is left
// lets a command reach things the policy never granted (modes of the
// user's files, the host's processes), so this engine runs only with
// --degraded=warn, unless nest is a fence sandbox of the namespace
// engine that this run is inside (see nested_linux.go): that sandbox
// still gives what namespaces give, and what this run could not narrow
// of it is named instead. No pid namespace ends what the command leaves
// running, so fence kills every process of the sandbox before it returns
// (and so before it moves aside what the command planted).
func runLandlockOnly(plan *sandbox.Plan, rt *sandbox.Runtime, why error, foreground bool, nest *nesting, stderr io.Writer) (int, error) {
	root := os.Geteuid() == 0
	weaker := sandbox.WeakerFor(plan, root)
	nested := nest != nil && !nest.landlockOnly
	if nest != nil {
		if err := nest.refusal(plan); err != nil {
			return 0, err
		}
	}
	if plan.Degraded != "warn" && !nested {
		fmt.Fprintf(stderr, "fence: warning: %v: Landlock alone would enforce the policy, which is weaker:\n", why)
		printWeaker(weaker, stderr)
		return 0, fmt.Errorf("%v: refusing to run with weaker enforcement than the policy asks; pass --degraded=warn to run anyway, or let this user create user namespaces (see fence doctor)", why)
	}
	tmp, err := os.MkdirTemp("", "fence-tmp-")
	if err != nil {
		return 0, fmt.Errorf("create private TMPDIR: %w", err)
	}
	defer os.RemoveAll(tmp)
	plan = sandbox.WithLandlockOnly(plan)
	rt.Proxies, rt.LandlockOnly = nil, &sandbox.LandlockOnlyRun{TmpDir: tmp, Terminals: ownTerminals()}
	ll := rt.Plan(plan)
	if err := checkLandlock(KernelLandlockABI(), ll.Landlock.MinABI, ll.Landlock.Reasons, plan.Degraded, stderr); err != nil {
		return 0, fmt.Errorf("%v, and %w", why, err)
	}
	if nest != nil {
		network, err := nestedProxies(ll, nest, rt)
		if err != nil {
			return 0, err
		}
		ll = rt.Plan(plan)
		if !nest.listener {
			network = joinNotNarrowed(network, unjudged)
		}
		if nested {
			weaker = sandbox.NestedWeaker(plan, root, nest.listener, network)
		} else if network != "" {
			weaker = append(weaker, "inside a fence sandbox, this run could not narrow "+network)
		}
	}
	if nested {
		printNested(weaker, stderr)
	} else {
		fmt.Fprintf(stderr, "fence: warning: %v: enforcing the policy with Landlock alone, which is weaker:\n", why)
		printWeaker(weaker, stderr)
	}
	keep, undo, err := becomeSubreaper()
	if err != nil {
		return 0, err
	}
	defer undo()
	noListener := nest != nil && !nest.listener
	// The leftovers are killed before fence takes the terminal back: one
	// may hold it, and only a group with no process left gives it up.
	killLeft := func() {
		if left := killDescendants(keep); len(left) > 0 {
			fmt.Fprintf(stderr, "fence: warning: %d processes the command started were still running after fence spent %s killing them (pids %v): kill them before trusting what the run left\n", len(left), killBudget, left)
		}
	}
	w := &wire{Plan: ll, Source: plan, Env: ll.Env, Runtime: rt, Namespaces: false, Foreground: foreground, NoListener: noListener}
	return superviseThen(w, killLeft, stderr)
}

// ownTerminals are the terminal devices fence's standard streams are:
// the only ones the command may use in the Landlock-only engine, whose
// /dev/pts is the host's.
func ownTerminals() []string {
	var out []string
	for fd := range 3 {
		if _, err := unix.IoctlGetTermios(fd, unix.TCGETS); err != nil {
			continue
		}
		p, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
		if err == nil && strings.HasPrefix(p, "/dev/") && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// printNested prints what a nested run could not narrow, a line each.
func printNested(lines []string, stderr io.Writer) {
	for _, l := range lines {
		fmt.Fprintf(stderr, "fence: warning: %s\n", l)
	}
}

func printWeaker(weaker []string, stderr io.Writer) {
	for _, w := range weaker {
		fmt.Fprintf(stderr, "fence: warning:   %s\n", w)
	}
}

var errNoUserNS = errors.New("user namespaces are not available to this user")

// checkLandlock refuses to run on a kernel whose Landlock is older than
// the plan needs, unless degraded is "warn"; then it says what is weaker.
func checkLandlock(have, need int, reasons []string, degraded string, stderr io.Writer) error {
	if have >= need && have > 0 {
		return nil
	}
	what := fmt.Sprintf("the kernel's Landlock ABI is %d, and this policy needs %d", have, max(need, 1))
	if have == 0 {
		what = "Landlock is not available in this kernel (or disabled at boot)"
	}
	if len(reasons) > 0 {
		what += " (" + strings.Join(reasons, "; ") + ")"
	}
	if degraded != "warn" {
		return fmt.Errorf("%s: refusing to run with weaker enforcement than the policy asks; pass --degraded=warn to run anyway", what)
	}
	fmt.Fprintf(stderr, "fence: warning: %s: running with weaker enforcement\n", what)
	return nil
}

// isForeground reports whether fence owns the terminal, so that the
// command should become its foreground job.
func isForeground() bool {
	pgrp, err := unix.IoctlGetInt(0, unix.TIOCGPGRP)
	return err == nil && pgrp == unix.Getpgrp()
}

// supervise starts the sandbox child, serves its proxies, forwards
// signals, and waits. It returns errNoUserNS when user namespaces are
// refused. Monitor lines go to stderr.
func supervise(w *wire, stderr io.Writer) (int, error) {
	return superviseThen(w, func() {}, stderr)
}

// superviseThen is supervise, which calls ended once the child has ended
// and fence has stopped serving the sandbox, before it takes the terminal
// back.
func superviseThen(w *wire, ended func(), stderr io.Writer) (int, error) {
	jobs := newSupervisorJobs(w.Foreground)
	defer jobs.close()
	defer jobs.reclaim()
	defer ended()
	forwards, err := listenForwards(w.Plan.Proxy)
	if err != nil {
		return 0, err
	}
	defer closeListeners(forwards)
	var listeners []net.Listener
	if w.Plan.Proxy != nil && (w.Plan.Network == "host" || !w.Namespaces) {
		if listeners, err = hostProxyListeners(w); err != nil {
			return 0, err
		}
		defer closeListeners(listeners)
	}
	// The signals fence is to pass on are caught from before the clone:
	// the command may run, and fence be signalled, at once.
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, forwarded...)
	defer signal.Stop(sigs)
	stagetime.Mark("supervise")
	if err := dumpableForClone(); err != nil {
		return 0, err
	}
	child, err := startChild(w)
	if err != nil {
		return 0, err
	}
	stagetime.Mark("started")
	defer child.release()
	defer child.close()
	if err := hardenSupervisor(); err != nil {
		child.proc.Kill()
		return 0, err
	}
	jobs.init = child.proc
	ready := make(chan struct{})
	go forwardSignals(sigs, child.proc, ready)
	return serve(child, w, jobs, ready, forwards, listeners, stderr)
}

// serve waits for the child's report, serves what the sandbox needs from
// outside (proxies, -p relays, exec judging) while it runs, and returns
// the command's exit code.
func serve(child *startedChild, w *wire, jobs *supervisorJobs, ready chan struct{}, forwards, listeners []net.Listener, stderr io.Writer) (int, error) {
	inSandbox, notify, rerr := child.report()
	stagetime.Mark("ready")
	if w.Runtime != nil && w.Runtime.Started != nil {
		w.Runtime.Started()
	}
	close(ready) // the child takes signals now (or is gone)
	if rerr == nil {
		jobs.sock = child.jobs
		if notify != nil {
			go serveNotify(notify, w.Plan, w.recorder(), notifyJudge(w, stderr), stderr)
		}
		if w.Plan.Network == "none" && w.Namespaces {
			listeners = fileListeners(w.Plan.Proxy, inSandbox)
		}
	}
	stop := serveProxies(w.Plan, w.recorder(), listeners, stderr)
	// pending counts -p connections still passing on what the sandbox
	// sent; fence waits for them (briefly) after the command, once no
	// new one can be accepted.
	var pending sync.WaitGroup
	loops := &sync.WaitGroup{}
	if rerr == nil {
		loops = relayForwards(w.Plan.Proxy, forwards, &dialer{sock: child.sync}, &pending)
	}
	timedOut, stopTimer := watchTimeout(child.proc, w.Plan.Limits.Timeout)
	jobsDone := make(chan struct{})
	jobsEnded := jobs.follow(jobsDone)
	ps, werr := child.proc.Wait()
	stagetime.Mark("waited")
	close(jobsDone)
	<-jobsEnded
	if m, ok := jobs.startFailure(); ok {
		fmt.Fprintf(stderr, "fence: %s\n", child.pid1.startFailure(m))
	}
	stopTimer()
	closeListeners(forwards)
	loops.Wait()
	waitDrained(&pending)
	stop()
	switch {
	case werr != nil:
		return 0, fmt.Errorf("wait for the sandbox child: %w", werr)
	case rerr != nil && w.Namespaces && isFirstMount(rerr) && errors.Is(rerr, unix.EPERM):
		return 0, fmt.Errorf("%w (mounts are refused inside the user namespace)", errNoUserNS)
	case errors.Is(rerr, errChildGone) && timedOut():
	case errors.Is(rerr, errChildGone):
		return 0, fmt.Errorf("%w: %v", rerr, ps)
	case rerr != nil:
		return 0, rerr
	}
	if timedOut() {
		fmt.Fprintf(stderr, "fence: timed out after %s (limits.timeout or --timeout): the sandbox and every process in it were killed\n", w.Plan.Limits.Timeout)
		return sandbox.ExitTimeout, nil
	}
	return exitCode(ps), nil
}

// notifyJudge is what judges the sandbox's connect() and listen(), with
// exec judging, when fence judges them: nil otherwise.
func notifyJudge(w *wire, stderr io.Writer) *connectJudge {
	switch {
	case !w.Namespaces:
		rules := landlockOnlyRules(w.Plan)
		rules.Listed = unixRules(w.Plan)
		return newConnectJudge(rules, w.Plan, w.recorder(), stderr)
	case w.Plan.Landlock.TCP.RefusesListen():
		return newConnectJudge(connectRules{}, w.Plan, w.recorder(), stderr) // judges listen() only
	}
	return nil
}

// forwardSignals passes the signals fence gets on to pid 1 (which
// passes them on to the command), from when the child is ready: one that
// came before waits in sigs. One that ends processes is followed by
// SIGCONT to pid 1: in the Landlock-only engine the command shares its
// uid, with no pid namespace between them, and may have stopped it; pid
// 1, continued, passes the signal on and continues the command's group
// itself.
func forwardSignals(sigs <-chan os.Signal, p *os.Process, ready <-chan struct{}) {
	<-ready
	for s := range sigs {
		p.Signal(s)
		if s != unix.SIGUSR1 && s != unix.SIGUSR2 {
			p.Signal(unix.SIGCONT)
		}
	}
}

func exitCode(ps *os.ProcessState) int {
	ws, ok := ps.Sys().(syscall.WaitStatus)
	switch {
	case !ok:
		return sandbox.ExitFenceError
	case ws.Signaled():
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// forwarded are the signals the supervisor and pid 1 pass on.
var forwarded = []os.Signal{unix.SIGINT, unix.SIGTERM, unix.SIGHUP, unix.SIGQUIT, unix.SIGUSR1, unix.SIGUSR2}
