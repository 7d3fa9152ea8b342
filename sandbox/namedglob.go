package sandbox

import (
	"errors"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/fence-sandbox/fence/policy/inputs"
)

// NamedMatches expands a watched glob after the run when its last segment
// is a literal name or a brace of them (the agent settings below a
// writable tree: /w/**/{.claude,.codex,...}): one walk of its base that
// lists each directory once, never stats an entry, matches the glob only
// on entries of those names, and leaves git's object store alone, as the
// start-up walk does. A link with one of the names is a match (it is
// moved aside, never what it leads to); a link to a directory is
// followed only by a glob of bounded depth. A directory fence may not list (the command, its
// owner, took the permission away to hide a match) is given its owner's
// bits back by reopen while fence looks, or its parent's when that is
// what keeps it closed, and put back after. ok is false for any other
// glob: the caller expands it in full. listed keeps the directories read
// for the next glob of the same check (nil for none): the agent settings
// are a dozen globs over the same trees.
func NamedMatches(pattern string, reopen func(dir string) (undo func(), ok bool), listed map[string][]fs.DirEntry) (matches []string, ok bool) {
	last := lastNames(pattern)
	if last == nil {
		return nil, false
	}
	base := literalPrefix(pattern)
	maxDepth := -1
	if !strings.Contains(pattern, "**") {
		maxDepth = strings.Count(strings.TrimPrefix(pattern, base), "/")
	}
	if maxDepth == 1 {
		return namesIn(base, last), true // /tmp/{.claude,...}: a look at each name, not a listing
	}
	var undos []func()
	defer func() {
		for _, u := range slices.Backward(undos) {
			u()
		}
	}()
	list := func(dir string) []fs.DirEntry {
		if entries, ok := listed[dir]; ok {
			return entries
		}
		entries, err := inputs.ReadDir(dir)
		if listed != nil && err == nil {
			listed[dir] = entries
		}
		if !errors.Is(err, fs.ErrPermission) || reopen == nil {
			return entries
		}
		for _, d := range []string{dir, filepath.Dir(dir)} {
			if undo, ok := reopen(d); ok {
				undos = append(undos, undo)
				if entries, err = inputs.ReadDir(dir); err == nil {
					break
				}
			}
		}
		return entries
	}
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		for _, e := range list(dir) {
			p := filepath.Join(dir, e.Name())
			if last[e.Name()] {
				if ok, _ := doublestar.Match(pattern, p); ok {
					matches = append(matches, p)
					continue
				}
			}
			if maxDepth >= 0 && depth+1 >= maxDepth || e.Name() == "objects" && filepath.Base(dir) == ".git" {
				continue
			}
			if e.IsDir() {
				walk(p, depth+1)
			} else if maxDepth >= 0 && e.Type()&fs.ModeSymlink != 0 && linkedDir(p) {
				// As the program that reads the match would follow it
				// (lib/python3 linked to python3.12); a walk of any depth
				// follows none, as the start-up walk does: an agent started
				// below a link works in its target, another tree's.
				walk(p, depth+1)
			}
		}
	}
	walk(base, 0)
	return matches, true
}

// linkedDir reports whether the link p leads to a directory.
func linkedDir(p string) bool {
	fi, err := inputs.Stat(p)
	return err == nil && fi.IsDir()
}

// namesIn are the entries of dir with one of names, found by looking each
// up rather than listing dir (a /tmp of thousands of entries).
func namesIn(dir string, names map[string]bool) []string {
	var out []string
	for _, n := range slices.Sorted(maps.Keys(names)) {
		p := filepath.Join(dir, n)
		if _, err := inputs.Lstat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}
