package darwin

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/fence-sandbox/fence/policy"
)

// globRegex translates an absolute doublestar pattern into an anchored
// regular expression that matches exactly the paths policy.Covers
// matches: the pattern itself, or anything below a path it matches. With
// fold, letters match either case.
func globRegex(pattern string, fold bool) string {
	if pattern == "/" {
		return "^/.*$"
	}
	var b strings.Builder
	b.WriteString("^")
	translate(&b, pattern, fold)
	b.WriteString("(/.*)?$")
	return b.String()
}

func translate(b *strings.Builder, p string, fold bool) {
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case strings.HasPrefix(p[i:], "/**") && i+3 == len(p):
			b.WriteString("(/.*)?")
			i += 2
		case (i == 0 || p[i-1] == '/') && strings.HasPrefix(p[i:], "**/"):
			b.WriteString("(.*/)?") // any number of whole segments
			i += 2
		case strings.HasPrefix(p[i:], "**"):
			b.WriteString(".*")
			i++
		case c == '*':
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString("[^/]")
		case c == '[':
			end := policy.ClassEnd(p[i+1:])
			if end < 0 {
				b.WriteString(`\[`)
				continue
			}
			class, negate := p[i+1:i+1+end], ""
			if strings.HasPrefix(class, "!") || strings.HasPrefix(class, "^") {
				class, negate = class[1:], "^/"
			}
			b.WriteString("[" + negate + foldClass(class, fold) + "]")
			i += end + 1
		case c == '{':
			alts, end := braceAlternatives(p[i:])
			if end < 0 {
				b.WriteString(`\{`)
				continue
			}
			b.WriteString("(")
			for k, alt := range alts {
				if k > 0 {
					b.WriteString("|")
				}
				translate(b, alt, fold)
			}
			b.WriteString(")")
			i += end
		case c == '\\' && i+1 < len(p):
			i += literal(b, p[i+1:], fold)
		default:
			i += literal(b, p[i:], fold) - 1
		}
	}
}

// braceAlternatives splits the brace group p starts with into its
// alternatives at the commas of its own level, so that a nested group
// stays whole for the recursion, and returns the index of its closing
// brace (-1 when it has none).
func braceAlternatives(p string) (alts []string, end int) {
	depth, start := 0, 1
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '{':
			depth++
		case '}':
			if depth--; depth == 0 {
				return append(alts, p[start:i]), i
			}
		case ',':
			if depth == 1 {
				alts, start = append(alts, p[start:i]), i+1
			}
		}
	}
	return nil, -1
}

// literal writes the first character of s, matched as itself (either
// case with fold), and returns its length in bytes.
func literal(b *strings.Builder, s string, fold bool) int {
	r, size := utf8.DecodeRuneInString(s)
	if fold && unicode.ToLower(r) != unicode.ToUpper(r) {
		b.WriteString("[" + regexp.QuoteMeta(string(unicode.ToLower(r))+string(unicode.ToUpper(r))) + "]")
		return size
	}
	b.WriteString(regexp.QuoteMeta(s[:size]))
	return size
}

// foldClass is the regex inside of a glob class. With fold it matches as
// the Linux matcher does, which lowers pattern and path alike: a character
// c belongs when lower(c) is in the lowered class.
func foldClass(class string, fold bool) string {
	var b strings.Builder
	if !fold {
		for _, r := range policy.ClassRanges(class) {
			writeRange(&b, r[0], r[1])
		}
		return b.String()
	}
	for _, r := range policy.ClassRanges(strings.ToLower(class)) {
		if r[1]-r[0] > 0x30000 {
			// Wider than the planes with cased letters: the range, and
			// the upper case of the ASCII letters in it.
			writeRange(&b, r[0], r[1])
			for c := max(r[0], 'a'); c <= min(r[1], 'z'); c++ {
				writeRange(&b, unicode.ToUpper(c), unicode.ToUpper(c))
			}
			continue
		}
		var members []rune
		for c := r[0]; c <= r[1]; c++ {
			if unicode.ToLower(c) != c {
				continue // c matches only if its lower case is in the class
			}
			members = append(members, c)
			if u := unicode.ToUpper(c); u != c && unicode.ToLower(u) == c {
				members = append(members, u)
			}
		}
		if len(members) == 0 {
			writeRange(&b, r[0], r[1]) // not reached for a validated pattern
			continue
		}
		slices.Sort(members)
		for k := 0; k < len(members); {
			end := k
			for end+1 < len(members) && members[end+1] <= members[end]+1 {
				end++
			}
			writeRange(&b, members[k], members[end])
			k = end + 1
		}
	}
	return b.String()
}

// writeRange writes lo-hi for a regex class, escaping what a class treats
// specially.
func writeRange(b *strings.Builder, lo, hi rune) {
	b.WriteString(classChar(lo))
	if hi != lo {
		b.WriteString("-" + classChar(hi))
	}
}

func classChar(r rune) string {
	if strings.ContainsRune(`\[]^-`, r) {
		return `\` + string(r)
	}
	return string(r)
}
