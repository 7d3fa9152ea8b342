//go:build linux

package linux_test

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// otherCalls are the calls modeprobe others tries, in its order.
var otherCalls = []string{
	"prlimit64", "setpriority", "ioprio_set", "sched_setaffinity", "sched_setscheduler",
	"sched_setparam", "sched_setattr", "kcmp", "pidfd_getfd", "process_madvise",
}

// probeLines maps "CALL LABEL" to what modeprobe others printed for it.
func probeLines(out string) map[string]string {
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if k, v, ok := strings.Cut(line, ": "); ok {
			got[k] = v
		}
	}
	return got
}

// TestLandlockOnlySupervisorOutOfReach: without a pid namespace the
// command sees the supervisor, the init's parent. Every call that would
// change its resource limits (RLIMIT_FSIZE drops audit lines, RLIMIT_CORE
// with RLIMIT_AS dumps its memory into the workspace), its nice value,
// CPU affinity, scheduling or I/O priority fails with EPERM, and so do
// the ones Landlock's ptrace scope refuses; on itself (pid 0) the
// command may still make them.
func TestLandlockOnlySupervisorOutOfReach(t *testing.T) {
	const eperm, eacces = "operation not permitted", "permission denied"
	// The calls Landlock refuses through ptrace's access check: mm_access
	// fails with EACCES.
	ptraceChecked := map[string]bool{"kcmp": true, "pidfd_getfd": true, "process_madvise": true}
	for _, u := range landlockOnlyUsers(t) {
		t.Run(u.name, func(t *testing.T) {
			w := landlockWorld(t, u, `{"filesystem": {"allowWrite": ["."]}}`)
			r := w.landlockOnly(t, u, "-c", `read -r _ _ _ sup _ < /proc/$PPID/stat; ./modeprobe others $sup`)
			got := probeLines(r.stdout)
			for _, c := range otherCalls {
				if g := strings.TrimPrefix(got[c+" other"], "get: "); g != eperm && (g != eacces || !ptraceChecked[c]) {
					t.Errorf("%s on the supervisor: %q, want %q", c, g, eperm)
				}
				if g := got[c+" self"]; g != "ok" {
					t.Errorf("%s on the command itself: %q, want ok", c, g)
				}
			}
			if t.Failed() {
				t.Logf("fence = %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
		})
	}
}

// TestSupervisorOutOfSight: in the namespace engine the pid namespace
// hides the supervisor. Told its pid as the host sees it, the command
// finds no such process to set limits on; on itself it may.
func TestSupervisorOutOfSight(t *testing.T) {
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := landlockWorld(t, user{u.name, u.uid}, `{"filesystem": {"allowWrite": ["."]}}`)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := w.command(ctx, nil, "-c", `while [ ! -s suppid ]; do sleep 0.05; done; ./modeprobe others $(cat suppid)`)
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			must(t, cmd.Start())
			must(t, os.WriteFile(w.ws+"/suppid.new", []byte(strconv.Itoa(cmd.Process.Pid)), 0o644))
			must(t, os.Rename(w.ws+"/suppid.new", w.ws+"/suppid"))
			if err := cmd.Wait(); err != nil {
				t.Fatalf("fence: %v\n%s", err, errb.String())
			}
			got := probeLines(out.String())
			if g := got["prlimit64 other"]; g != "get: no such process" {
				t.Errorf("prlimit64 on the supervisor's pid: %q, want no such process\n%s", g, out.String())
			}
			for _, c := range otherCalls {
				if got[c+" other"] == "ok" {
					t.Errorf("%s on the supervisor's pid succeeded", c)
				}
				if g := got[c+" self"]; g != "ok" {
					t.Errorf("%s on the command itself: %q, want ok", c, g)
				}
			}
		})
	}
}
