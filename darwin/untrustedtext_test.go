package darwin

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/sandbox"
)

// TestUntrustedNamesStayQuoted: a directory name the command could have
// left in a writable tree, holding newlines and rules, reaches the
// profile only inside quoted strings and regexes (as a found socket's
// place, a tree the walk could not list, a deny rule's path) and never a
// comment: the parsed profile grants nothing the same policy without it
// does not, every comment is fence's own, and the warning quotes the name.
func TestUntrustedNamesStayQuoted(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(dir, "ws")
	evil := filepath.Join(ws, "x\n(allow network-outbound)\n(allow file-write*)\n;")
	if err := os.MkdirAll(evil, 0o755); err != nil {
		t.Fatal(err)
	}
	listenUnix(t, filepath.Join(evil, "s"))
	pol := policy.Compile(policy.Config{Filesystem: policy.Filesystem{AllowWrite: []string{ws}, DenyRead: []string{filepath.Join(evil, "key")}}}, testEnv)
	plan, err := sandbox.NewPlan(pol, sandbox.Options{Argv: []string{"true"}})
	if err != nil {
		t.Fatal(err)
	}
	plan.HostSockets = nil
	in := InputFromPlan(plan, testOptions, testFinder)
	in.scanSockets()
	if !slices.Contains(in.HostSockets, darwinPath(filepath.Join(evil, "s"))) {
		t.Fatalf("the scan did not find the socket below %q: %v", evil, in.HostSockets)
	}
	in.SocketScanCut = append(in.SocketScanCut, darwinPath(evil))
	p, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	rules := checkProfile(t, "untrusted names", p)
	for _, op := range []string{"network-outbound", "file-write*", "default"} {
		if allowsEverywhere(rules, op) {
			t.Errorf("the profile allows %s everywhere:\n%s", op, p)
		}
	}
	warnings := socketWarnings(in)
	if len(warnings) != 1 || !strings.Contains(warnings[0], strconv.Quote(darwinPath(evil))) || strings.ContainsAny(warnings[0], "\n\x00") {
		t.Errorf("warnings %q: want one line, the name quoted", warnings)
	}
}
