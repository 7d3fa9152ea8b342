package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bmatcuk/doublestar/v4"
)

// TestNamedMatches: the after-run expansion of a glob ending in names
// finds what a full glob finds, except inside git's object store and
// through links to directories below a "**" (which a bounded glob
// follows); a glob of another kind is left to the caller.
func TestNamedMatches(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	for _, f := range []string{"ws/a/.claude/settings.json", "ws/a/b/.codex", "ws/a/b/c/d/.github/hooks/x.json", "ws/.git/objects/ab/.claude",
		"other/.gemini/settings.json", "t/proj/.cursor/hooks.json", "t/proj/deep/.cursor/hooks.json", "t/.codex/config.toml", "h/lib/python3.12/site-packages/x.pth"} {
		p := filepath.Join(base, f)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, nil, 0o644))
	}
	must(t, os.Symlink("../other", filepath.Join(base, "ws/link")))
	must(t, os.Symlink("..", filepath.Join(base, "ws/a/up"))) // a loop
	must(t, os.Symlink("python3.12", filepath.Join(base, "h/lib/python3")))
	names := "{.claude,.codex,.cursor,.gemini}"
	for _, pattern := range []string{
		base + "/ws/**/" + names, base + "/ws/**/.github/hooks",
		base + "/t/*/" + names, base + "/t/" + names, base + "/h/lib/python*/site-packages",
	} {
		got, ok := NamedMatches(pattern, nil, nil)
		if !ok {
			t.Fatalf("%s: not taken", pattern)
		}
		var full []string
		if strings.Contains(pattern, "**") {
			full, err = doublestar.FilepathGlob(pattern, doublestar.WithNoFollow())
			full = slices.DeleteFunc(full, func(m string) bool { return strings.Contains(m, "/.git/objects/") })
		} else {
			full, err = doublestar.FilepathGlob(pattern)
		}
		must(t, err)
		slices.Sort(got)
		slices.Sort(full)
		if len(full) == 0 || !slices.Equal(got, full) {
			t.Errorf("%s:\n got %v\nwant %v", pattern, got, full)
		}
	}
	if _, ok := NamedMatches(base+"/ws/**/*.pem", nil, nil); ok {
		t.Error("a glob ending in a wildcard was taken")
	}
}
