//go:build linux

package linux_test

import (
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestPlanUnchangedByRun runs real sandboxes, of the namespace engine as
// each user and of the Landlock-only engine, with a plan that has a
// filtered network, a denied path, argv-mode exec judging and (with
// namespaces) a -p port, and holds fence to the digest it takes
// under -d: the plan the backend got is the plan NewPlan made, byte for
// byte (environment included), after the run.
func TestPlanUnchangedByRun(t *testing.T) {
	const policy = `{"filesystem": {"allowWrite": ["."], "denyRead": ["secret.txt"]},
		"network": {"allowedDomains": ["example.com"], "allowLocalOutboundPorts": [9]},
		"command": {"deny": ["git push"], "runtimeExecPolicy": "argv"}}`
	const script = `cat secret.txt 2>/dev/null; g=git; $g push 2>/dev/null; echo ran`
	check := func(t *testing.T, r result) {
		t.Helper()
		if r.code != 0 || !strings.Contains(r.stdout, "ran") {
			t.Fatalf("exit %d, stdout %q\n%s", r.code, r.stdout, r.stderr)
		}
		if !strings.Contains(r.stderr, "(at exec)") {
			t.Errorf("git push was not judged at exec:\n%s", r.stderr)
		}
		if strings.Contains(r.stderr, "changed its plan") || !strings.Contains(r.stderr, "fence: debug: plan: unchanged by the run (sha256 ") {
			t.Errorf("the plan is not said to be unchanged:\n%s", r.stderr)
		}
	}
	for _, u := range users(t) {
		t.Run("namespaces/"+u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, policy)
			check(t, w.fence(t, "", nil, "-d", "-p", strconv.Itoa(freePort(t)), "-c", script))
		})
	}
	t.Run("landlock-only", func(t *testing.T) {
		w := newWorld(t, os.Getuid(), policy)
		check(t, w.withoutUserNS(t, "-d", "-c", script))
	})
}

// freePort is a loopback TCP port nothing listened on a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
