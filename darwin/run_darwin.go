package darwin

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/sandbox"
	"github.com/fence-sandbox/fence/sandbox/proxy"
)

// Run runs the plan's command under the profile compiled from it, with
// the proxies on the host's loopback, and returns fence's exit code. rt
// holds who hears the run's denials; plan is only read.
func Run(plan *sandbox.Plan, rt *sandbox.Runtime, stderr io.Writer) (int, error) {
	if err := refusal(plan); err != nil {
		return sandbox.ExitFenceError, err
	}
	if os.Getenv("FENCE_SANDBOX") == "1" {
		return sandbox.ExitFenceError, errors.New("fence is already running inside a fence sandbox, and macOS cannot nest sandbox-exec: run the command directly")
	}
	tmp, err := os.MkdirTemp("", "fence-")
	if err != nil {
		return sandbox.ExitFenceError, fmt.Errorf("create private TMPDIR: %w", err)
	}
	defer os.RemoveAll(tmp)
	listeners, err := listenProxies(plan.ProxyPolicy(), rt.Recorder)
	if err != nil {
		return sandbox.ExitFenceError, err
	}
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	httpPort, socksPort := port(listeners[0]), port(listeners[1])
	tag := newRunTag()
	profile, warnings, err := ProfileFor(plan, ProfileOptions{
		HTTPPort: httpPort, SOCKSPort: socksPort, TmpDir: tmp, SSHAuthSock: os.Getenv("SSH_AUTH_SOCK"), Terminals: inheritedTerminals(),
		Tag: tag,
	})
	if err != nil {
		return sandbox.ExitFenceError, err
	}
	for _, w := range warnings {
		fmt.Fprintf(stderr, "fence: warning: %s\n", w)
	}
	env := sandbox.ProxyEnv(rt.Env(plan), httpPort, socksPort)
	env = append(env, privateEnv(tmp, env)...)
	closeInherited(plan.KeepFDs)
	if plan.Monitor {
		stop := streamDenials(tag, stderr)
		defer stop()
	}
	return runCommand(plan, profile, env, stderr)
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
