package policy

import (
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Expand makes a path pattern absolute: "~" and "~/..." are taken from
// home, and a relative pattern from dir. Glob characters are kept.
func Expand(pattern, dir, home string) string {
	switch {
	case pattern == "~":
		return path.Clean(home)
	case strings.HasPrefix(pattern, "~/"):
		return path.Join(home, pattern[2:])
	case path.IsAbs(pattern):
		return path.Clean(pattern)
	}
	return path.Join(dir, pattern)
}

// Covers reports whether the absolute pattern names p or a directory above
// it: a rule on a directory applies to everything inside. With fold, the
// match ignores case, as deny rules do.
func Covers(pattern, p string, fold bool) bool {
	if !hasGlob(pattern) {
		// A plain path covers itself and what is below it.
		if pattern == "/" {
			return true
		}
		if len(p) < len(pattern) || len(p) > len(pattern) && p[len(pattern)] != '/' {
			return false
		}
		if fold {
			return strings.EqualFold(p[:len(pattern)], pattern)
		}
		return p[:len(pattern)] == pattern
	}
	if fold {
		pattern, p = strings.ToLower(pattern), strings.ToLower(p)
	}
	for {
		if ok, _ := doublestar.Match(pattern, p); ok {
			return true
		}
		parent := path.Dir(p)
		if parent == p {
			return false
		}
		p = parent
	}
}
