package sandbox

import (
	"errors"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/policy/inputs"
)

// GlobReport says what one rule matched on disk when the sandbox started.
type GlobReport struct {
	Rule    string `json:"rule"`
	Matches int    `json:"matches"`
	Cut     bool   `json:"cut,omitempty"` // the time budget stopped the walk
	// Stopped is the directory the walk was in when the budget ran out.
	Stopped string `json:"stopped,omitempty"`
}

// matcher finds the existing paths a rule names, within a shared time
// budget. Symlinks among the results are resolved, so that what the
// sandbox protects is the file a link leads to.
type matcher struct {
	deadline time.Time
	reports  []GlobReport
	disk     *Disk                 // the listings, shared with the repository search
	deny     map[string]bool       // globKey of the deny rules
	globs    map[string]globResult // globKey(rule) -> what prepare found
}

type globResult struct {
	found   []string
	cut     bool
	stopped string // where the walk was when the budget ran out
}

func globKey(r policy.Rule) string {
	fold := "\x00"
	if r.Fold {
		fold = "\x01"
	}
	return r.Origin + "\x00" + r.Pattern + fold
}

// existing returns the existing paths that rule r names, with their
// symlinks resolved.
func (m *matcher) existing(r policy.Rule) []string {
	found := m.matches(r)
	for i, p := range found {
		found[i] = m.disk.canonical(p)
	}
	return found
}

// matches returns the existing paths that rule r names, as found: the
// path itself for a plain rule (and its case variants for a folding
// rule), every match for a glob.
func (m *matcher) matches(r policy.Rule) []string {
	var found []string
	cut, stopped := false, ""
	switch {
	case r.Glob:
		if _, ok := m.globs[globKey(r)]; !ok {
			m.prepare([]policy.Rule{r})
		}
		g := m.globs[globKey(r)]
		found, cut, stopped = g.found, g.cut, g.stopped
	case r.Fold:
		var err error
		if found, err = m.caseVariants(r.Pattern); errors.Is(err, fs.ErrPermission) && m.deny[globKey(r)] {
			found = unsearchable(r.Pattern)
		}
	default:
		if _, ok := m.disk.lookup(r.Pattern); ok {
			found = []string{r.Pattern}
		} else if m.deny[globKey(r)] && m.disk.unreachable(r.Pattern) {
			found = unsearchable(r.Pattern)
		}
	}
	if r.Glob || cut {
		m.reports = append(m.reports, GlobReport{Rule: r.Origin, Matches: len(found), Cut: cut, Stopped: stopped})
	}
	return found
}

// caseVariants returns the entries of p's directory whose names equal p's
// name without regard to case.
func (m *matcher) caseVariants(p string) ([]string, error) {
	dir, name := path.Split(p)
	entries, err := m.disk.ReadDir(path.Clean(dir))
	var out []string
	for _, e := range entries {
		if strings.EqualFold(e.Name(), name) {
			out = append(out, path.Join(dir, e.Name()))
		}
	}
	return out, err
}

// prepare matches all the glob rules against the disk, walking the tree
// below each literal prefix once for every rule that starts there: the
// templates' "**/.env", "**/*.pem" and the like share the working
// directory, and reading it once instead of once per rule is most of the
// start-up cost in a large repository.
func (m *matcher) prepare(rules []policy.Rule) {
	groups := map[string][]globRule{}
	var bases []string
	seen := map[string]bool{}
	for _, r := range rules {
		key := globKey(r)
		if !r.Glob || seen[key] {
			continue
		}
		seen[key] = true
		g := newGlobRule(r)
		if _, ok := groups[g.base]; !ok {
			bases = append(bases, g.base)
		}
		groups[g.base] = append(groups[g.base], g)
	}
	if m.globs == nil {
		m.globs = map[string]globResult{}
	}
	for _, base := range bases {
		stopped := m.walkGroup(base, groups[base])
		for _, g := range groups[base] {
			m.globs[globKey(g.rule)] = globResult{found: g.found, cut: stopped != "", stopped: stopped}
		}
	}
}

// globRule is one glob rule during a shared walk.
type globRule struct {
	rule     policy.Rule
	pattern  string // folded when the rule folds case
	base     string
	maxDepth int      // -1: unbounded
	found    []string // matches so far
	skip     string   // a matched directory whose inside this rule skips
	// last are the names a match can have, when the pattern's last
	// segment is literal or a brace of literals: an entry with another
	// name needs no glob match (most entries of a shared walk).
	last map[string]bool
}

func newGlobRule(r policy.Rule) globRule {
	g := globRule{rule: r, pattern: r.Pattern, base: literalPrefix(r.Pattern), maxDepth: -1}
	if r.Fold {
		g.pattern = strings.ToLower(g.pattern)
	}
	if !strings.Contains(r.Pattern, "**") {
		g.maxDepth = strings.Count(strings.TrimPrefix(r.Pattern, g.base), "/")
	}
	g.last = lastNames(g.pattern)
	return g
}

// lastNames are the names the last segment of pattern matches, when it is
// a literal name or a brace of literal names; nil otherwise.
func lastNames(pattern string) map[string]bool {
	seg := path.Base(pattern)
	names := []string{seg}
	if inner, ok := strings.CutPrefix(seg, "{"); ok && strings.HasSuffix(inner, "}") {
		names = strings.Split(strings.TrimSuffix(inner, "}"), ",")
	}
	out := map[string]bool{}
	for _, n := range names {
		if n == "" || strings.ContainsAny(n, "*?[]{}\\") {
			return nil
		}
		out[n] = true
	}
	return out
}

// walkGroup walks base once, matching every rule of group on each entry;
// a directory is left when no rule needs to look inside it. It returns
// the directory it was in when the budget ran out, or "" when it finished.
func (m *matcher) walkGroup(base string, group []globRule) (stopped string) {
	n := 0
	m.disk.Walk(base, func(p string, d fs.DirEntry, err error) error {
		if n++; n%256 == 0 && time.Now().After(m.deadline) {
			inputs.Taint("a glob walk ran out of time")
			stopped = filepath.Dir(p)
			return filepath.SkipAll
		}
		if err != nil {
			if d != nil && d.IsDir() {
				m.unreadable(group, base, p)
			}
			return nil
		}
		lower := ""
		descend := false
		for i := range group {
			g := &group[i]
			if g.skip != "" && strings.HasPrefix(p, g.skip+"/") {
				continue
			}
			subject := p
			if g.rule.Fold {
				if lower == "" {
					lower = strings.ToLower(p)
				}
				subject = lower
			}
			if g.last != nil && !g.last[path.Base(subject)] {
				// not a match: no glob needed
			} else if ok, _ := doublestar.Match(g.pattern, subject); ok {
				g.found = append(g.found, p)
				if d.IsDir() {
					g.skip = p // the whole directory is covered
				}
				continue
			}
			if d.IsDir() && (g.maxDepth < 0 || strings.Count(strings.TrimPrefix(p, base), "/") < g.maxDepth) {
				descend = true
			}
		}
		if d.IsDir() && (!descend || d.Name() == "objects" && filepath.Base(filepath.Dir(p)) == ".git") {
			// git's object store keeps content under hashes, never a
			// name a rule could mean (and it is most of a repository's
			// directories).
			return filepath.SkipDir
		}
		return nil
	})
	return stopped
}

// unreadable covers a directory fence could not list with every deny rule
// that would have looked inside it: its owner, the command, could give
// itself the permission back, and whatever the rule names in it would
// then be open. An allow rule simply grants nothing there.
func (m *matcher) unreadable(group []globRule, base, dir string) {
	dir = reachable(dir)
	for i := range group {
		g := &group[i]
		if !m.deny[globKey(g.rule)] || g.skip != "" && under(dir, g.skip) {
			continue
		}
		if g.maxDepth < 0 || strings.Count(strings.TrimPrefix(dir, base), "/") < g.maxDepth {
			g.found = append(g.found, dir)
			g.skip = dir
		}
	}
}

// unsearchable returns the directory that keeps fence from learning
// whether p exists (the deepest one on the way that fence can stat, when
// it may not list or search it): a deny rule covers it whole, since its
// owner could open it again and reach p.
func unsearchable(p string) []string {
	for dir := path.Dir(p); dir != "/"; dir = path.Dir(dir) {
		if _, err := inputs.Lstat(dir); err == nil {
			return []string{dir}
		} else if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
	}
	return nil
}

// reachable is dir, or its parent when fence may list the parent but not
// search it (mode 444): then dir cannot be opened even to be mounted over,
// and the parent is what a protection must cover.
func reachable(dir string) string {
	if _, err := inputs.Lstat(dir); err != nil && errors.Is(err, fs.ErrPermission) {
		return path.Dir(dir)
	}
	return dir
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
