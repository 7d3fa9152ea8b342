package cmd

import (
	"bytes"

	"github.com/tailscale/hujson"
)

// Codex reads hooks from hooks.json beside each of its config layers
// (~/.codex/hooks.json for the user, .codex/hooks.json in a trusted
// project), in Claude Code's layout: hooks.PreToolUse is a list of
// matcher groups, each with a list of {"type": "command", "command": ...}
// hooks (Codex's Hooks documentation). It can also read inline [hooks]
// tables of config.toml; fence edits hooks.json only, and leaves
// config.toml alone.

func init() {
	hooksNotes["codex"] = codexNotes
	hooksAgents["codex"] = hooksAgent{"codex", []string{".codex", "hooks.json"}, installCodexHook, uninstallCodexHook,
		"fence's PreToolUse hook for " + codexMatcher,
		"Codex: a PreToolUse hook in ~/.codex/hooks.json ($CODEX_HOME/hooks.json when that is set)"}
}

// codexNotes are what install says after adding the hook.
var codexNotes = []string{
	"Codex skips a new hook until it is trusted: open /hooks in Codex and trust fence's",
	"Codex releases before 0.124 run hooks only with [features] codex_hooks = true in config.toml",
	"Codex releases before 0.131 cannot run a shell call under fence: they refuse the rewrite and run the command fence allowed outside the sandbox (denials still hold); update Codex",
}

// codexMatcher is the PreToolUse matcher of fence's Codex hook: the
// tools fence judges, Codex's shell tools (all named Bash to hooks) and
// its file edit tool. Codex reads a matcher as a regular expression over
// the tool's name.
const codexMatcher = "Bash|apply_patch"

// installCodexHook returns src, a Codex hooks.json, with fence's
// PreToolUse hook running command and no other hook of fence's (an older
// or upstream one is replaced). src comes back unchanged when it holds
// exactly that already.
func installCodexHook(file string, src []byte, command, self string) ([]byte, error) {
	d, err := parseCodexHooks(file, src)
	if err != nil {
		return nil, err
	}
	_, pre, err := d.preToolUse()
	if err != nil {
		return nil, err
	}
	if pre != nil && codexHoldsOnly(pre, command, self) {
		return src, nil
	}
	if _, err := d.removeAgentHooks("codex", self); err != nil {
		return nil, err
	}
	d.addGroup(claudeGroup{Matcher: codexMatcher, Hooks: []claudeHook{{Type: "command", Command: command}}})
	return d.root.Pack(), nil
}

// uninstallCodexHook returns src without fence's Codex hooks, and how
// many it removed.
func uninstallCodexHook(file string, src []byte, self string) ([]byte, int, error) {
	d, err := parseCodexHooks(file, src)
	if err != nil {
		return nil, 0, err
	}
	n, err := d.removeAgentHooks("codex", self)
	if err != nil {
		return nil, 0, err
	}
	if n == 0 {
		return src, 0, nil
	}
	if len(d.top.Members) == 0 && len(bytes.TrimSpace(d.top.AfterExtra)) == 0 {
		d.top.AfterExtra = nil // `{}` as it was before install
	}
	return d.root.Pack(), n, nil
}

// parseCodexHooks parses a Codex hooks.json, refusing a key given twice
// anywhere in it: Codex refuses such a file, and so would run no hook of
// it, fence's included.
func parseCodexHooks(file string, src []byte) (*settingsDoc, error) {
	d, err := parseSettings(file, src)
	if err != nil {
		return nil, err
	}
	return d, d.noDuplicates(&d.root)
}

// codexHoldsOnly reports whether fence's one hook in pre is command, in
// a group of fence's matcher, both exactly as fence writes them.
func codexHoldsOnly(pre *hujson.Array, command, self string) bool {
	found, exact := 0, false
	for _, g := range pre.Elements {
		obj, _ := g.Value.(*hujson.Object)
		for _, h := range groupHooks(obj) {
			c, ok := hookCommandOf(h)
			if !ok || !isFenceCodexHook(c, self) {
				continue
			}
			found++
			exact = isExactCommandHook(obj, asObject(h), codexMatcher, command)
		}
	}
	return found == 1 && exact
}

// asObject is v's object, or nil.
func asObject(v hujson.Value) *hujson.Object {
	obj, _ := v.Value.(*hujson.Object)
	return obj
}

// isFenceCodexHook reports whether command runs a fence binary's Codex
// hook and nothing else (see isFenceHookWords).
func isFenceCodexHook(command, self string) bool { return isFenceAgentHook(command, self, "codex") }
