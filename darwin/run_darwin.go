package darwin

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/sandbox"
	"github.com/fence-sandbox/fence/sandbox/proxy"
)

// sandboxExec is run by its absolute path, never looked up on PATH.
const sandboxExec = "/usr/bin/sandbox-exec"

// Run runs the plan's command under a profile compiled from p, with the
// proxies on the host's loopback, and returns fence's exit code.
func Run(p *policy.Policy, plan *sandbox.Plan, stderr io.Writer) (int, error) {
	if l := plan.Limits; l != (policy.RunLimits{Timeout: l.Timeout}) {
		return sandbox.ExitFenceError, errors.New("refusing to run: on macOS fence enforces limits.timeout only, not the resource limits the policy or flags set")
	}
	if os.Getenv("FENCE_SANDBOX") == "1" {
		return sandbox.ExitFenceError, errors.New("fence is already running inside a fence sandbox, and macOS cannot nest sandbox-exec: run the command directly")
	}
	tmp, err := os.MkdirTemp("", "fence-")
	if err != nil {
		return sandbox.ExitFenceError, fmt.Errorf("create private TMPDIR: %w", err)
	}
	defer os.RemoveAll(tmp)
	listeners, err := listenProxies(p, plan.Recorder)
	if err != nil {
		return sandbox.ExitFenceError, err
	}
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	httpPort, socksPort := port(listeners[0]), port(listeners[1])
	profile := Profile(p, ProfileOptions{HTTPPort: httpPort, SOCKSPort: socksPort, TmpDir: tmp})
	env := append(sandbox.ProxyEnv(plan.Env, httpPort, socksPort), "TMPDIR="+tmp)
	closeInherited(plan.KeepFDs)
	keep := map[int]*os.File{}
	for _, n := range plan.KeepFDs {
		keep[n] = os.NewFile(uintptr(n), fmt.Sprintf("kept fd %d", n))
	}
	cmd := &exec.Cmd{
		Path: sandboxExec, Args: append([]string{sandboxExec, "-p", profile, "--"}, plan.Argv...),
		Env: env, Dir: plan.Dir, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		ExtraFiles: sandbox.ExtraFiles(keep),
	}
	if plan.Monitor {
		stop := streamDenials(stderr)
		defer stop()
	}
	if err := cmd.Start(); err != nil {
		return sandbox.ExitFenceError, fmt.Errorf("start %s: %w", sandboxExec, err)
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	defer signal.Stop(sigs)
	go func() {
		for s := range sigs {
			cmd.Process.Signal(s)
		}
	}()
	var timedOut atomic.Bool
	if d := plan.Limits.Timeout; d > 0 {
		t := time.AfterFunc(d, func() {
			timedOut.Store(true)
			cmd.Process.Kill()
		})
		defer t.Stop()
	}
	cmd.Wait()
	if timedOut.Load() {
		fmt.Fprintf(stderr, "fence: timed out after %s (limits.timeout or --timeout): the command was killed\n", plan.Limits.Timeout)
		return sandbox.ExitTimeout, nil
	}
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		return 128 + int(ws.Signal()), nil
	}
	return ws.ExitStatus(), nil
}

func listenProxies(p *policy.Policy, rec *sandbox.Recorder) ([]net.Listener, error) {
	srv := &proxy.Server{Policy: p}
	if rec != nil {
		srv.Log = func(e proxy.Event) { rec.Network(e.Proto, e.Target, e.Decision) }
	}
	var ls []net.Listener
	for range 2 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			for _, x := range ls {
				x.Close()
			}
			return nil, fmt.Errorf("listen for the proxies: %w", err)
		}
		ls = append(ls, l)
	}
	go srv.ServeHTTP(ls[0])
	go srv.ServeSOCKS(ls[1])
	return ls, nil
}

func port(l net.Listener) int { return l.Addr().(*net.TCPAddr).Port }

// streamDenials follows the unified log for the sandbox's denials, whose
// messages name the rule ("fence:filesystem.denyRead"), and prints each
// as it happens, until stop is called.
func streamDenials(stderr io.Writer) (stop func()) {
	cmd := exec.Command("/usr/bin/log", "stream", "--style", "compact",
		"--predicate", `sender == "Sandbox" AND eventMessage CONTAINS "fence:"`)
	out, err := cmd.StdoutPipe()
	if err != nil || cmd.Start() != nil {
		fmt.Fprintf(stderr, "fence: warning: -m: cannot follow the unified log, so denials will not be shown\n")
		return func() {}
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if line := sc.Text(); strings.Contains(line, "fence:") {
				fmt.Fprintf(stderr, "fence: denied: %s\n", line)
			}
		}
	}()
	return func() {
		cmd.Process.Kill()
		cmd.Wait()
	}
}

// closeInherited marks every descriptor fence inherited close-on-exec,
// but 0-2 and the kept ones, so that none reaches the command unasked.
func closeInherited(keep []int) {
	ents, _ := os.ReadDir("/dev/fd")
	for _, e := range ents {
		if n, err := strconv.Atoi(e.Name()); err == nil && n > 2 && !slices.Contains(keep, n) {
			unix.CloseOnExec(n)
		}
	}
}
