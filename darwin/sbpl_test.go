package darwin

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// A small reader for the SBPL the compiler writes: lists, atoms, strings
// ("…" with \" \\ \n \t \xHH escapes) and regex literals (#"…").

type sexp struct {
	atom  string // an atom, or the value of a string or regex
	kind  byte   // 'a' atom, 's' string, 'r' regex, 'l' list
	items []sexp
}

func parseSBPL(src string) ([]sexp, error) {
	r := &reader{src: src}
	var forms []sexp
	for {
		r.skip()
		if r.i >= len(r.src) {
			return forms, nil
		}
		f, err := r.read()
		if err != nil {
			return nil, err
		}
		forms = append(forms, f)
	}
}

type reader struct {
	src string
	i   int
}

func (r *reader) skip() {
	for r.i < len(r.src) {
		switch c := r.src[r.i]; {
		case c == ';':
			for r.i < len(r.src) && r.src[r.i] != '\n' {
				r.i++
			}
		case c == ' ' || c == '\n' || c == '\t':
			r.i++
		default:
			return
		}
	}
}

func (r *reader) read() (sexp, error) {
	r.skip()
	if r.i >= len(r.src) {
		return sexp{}, fmt.Errorf("unexpected end: unbalanced parentheses")
	}
	switch c := r.src[r.i]; {
	case c == '(':
		r.i++
		l := sexp{kind: 'l'}
		for {
			r.skip()
			if r.i >= len(r.src) {
				return sexp{}, fmt.Errorf("unclosed list")
			}
			if r.src[r.i] == ')' {
				r.i++
				return l, nil
			}
			item, err := r.read()
			if err != nil {
				return sexp{}, err
			}
			l.items = append(l.items, item)
		}
	case c == ')':
		return sexp{}, fmt.Errorf("unbalanced ) at %d", r.i)
	case c == '"':
		s, err := r.str()
		return sexp{kind: 's', atom: s}, err
	case strings.HasPrefix(r.src[r.i:], `#"`):
		r.i++
		s, err := r.str()
		return sexp{kind: 'r', atom: s}, err
	default:
		start := r.i
		for r.i < len(r.src) && !strings.ContainsRune(" \n\t()\"", rune(r.src[r.i])) {
			r.i++
		}
		return sexp{kind: 'a', atom: r.src[start:r.i]}, nil
	}
}

// str reads a quoted string, rejecting raw control characters and
// unknown escapes.
func (r *reader) str() (string, error) {
	r.i++ // the opening quote
	var b strings.Builder
	for r.i < len(r.src) {
		c := r.src[r.i]
		switch {
		case c == '"':
			r.i++
			return b.String(), nil
		case c < 0x20:
			return "", fmt.Errorf("raw control character %q in a string at %d", c, r.i)
		case c == '\\' && r.i+1 < len(r.src):
			e := r.src[r.i+1]
			if !strings.ContainsRune(`"\ntx.^$*+?()[]{}|/-`, rune(e)) {
				return "", fmt.Errorf("unknown escape \\%c at %d", e, r.i)
			}
			b.WriteByte('\\')
			b.WriteByte(e)
			r.i += 2
		default:
			b.WriteByte(c)
			r.i++
		}
	}
	return "", fmt.Errorf("unclosed string")
}

var (
	knownOps = []string{"default", "process-exec", "process-fork", "signal", "process-info*", "sysctl-read",
		"mach-lookup", "mach-register", "pseudo-tty", "file-read*", "file-read-data", "file-read-metadata",
		"file-write*", "file-write-data", "file-write-unlink", "file-ioctl", "network*", "network-outbound",
		"network-bind", "network-inbound"}
	knownFilters = []string{"literal", "subpath", "regex", "global-name", "global-name-prefix", "sysctl-name-prefix",
		"target", "remote", "local", "with", "path-regex"}
)

// checkForms checks the top-level forms of a profile.
func checkForms(forms []sexp) error {
	if len(forms) < 2 || forms[0].kind != 'l' || len(forms[0].items) != 2 || forms[0].items[0].atom != "version" {
		return fmt.Errorf("the profile does not start with (version 1)")
	}
	if d := forms[1]; d.kind != 'l' || d.items[0].atom != "deny" || d.items[1].atom != "default" {
		return fmt.Errorf("the second form is not (deny default)")
	}
	seenDeny := false
	for _, f := range forms[1:] {
		if f.kind != 'l' || len(f.items) < 2 {
			return fmt.Errorf("a form is not a rule")
		}
		action := f.items[0].atom
		if action != "allow" && action != "deny" {
			return fmt.Errorf("unknown action %q", action)
		}
		if action == "allow" && seenDeny {
			return fmt.Errorf("an allow after a deny could undo it")
		}
		hasMessage := false
		for _, it := range f.items[1:] {
			switch it.kind {
			case 'a':
				if !slices.Contains(knownOps, it.atom) {
					return fmt.Errorf("unknown operation %q", it.atom)
				}
			case 'l':
				name := it.items[0].atom
				if !slices.Contains(knownFilters, name) {
					return fmt.Errorf("unknown filter %q", name)
				}
				hasMessage = hasMessage || name == "with"
				if err := checkFilter(it); err != nil {
					return err
				}
			default:
				return fmt.Errorf("a bare string in a rule")
			}
		}
		if action == "deny" {
			seenDeny = f.items[1].atom != "default" || seenDeny
			if !hasMessage {
				return fmt.Errorf("a deny without a message")
			}
		}
	}
	return nil
}

func checkFilter(f sexp) error {
	for _, arg := range f.items[1:] {
		switch arg.kind {
		case 'r':
			if _, err := regexp.Compile(strings.ReplaceAll(arg.atom, `\"`, `"`)); err != nil {
				return fmt.Errorf("bad regex %q: %v", arg.atom, err)
			}
			if !strings.HasPrefix(arg.atom, "^") {
				return fmt.Errorf("regex %q is not anchored", arg.atom)
			}
		case 'l':
			if err := checkFilter(arg); err != nil {
				return err
			}
		}
	}
	return nil
}
