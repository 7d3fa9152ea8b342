package policy

import (
	"path"
	"slices"
	"strings"
)

// DefaultCommandDeny is the builtin deny list (command.useDefaults).
var DefaultCommandDeny = []string{
	"shutdown", "reboot", "halt", "poweroff", "init 0", "init 6",
	"systemctl poweroff", "systemctl reboot", "systemctl halt",
	"insmod", "rmmod", "modprobe", "kexec", "mkfs", "mkfs.*", "fdisk", "parted",
	"dd if=", "docker run --privileged", "docker run -v /:/",
	"chroot", "unshare", "nsenter",
}

// CommandRule is one command rule: a token prefix, as written.
type CommandRule struct {
	Text   string   `json:"rule"`
	Tokens []string `json:"-"`
	Origin string   `json:"origin"` // where it was written
	// Builtin marks the builtin defaults: commands that cannot work in
	// the sandbox anyway (no capabilities, seccomp).
	Builtin bool `json:"builtin,omitempty"`
	// Firm marks a deny given as a policy flag: no command.allow lifts it.
	Firm bool   `json:"firm,omitempty"`
	glob []bool // which tokens hold glob characters
}

// IsGlob reports whether token k of the rule is a glob.
func (r *CommandRule) IsGlob(k int) bool { return r.glob[k] }

// CommandDecision is the verdict on one simple command.
type CommandDecision struct {
	Allowed bool
	Rule    *CommandRule // the deny rule that blocked, or the allow rule that let through
}

func commandRules(texts []string, origin func(string) string) []CommandRule {
	var out []CommandRule // nil for none, as a plan read back has it
	for _, t := range texts {
		out = append(out, compileCommandRule(t, origin(t)))
	}
	return out
}

// compileCommandRule is the rule text, split into its tokens.
func compileCommandRule(text, origin string) CommandRule {
	r := CommandRule{Text: text, Tokens: strings.Fields(text), Origin: origin}
	for _, tok := range r.Tokens {
		r.glob = append(r.glob, strings.ContainsAny(tok, "*?["))
	}
	return r
}

// DecideCommand judges one simple command's argv (after wrappers are
// unwrapped): a deny rule that matches blocks it, unless an allow rule
// that is more specific than that deny rule also matches.
func (p *Policy) DecideCommand(argv []string) CommandDecision {
	if len(argv) == 0 {
		return CommandDecision{Allowed: true}
	}
	if d := p.decideForm(argv); !d.Allowed {
		return d
	}
	for _, form := range commandForms(argv, p.gitSubcommands()) {
		if d := p.decideForm(form); !d.Allowed {
			return d
		}
	}
	return CommandDecision{Allowed: true}
}

// gitSubcommands are the subcommands git deny rules name.
func (p *Policy) gitSubcommands() []string {
	var out []string
	for _, r := range p.CommandDeny {
		if len(r.Tokens) > 1 && r.Tokens[0] == "git" && !strings.HasPrefix(r.Tokens[1], "-") && !slices.Contains(out, r.Tokens[1]) {
			out = append(out, r.Tokens[1])
		}
	}
	return out
}

// decideForm judges one form of a command (see commandForms).
func (p *Policy) decideForm(argv []string) CommandDecision {
	if len(argv) == 0 {
		return CommandDecision{Allowed: true}
	}
	name := path.Base(argv[0])
	exact, globs := p.denyIndex.byName[name], p.denyIndex.globs
	for len(exact) > 0 || len(globs) > 0 {
		var i int
		i, exact, globs = nextCandidate(exact, globs)
		deny := &p.CommandDeny[i]
		if !deny.match(name, argv[1:]) {
			continue
		}
		if deny.Firm {
			return CommandDecision{Rule: deny}
		}
		for j := range p.CommandAllow {
			allow := &p.CommandAllow[j]
			if moreSpecific(allow.Tokens, deny.Tokens) && allow.match(name, argv[1:]) {
				return CommandDecision{Allowed: true, Rule: allow}
			}
		}
		return CommandDecision{Rule: deny}
	}
	return CommandDecision{Allowed: true}
}

// commandIndex finds the deny rules that can match a command name
// without trying them all: by exact name, plus the glob rules.
type commandIndex struct {
	byName map[string][]int
	globs  []int
	// needles are each rule's ruleNeedles, in rule order.
	needles [][]Needle
}

func newCommandIndex(rules []CommandRule) commandIndex {
	ix := commandIndex{byName: map[string][]int{}}
	for i, r := range rules {
		if r.glob[0] {
			ix.globs = append(ix.globs, i)
		} else {
			ix.byName[r.Tokens[0]] = append(ix.byName[r.Tokens[0]], i)
		}
		ix.needles = append(ix.needles, ruleNeedles(r))
	}
	return ix
}

// Needle is text that every command line a deny rule can match shows,
// once its quotes and backslashes are taken away.
type Needle struct {
	Text string
	// Word says the text stands as a word of its own there: not glued to
	// letters, digits or '_'.
	Word bool
	// Or are other words that stand for the text (git's send-pack for
	// push): any of them found is the needle found.
	Or []string
}

// DenyNeedles calls yield with the needles of each deny rule (a rule
// whose needles are not all in a command line cannot match any simple
// command in it), and, once the ssh section says anything, with the
// names its rules are about, one at a time.
func (p *Policy) DenyNeedles(yield func(needles []Needle) bool) {
	for _, n := range p.denyIndex.needles {
		if !yield(n) {
			return
		}
	}
	if p.SSH.Enabled {
		for _, n := range []string{"ssh", "git"} {
			if !yield([]Needle{{Text: n, Word: true}}) {
				return
			}
		}
	}
}

// ruleNeedles is what a command must show for r to match it: its name
// (or a glob's literal start), each later word the rule needs, and each
// option or "key=" it needs somewhere. Like the text they are looked for
// in, they are taken without quotes and backslashes (a word can hold
// them only quoted or escaped).
func ruleNeedles(r CommandRule) []Needle {
	var out []Needle
	for k, t := range r.Tokens {
		n := Needle{Text: t, Word: true}
		if k == 1 && r.Tokens[0] == "git" {
			// git send-pack is git push too, without the word, and so is a
			// typo help.autocorrect corrects.
			n.Or = append(plumbingFor(t), "autocorrect")
		}
		switch {
		case r.glob[k]:
			n = Needle{Text: t[:strings.IndexAny(t, "*?[")]}
		case k > 0 && (strings.HasSuffix(t, "=") || strings.HasPrefix(t, "-")):
			n.Word = false
			if strings.HasPrefix(t, "--") && !strings.HasSuffix(t, "=") && len(t) > 3 {
				n.Text = t[:3] // --har stands for --hard (see longPrefix)
			}
		}
		if n.Text = strings.Map(dropQuoting, n.Text); n.Text != "" {
			out = append(out, n)
		}
	}
	return out
}

// dropQuoting drops the characters a shell takes as quoting.
func dropQuoting(r rune) rune {
	if r == '\'' || r == '"' || r == '\\' || r == 0 {
		return -1
	}
	return r
}

// nextCandidate pops, in rule order, the next deny rule from the rules
// of a command name and the glob rules.
func nextCandidate(exact, globs []int) (i int, restExact, restGlobs []int) {
	if len(globs) == 0 || len(exact) > 0 && exact[0] < globs[0] {
		return exact[0], exact[1:], globs
	}
	return globs[0], exact, globs[1:]
}

// CommandNamed reports whether some deny rule is about the command name,
// so that its arguments matter.
func (p *Policy) CommandNamed(name string) bool {
	base := path.Base(name)
	if strings.HasPrefix(base, "git-") {
		base = "git" // git's dashed programs (see commandForms)
	}
	exact, globs := p.denyIndex.byName[base], p.denyIndex.globs
	for len(exact) > 0 || len(globs) > 0 {
		var i int
		i, exact, globs = nextCandidate(exact, globs)
		if p.CommandDeny[i].tokenMatch(0, base) {
			return true
		}
	}
	return false
}

// moreSpecific reports whether allow extends deny: deny's tokens are a
// prefix of allow's, and allow has more.
func moreSpecific(allow, deny []string) bool {
	if len(allow) <= len(deny) {
		return false
	}
	for i := range deny {
		if allow[i] != deny[i] {
			return false
		}
	}
	return true
}

// match reports whether the rule matches a command. The first token is
// the command's name (any directory is ignored; "mkfs.*" globs). After
// it, a word must come next among the arguments, skipping options placed
// before it and their values (`git -C dir push` is `git push`); an
// option in a rule (--privileged, or a glob such as -[rR]* that must
// match a whole argument) or a token ending in "=" (if=) only needs to
// appear somewhere after the command's name.
func (r *CommandRule) match(name string, args []string) bool {
	if len(r.Tokens) == 0 || !r.tokenMatch(0, name) {
		return false
	}
	rest := args
	for i, t := range r.Tokens[1:] {
		switch {
		case strings.HasSuffix(t, "=") || strings.HasPrefix(t, "-"):
			if !r.present(i+1, args) {
				return false
			}
		default:
			j, ok := r.nextWord(i+1, rest)
			if !ok {
				return false
			}
			rest = rest[j+1:]
		}
	}
	return true
}

// present reports whether token k appears among args: "if=" as a
// prefix, "--opt" itself or as "--opt=value", and a glob ("-[rR]*", a
// cluster of short options that starts with r) as a whole argument it
// matches.
func (r *CommandRule) present(k int, args []string) bool {
	t := r.Tokens[k]
	for _, a := range args {
		if r.glob[k] && r.tokenMatch(k, a) {
			return true
		}
		if strings.HasSuffix(t, "=") && strings.HasPrefix(a, t) || a == t || strings.HasPrefix(a, t+"=") || longPrefix(t, a) {
			return true
		}
	}
	return false
}

// longPrefix reports whether a abbreviates the long option t: git and
// getopt_long take any unambiguous start of a long option (--har for
// --hard, --recu for --recursive), with or without =value. A start that
// is ambiguous to the program fails there, so taking every start of at
// least one letter only refuses what would not run anyway.
func longPrefix(t, a string) bool {
	if !strings.HasPrefix(t, "--") || strings.HasSuffix(t, "=") {
		return false
	}
	a, _, _ = strings.Cut(a, "=")
	return len(a) > 2 && len(a) < len(t) && strings.HasPrefix(t, a)
}

// nextWord finds token k as the next non-option argument, letting each
// option take the argument after it as its value when that is not the
// token.
func (r *CommandRule) nextWord(k int, args []string) (int, bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "-") && a != "-" {
			if !strings.Contains(a, "=") && i+1 < len(args) && !r.tokenMatch(k, args[i+1]) && !strings.HasPrefix(args[i+1], "-") {
				i++ // the option's value
			}
			continue
		}
		return i, r.tokenMatch(k, a)
	}
	return 0, false
}

func (r *CommandRule) tokenMatch(k int, s string) bool {
	if !r.glob[k] {
		return r.Tokens[k] == s
	}
	ok, _ := path.Match(r.Tokens[k], s)
	return ok
}
