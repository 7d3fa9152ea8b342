package darwin

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"syscall"

	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/sandbox"
)

// The runner's decisions, kept apart from the system calls that act on
// them (run_darwin.go, jobs_darwin.go, execwatch_darwin.go), so that they
// build and are tested on every system.

// sandboxExec is run by its absolute path, never looked up on PATH.
const sandboxExec = "/usr/bin/sandbox-exec"

// sandboxExecName is the process name (p_comm) sandbox-exec runs under
// until it executes the command.
const sandboxExecName = "sandbox-exec"

// Exit statuses sandbox-exec itself exits with, before it executes the
// command (sysexits.h): a bad invocation, a profile it cannot compile
// (its message names the line: "sandbox-exec: unbound variable: ... at
// <input string>, line N"), and a profile it cannot apply or a command it
// cannot execute ("sandbox-exec: sandbox_apply: Operation not permitted",
// "sandbox-exec: execvp() of 'cmd' failed: ...").
const (
	sandboxExecUsage   = 64 // EX_USAGE
	sandboxExecProfile = 65 // EX_DATAERR
	sandboxExecOS      = 71 // EX_OSERR
)

// refusal is why fence will not run plan on macOS, or nil: what the
// backend cannot enforce yet is refused, never ignored.
func refusal(plan *sandbox.Plan) error {
	if l := plan.Limits; l != (policy.RunLimits{Timeout: l.Timeout}) {
		return errors.New("refusing to run: on macOS fence enforces limits.timeout only, not the resource limits the policy or flags set")
	}
	if plan.ExecArgv {
		return errors.New(`refusing to run: command.runtimeExecPolicy "argv" (judging every program the command executes by its arguments) is not enforced on macOS yet; use "path", which denies the denied commands' programs by path`)
	}
	if plan.Proxy != nil && len(plan.Proxy.Forwards) > 0 {
		return fmt.Errorf("refusing to run: -p (exposing port %d of the sandbox on the host) is not supported on macOS yet", plan.Proxy.Forwards[0].Port)
	}
	return nil
}

// newRunTag is a tag unique to one run, which the profile's denial
// messages carry, so that -m shows this run's denials and no other
// sandbox's (another fence run's among them).
func newRunTag() string {
	b := make([]byte, 8)
	rand.Read(b)
	return "fence-" + hex.EncodeToString(b)
}

// runEnd is how the process sandbox-exec started as ended.
type runEnd struct {
	status syscall.WaitStatus
	// execd is whether sandbox-exec executed the command: until it does,
	// every status is sandbox-exec's own.
	execd    bool
	timedOut bool
	// waitErr is why fence could not learn how it ended.
	waitErr error
}

// exitCode is fence's exit code for the run: the command's own status,
// 128+N for signal N, 124 when the timeout ended it; and 125, with an
// error saying why, when sandbox-exec ended before it executed the
// command: a status the command could have exited with as well (65, 71)
// never passes for the command's. A signal that ended sandbox-exec before
// then (Ctrl-C while it starts) is 128+N too, unless it is one of a crash.
func (e runEnd) exitCode() (int, error) {
	ws := e.status
	switch {
	case e.waitErr != nil:
		return sandbox.ExitFenceError, fmt.Errorf("wait for the command: %w", e.waitErr)
	case e.timedOut:
		return sandbox.ExitTimeout, nil
	case ws.Signaled() && (e.execd || !crashSignal(ws.Signal())):
		return 128 + int(ws.Signal()), nil
	case e.execd:
		return ws.ExitStatus(), nil
	}
	return sandbox.ExitFenceError, sandboxExecFailure(ws)
}

// sandboxExecFailure says why sandbox-exec ended without executing the
// command; its own message, if any, is on fence's standard error above.
func sandboxExecFailure(ws syscall.WaitStatus) error {
	const prefix = "sandbox-exec ended before it started the command"
	if ws.Signaled() {
		return fmt.Errorf("%s: it crashed (signal %d, %s)", prefix, int(ws.Signal()), ws.Signal())
	}
	switch n := ws.ExitStatus(); n {
	case sandboxExecUsage:
		return fmt.Errorf("%s: it refused its arguments (status %d): this is a fence bug", prefix, n)
	case sandboxExecProfile:
		return fmt.Errorf("%s: it rejected the profile fence compiled (status %d; its message, above, names the line): this macOS does not accept the profile (fence plan --platform darwin prints it)", prefix, n)
	case sandboxExecOS:
		return fmt.Errorf("%s (status %d): see its message above: \"sandbox_apply\" means the sandbox could not be applied (fence is already inside a sandbox, which macOS cannot nest), \"execvp()\" that the command could not be executed (the profile may deny reading or executing it)", prefix, n)
	default:
		return fmt.Errorf("%s: it exited with status %d", prefix, n)
	}
}

// crashSignal reports whether sig is one a process gets for its own fault
// rather than from someone else.
func crashSignal(sig syscall.Signal) bool {
	switch sig {
	case syscall.SIGABRT, syscall.SIGBUS, syscall.SIGSEGV, syscall.SIGILL, syscall.SIGTRAP, syscall.SIGSYS, syscall.SIGFPE:
		return true
	}
	return false
}

// execSight is what fence saw of the process sandbox-exec runs as: its
// name (p_comm) and whether it was a zombie when the watch began (read
// is false when they could not be read), the path of the program it runs
// (the path its last exec was given; "" when unread), whether the kqueue
// watched it, and whether that reported an exec (or failed to answer).
type execSight struct {
	read, zombie   bool
	comm, path     string
	watched, noted bool
}

// execd decides whether sandbox-exec executed the command. A process no
// longer named sandbox-exec when the watch began had executed it, and so
// had one running a program other than /usr/bin/sandbox-exec (a command
// that is itself named sandbox-exec, executed before the watch began);
// one still running sandbox-exec did if the watch saw an exec. Unwatched,
// it had not only if it had ended already. Where fence cannot tell, the
// answer is yes, and the status passes for the command's, as it would
// without the watch.
func (s execSight) execd() bool {
	switch {
	case !s.read || s.comm != sandboxExecName:
		return true
	case s.path != "" && s.path != sandboxExec:
		return true
	case s.watched:
		return s.noted
	}
	return !s.zombie
}

// privateEnv points the command's temporary files and compiler caches
// at the run's private TMPDIR: tmux's server socket (tmux ignores TMPDIR
// and would look for the host's server in /tmp, which stays closed), and
// clang's and SwiftPM's module caches, which default to the per-user
// cache directory, where the host's own builds would trust what the
// command left. A cache variable the command's environment sets already
// is kept.
func privateEnv(tmp string, env []string) []string {
	out := []string{"TMPDIR=" + tmp, "TMUX_TMPDIR=" + tmp}
	for _, kv := range [][2]string{{"CLANG_MODULE_CACHE_PATH", "clang-module-cache"}, {"SWIFTPM_MODULECACHE_OVERRIDE", "swiftpm-module-cache"}} {
		if envValue(env, kv[0]) == "" {
			out = append(out, kv[0]+"="+path.Join(tmp, kv[1]))
		}
	}
	return out
}
