//go:build linux

package linux_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bracePolicy denies by brace alternatives: whole directories for
// reading, single names for writing, one alternative nested.
const bracePolicy = `{"filesystem": {"allowWrite": ["."], "denyRead": ["src/{a,{b,c}}"], "denyWrite": ["cfg/{x,y}.json"]}}`

// braceCases are the accesses bracePolicy decides: denied for each
// alternative, allowed for the names next to them.
var braceCases = []struct {
	access, path string
	allowed      bool
}{
	{"read", "src/a/f", false}, {"write", "src/a/f", false},
	{"read", "src/b/f", false}, {"write", "src/b/f", false},
	{"read", "src/c/f", false}, {"write", "src/c/f", false},
	{"read", "src/d/f", true}, {"write", "src/d/f", true},
	{"read", "cfg/x.json", true}, {"write", "cfg/x.json", false},
	{"read", "cfg/y.json", true}, {"write", "cfg/y.json", false},
	{"read", "cfg/z.json", true}, {"write", "cfg/z.json", true},
}

// newBraceWorld is a world under bracePolicy holding the files of
// braceCases.
func newBraceWorld(t *testing.T, uid int) *world {
	t.Helper()
	w := newWorld(t, uid, bracePolicy)
	for _, name := range []string{"src/a/f", "src/b/f", "src/c/f", "src/d/f", "cfg/x.json", "cfg/y.json", "cfg/z.json"} {
		p := filepath.Join(w.ws, name)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte("data\n"), 0o644))
		must(t, os.Lchown(filepath.Dir(p), uid, uid))
		must(t, os.Lchown(p, uid, uid))
	}
	return w
}

// braceScript tries each access of braceCases and prints 1 or 0 for it.
func braceScript() string {
	var b strings.Builder
	for _, c := range braceCases {
		op := "cat %q >/dev/null"
		if c.access == "write" {
			op = ": >> %q"
		}
		fmt.Fprintf(&b, op+" 2>/dev/null && echo 1 || echo 0\n", c.path)
	}
	return b.String()
}

// TestBraceAlternatives runs the claim `fence config lint` no longer
// warns against: a rule with {a,b} denies every alternative, in the
// namespace engine, in the Landlock-only one and in `fence check`.
func TestBraceAlternatives(t *testing.T) {
	engines := []struct {
		name string
		run  func(t *testing.T, w *world) result
	}{
		{"namespaces", func(t *testing.T, w *world) result { return w.fence(t, "", nil, "-c", braceScript()) }},
		{"landlock-only", func(t *testing.T, w *world) result { return w.withoutUserNS(t, "-c", braceScript()) }},
	}
	for _, u := range users(t) {
		for _, e := range engines {
			if e.name == "landlock-only" && u.uid != os.Getuid() {
				continue // withoutUserNS runs as this user only
			}
			t.Run(u.name+"/"+e.name, func(t *testing.T) {
				w := newBraceWorld(t, u.uid)
				r := e.run(t, w)
				got := strings.Fields(r.stdout)
				if len(got) != len(braceCases) {
					t.Fatalf("the sandbox answered %d of %d accesses:\n%s\n%s", len(got), len(braceCases), r.stdout, r.stderr)
				}
				for i, c := range braceCases {
					if sandboxed := got[i] == "1"; sandboxed != c.allowed {
						t.Errorf("%s %s: the sandbox says allowed=%v, want %v", c.access, c.path, sandboxed, c.allowed)
					}
				}
			})
		}
	}
	t.Run("fence check", func(t *testing.T) {
		w := newBraceWorld(t, os.Getuid())
		var queries []string
		for _, c := range braceCases {
			queries = append(queries, fmt.Sprintf(`{"access":%q,"path":%q}`, c.access, c.path))
		}
		ds := checkStdin(t, w, strings.Join(queries, "\n"))
		if len(ds) != len(braceCases) {
			t.Fatalf("fence check answered %d of %d queries", len(ds), len(braceCases))
		}
		for i, c := range braceCases {
			if ds[i].Allowed != c.allowed {
				t.Errorf("fence check %s %s = allowed %v (%s), want %v", c.access, c.path, ds[i].Allowed, ds[i].Rule, c.allowed)
			}
		}
	})
}
