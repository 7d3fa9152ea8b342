package sandbox

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/fence-sandbox/fence/policy"
)

// GlobReport says what one rule matched on disk when the sandbox started.
type GlobReport struct {
	Rule    string `json:"rule"`
	Matches int    `json:"matches"`
	Cut     bool   `json:"cut,omitempty"` // the time budget stopped the walk
}

// matcher finds the existing paths a rule names, within a shared time
// budget. Symlinks among the results are resolved, so that what the
// sandbox protects is the file a link leads to.
type matcher struct {
	deadline time.Time
	reports  []GlobReport
	dirs     map[string][]string // directory -> entry names, read once
}

// existing returns the existing paths that rule r names: the path itself
// for a plain rule (and its case variants for a folding rule), every match
// for a glob.
func (m *matcher) existing(r policy.Rule) []string {
	var found []string
	cut := false
	switch {
	case r.Glob:
		found, cut = m.walk(r)
	case r.Fold:
		found = m.caseVariants(r.Pattern)
	default:
		if _, err := os.Lstat(r.Pattern); err == nil {
			found = []string{r.Pattern}
		}
	}
	if r.Glob || cut {
		m.reports = append(m.reports, GlobReport{Rule: r.Origin, Matches: len(found), Cut: cut})
	}
	return resolveAll(found)
}

// caseVariants returns the entries of p's directory whose names equal p's
// name without regard to case.
func (m *matcher) caseVariants(p string) []string {
	dir, name := path.Split(p)
	names, ok := m.dirs[dir]
	if !ok {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if m.dirs == nil {
			m.dirs = map[string][]string{}
		}
		m.dirs[dir] = names
	}
	var out []string
	for _, n := range names {
		if strings.EqualFold(n, name) {
			out = append(out, path.Join(dir, n))
		}
	}
	return out
}

// walk matches a glob rule against the tree below its literal prefix.
func (m *matcher) walk(r policy.Rule) (found []string, cut bool) {
	pattern := r.Pattern
	if r.Fold {
		pattern = strings.ToLower(pattern)
	}
	base := literalPrefix(r.Pattern)
	maxDepth := -1 // unbounded
	if !strings.Contains(r.Pattern, "**") {
		maxDepth = strings.Count(strings.TrimPrefix(r.Pattern, base), "/")
	}
	n := 0
	filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if n++; n%256 == 0 && time.Now().After(m.deadline) {
			cut = true
			return filepath.SkipAll
		}
		if err != nil {
			return nil // unreadable: nothing to protect there that the command could read either
		}
		subject := p
		if r.Fold {
			subject = strings.ToLower(p)
		}
		if ok, _ := doublestar.Match(pattern, subject); ok {
			found = append(found, p)
			if d.IsDir() {
				return filepath.SkipDir // the whole directory is covered
			}
		}
		if d.IsDir() && maxDepth >= 0 && strings.Count(strings.TrimPrefix(p, base), "/") >= maxDepth {
			return filepath.SkipDir
		}
		return nil
	})
	return found, cut
}

// literalPrefix is the directory part of p before its first glob character.
func literalPrefix(p string) string {
	i := strings.IndexAny(p, "*?[{\\")
	if i < 0 {
		return p
	}
	dir := path.Dir(p[:i+1])
	if dir == "" {
		return "/"
	}
	return dir
}

func resolveAll(paths []string) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			out = append(out, real)
		}
	}
	return out
}
