package cmd

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"
)

// translation is a rule's config key and value, or why it has none.
type translation struct {
	key, value string
	widened    string // set when the fence rule refuses more than the source
	why        string
}

// translateClaude turns one Claude Code rule from list into a fence entry.
func translateClaude(list, rule, root string) translation {
	if list == "ask" {
		return translation{why: "fence has no ask: a command runs or is refused, and nobody is asked"}
	}
	tool, spec, hasSpec := splitClaudeRule(rule)
	switch tool {
	case "Bash":
		return translateBash(list, spec, hasSpec)
	case "Read", "Edit":
		return translatePath(list, tool, spec, hasSpec, root)
	case "WebFetch":
		return translateFetch(list, spec, hasSpec)
	case "Write", "MultiEdit", "NotebookEdit":
		return translation{why: "Claude Code applies file path rules through Edit(...), not " + tool + "(...)"}
	case "":
		return translation{why: "not a Claude Code rule (want Tool or Tool(specifier))"}
	}
	return translation{why: fmt.Sprintf("fence has no rule for Claude Code's %s tool", tool)}
}

// splitClaudeRule splits "Tool(specifier)" into its parts; tool is empty
// when rule has neither form.
func splitClaudeRule(rule string) (tool, spec string, hasSpec bool) {
	rule = strings.TrimSpace(rule)
	name, rest, found := strings.Cut(rule, "(")
	if found && !strings.HasSuffix(rest, ")") {
		return "", "", false
	}
	if !validToolName(name) {
		return "", "", false
	}
	if !found {
		return name, "", false
	}
	return name, strings.TrimSpace(strings.TrimSuffix(rest, ")")), true
}

func validToolName(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// translateBash turns a Bash rule into a command.deny token prefix.
// Allow rules are not translated: fence runs every command no deny rule
// names, and its command.allow is an exception to deny rules, which a
// Claude Code allow rule never is (there, a deny always wins).
func translateBash(list, spec string, hasSpec bool) translation {
	if list == "allow" {
		return translation{why: "fence runs every command no deny rule names; command.allow would make an exception to deny rules, which a Claude Code allow rule never does"}
	}
	if !hasSpec || spec == "*" || spec == "" || spec == ":*" {
		return translation{why: "refuses every command: fence has no rule for that (leave fence out of this agent's shell instead)"}
	}
	prefix, exact := spec, true
	switch {
	case strings.HasSuffix(spec, ":*"):
		prefix, exact = strings.TrimSuffix(spec, ":*"), false
	case strings.HasSuffix(spec, " *"):
		prefix, exact = strings.TrimSuffix(spec, " *"), false
	}
	if strings.ContainsAny(prefix, "|&;<>()$`\"'\\\n{}") {
		return translation{why: "holds shell syntax or quoting; fence command rules are plain words"}
	}
	words := strings.Fields(prefix)
	if len(words) == 0 {
		return translation{why: "names no command"}
	}
	for _, w := range words[1:] {
		if strings.ContainsAny(w, "*?[") {
			return translation{why: "a wildcard after the command's name has no fence form: only a rule's first word may be a glob"}
		}
	}
	if strings.ContainsAny(words[0], "*?[") && len(words) > 1 {
		return translation{why: "a glob command name followed by more words has no fence form"}
	}
	t := translation{key: "command.deny", value: strings.Join(words, " ")}
	switch {
	case exact && !strings.ContainsAny(prefix, "*?["):
		t.widened = fmt.Sprintf("fence rules are prefixes: command.deny %q also refuses the command with more arguments", t.value)
	case hasOption(words[1:]):
		t.widened = fmt.Sprintf("an option in a fence rule may stand anywhere after the command's name: command.deny %q refuses more than the prefix", t.value)
	}
	return t
}

// hasOption reports whether words hold an option or a word ending in "=",
// which a fence rule matches anywhere after the command's name.
func hasOption(words []string) bool {
	for _, w := range words {
		if strings.HasPrefix(w, "-") || strings.HasSuffix(w, "=") {
			return true
		}
	}
	return false
}

// translatePath turns a Read or Edit rule into a filesystem rule.
func translatePath(list, tool, spec string, hasSpec bool, root string) translation {
	if !hasSpec || spec == "" {
		return translation{why: "names every file: fence has no rule for that"}
	}
	if strings.HasPrefix(spec, "!") {
		return translation{why: "a negated pattern has no fence form"}
	}
	p, why := claudePathPattern(spec, root)
	if why != "" {
		return translation{why: why}
	}
	key := map[string]string{
		"allow Read": "filesystem.allowRead", "deny Read": "filesystem.denyRead",
		"allow Edit": "filesystem.allowWrite", "deny Edit": "filesystem.denyWrite",
	}[list+" "+tool]
	return translation{key: key, value: p}
}

// claudePathPattern turns a Claude Code path pattern (gitignore style)
// into a fence one: "//abs" is absolute, "~/" the home, "/path" relative
// to root (to the working directory of each run when root is "": the
// user's settings, where Claude Code anchors it at the project it runs
// in), "./path" and "a/b" to the working directory, and a pattern
// without a slash matches at any depth below it, as in .gitignore.
func claudePathPattern(p, root string) (string, string) {
	if strings.HasPrefix(p, "//") {
		return path.Clean("/" + strings.TrimLeft(p, "/")), ""
	}
	// A rule on a directory covers its tree, in fence too.
	p = strings.TrimSuffix(p, "/")
	var out string
	switch {
	case p == "" && root == "":
		out = "."
	case p == "":
		out = filepath.ToSlash(root) // "/" is the project itself
	case strings.HasPrefix(p, "/") && root == "":
		out = path.Clean(strings.TrimLeft(p, "/"))
	case p == ".":
		out = "."
	case p == "~" || strings.HasPrefix(p, "~/"):
		out = p
	case strings.HasPrefix(p, "~"):
		return "", "a ~user path has no fence form"
	case strings.HasPrefix(p, "/"):
		out = path.Join(filepath.ToSlash(root), p)
	case strings.HasPrefix(p, "./"):
		out = path.Clean(p)
	case !strings.Contains(p, "/") && p != "**":
		out = "**/" + p
	default:
		out = path.Clean(p)
	}
	return out, ""
}

// translateFetch turns a WebFetch rule into a network domain rule.
func translateFetch(list, spec string, hasSpec bool) translation {
	key := "network.allowedDomains"
	if list == "deny" {
		key = "network.deniedDomains"
	}
	if !hasSpec {
		if list == "deny" {
			return translation{key: key, value: "*", widened: "network.deniedDomains \"*\" keeps every command in the sandbox off the network, not only the fetch tool"}
		}
		return translation{why: "lets the fetch tool reach any domain; the fence form, network.allowedDomains \"*\", would let every command reach any domain, so write it yourself if you mean it"}
	}
	d, ok := strings.CutPrefix(spec, "domain:")
	if !ok || strings.TrimSpace(d) == "" {
		return translation{why: "fence translates WebFetch(domain:NAME) only"}
	}
	return translation{key: key, value: strings.TrimSpace(d)}
}
