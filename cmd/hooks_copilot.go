package cmd

import (
	"encoding/json"
	"strconv"

	"github.com/tailscale/hujson"
)

// GitHub Copilot reads hook files of {"version": 1, "hooks": {EVENT:
// [ENTRY...]}} (GitHub's "GitHub Copilot hooks reference"): the CLI from
// ~/.copilot/hooks/*.json (the user's, for every repository) and from a
// repository's .github/hooks/*.json, the coding agent from the latter
// only. fence's user-level file is ~/.copilot/hooks/fence.json, a file of
// its own among the user's; --file .github/hooks/fence.json puts the hook
// in a repository, where the coding agent runs it too. (With COPILOT_HOME
// set the CLI reads $COPILOT_HOME/hooks instead: name the file with
// --file there.)

func init() {
	hooksAgents["copilot"] = hooksAgent{"copilot", []string{".copilot", "hooks", "fence.json"}, installCopilotHook, uninstallCopilotHook,
		"fence's preToolUse hook", "GitHub Copilot CLI: a preToolUse hook in ~/.copilot/hooks/fence.json (--file .github/hooks/fence.json for a repository and the coding agent)"}
}

// copilotHookTimeout is the timeoutSec of fence's entry. Copilot lets a
// call through when its preToolUse hook times out, so the limit is far
// above what a decision takes (milliseconds) yet ends a hung hook.
const copilotHookTimeout = 60

// copilotHook is fence's entry in a Copilot hook file, in the order its
// keys are written.
type copilotHook struct {
	Type       string `json:"type"`
	Bash       string `json:"bash"`
	TimeoutSec int    `json:"timeoutSec"`
}

// installCopilotHook returns src, a Copilot hook file, with fence's
// entry running command under preToolUse and no other entry of fence's
// (an older or upstream one is replaced), and "version": 1 added when
// the file has none. src comes back unchanged when it holds exactly
// that already. A file Copilot would not run fence's entry from (another
// version, disableAllHooks) is refused.
func installCopilotHook(file string, src []byte, command, self string) ([]byte, error) {
	d, err := parseSettings(file, src)
	if err != nil {
		return nil, err
	}
	hooks, _, err := d.hookList("preToolUse")
	if err != nil {
		return nil, err
	}
	hasVersion, err := d.copilotRunnable()
	if err != nil {
		return nil, err
	}
	if hasVersion && copilotHoldsOnly(hooks, command, self) {
		return src, nil
	}
	d.removeCopilotHooks(self)
	if !hasVersion {
		d.addVersion()
	}
	d.addHookEntry("preToolUse", copilotHook{Type: "command", Bash: command, TimeoutSec: copilotHookTimeout})
	return d.root.Pack(), nil
}

// uninstallCopilotHook returns src without fence's Copilot hooks, and
// how many it removed.
func uninstallCopilotHook(file string, src []byte, self string) ([]byte, int, error) {
	d, err := parseSettings(file, src)
	if err != nil {
		return nil, 0, err
	}
	if _, err := d.hooksObject(); err != nil {
		return nil, 0, err
	}
	n := d.removeCopilotHooks(self)
	if n == 0 {
		return src, 0, nil
	}
	return d.root.Pack(), n, nil
}

// copilotRunnable refuses a hook file whose entries Copilot would not
// run: a version other than 1 (Copilot rejects the whole file) or
// disableAllHooks set. It reports whether the file gives its version.
func (d *settingsDoc) copilotRunnable() (bool, error) {
	i, err := d.field(d.top, "version")
	if err != nil {
		return false, err
	}
	if i >= 0 {
		v := &d.top.Members[i].Value
		lit, ok := v.Value.(hujson.Literal)
		var n float64
		if !ok || lit.Kind() != '0' || json.Unmarshal(lit, &n) != nil || n != 1 {
			return false, docError(d.file, d.src, v, "version: Copilot reads hook files of version 1 only, so it would run none of this file's hooks")
		}
	}
	j, err := d.field(d.top, "disableAllHooks")
	if err != nil {
		return false, err
	}
	if j >= 0 {
		v := &d.top.Members[j].Value
		if lit, ok := v.Value.(hujson.Literal); !ok || lit.Kind() != 'f' {
			return false, docError(d.file, d.src, v, "disableAllHooks: Copilot runs none of this file's hooks, fence's included; remove it, or install into another file")
		}
	}
	return i >= 0, nil
}

// copilotHoldsOnly reports whether fence's entries in hooks are exactly
// one, under preToolUse, running command, exactly as fence writes it.
func copilotHoldsOnly(hooks *hujson.Object, command, self string) bool {
	if hooks == nil {
		return false
	}
	found := 0
	for _, m := range hooks.Members {
		lit, _ := m.Name.Value.(hujson.Literal)
		arr, _ := m.Value.Value.(*hujson.Array)
		if arr == nil {
			continue
		}
		for _, h := range arr.Elements {
			if !isFenceCopilotEntry(h, self) {
				continue
			}
			obj := h.Value.(*hujson.Object)
			if lit.String() != "preToolUse" || !isExactCopilotHook(obj, command) {
				return false
			}
			found++
		}
	}
	return found == 1
}

// isExactCopilotHook reports whether obj is fence's entry as fence
// writes it: type, bash and timeoutSec, nothing else. Any other key
// changes what Copilot does with it: env (XDG_CONFIG_HOME would have the
// hook load another user config), cwd, another timeout, a powershell or
// exec Copilot might run instead.
func isExactCopilotHook(obj *hujson.Object, command string) bool {
	if !onlyKeys(obj, "type", "bash", "timeoutSec") || stringField(obj, "type") != "command" || stringField(obj, "bash") != command {
		return false
	}
	lit, ok := obj.Members[memberIndex(obj, "timeoutSec")].Value.Value.(hujson.Literal)
	return ok && string(lit) == strconv.Itoa(copilotHookTimeout)
}

// removeCopilotHooks takes fence's entries out of every event list of
// hooks; a list, and the hooks object, go too when fence's entries were
// all they held. It returns how many it took out.
func (d *settingsDoc) removeCopilotHooks(self string) int {
	hooks, _ := d.hooksObject()
	if hooks == nil {
		return 0
	}
	n := 0
	for mi := len(hooks.Members) - 1; mi >= 0; mi-- {
		arr, _ := hooks.Members[mi].Value.Value.(*hujson.Array)
		if arr == nil {
			continue
		}
		removed := 0
		for hi := len(arr.Elements) - 1; hi >= 0; hi-- {
			if isFenceCopilotEntry(arr.Elements[hi], self) {
				removeElement(arr, hi)
				removed++
			}
		}
		n += removed
		if removed > 0 && len(arr.Elements) == 0 {
			removeMember(hooks, mi)
		}
	}
	if n > 0 && len(hooks.Members) == 0 {
		i, _ := d.field(d.top, "hooks")
		removeMember(d.top, i)
	}
	return n
}

// isFenceCopilotEntry reports whether h is a command entry (its type
// "command" or not given) that runs fence's Copilot hook: by its bash
// (its cross-platform command when it has no bash), or as an executable
// with arguments.
func isFenceCopilotEntry(h hujson.Value, self string) bool {
	obj, _ := h.Value.(*hujson.Object)
	if obj == nil {
		return false
	}
	if memberIndex(obj, "type") >= 0 && stringField(obj, "type") != "command" {
		return false
	}
	shell := "bash"
	if memberIndex(obj, "bash") < 0 {
		shell = "command" // what Copilot runs when bash is not given
	}
	if words, ok := literalWords(stringField(obj, shell)); ok && isFenceCopilotWords(words, self) {
		return true
	}
	exec := stringField(obj, "exec")
	if exec == "" {
		return false
	}
	words := []string{exec}
	if i := memberIndex(obj, "args"); i >= 0 {
		arr, _ := obj.Members[i].Value.Value.(*hujson.Array)
		if arr == nil {
			return false
		}
		for _, e := range arr.Elements {
			lit, ok := e.Value.(hujson.Literal)
			if !ok || lit.Kind() != '"' {
				return false
			}
			words = append(words, lit.String())
		}
	}
	return isFenceCopilotWords(words, self)
}

// isFenceCopilotWords reports whether a command line's words run a fence
// binary's Copilot hook and nothing else (see isFenceHookWords).
func isFenceCopilotWords(words []string, self string) bool {
	return isFenceHookWords(words, self, "copilot")
}
