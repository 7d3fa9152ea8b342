//go:build linux

package linux_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSupervisorLeavesNoCore: the supervisor holds what the sandbox must
// not read (here a variable env.deny removes). With GOTRACEBACK=crash in
// the caller's environment and a core limit that allows one, a crash of
// the supervisor (SIGABRT from outside, while the command runs) leaves no
// core in its working directory, the workspace, which a later sandbox
// reads; in both engines, as root and as uid 65534.
func TestSupervisorLeavesNoCore(t *testing.T) {
	pattern, err := os.ReadFile("/proc/sys/kernel/core_pattern")
	if err != nil || strings.HasPrefix(string(pattern), "|") || strings.HasPrefix(string(pattern), "/") {
		t.Skipf("core_pattern %q does not write cores in the working directory", pattern)
	}
	raiseCoreLimit(t)
	const policy = `{"filesystem": {"allowWrite": ["."]}, "env": {"deny": ["SECRET_*"]}}`
	const script = `echo started; exec sleep 3 >/dev/null 2>&1`
	env := []string{"GOTRACEBACK=crash", "SECRET_TOKEN=hunter2"}
	for _, u := range users(t) {
		t.Run("namespaces/"+u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, policy)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			crashSupervisor(t, w, w.command(ctx, env, "-c", script))
		})
	}
	for _, u := range landlockOnlyUsers(t) {
		t.Run("Landlock-only/"+u.name, func(t *testing.T) {
			w := landlockWorld(t, u, policy)
			crashSupervisor(t, w, w.landlockOnlyCommand(u, env, "--degraded=warn", "-c", script))
		})
	}
}

// raiseCoreLimit lets the processes this test starts dump core, as a
// developer's shell may, until the test ends.
func raiseCoreLimit(t *testing.T) {
	var old syscall.Rlimit
	must(t, syscall.Getrlimit(syscall.RLIMIT_CORE, &old))
	t.Cleanup(func() { syscall.Setrlimit(syscall.RLIMIT_CORE, &old) })
	must(t, syscall.Setrlimit(syscall.RLIMIT_CORE, &syscall.Rlimit{Cur: old.Max, Max: old.Max}))
}

// crashSupervisor starts cmd (fence, whose supervisor is cmd's process),
// sends it SIGABRT once the command has started, and fails if a core
// file is left in the workspace.
func crashSupervisor(t *testing.T, w *world, cmd *exec.Cmd) {
	t.Helper()
	out, err := cmd.StdoutPipe()
	must(t, err)
	var errb strings.Builder
	cmd.Stderr = &errb
	cmd.WaitDelay = 10 * time.Second
	must(t, cmd.Start())
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "started\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the command did not start: %q\n%s", line, errb.String())
	}
	must(t, cmd.Process.Signal(syscall.SIGABRT))
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGABRT {
		t.Errorf("fence did not end by SIGABRT: %v", err)
	}
	cores, _ := filepath.Glob(w.ws + "/core*")
	for _, c := range cores {
		fi, err := os.Stat(c)
		if err == nil {
			t.Errorf("the supervisor left a core in the workspace: %s (%d bytes)", c, fi.Size())
		}
	}
}
