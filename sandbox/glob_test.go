package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/fence-sandbox/fence/policy"
)

// TestSharedWalk matches several glob rules in one walk of their common
// prefix and requires, for each, exactly what matching it alone finds:
// directories matched whole, depth limits, case folding, rules whose
// matches nest inside another rule's.
func TestSharedWalk(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{
		".env", "a/.env", "a/b/.env.local", "keys/SERVER.PEM", "keys/inner/x.pem", "secrets/.env", "secrets/deep/k.key",
		"node_modules/p/.env", "src/main.go", "src/x.KEY", "top.pem",
	} {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pol := policy.Compile(policy.Config{Filesystem: policy.Filesystem{
		DenyRead:  []string{"**/*.pem", "secrets", "*/deep", "**/secrets/**"},
		DenyWrite: []string{"**/.env", "**/.env.*", "**/*.key", "*.pem", "a/*"},
	}}, policy.Env{Dir: dir, Home: "/nonexistent"})
	rules := slices.Concat(pol.DenyRead, pol.DenyWrite)
	shared := &matcher{deadline: time.Now().Add(time.Minute)}
	shared.prepare(rules)
	for _, r := range rules {
		if !r.Glob {
			continue
		}
		alone := &matcher{deadline: time.Now().Add(time.Minute)}
		alone.prepare([]policy.Rule{r})
		got, want := shared.globs[globKey(r)].found, alone.globs[globKey(r)].found
		if !slices.Equal(got, want) {
			t.Errorf("%s: shared walk found %q, alone %q", r.Origin, got, want)
		}
		if ref := reference(t, r); !slices.Equal(got, ref) {
			t.Errorf("%s: shared walk found %q, a full walk %q", r.Origin, got, ref)
		}
	}
	pem := shared.globs[globKey(pol.DenyRead[0])].found
	if len(pem) != 3 {
		t.Errorf(`"**/*.pem" found %q, want SERVER.PEM, x.pem and top.pem`, pem)
	}
}

// reference matches r against every path below its prefix, keeping a match
// only when no directory above it matched already.
func reference(t *testing.T, r policy.Rule) []string {
	pattern := r.Pattern
	if r.Fold {
		pattern = strings.ToLower(pattern)
	}
	var out []string
	filepath.WalkDir(literalPrefix(r.Pattern), func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p == literalPrefix(r.Pattern) {
			return nil // a rule for a tree this machine lacks
		}
		if err != nil {
			t.Fatal(err)
		}
		subject := p
		if r.Fold {
			subject = strings.ToLower(p)
		}
		ok, _ := doublestar.Match(pattern, subject)
		if ok && !slices.ContainsFunc(out, func(m string) bool { return strings.HasPrefix(p, m+"/") }) {
			out = append(out, p)
		}
		return nil
	})
	return out
}
