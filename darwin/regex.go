package darwin

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
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
			end := strings.IndexByte(p[i+1:], ']')
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
			end := strings.IndexByte(p[i:], '}')
			if end < 0 {
				b.WriteString(`\{`)
				continue
			}
			b.WriteString("(")
			for k, alt := range strings.Split(p[i+1:i+end], ",") {
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

// foldClass is the regex inside of a glob class, with both cases of its
// letters when fold.
func foldClass(class string, fold bool) string {
	if !fold {
		return classBody(class)
	}
	return classBody(strings.ToLower(class)) + classBody(strings.ToUpper(class))
}

// classBody writes the inside of a glob character class for a regex: a
// backslash escape stands for the character itself, ranges stay ranges,
// and characters a regex class treats specially are escaped.
func classBody(class string) string {
	var b strings.Builder
	for i := 0; i < len(class); i++ {
		c := class[i]
		if c == '\\' && i+1 < len(class) {
			i++
			c = class[i]
		} else if c == '-' && i > 0 && i < len(class)-1 {
			b.WriteByte(c) // a range; at either end it is the character itself
			continue
		}
		if strings.IndexByte(`\[]^-`, c) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}
