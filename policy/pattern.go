package policy

import (
	"path"
	"strings"
	"unicode/utf8"

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
		return coversPlain(pattern, p, fold)
	}
	if fold {
		pattern, p = strings.ToLower(pattern), strings.ToLower(p)
	}
	return coversGlob(pattern, p)
}

// coversPlain is Covers for a pattern without glob characters: a plain
// path covers itself and what is below it.
func coversPlain(pattern, p string, fold bool) bool {
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

// coversGlob is Covers for a glob, with pattern and p already folded when
// the rule folds case.
func coversGlob(pattern, p string) bool {
	if !mayCover(pattern, p) {
		return false
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

// mayCover is a quick test that coversGlob needs: whatever the pattern
// matches starts with its literal directory prefix, and ends with its last
// segment when that is literal, so p (which is, or lies below, what
// matched) must hold both. Most paths fail it without a glob match.
func mayCover(pattern, p string) bool {
	meta := indexMeta(pattern)
	if meta < 0 || !utf8.ValidString(p) || strings.ContainsRune(pattern, utf8.RuneError) {
		// The glob matcher reads bytes that are not UTF-8 as U+FFFD,
		// which a byte comparison would not: leave those to it.
		return true
	}
	prefix := pattern[:strings.LastIndexByte(pattern[:meta], '/')+1]
	if !strings.HasPrefix(p, prefix) && !(len(p)+1 == len(prefix) && strings.HasPrefix(prefix, p)) {
		return false
	}
	if strings.ContainsAny(pattern, "{[") {
		return true // a brace or class may hold a "/": no last segment to find
	}
	last := pattern[strings.LastIndexByte(pattern, '/')+1:]
	if last == "" {
		return true
	}
	if indexMeta(last) < 0 {
		return hasSegment(p, last)
	}
	// "*.pem": some segment of p must end with ".pem".
	tail := last[strings.LastIndexAny(last, "*?[]{},\\")+1:]
	return tail == "" || hasSegmentEnd(p, tail)
}

// hasSegmentEnd reports whether some /-separated segment of p ends with
// tail.
func hasSegmentEnd(p, tail string) bool {
	for i := 0; ; {
		j := strings.Index(p[i:], tail)
		if j < 0 {
			return false
		}
		if end := i + j + len(tail); end == len(p) || p[end] == '/' {
			return true
		}
		i += j + 1
	}
}

// indexMeta is the index of the first glob character in s, or -1.
func indexMeta(s string) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '*', '?', '[', '{', '\\':
			return i
		}
	}
	return -1
}

// hasSegment reports whether seg is a whole /-separated segment of p.
func hasSegment(p, seg string) bool {
	return ContainsBounded(p, seg, func(c byte) bool { return c == '/' })
}

// ContainsBounded reports whether sub appears in s with, on each side,
// either the end of s or a byte that boundary accepts.
func ContainsBounded(s, sub string, boundary func(byte) bool) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], sub)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(sub)
		if (start == 0 || boundary(s[start-1])) && (end == len(s) || boundary(s[end])) {
			return true
		}
		i = start + 1
	}
}
