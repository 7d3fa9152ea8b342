package inputs_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// direct matches a read of the host that bypasses this package.
var direct = regexp.MustCompile(`\b(os\.(Lstat|Stat|ReadDir|ReadFile|Open|OpenFile|Readlink|DirFS)|filepath\.(EvalSymlinks|Walk|WalkDir|Glob)|unix\.(Stat|Lstat|Fstatat|Open|Openat|Readlink|Getdents|Access|Statfs)|syscall\.(Stat|Lstat|Open|Access|Readlink|Getdents)|exec\.LookPath|fs\.(WalkDir|ReadDir|Glob|Stat|ReadFile))\(`)

// planning are the files whose code runs while fence loads and plans:
// every Go file of policy and sandbox (but the proxies, which run after
// the plan), and the files of cmd that load and plan. notPlanning are
// files among them that only run with or after the command.
var (
	planning    = []string{"policy/*.go", "sandbox/*.go", "cmd/plan.go", "cmd/prepare.go", "cmd/homelinks.go", "cmd/truststore.go", "cmd/writablehistory.go", "cmd/resolve.go", "cmd/policydir.go", "cmd/runnotes.go", "cmd/ondisk.go", "cmd/expose.go", "cmd/usershell.go", "cmd/policyflags.go", "cmd/runstage.go", "cmd/upstreamflags.go", "cmd/root.go"}
	notPlanning = map[string]string{
		"sandbox/audit.go":     "the audit log, written as denials happen",
		"sandbox/lock_unix.go": "a lock, no read",
		"policy/fs_other.go":   "no sandbox to plan for on other systems",
	}
)

// TestPlanningReadsThroughInputs fails when code that runs while fence
// loads and plans reads the host other than through package inputs:
// such a read would escape the plan cache's key, and a cached plan could
// outlive what it was made of. A read that is noted another way says so
// on its line ("// observed: ...").
func TestPlanningReadsThroughInputs(t *testing.T) {
	root := filepath.Join("..", "..")
	for _, glob := range planning {
		files, err := filepath.Glob(filepath.Join(root, glob))
		if err != nil || len(files) == 0 {
			t.Fatalf("no files match %s", glob)
		}
		for _, f := range files {
			rel, _ := filepath.Rel(root, f)
			if strings.HasSuffix(f, "_test.go") || notPlanning[filepath.ToSlash(rel)] != "" {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for i, line := range strings.Split(string(b), "\n") {
				if direct.MatchString(line) && !strings.Contains(line, "// observed:") {
					t.Errorf("%s:%d reads the host directly (use package inputs, or say how it is noted): %s", rel, i+1, strings.TrimSpace(line))
				}
			}
		}
	}
}
