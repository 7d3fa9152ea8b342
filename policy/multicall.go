package policy

import (
	"path"
	"slices"
	"strings"
)

// One program's job can be asked for under several names, and a deny
// rule holds under each: git runs `git-push` (its dashed programs, as in
// /usr/lib/git-core) as `git push`, does a push's work through the
// plumbing `git send-pack`, and runs an alias set on its own command line
// (`git -c alias.x=push x`) as what it names; multi-call binaries
// (`coreutils --coreutils-prog=rm`, `toybox rm`; busybox is a wrapper of
// preflight's) run an applet by an argument. commandForms lists those
// forms of one argv, for DecideCommand to judge each.

// GitPlumbing maps git's plumbing commands to the porcelain whose job
// they do, so that a rule on the porcelain holds for them too.
var GitPlumbing = map[string]string{
	"send-pack":  "push", // what push runs over the git, ssh and file protocols
	"http-push":  "push", // push over the dumb HTTP protocol
	"fetch-pack": "fetch",
}

// gitValueOptions are git's global options that take the next argument
// as their value.
var gitValueOptions = map[string]bool{
	"-C": true, "-c": true, "--git-dir": true, "--work-tree": true, "--namespace": true,
	"--config-env": true, "--super-prefix": true, "--attr-source": true, "--list-cmds": true,
}

// commandForms returns the other forms of argv that name the same job
// (none for most commands), each starting with the program's name.
func commandForms(argv, gitSubs []string) [][]string {
	name := path.Base(argv[0])
	if sub, ok := strings.CutPrefix(name, "git-"); ok && sub != "" {
		argv = append([]string{"git", sub}, argv[1:]...)
		return append([][]string{argv}, gitForms(argv, gitSubs)...)
	}
	switch name {
	case "git":
		return gitForms(argv, gitSubs)
	case "coreutils": // a multi-call build: coreutils --coreutils-prog=rm ARGS
		if len(argv) > 1 {
			if prog, ok := strings.CutPrefix(argv[1], "--coreutils-prog="); ok && prog != "" {
				return [][]string{append([]string{prog}, argv[2:]...)}
			}
		}
	case "toybox": // toybox NAME ARGS, as busybox
		if len(argv) > 1 && !strings.HasPrefix(argv[1], "-") {
			return [][]string{argv[1:]}
		}
	}
	return nil
}

// gitForms are the forms of a git command line whose subcommand is an
// alias it defines (followed as git does, through aliases of aliases),
// a plumbing command, or, with help.autocorrect set on the line, a typo
// git would correct to a subcommand of subs (the rules' own).
func gitForms(argv []string, subs []string) [][]string {
	i, cfg := gitSubcommand(argv)
	if i < 0 {
		return nil
	}
	var out [][]string
	head, sub, rest := argv[:i], argv[i], argv[i+1:]
	for range 8 { // git refuses a loop of aliases; fence stops looking
		value, ok := cfg.aliases[strings.ToLower(sub)]
		if !ok {
			break
		}
		if shell, ok := strings.CutPrefix(value, "!"); ok {
			out = append(out, shellForms(splitCmdline(shell), rest)...)
			break
		}
		words := splitCmdline(value)
		if len(words) == 0 {
			break
		}
		rest = append(words[1:], rest...)
		sub = words[0]
		out = append(out, slices.Concat(head, []string{sub}, rest))
	}
	if porcelain, ok := GitPlumbing[sub]; ok {
		out = append(out, slices.Concat(head, []string{porcelain}, rest))
	}
	if cfg.autocorrect {
		for _, s := range subs {
			if s != sub && editDistance(sub, s) <= 2 {
				out = append(out, slices.Concat(head, []string{s}, rest))
			}
		}
	}
	return out
}

// shellForms are the commands a "!" alias runs: its words, and the
// string of a `sh -c` in them, with a leading env and its assignments
// taken off (preflight unwraps the rest).
func shellForms(words, rest []string) [][]string {
	for len(words) > 0 && (path.Base(words[0]) == "env" || strings.Contains(words[0], "=") && !strings.HasPrefix(words[0], "-")) {
		words = words[1:]
	}
	if len(words) == 0 {
		return nil
	}
	out := [][]string{append(slices.Clone(words), rest...)}
	if len(words) > 2 && slices.Contains([]string{"sh", "bash", "dash", "zsh"}, path.Base(words[0])) && words[1] == "-c" {
		out = append(out, shellForms(splitCmdline(words[2]), nil)...)
	}
	return out
}

// gitConfig is what a git command line's -c options set that decides
// which command runs.
type gitConfig struct {
	aliases     map[string]string // by lower-case name, as git's config keys
	autocorrect bool              // help.autocorrect runs a corrected typo
}

// gitSubcommand finds the subcommand of a git command line past its
// global options, and what its -c options set; -1 when there is none.
func gitSubcommand(argv []string) (int, gitConfig) {
	cfg := gitConfig{aliases: map[string]string{}}
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		if !strings.HasPrefix(a, "-") {
			return i, cfg
		}
		if !gitValueOptions[a] || i+1 >= len(argv) {
			continue
		}
		i++
		key, value, ok := strings.Cut(argv[i], "=")
		if !ok || a != "-c" {
			continue
		}
		switch key = strings.ToLower(key); {
		case strings.HasPrefix(key, "alias."):
			cfg.aliases[key[len("alias."):]] = value
		case key == "help.autocorrect":
			cfg.autocorrect = !slices.Contains([]string{"0", "false", "no", "off", "never", "show"}, strings.ToLower(value))
		}
	}
	return -1, cfg
}

// splitCmdline splits an alias value as git does: at blanks, with
// single and double quotes and backslashes.
func splitCmdline(s string) []string {
	var out []string
	var b strings.Builder
	inWord, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote == 0 && (c == '\'' || c == '"'):
			quote, inWord = c, true
		case c == '\\' && quote != '\'' && i+1 < len(s):
			i++
			b.WriteByte(s[i])
			inWord = true
		case quote == 0 && (c == ' ' || c == '\t' || c == '\n'):
			if inWord {
				out, inWord = append(out, b.String()), false
				b.Reset()
			}
		default:
			b.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		out = append(out, b.String())
	}
	return out
}

// plumbingFor lists the plumbing commands that do the porcelain
// command's job, sorted.
func plumbingFor(porcelain string) []string {
	var out []string
	for plumbing, p := range GitPlumbing {
		if p == porcelain {
			out = append(out, plumbing)
		}
	}
	slices.Sort(out)
	return out
}
