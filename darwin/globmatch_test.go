package darwin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/sandbox"
)

// TestGlobMatches: a glob deny's matches at start, as the plan protects
// them, are denied by their own paths too: the target of a link the
// pattern matches (ws/.env -> config/prod.env), and a match whose
// directory could be renamed out of the pattern (src/certs/server.pem,
// with src/certs protected from rename); the same for a deny of writes.
func TestGlobMatches(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(dir, "ws")
	for _, f := range []string{"config/prod.env", "src/certs/server.pem", "vendor/x/y.lock"} {
		os.MkdirAll(filepath.Join(ws, filepath.Dir(f)), 0o755)
		os.WriteFile(filepath.Join(ws, f), []byte("x"), 0o644)
	}
	if err := os.Symlink("config/prod.env", filepath.Join(ws, ".env")); err != nil {
		t.Fatal(err)
	}
	env := policy.Env{Dir: ws, Home: filepath.Join(dir, "home")}
	pol := policy.Compile(policy.Config{Filesystem: policy.Filesystem{AllowWrite: []string{"."},
		DenyRead: []string{"**/.env", "src/**/*.pem"}, DenyWrite: []string{"vendor/*/*.lock"}}}, env)
	plan, err := sandbox.NewPlan(pol, sandbox.Options{Argv: []string{"true"}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := Build(InputFromPlan(plan, testOptions, testFinder))
	if err != nil {
		t.Fatal(err)
	}
	rules := checkProfile(t, "glob matches", p)
	has := func(op, f string) bool {
		return strings.Contains(strings.Join(filtersOf(rules, "deny", op), " "), f)
	}
	for _, c := range []struct{ op, path string }{
		{"file-read-data", "config/prod.env"}, {"file-read*", "src/certs/server.pem"}, {"file-write*", "vendor/x/y.lock"},
	} {
		if !has(c.op, folded(darwinPath(filepath.Join(ws, c.path)))) {
			t.Errorf("%s is not denied %s by its own path:\n%s", c.path, c.op, p)
		}
	}
	for _, d := range []string{"src/certs", "vendor/x", "config"} {
		if !has("file-write-unlink", foldedExact(darwinPath(filepath.Join(ws, d)))) {
			t.Errorf("%s, above a match, may be renamed:\n%s", d, p)
		}
	}
}
