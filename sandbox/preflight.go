package sandbox

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"

	"github.com/fence-sandbox/fence/policy"
)

// Verdict is preflight's judgement of a command line.
type Verdict struct {
	Blocked bool
	Command string              // the simple command that decided, as written
	Rule    *policy.CommandRule // the rule that blocked it, if a rule did
	Dynamic string              // what preflight could not see through, if that decided
	Reason  string              // any other reason (ssh rules)
}

// Message says what was blocked and why, in one line without the
// "fence: " prefix.
func (v Verdict) Message() string {
	if v.Rule != nil {
		where := ""
		if v.Rule.Origin != "" {
			where = " (" + v.Rule.Origin + ")"
		}
		return fmt.Sprintf("blocked %q: matches command.deny %q%s", v.Command, v.Rule.Text, where)
	}
	if v.Reason != "" {
		return fmt.Sprintf("blocked %q: %s", v.Command, v.Reason)
	}
	return fmt.Sprintf("blocked %q: preflight cannot see what it runs (%s), and command.dynamic is \"deny\"", v.Command, v.Dynamic)
}

// maxNesting bounds shells inside shells (bash -c "sh -c '…'").
const maxNesting = 8

// PreflightShell judges every simple command in a shell string: lists,
// pipelines, subshells, command and process substitutions, function and
// compound-command bodies, nested `bash -c` and literal `eval` strings,
// and the commands behind wrappers such as env, sudo, nice or xargs.
func PreflightShell(p *policy.Policy, src string) Verdict {
	f := &preflight{pol: p, parser: parsers.Get().(*syntax.Parser), cachePaths: true}
	defer parsers.Put(f.parser)
	return f.shell(src, lazyText{text: src}, 0)
}

// parsers keeps bash parsers for reuse: one is a few kilobytes to set up,
// and an agent's shell runs preflight on every command.
var parsers = sync.Pool{New: func() any { return syntax.NewParser(syntax.Variant(syntax.LangBash)) }}

// mayDeny reports whether some deny rule could match a simple command
// in src: src, with quotes and backslashes removed, holds every needle
// of the rule. A word of a command is there whole in that text, between
// characters that cannot be part of a name.
func mayDeny(p *policy.Policy, src string) bool { return mayDenyCached(p, src, true) }

// mayDenyCached is mayDeny, keeping what the paths in src are for the
// run when cache is set.
func mayDenyCached(p *policy.Policy, src string, cache bool) bool {
	text := unquoted(src)
	if containsWord(text, "env") && strings.Contains(text, "-S") {
		return true // env -Sgit glues a command's name to the option
	}
	if strings.Contains(src, "$'") && strings.ContainsRune(src, '\\') {
		return true // $'\x67it' spells a name in escapes
	}
	if !mayDenyByName(p, text) {
		// Another name of a denied program, or a path to one (see
		// identity.go).
		return programsFor(p, processDirs()).identityInText(p, text, cache)
	}
	return true
}

func mayDenyByName(p *policy.Policy, text string) bool {
	found := false
	p.DenyNeedles(func(needles []policy.Needle) bool {
		found = !slices.ContainsFunc(needles, func(n policy.Needle) bool {
			return !needleIn(n, text)
		})
		return !found
	})
	return found
}

// needleIn reports whether n, or one of the words that stand for it, is
// in text.
func needleIn(n policy.Needle, text string) bool {
	if !n.Word {
		return strings.Contains(text, n.Text)
	}
	return containsWord(text, n.Text) || slices.ContainsFunc(n.Or, func(w string) bool { return containsWord(text, w) })
}

// unquoted is src without quote characters, backslashes and escaped
// newlines: what the names in it can spell, however they are quoted.
func unquoted(src string) string {
	if !strings.ContainsAny(src, "'\"\\\x00") {
		return src
	}
	b := make([]byte, 0, len(src))
	for i := 0; i < len(src); i++ {
		switch c := src[i]; c {
		case '\\':
			if i+1 < len(src) && src[i+1] == '\n' {
				i++
			}
		case '\'', '"', 0:
		default:
			b = append(b, c)
		}
	}
	return string(b)
}

// containsWord reports whether name appears in text not glued to other
// word characters (ASCII letters, digits, underscore). Anything else
// counts as a boundary, which can only make preflight parse more often.
func containsWord(text, name string) bool {
	return policy.ContainsBounded(text, name, func(c byte) bool { return !wordChar(c) })
}

func wordChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// PreflightArgv judges a command given as argv (fence -- cmd args).
func PreflightArgv(p *policy.Policy, argv []string) Verdict {
	text := lazyText{text: strings.Join(argv, " ")}
	words := make([]word, len(argv))
	for i, a := range argv {
		words[i] = word{text: a, literal: true}
	}
	return (&preflight{pol: p}).check(words, text, 0)
}

type preflight struct {
	pol    *policy.Policy
	parser *syntax.Parser
	// remote is set while judging an ssh remote command: ssh's command
	// rules apply, and command.deny only with ssh.inheritDeny.
	remote *policy.SSHPolicy
	// unscreened parses every string, even one the text screen (mayDeny)
	// would pass: the reference the screen is tested against.
	unscreened bool
	argv       []string // scratch space for check
	// words holds the words of the command being judged, one buffer per
	// shell nesting depth, reused from command to command.
	words [maxNesting + 1][]word
	// programs are the denied programs by identity, found when first
	// needed; cachePaths keeps what a path is for the rest of the run
	// (argv mode, which sees the files the command makes, asks afresh).
	programs   *programs
	cachePaths bool
	// gitEnv are the GIT_CONFIG_* variables the line sets (literal
	// values): git reads configuration from them, aliases included.
	gitEnv map[string]string
}

// word is one argument: its value when it is literal.
type word struct {
	text    string
	literal bool
}

// lazyText is the text of a command, printed only when a verdict needs
// it: the parsed words, or a string given as such.
type lazyText struct {
	words []*syntax.Word
	text  string
}

func (t lazyText) String() string {
	if t.words != nil {
		return printWords(t.words)
	}
	return t.text
}

func (f *preflight) dynamic(command lazyText, why string) Verdict {
	if f.pol.CommandDynamic == "deny" {
		return Verdict{Blocked: true, Command: command.String(), Dynamic: why}
	}
	return Verdict{}
}

func (f *preflight) shell(src string, context lazyText, depth int) Verdict {
	if depth > maxNesting {
		return f.dynamic(context, "shells nested too deep")
	}
	// (A line that set git's configuration in the environment is parsed
	// whole: an alias there spells the rule's words elsewhere.)
	if !f.unscreened && len(f.gitEnv) == 0 && f.remote == nil && f.pol.CommandDynamic != "deny" && !mayDenyCached(f.pol, src, f.cachePaths) {
		// No deny rule finds all the words it needs in the text, even with
		// quotes and escapes taken away; what the parser could still find
		// would be built at run time, which command.dynamic "allow" lets
		// through.
		return Verdict{}
	}
	if f.parser == nil {
		f.parser = syntax.NewParser(syntax.Variant(syntax.LangBash))
	}
	file, err := f.parser.Parse(strings.NewReader(src), "")
	if err != nil {
		return f.dynamic(context, "the shell parser cannot read it: "+err.Error())
	}
	var v Verdict
	syntax.Walk(file, func(n syntax.Node) bool {
		if w, ok := n.(*syntax.Word); ok {
			return !v.Blocked && !plainWord(w) // nothing runs inside a plain word
		}
		if d, ok := n.(*syntax.DeclClause); ok {
			f.noteGitEnv(d.Args) // export GIT_CONFIG_KEY_0=...
		}
		call, ok := n.(*syntax.CallExpr)
		if ok {
			f.noteGitEnv(call.Assigns)
		}
		if v.Blocked || !ok || len(call.Args) == 0 {
			return !v.Blocked
		}
		words := f.words[depth][:0]
		for _, w := range call.Args {
			words = append(words, literalWord(w))
		}
		f.words[depth] = words
		v = f.check(words, lazyText{words: call.Args}, depth)
		return !v.Blocked
	})
	return v
}

// check judges one simple command, then what it runs.
func (f *preflight) check(words []word, text lazyText, depth int) Verdict {
	if len(words) == 0 {
		return Verdict{}
	}
	if !words[0].literal || strings.ContainsAny(words[0].text, "*?[") {
		return f.dynamic(text, "a command name built at run time")
	}
	// argv is only needed here, so one buffer serves every command.
	argv := f.argv[:0]
	dynamicArgs := false
	for _, w := range words {
		if !w.literal {
			argv, dynamicArgs = append(argv, "\x00"), true
			continue
		}
		argv = append(argv, w.text)
	}
	if len(f.gitEnv) > 0 && path.Base(argv[0]) == "git" {
		argv = gitEnvOptions(argv, f.gitEnv)
	}
	f.argv = argv
	if v, ok := f.identity(argv, text); ok {
		return v
	}
	if f.remote != nil {
		if denied, reason := f.remote.SSHCommandDenied(argv); denied {
			return Verdict{Blocked: true, Command: text.String(), Reason: reason}
		}
	}
	if f.remote == nil || f.remote.InheritDeny {
		if d := f.pol.DecideCommand(argv); !d.Allowed {
			return Verdict{Blocked: true, Command: text.String(), Rule: d.Rule}
		}
	}
	if f.remote != nil {
		if ok, reason := f.remote.SSHCommandAllowed(argv); !ok {
			return Verdict{Blocked: true, Command: text.String(), Reason: reason}
		}
	}
	if dynamicArgs && f.pol.CommandNamed(argv[0]) {
		if v := f.dynamic(text, "arguments built at run time"); v.Blocked {
			return v
		}
	}
	return f.inner(words, text, depth)
}

// identity judges argv[0] by what it is (see identity.go): a program a
// deny rule names, under another name or a path, stands for that name in
// argv. It fails closed when the programs could not all be found.
func (f *preflight) identity(argv []string, text lazyText) (Verdict, bool) {
	if len(f.pol.CommandDeny) == 0 || f.remote != nil {
		return Verdict{}, false
	}
	if f.programs == nil {
		f.programs = programsFor(f.pol, processDirs())
	}
	if f.programs.err != nil {
		return Verdict{Blocked: true, Command: text.String(), Reason: f.programs.err.Error()}, true
	}
	if name := f.programs.identityName(f.pol, argv[0], f.cachePaths); name != "" {
		argv[0] = name
	}
	return Verdict{}, false
}

// inner judges what a command runs: the command behind a wrapper, the
// string of a nested shell or of eval, the command of find -exec.
func (f *preflight) inner(words []word, text lazyText, depth int) Verdict {
	name := path.Base(words[0].text)
	switch {
	case slices.Contains(shells, name):
		script, ok := shellScript(words[1:])
		if !ok {
			return Verdict{}
		}
		if !script.literal {
			return f.dynamic(text, "a shell string built at run time")
		}
		if v := f.shell(script.text, text, depth+1); v.Blocked || name == "bash" {
			return v
		}
		return shellSpecific(f.pol, script.text, shellFamilies[name])
	case slices.Contains(foreignShells, name):
		if _, ok := shellScript(words[1:]); ok {
			return f.dynamic(text, "a "+name+" -c string, whose syntax preflight does not read")
		}
		return Verdict{}
	case name == "eval":
		src, ok := joinLiteral(words[1:])
		if !ok {
			return f.dynamic(text, "eval of a string built at run time")
		}
		return f.shell(src, text, depth+1)
	case name == "find":
		return f.findExec(words[1:], text, depth)
	case name == "ssh":
		return f.ssh(words[1:], text, depth)
	case name == "git":
		return f.gitRemotes(words[1:], text)
	case name == "fence":
		return f.fence(words[1:], text, depth)
	case name == "flock":
		return f.flock(words[1:], text, depth)
	case name == "script":
		return f.script(words[1:], text, depth)
	}
	if skip, ok := wrappers[name]; ok {
		return f.check(skip(words[1:]), text, depth)
	}
	return Verdict{}
}

// findExec judges the commands of find's -exec, -execdir, -ok, -okdir.
func (f *preflight) findExec(args []word, text lazyText, depth int) Verdict {
	for i := 0; i < len(args); i++ {
		switch args[i].text {
		case "-exec", "-execdir", "-ok", "-okdir":
			end := slices.IndexFunc(args[i+1:], func(w word) bool { return w.text == ";" || w.text == "+" })
			if end < 0 {
				end = len(args) - i - 1
			}
			if v := f.check(args[i+1:i+1+end], text, depth); v.Blocked {
				return v
			}
			i += end
		}
	}
	return Verdict{}
}

var shells = []string{"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash"}

// foreignShells are shells whose syntax is not bash's: their -c string
// is something preflight cannot see through.
var foreignShells = []string{"fish", "csh", "tcsh", "nu", "elvish", "xonsh", "rc"}

// shellScript finds the string a shell runs with -c: the first operand
// after the options, when an option holds the letter c.
func shellScript(args []word) (word, bool) {
	hasC := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case !a.literal:
			return a, hasC
		case a.text == "-o" || a.text == "+o":
			i++ // -o pipefail
		case strings.HasPrefix(a.text, "--") || strings.HasPrefix(a.text, "+"):
			continue
		case strings.HasPrefix(a.text, "-") && len(a.text) > 1:
			hasC = hasC || strings.Contains(a.text[1:], "c")
		default:
			return a, hasC
		}
	}
	return word{}, false
}

func joinLiteral(ws []word) (string, bool) {
	parts := make([]string, len(ws))
	for i, w := range ws {
		if !w.literal {
			return "", false
		}
		parts[i] = w.text
	}
	return strings.Join(parts, " "), true
}

// plainWord reports whether w is only unquoted and single-quoted text,
// in which no command can hide.
func plainWord(w *syntax.Word) bool {
	for _, part := range w.Parts {
		switch part.(type) {
		case *syntax.Lit, *syntax.SglQuoted:
		default:
			return false
		}
	}
	return true
}

// literalWord is the value of w when it does not depend on run time:
// plain text, quotes and escapes, but no expansions, substitutions or
// brace alternatives.
func literalWord(w *syntax.Word) word {
	if len(w.Parts) == 1 {
		// The common case, one plain or single-quoted part: no copy.
		switch x := w.Parts[0].(type) {
		case *syntax.Lit:
			if !braceExpansion(x.Value) && !strings.ContainsRune(x.Value, '\\') {
				return word{text: x.Value, literal: true}
			}
		case *syntax.SglQuoted:
			if !x.Dollar {
				return word{text: x.Value, literal: true}
			}
			if text, ok := decodeANSIC(x.Value); ok {
				return word{text: text, literal: true}
			}
		}
	}
	var b strings.Builder
	for _, part := range w.Parts {
		switch x := part.(type) {
		case *syntax.Lit:
			if braceExpansion(x.Value) {
				return word{text: x.Value}
			}
			b.WriteString(unescape(x.Value))
		case *syntax.SglQuoted:
			text, ok := x.Value, true
			if x.Dollar {
				text, ok = decodeANSIC(x.Value)
			}
			if !ok {
				return word{text: x.Value}
			}
			b.WriteString(text)
		case *syntax.DblQuoted:
			for _, p := range x.Parts {
				lit, ok := p.(*syntax.Lit)
				if !ok {
					return word{}
				}
				b.WriteString(unescapeQuoted(lit.Value))
			}
		default:
			return word{}
		}
	}
	return word{text: b.String(), literal: true}
}

// braceExpansion reports whether an unquoted word holds {a,b} or {1..3},
// which the shell turns into other words.
func braceExpansion(s string) bool {
	open := strings.IndexByte(s, '{')
	if open < 0 {
		return false
	}
	body, _, ok := strings.Cut(s[open+1:], "}")
	return ok && (strings.Contains(body, ",") || strings.Contains(body, ".."))
}

// unescape removes the backslashes of an unquoted word.
func unescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unescapeQuoted removes the backslashes that mean something inside
// double quotes.
func unescapeQuoted(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func printWords(ws []*syntax.Word) string {
	var b strings.Builder
	p := syntax.NewPrinter()
	for i, w := range ws {
		if i > 0 {
			b.WriteByte(' ')
		}
		p.Print(&b, w)
	}
	return b.String()
}

// noteGitEnv records the GIT_CONFIG_* variables assigned with literal
// values (a value built at run time is the dynamic rule's business).
func (f *preflight) noteGitEnv(assigns []*syntax.Assign) {
	for _, a := range assigns {
		if a.Name == nil || a.Value == nil || !strings.HasPrefix(a.Name.Value, "GIT_CONFIG_") {
			continue
		}
		if w := literalWord(a.Value); w.literal {
			if f.gitEnv == nil {
				f.gitEnv = map[string]string{}
			}
			f.gitEnv[a.Name.Value] = w.text
		}
	}
}

// gitEnvOptions puts the configuration that GIT_CONFIG_KEY_N and
// GIT_CONFIG_VALUE_N set before a git command's arguments as the -c
// options git takes them for.
func gitEnvOptions(argv []string, env map[string]string) []string {
	out := []string{argv[0]}
	for name, key := range env {
		n, ok := strings.CutPrefix(name, "GIT_CONFIG_KEY_")
		if !ok {
			continue
		}
		if value, ok := env["GIT_CONFIG_VALUE_"+n]; ok {
			out = append(out, "-c", key+"="+value)
		}
	}
	return append(out, argv[1:]...)
}
