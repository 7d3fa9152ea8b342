package cmd

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"golang.org/x/text/unicode/norm"

	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/sandbox"
)

// An agent does not open the path a tool call names as fence reads it:
// Claude Code trims it (JavaScript's String.trim), turns "~" and "~/..."
// into the home directory and normalises it to Unicode NFC before use
// (its expandPath, which every file tool runs); Codex turns "~" and
// "~/..." in apply_patch headers into the home directory
// (maybe_expand_home_directory). Other agents are not documented either
// way. So every file path a hook judges is judged in every spelling an
// agent may open for it, and the call is refused when any is refused: a
// spelling no agent opens only ever adds a refusal.

// agentSpellings are the paths an agent may open for p: p itself, p
// trimmed of JavaScript whitespace, each with a leading "~" or "~/"
// taken as home, and each of those in Unicode NFC; without repeats, p
// first. A spelling trimmed to nothing is ".", the directory the call
// is judged from, as Claude Code reads it.
func agentSpellings(p, home string) []string {
	out := []string{p}
	add := func(s string) {
		if s == "" {
			s = "."
		}
		for _, have := range out {
			if have == s {
				return
			}
		}
		out = append(out, s)
	}
	for _, s := range []string{p, strings.TrimFunc(p, jsSpace)} {
		add(s)
		if e, ok := homeExpanded(s, home); ok {
			add(e)
		}
	}
	for _, s := range out {
		add(norm.NFC.String(s))
	}
	return out
}

// homeExpanded is p with a leading "~" or "~/" taken as home, and
// whether p had one. "~user" is not expanded: no agent's file tool does.
func homeExpanded(p, home string) (string, bool) {
	if home == "" {
		return "", false
	}
	if p == "~" {
		return home, true
	}
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		return filepath.Join(home, strings.TrimLeft(rest, "/")), true
	}
	return "", false
}

// jsSpace reports whether JavaScript's /\s/ (and so String.trim and
// split(/\s+/)) takes r for whitespace: the WhiteSpace and
// LineTerminator code points of ECMAScript, U+FEFF and the space
// separators among them. Go's unicode.IsSpace differs (U+0085, U+FEFF).
func jsSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff:
		return true
	}
	return 0x2000 <= r && r <= 0x200a
}

// judgeSpellings decides the access to p in every spelling an agent may
// open for it (see agentSpellings): the first refusal, else the
// decision for p as written.
func judgeSpellings(pol *policy.Policy, res *resolver, access, p string) (policy.Decision, error) {
	var first policy.Decision
	for i, s := range agentSpellings(p, pol.Home) {
		d, err := decide(pol, res, query{Access: access, Path: s})
		if err != nil {
			return d, err
		}
		if !d.Allowed {
			return d, nil
		}
		if i == 0 {
			first = d
		}
	}
	return first, nil
}

// pathRefusal is the reason the access to p is refused in any of its
// spellings, as `fence check` prints it, or "".
func pathRefusal(pol *policy.Policy, res *resolver, access, p string) (string, error) {
	d, err := judgeSpellings(pol, res, access, p)
	if err != nil {
		return "", err
	}
	return refusal(d), nil
}

// A tool that reads the contents of every file below a directory (Claude
// Code's Grep, Gemini's grep_search and read_many_files, Copilot's grep
// and rg) reads what a denyRead rule below that directory hides, though
// the directory itself is readable. Such a call is refused when a
// denyRead rule (after links, as the policy resolves them) may match
// something at or below the directory searched, or when the directory
// holds a tree the sandbox keeps apart without a rule (see treeRefusal).
// A tool that lists names
// only (Glob, LS, list_directory, glob) is judged by its directory: the
// names below it are listed, not the contents.

// recursiveRefusal is the reason a recursive read of root, in any of its
// spellings, is refused: the directory itself, or a denyRead rule that
// reaches below it; "" for none.
func recursiveRefusal(pol *policy.Policy, res *resolver, root string) (string, error) {
	if reason, err := pathRefusal(pol, res, "read", root); reason != "" || err != nil {
		return reason, err
	}
	for _, s := range agentSpellings(root, pol.Home) {
		abs := absFrom(res.dir, s)
		for _, dir := range []string{abs, res.resolve(abs)} {
			if r := denyBelow(pol.DenyRead, dir); r != nil {
				return recursiveReason(dir, r), nil
			}
			if reason, err := treeRefusal(pol, res, dir); reason != "" || err != nil {
				return reason, err
			}
		}
	}
	return "", nil
}

// treeRefusal is the reason a recursive read of dir is refused for a
// tree at or below it that the sandbox keeps apart by itself, without a
// rule (its own /tmp, sandbox.privateTmp, and the other temporary trees
// should fence check refuse them) that `fence check read` refuses.
// "" for none.
func treeRefusal(pol *policy.Policy, res *resolver, dir string) (string, error) {
	for _, tree := range sandbox.TempTrees {
		if !within(tree, dir) {
			continue
		}
		d, err := decide(pol, res, query{Access: "read", Path: tree})
		if err != nil || d.Allowed {
			if err != nil {
				return "", err
			}
			continue
		}
		return fmt.Sprintf("fence: denied a recursive read of %s, which holds %s, whose files the tool would read: %s; search a directory that does not hold it, or use the shell, which runs under fence",
			dir, tree, strings.TrimPrefix(refusal(d), "fence: ")), nil
	}
	return "", nil
}

// recursiveReason names the rule that refuses a recursive read of dir.
func recursiveReason(dir string, r *policy.Rule) string {
	pattern := r.Text
	if pattern == "" {
		pattern = r.Pattern
	}
	s := fmt.Sprintf("fence: denied a recursive read of %s: %s %q", dir, r.Key, pattern)
	if r.Source != "" {
		s += " (" + r.Source + ")"
	}
	return s + " hides files below it, which the tool would read; search a directory that does not hold them, or use the shell, which runs under fence"
}

// denyBelow is the first rule that may match a path at or below dir.
func denyBelow(rules []policy.Rule, dir string) *policy.Rule {
	for i := range rules {
		if reachesBelow(rules[i], dir) {
			return &rules[i]
		}
	}
	return nil
}

// reachesBelow reports whether the rule may match dir or a path below
// it: its fixed leading directory lies at or below dir, or dir lies
// below that directory and the rest of the pattern may still match
// below dir. It errs towards yes.
func reachesBelow(r policy.Rule, dir string) bool {
	pattern, d := r.Pattern, filepath.Clean(dir)
	if r.Fold {
		pattern, d = strings.ToLower(pattern), strings.ToLower(d)
	}
	prefix, rest := pattern, ""
	if r.Glob {
		prefix, rest = globPrefix(pattern)
	}
	if within(prefix, d) {
		return true
	}
	if !within(d, prefix) {
		return false
	}
	if !r.Glob {
		return true // dir lies inside the denied tree
	}
	return globMayMatchBelow(rest, strings.TrimPrefix(strings.TrimPrefix(d, prefix), "/"))
}

// globPrefix splits a glob into its fixed leading directory (no
// wildcard in it) and the rest.
func globPrefix(glob string) (string, string) {
	meta := strings.IndexAny(glob, `*?[{\`)
	if meta < 0 {
		return glob, ""
	}
	slash := strings.LastIndexByte(glob[:meta], '/')
	if slash <= 0 {
		return "/", glob[slash+1:]
	}
	return glob[:slash], glob[slash+1:]
}

// within reports whether p is dir or lies below it.
func within(p, dir string) bool {
	return dir == "/" || p == dir || strings.HasPrefix(p, dir+"/")
}

// globMayMatchBelow reports whether the glob rest, taken from a
// directory, may match rel (a path below that directory) or a path below
// rel. It errs towards yes for what it cannot tell: "**", braces, escapes.
func globMayMatchBelow(rest, rel string) bool {
	if strings.ContainsAny(rest, `{\`) {
		return true
	}
	pat := strings.Split(rest, "/")
	var segs []string
	if rel != "" {
		segs = strings.Split(rel, "/")
	}
	for i, seg := range segs {
		if i >= len(pat) {
			return true // an ancestor of rel matched: rel lies in what it denies
		}
		if strings.Contains(pat[i], "**") {
			return true
		}
		if ok, err := path.Match(pat[i], seg); err != nil || !ok {
			return err != nil
		}
	}
	return true // what is left of the pattern may match below rel
}
