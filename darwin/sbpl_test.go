package darwin

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// A small reader for the SBPL the compiler writes: lists, atoms, strings
// ("…" with \" \\ \n \t \xHH escapes) and regex literals (#"…"), and a
// checker of what the profile must and must not hold.

type sexp struct {
	atom  string // an atom, or the value of a string or regex
	kind  byte   // 'a' atom, 's' string, 'r' regex, 'l' list
	items []sexp
}

// String writes the expression back, strings and regexes quoted as the
// compiler quotes them.
func (s sexp) String() string {
	switch s.kind {
	case 'l':
		return "(" + strings.Join(mapList(mapSexp(s.items), func(x string) string { return x }), " ") + ")"
	case 's':
		return sbplString(unescapeString(s.atom))
	case 'r':
		return `#"` + s.atom + `"`
	}
	return s.atom
}

func mapSexp(xs []sexp) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = x.String()
	}
	return out
}

// unescapeString undoes sbplString's escapes.
func unescapeString(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'x':
			var c byte
			fmt.Sscanf(s[i+1:i+3], "%02x", &c)
			b.WriteByte(c)
			i += 2
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
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

// ownComments are the comments the compiler writes, fence's own words
// each; ownWarning is the one that carries a count.
var ownComments = []string{
	"processes: run, fork, and signal or inspect only inside the sandbox",
	"sysctls: named entries only",
	"mach services",
	"semaphores (Python multiprocessing), preferences, shared memory of preferences and notifications, power state",
	"unix and system sockets: creating one grants nothing; the network rules below say where it may lead",
	"/dev: the essentials, the command's own terminals (job control, isatty), the descriptors",
	"reads",
	"writes, and unix sockets bound or reached below writable paths",
	"network: the proxies on the host's loopback, what the policy opens; unix sockets only as listed",
	"denies, each naming its rule, every specific operation allowed above, and the directories above it",
}

var ownWarning = regexp.MustCompile(`^warning: fence could not list the unix sockets of [0-9]+ writable tree\(s\) at start: they are closed to unix sockets \(the denies below\)$`)

// checkComments: every comment line is one of fence's own, so that no
// text from the disk or the environment reaches a comment (a newline in
// it would end the comment and start a rule), and a comment starts its
// line.
func checkComments(profile string) error {
	for i, line := range strings.Split(profile, "\n") {
		c := strings.IndexByte(line, ';')
		if c < 0 {
			continue
		}
		if strings.TrimSpace(line[:c]) != "" {
			if !strings.ContainsRune(line[:c], '"') {
				return fmt.Errorf("line %d: a comment after a form: %q", i+1, line)
			}
			continue // a ';' inside a string or a regex
		}
		text := strings.TrimPrefix(line[c+1:], " ")
		if !slices.Contains(ownComments, text) && !ownWarning.MatchString(text) {
			return fmt.Errorf("line %d: comment %q is not one of fence's own", i+1, text)
		}
	}
	return nil
}

// vocabulary is testdata/sbpl-vocabulary.txt: kind -> names.
var vocabulary = sync.OnceValue(func() map[string][]string {
	f, err := os.Open("testdata/sbpl-vocabulary.txt")
	if err != nil {
		panic(err)
	}
	defer f.Close()
	v := map[string][]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if kind, name, ok := strings.Cut(sc.Text(), "\t"); ok && !strings.HasPrefix(kind, "#") {
			v[kind] = append(v[kind], name)
		}
	}
	return v
})

func known(kind, name string) bool { return slices.Contains(vocabulary()[kind], name) }

// rule is a top-level allow or deny, read.
type rule struct {
	action  string
	ops     []string
	filters []sexp
	message string
}

// checkForms checks a profile's shape: (version 1) then (deny default);
// only allows and denies; every operation, filter and constant in the
// vocabulary; every regex in the dialect; every deny with a message; and
// the precedence rule: denies after every allow, each naming every
// specific operation of its wildcards' families that an allow grants.
func checkForms(forms []sexp) ([]rule, error) {
	if len(forms) < 2 || forms[0].String() != "(version 1)" {
		return nil, fmt.Errorf("the profile does not start with (version 1)")
	}
	if d := forms[1]; d.kind != 'l' || len(d.items) < 2 || d.items[0].atom != "deny" || d.items[1].atom != "default" {
		return nil, fmt.Errorf("the second form is not (deny default)")
	}
	var rules []rule
	for _, f := range forms[1:] {
		r, err := readRule(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		rules = append(rules, r)
	}
	return rules, checkPrecedence(rules)
}

func readRule(f sexp) (rule, error) {
	if f.kind != 'l' || len(f.items) < 2 {
		return rule{}, fmt.Errorf("not a rule")
	}
	r := rule{action: f.items[0].atom}
	if r.action != "allow" && r.action != "deny" {
		return r, fmt.Errorf("unknown action %q", r.action)
	}
	for _, it := range f.items[1:] {
		switch it.kind {
		case 'a':
			if !known("operation", it.atom) {
				return r, fmt.Errorf("operation %q is not in the vocabulary", it.atom)
			}
			r.ops = append(r.ops, it.atom)
		case 'l':
			if err := checkFilter(it); err != nil {
				return r, err
			}
			if it.items[0].atom == "with" {
				r.message = unescapeString(it.items[2].atom)
				continue
			}
			r.filters = append(r.filters, it)
		default:
			return r, fmt.Errorf("a bare string in a rule")
		}
	}
	if r.action == "deny" && !strings.HasPrefix(r.message, "fence") {
		return r, fmt.Errorf("a deny without a message naming its rule")
	}
	return r, nil
}

// checkFilter checks a filter and what it holds against the vocabulary
// and the regex dialect.
func checkFilter(f sexp) error {
	if len(f.items) == 0 || f.items[0].kind != 'a' || !known("filter", f.items[0].atom) {
		return fmt.Errorf("filter %s is not in the vocabulary", f)
	}
	name := f.items[0].atom
	for i, arg := range f.items[1:] {
		switch arg.kind {
		case 'a':
			number := strings.Trim(arg.atom, "0123456789") == ""
			if !number && !known("constant", name+" "+arg.atom) && !(i > 0 && name == "with") {
				return fmt.Errorf("%s %s is not in the vocabulary", name, arg.atom)
			}
		case 'r':
			if err := checkDialect(arg.atom); err != nil {
				return err
			}
		case 'l':
			if err := checkFilter(arg); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkDialect checks a regex literal against the dialect: anchored,
// valid, its brackets read alike by POSIX and Go and free of backslashes
// and non-ASCII bytes.
func checkDialect(lit string) error {
	re := unescapeRegex(lit)
	if !strings.HasPrefix(re, "^") || !strings.HasSuffix(re, "$") {
		return fmt.Errorf("regex %q is not anchored at both ends", re)
	}
	if _, err := regexp.Compile(re); err != nil {
		return fmt.Errorf("bad regex %q: %v", re, err)
	}
	if err := checkPOSIXBrackets(re); err != nil {
		return err
	}
	for _, b := range brackets(re) {
		if !isASCII(b) {
			return fmt.Errorf("bracket %q in %q holds a byte outside ASCII, which a byte-oriented engine reads apart", b, re)
		}
	}
	return nil
}

// unescapeRegex undoes sbplRegex's quoting: \" is a quote, the rest is
// the expression's own.
func unescapeRegex(lit string) string { return strings.ReplaceAll(lit, `\"`, `"`) }

func brackets(re string) []string {
	var out []string
	for i := 0; i < len(re); i++ {
		switch re[i] {
		case '\\':
			i++
		case '[':
			end, _, err := posixBracket(re[i:])
			if err != nil {
				return out
			}
			out = append(out, re[i:i+end+1])
			i += end
		}
	}
	return out
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// checkPrecedence: no allow after a deny (but deny default), and every
// deny naming a wildcard also names each specific operation of its
// family that an allow grants anywhere: Seatbelt lets a specific
// operation's allow stand against a wildcard's deny.
func checkPrecedence(rules []rule) error {
	allowed := map[string]bool{}
	for _, r := range rules {
		if r.action == "allow" {
			for _, op := range r.ops {
				allowed[op] = true
			}
		}
	}
	seenDeny := false
	for _, r := range rules[1:] {
		if r.action == "allow" && seenDeny {
			return fmt.Errorf("an allow after a deny could undo it: %v", r.ops)
		}
		if r.action != "deny" {
			continue
		}
		seenDeny = true
		for _, wc := range r.ops {
			family, ok := strings.CutSuffix(wc, "*")
			if !ok {
				continue
			}
			for op := range allowed {
				if op != wc && strings.HasPrefix(op, family) && !slices.Contains(r.ops, op) {
					return fmt.Errorf("deny %v names %s but not %s, which an allow grants: that allow would win", r.ops, wc, op)
				}
			}
		}
	}
	return nil
}

// filtersOf are the rendered filters of the rules with action that name
// op.
func filtersOf(rules []rule, action, op string) []string {
	var out []string
	for _, r := range rules {
		if r.action == action && (slices.Contains(r.ops, op) || op == "" && len(r.ops) == 0) {
			out = append(out, mapSexp(r.filters)...)
		}
	}
	return out
}

// allowsEverywhere reports whether an allow grants op with no filter.
func allowsEverywhere(rules []rule, op string) bool {
	return slices.ContainsFunc(rules, func(r rule) bool {
		return r.action == "allow" && len(r.filters) == 0 && slices.Contains(r.ops, op)
	})
}
