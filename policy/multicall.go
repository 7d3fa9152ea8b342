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
func commandForms(argv []string) [][]string {
	name := path.Base(argv[0])
	if sub, ok := strings.CutPrefix(name, "git-"); ok && sub != "" {
		argv = append([]string{"git", sub}, argv[1:]...)
		return append([][]string{argv}, gitForms(argv)...)
	}
	switch name {
	case "git":
		return gitForms(argv)
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
// alias it defines or a plumbing command.
func gitForms(argv []string) [][]string {
	i, aliases := gitSubcommand(argv)
	if i < 0 {
		return nil
	}
	var out [][]string
	sub, rest := argv[i], argv[i+1:]
	if value, ok := aliases[sub]; ok {
		if shell, ok := strings.CutPrefix(value, "!"); ok {
			out = append(out, append(strings.Fields(shell), rest...))
		} else if words := strings.Fields(value); len(words) > 0 {
			form := append(append(append([]string{}, argv[:i]...), words...), rest...)
			out = append(out, form)
			sub = words[0]
		}
	}
	if porcelain, ok := GitPlumbing[sub]; ok {
		out = append(out, append(append(append([]string{}, argv[:i]...), porcelain), rest...))
	}
	return out
}

// gitSubcommand finds the subcommand of a git command line past its
// global options, and the aliases its -c options define; -1 when there
// is none.
func gitSubcommand(argv []string) (int, map[string]string) {
	var aliases map[string]string
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		if !strings.HasPrefix(a, "-") {
			return i, aliases
		}
		if !gitValueOptions[a] || i+1 >= len(argv) {
			continue
		}
		i++
		if key, value, ok := strings.Cut(argv[i], "="); ok && a == "-c" && strings.HasPrefix(strings.ToLower(key), "alias.") {
			if aliases == nil {
				aliases = map[string]string{}
			}
			aliases[key[len("alias."):]] = value
		}
	}
	return -1, aliases
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
