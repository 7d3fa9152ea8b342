package darwin

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/fence-sandbox/fence/policy"
)

// The regex dialect. Seatbelt's regular expressions are POSIX extended
// ones matched byte by byte, so the compiler writes only what reads the
// same there and in Go's engine, which the tests match with:
//   - inside brackets, no backslash (POSIX reads it as itself) and only
//     ASCII members, ordered so that ']' comes first, '-' last and '^'
//     never first;
//   - a character outside ASCII as its UTF-8 bytes, in an alternation
//     when a position may hold one of several;
//   - case folded by listing each form a character's folding admits.
// A position that must match one character of an unbounded non-ASCII set
// ("?", "[!…]", a class ranging past ASCII) has no exact byte form: in a
// deny rule it is refused (see Unexpressible), in an allow rule it matches
// the ASCII part only, which grants less, never more.

// foldMode says how a rule ignores case, as the Linux matcher does.
type foldMode int

const (
	foldNone  foldMode = iota
	foldLower          // globs: pattern and path are lowered, rune by rune
	foldEqual          // plain paths: strings.EqualFold, Unicode's simple folding
)

// Unexpressible is a pattern the profile cannot match exactly.
type Unexpressible struct {
	Pattern string
	Why     string
}

func (e *Unexpressible) Error() string {
	return fmt.Sprintf("%q cannot be matched exactly by a macOS profile: %s", e.Pattern, e.Why)
}

// errBadGlob is why a pattern that is not a valid glob (an unclosed "["
// or "{", a trailing backslash) has no regex: the Linux matcher matches
// nothing with it, so an allow of it grants nothing and a deny of it is
// refused.
const errBadGlob = "not a valid glob (an unclosed [ or {, or a trailing backslash), which matches nothing on Linux"

// globRegex translates an absolute doublestar pattern into an anchored
// regular expression that matches exactly the paths policy.Covers
// matches: the pattern itself, or anything below a path it matches. With
// exact, a position the dialect cannot match exactly is an error;
// without it, it matches less.
func globRegex(pattern string, fold foldMode, exact bool) (string, error) {
	if pattern == "/" {
		return "^/.*$", nil
	}
	if !doublestar.ValidatePattern(pattern) {
		return "", &Unexpressible{Pattern: pattern, Why: errBadGlob}
	}
	t := &translator{fold: fold, exact: exact, pattern: pattern}
	t.b.WriteString("^")
	t.translate(pattern)
	t.b.WriteString("(/.*)?$")
	return t.b.String(), t.err
}

type translator struct {
	b       strings.Builder
	fold    foldMode
	exact   bool
	pattern string
	err     error
}

func (t *translator) fail(why string) {
	if t.err == nil {
		t.err = &Unexpressible{Pattern: t.pattern, Why: why}
	}
}

func (t *translator) translate(p string) {
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case strings.HasPrefix(p[i:], "/**") && i+3 == len(p):
			t.b.WriteString("(/.*)?")
			i += 2
		case (i == 0 || p[i-1] == '/') && strings.HasPrefix(p[i:], "**/"):
			t.b.WriteString("(.*/)?") // any number of whole segments
			i += 2
		case strings.HasPrefix(p[i:], "**"):
			// Not a whole segment: the Linux matcher reads it as "*".
			t.b.WriteString("[^/]*")
			i++
		case c == '*':
			t.b.WriteString("[^/]*") // exact byte by byte: no UTF-8 sequence holds a '/'
		case c == '?':
			t.set(anyBut(nil), "? matches any one character, which may take several bytes")
		case c == '[':
			end := policy.ClassEnd(p[i+1:])
			if end < 0 {
				t.set(literalSet('[', t.fold), "")
				continue
			}
			t.class(p[i+1 : i+1+end])
			i += end + 1
		case c == '{':
			alts, end := braceAlternatives(p[i:])
			if end < 0 {
				t.set(literalSet('{', t.fold), "")
				continue
			}
			t.b.WriteString("(")
			for k, alt := range alts {
				if k > 0 {
					t.b.WriteString("|")
				}
				t.translate(alt)
			}
			t.b.WriteString(")")
			i += end
		case c == '\\' && i+1 < len(p):
			r, size := utf8.DecodeRuneInString(p[i+1:])
			t.set(literalSet(r, t.fold), "")
			i += size
		default:
			r, size := utf8.DecodeRuneInString(p[i:])
			t.set(literalSet(r, t.fold), "")
			i += size - 1
		}
	}
}

// class writes a glob class: the characters whose folded form is in it.
func (t *translator) class(class string) {
	negate := strings.HasPrefix(class, "!") || strings.HasPrefix(class, "^")
	if negate {
		class = class[1:]
	}
	if t.fold == foldLower {
		class = strings.ToLower(class)
	}
	s := classSet(policy.ClassRanges(class), t.fold)
	if negate {
		t.set(anyBut(&s), "a negated class matches one character of an unbounded set, which may take several bytes")
		return
	}
	t.set(s, "a class ranging past ASCII matches characters of several bytes that cannot be listed")
}

// set writes a position matching the characters of s; why is what makes s
// inexact when it is.
func (t *translator) set(s charSet, why string) {
	if s.unbounded {
		if t.exact {
			t.fail(why)
		}
		s.other = nil // the ASCII part: less, never more
	}
	ascii := s.asciiMembers()
	if i := slices.Index(ascii, '\\'); i >= 0 && len(ascii) > 1 {
		// POSIX reads a backslash in brackets as itself, Go as an
		// escape: it goes outside, as an alternative.
		ascii = slices.Delete(ascii, i, i+1)
		s.other = append([]string{`\\`}, s.other...)
	}
	switch {
	case len(ascii) == 0 && len(s.other) == 0:
		t.b.WriteString("()")
		t.err = &Unexpressible{Pattern: t.pattern, Why: "a class matches no character"}
	case len(s.other) == 0 && len(ascii) == 1:
		t.b.WriteString(regexp.QuoteMeta(string(ascii[0])))
	case len(s.other) == 0:
		t.b.WriteString(bracket(ascii))
	default:
		alts := mapList(s.other, func(r string) string { return r })
		if len(ascii) == 1 {
			alts = append([]string{regexp.QuoteMeta(string(ascii[0]))}, alts...)
		} else if len(ascii) > 1 {
			alts = append([]string{bracket(ascii)}, alts...)
		}
		t.b.WriteString("(" + strings.Join(alts, "|") + ")")
	}
}

// charSet is what one position of a pattern matches: ASCII characters,
// and other characters listed by their UTF-8 form, or unbounded when
// they cannot be listed.
type charSet struct {
	ascii     [128]bool
	other     []string
	unbounded bool
}

func (s *charSet) add(r rune) {
	if r < utf8.RuneSelf {
		s.ascii[r] = true
		return
	}
	if e := string(r); !slices.Contains(s.other, e) {
		s.other = append(s.other, e)
	}
}

func (s charSet) asciiMembers() []byte {
	var out []byte
	for c, in := range s.ascii {
		if in {
			out = append(out, byte(c))
		}
	}
	return out
}

// maxListed bounds the non-ASCII characters a class lists before it
// counts as unbounded.
const maxListed = 64

// literalSet is the characters a pattern character matches: itself, and
// with fold the ones the Linux matcher takes for it.
func literalSet(r rune, fold foldMode) charSet {
	var s charSet
	s.add(r)
	switch fold {
	case foldLower:
		l := unicode.ToLower(r)
		s.add(l)
		for _, x := range lowerInverse()[l] {
			s.add(x)
		}
	case foldEqual:
		// strings.EqualFold on a prefix of the pattern's length in
		// bytes: a form of another length never lines up.
		for x := unicode.SimpleFold(r); x != r; x = unicode.SimpleFold(x) {
			if utf8.RuneLen(x) == utf8.RuneLen(r) {
				s.add(x)
			}
		}
	}
	return s
}

// classSet is the characters a class (its ranges, lowered already for
// foldLower) matches.
func classSet(ranges [][2]rune, fold foldMode) charSet {
	var s charSet
	for _, rg := range ranges {
		if rg[1] >= utf8.RuneSelf && rg[1]-max(rg[0], utf8.RuneSelf) >= maxListed {
			s.unbounded = true
		}
		for c := rg[0]; c <= min(rg[1], rg[0]+0x7f+maxListed); c++ {
			switch fold {
			case foldNone:
				s.add(c)
			case foldLower:
				// c belongs when lower(c) is in the lowered class.
				if unicode.ToLower(c) == c {
					s.add(c)
				}
				for _, x := range lowerInverse()[c] {
					s.add(x)
				}
			case foldEqual:
				lit := literalSet(c, foldEqual)
				for a, in := range lit.ascii {
					if in {
						s.add(rune(a))
					}
				}
				for _, o := range lit.other {
					s.add([]rune(o)[0])
				}
			}
		}
	}
	if len(s.other) > maxListed {
		s.unbounded = true
	}
	return s
}

// anyBut is "any one character but '/' and the members of s": ASCII, and
// unbounded beyond it. Control characters are left out of the ASCII part,
// so it is exact only together with the refusal unbounded brings.
func anyBut(s *charSet) charSet {
	out := charSet{unbounded: true}
	for c := 0x20; c < 0x7f; c++ {
		if c != '/' && (s == nil || !s.ascii[c]) {
			out.ascii[c] = true
		}
	}
	return out
}

// lowerInverse maps each lower-case rune to the other runes that lower to
// it (unicode.ToLower), such as 'K' and the Kelvin sign for 'k'.
var lowerInverse = sync.OnceValue(func() map[rune][]rune {
	m := map[rune][]rune{}
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if l := unicode.ToLower(r); l != r {
			m[l] = append(m[l], r)
		}
	}
	return m
})

// bracket writes ASCII members as a POSIX bracket expression without a
// backslash: ']' first, '[' and '^' after the ranges, '-' last, so that no
// member reads as an operator ("[:" "[." "[=" cannot form: '[' is only
// ever followed by '^', '-' or the closing ']').
func bracket(members []byte) string {
	var b strings.Builder
	b.WriteString("[")
	has := func(c byte) bool { return slices.Contains(members, c) }
	if has(']') {
		b.WriteByte(']')
	}
	var plain []byte
	for _, c := range members {
		if !strings.ContainsRune(`][^-`, rune(c)) {
			plain = append(plain, c)
		}
	}
	for i := 0; i < len(plain); {
		j := i
		for j+1 < len(plain) && plain[j+1] == plain[j]+1 {
			j++
		}
		switch {
		case j-i >= 2:
			b.WriteString(string(plain[i]) + "-" + string(plain[j]))
		default:
			b.Write(plain[i : j+1])
		}
		i = j + 1
	}
	if has('[') {
		b.WriteByte('[')
	}
	if has('^') {
		if b.Len() == 1 {
			// '^' alone with '-' at most: '^' must not come first.
			if has('-') {
				return "[-^]"
			}
			return `\^`
		}
		b.WriteByte('^')
	}
	if has('-') {
		b.WriteByte('-')
	}
	b.WriteString("]")
	return b.String()
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

// literalRegex is an anchored regex matching the path p exactly (and,
// with subtree, what is below it), its case folded as mode says. A
// trailing slash is the directory's own ("/a/" is "/a"), and the root's
// subtree is every path.
func literalRegex(p string, fold foldMode, subtree bool) string {
	if trimmed := strings.TrimRight(p, "/"); trimmed != "" {
		p = trimmed
	} else if strings.HasPrefix(p, "/") {
		if subtree {
			return "^/.*$"
		}
		return "^/$"
	}
	t := &translator{fold: fold, pattern: p}
	t.b.WriteString("^")
	for _, r := range p {
		t.set(literalSet(r, fold), "")
	}
	if subtree {
		t.b.WriteString("(/.*)?")
	}
	t.b.WriteString("$")
	return t.b.String()
}

// foldRegex makes a regex of fence's own (ASCII, its brackets free of
// letters) ignore the case of its ASCII letters.
func foldRegex(re string) string {
	var b strings.Builder
	for i := 0; i < len(re); i++ {
		switch c := re[i]; {
		case c == '\\' && i+1 < len(re):
			b.WriteString(re[i : i+2])
			i++
		case c == '[':
			end := strings.IndexByte(re[i+1:], ']')
			b.WriteString(re[i : i+end+2])
			i += end + 1
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
			b.WriteString(bracket([]byte{c &^ 0x20, c | 0x20}))
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
